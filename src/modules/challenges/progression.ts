import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Tx } from '../../platform/db.js';
import { ruleViolation } from '../../platform/errors.js';

/**
 * The points and badges modules grant what challenges and referrals give
 * (completion points, milestone badges). They are built in parallel with this
 * module, so they are loaded by their public surface (`index.ts`) when first
 * needed, against the contract fixed for them; a definition that asks for
 * points or badges is refused while the granting module is not installed.
 */
export interface GrantPointsInput {
  participantId: string;
  amount: number;
  reason: string;
  type?: 'award' | 'bonus' | 'adjustment';
  memo?: string;
  source?: { kind: 'challenge' | 'referral'; id: string };
  engagementId?: string;
}

interface PointsSurface {
  grantInTx(tx: Tx, tenantId: string, input: GrantPointsInput): Promise<{ ledgerEntryId: string; available: number; lifetime: number; delta: number }>;
}

interface BadgesSurface {
  awardBadgeInTx(tx: Tx, tenantId: string, input: { participantId: string; badgeCode: string; source?: unknown }): Promise<unknown>;
}

const candidates = {
  points: ['../points/index.ts'],
  badges: ['../badges/index.ts', '../rules/index.ts'],
};

async function load<T>(kind: keyof typeof candidates, member: string): Promise<T | null> {
  for (const relative of candidates[kind]) {
    const url = new URL(relative, import.meta.url);
    if (!fs.existsSync(fileURLToPath(url))) continue;
    const imported = (await import(url.href)) as Record<string, unknown>;
    if (typeof imported[member] === 'function') return imported as T;
  }
  return null;
}

let points: Promise<PointsSurface | null> | null = null;
let badges: Promise<BadgesSurface | null> | null = null;

export async function pointsAvailable(): Promise<boolean> {
  points ??= load<PointsSurface>('points', 'grantInTx');
  return (await points) !== null;
}

export async function badgesAvailable(): Promise<boolean> {
  badges ??= load<BadgesSurface>('badges', 'awardBadgeInTx');
  return (await badges) !== null;
}

export async function grantPointsInTx(tx: Tx, tenantId: string, input: GrantPointsInput) {
  points ??= load<PointsSurface>('points', 'grantInTx');
  const surface = await points;
  if (!surface) throw ruleViolation('points cannot be granted: the points module is not installed', 'POINTS_UNAVAILABLE');
  return surface.grantInTx(tx, tenantId, input);
}

export async function awardBadgeInTx(tx: Tx, tenantId: string, input: { participantId: string; badgeCode: string; source: { kind: string; id: string } }) {
  badges ??= load<BadgesSurface>('badges', 'awardBadgeInTx');
  const surface = await badges;
  if (!surface) throw ruleViolation('badges cannot be awarded: the badges module is not installed', 'BADGES_UNAVAILABLE');
  return surface.awardBadgeInTx(tx, tenantId, input);
}
