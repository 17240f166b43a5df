import type { Tx } from '../../platform/db.js';
import { AppError } from '../../platform/errors.js';

/**
 * The points and badges modules, reached through their public surfaces
 * (`src/modules/points/index.ts`, `src/modules/badges/index.ts`) as fixed by
 * the contract in HELPERS.md. They are loaded when first needed rather than
 * imported statically, so that engagements, activities, rewards and gates
 * build and run while those modules are still being written; an action that
 * needs a missing module fails with a 422 and changes nothing.
 */
export interface PointsSurface {
  grantInTx(
    tx: Tx,
    tenantId: string,
    input: {
      participantId: string;
      amount: number;
      reason: string;
      type?: 'award' | 'bonus' | 'adjustment';
      memo?: string;
      source?: { kind: string; id: string };
      activityId?: string;
      engagementId?: string;
    },
  ): Promise<{ ledgerEntryId: string; available: number; lifetime: number; delta: number }>;
  readBalanceInTx(tx: Tx, tenantId: string, participantId: string): Promise<{ available: number; lifetime: number; lastEarnedAt: Date | null }>;
  /** Optional: a multiplier limited to one participant (needed by `points_multiplier` rewards). */
  createMultiplierInTx?: (
    tx: Tx,
    tenantId: string,
    input: {
      multiplier: number;
      startsAt: Date;
      endsAt: Date;
      match: { event_type: string; attributes: Record<string, unknown> };
      participantId?: string;
      source?: { kind: string; id: string };
    },
  ) => Promise<{ id: string }>;
}

export interface BadgesSurface {
  awardBadgeInTx(
    tx: Tx,
    tenantId: string,
    input: { participantId: string; badgeCode: string; source: { kind: string; id: string } },
  ): Promise<unknown>;
  hasBadgeInTx(tx: Tx, tenantId: string, participantId: string, badgeCode: string): Promise<boolean>;
  /** The codes among `codes` that the tenant has not defined. */
  missingBadgeCodesInTx(tx: Tx, tenantId: string, codes: string[]): Promise<string[]>;
}

// Kept in variables so the compiler does not require the files to exist yet.
const POINTS_MODULE = '../points/index.js';
const BADGES_MODULE = '../badges/index.js';

let points: Promise<Partial<PointsSurface> | null> | null = null;
let badges: Promise<Partial<BadgesSurface> | null> | null = null;

async function load<T>(specifier: string): Promise<Partial<T> | null> {
  try {
    return (await import(specifier)) as Partial<T>;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND') return null;
    throw error;
  }
}

function unavailable(what: string): AppError {
  return new AppError('rule_violation', 'CAPABILITY_UNAVAILABLE', `${what} is not available in this deployment`);
}

export async function pointsModule(): Promise<Partial<PointsSurface> | null> {
  points ??= load<PointsSurface>(POINTS_MODULE);
  return points;
}

export async function badgesModule(): Promise<Partial<BadgesSurface> | null> {
  badges ??= load<BadgesSurface>(BADGES_MODULE);
  return badges;
}

export async function requirePoints<K extends keyof PointsSurface>(name: K): Promise<NonNullable<PointsSurface[K]>> {
  const surface = await pointsModule();
  const fn = surface?.[name];
  if (typeof fn !== 'function') throw unavailable(`the points module's ${String(name)}`);
  return fn as NonNullable<PointsSurface[K]>;
}

export async function requireBadges<K extends keyof BadgesSurface>(name: K): Promise<NonNullable<BadgesSurface[K]>> {
  const surface = await badgesModule();
  const fn = surface?.[name];
  if (typeof fn !== 'function') throw unavailable(`the badges module's ${String(name)}`);
  return fn as NonNullable<BadgesSurface[K]>;
}
