import type { Tx } from '../../platform/db.js';
import * as participants from '../participants/index.js';

/**
 * The parts of other modules that earn rules call, reached through their
 * public `index.ts`. The points module is loaded on first use so that this
 * module works (badges, streaks) in a build without it; an award of points
 * then fails the event with a clear error instead of failing the whole
 * service at start.
 */
export interface GrantInput {
  participantId: string;
  amount: number;
  reason: string;
  type?: 'award' | 'bonus' | 'adjustment';
  memo?: string;
  source?: { kind: 'rule'; id: string };
  engagementId?: string;
  /** The multiplier that raised the amount (for `points.awarded.v1`); ignored by a points module that does not take it. */
  multiplier?: number | null;
}

export interface PointsSurface {
  grantInTx(tx: Tx, tenantId: string, input: GrantInput): Promise<{ ledgerEntryId: string; available: number; lifetime: number; delta: number }>;
  readBalanceInTx(tx: Tx, tenantId: string, participantId: string): Promise<{ available: number; lifetime: number; lastEarnedAt: Date | null }>;
  multiplierForEventInTx(
    tx: Tx,
    tenantId: string,
    input: { participantId: string; eventName: string; attributes: Record<string, unknown>; at: Date },
  ): Promise<{ multiplier: number; multiplierId: string | null }>;
}

const POINTS_INDEX = new URL('../points/index.js', import.meta.url).href;
let points: Promise<PointsSurface | null> | null = null;

/** The points module's public surface, or null when the build has no points module. */
export function pointsSurface(): Promise<PointsSurface | null> {
  points ??= import(POINTS_INDEX).then(
    (surface: Partial<PointsSurface>) =>
      typeof surface.grantInTx === 'function' && typeof surface.multiplierForEventInTx === 'function' && typeof surface.readBalanceInTx === 'function'
        ? (surface as PointsSurface)
        : null,
    () => null,
  );
  return points;
}

export async function requirePoints(): Promise<PointsSurface> {
  const surface = await pointsSurface();
  if (!surface) throw new Error('the points module is not available in this build, so an earn rule cannot award points');
  return surface;
}

type CoalesceProfile = (tx: Tx, tenantId: string, participantId: string, properties: Record<string, unknown>) => Promise<unknown>;

/**
 * The participants module's profile coalescing, when the build has it:
 * standard profile fields carried in event properties update the profile.
 */
export function coalesceProfile(): CoalesceProfile | null {
  const candidate = (participants as Record<string, unknown>).coalesceProfileInTx;
  return typeof candidate === 'function' ? (candidate as CoalesceProfile) : null;
}

type BirthdayParticipants = (tx: Tx, tenantId: string, input: { month: number; day: number; after: string | null; limit: number }) => Promise<string[]>;

/** The participants module's birthday look-up, when the build has it (needed by birthday rules). */
export function birthdayParticipants(): BirthdayParticipants | null {
  const candidate = (participants as Record<string, unknown>).participantsWithBirthdayInTx;
  return typeof candidate === 'function' ? (candidate as BirthdayParticipants) : null;
}
