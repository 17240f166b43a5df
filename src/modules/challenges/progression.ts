import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Tx } from '../../platform/db.js';
import { ruleViolation } from '../../platform/errors.js';
import { grantInTx } from '../points/index.js';

/**
 * What challenges and referrals give: points through the points module's
 * `grantInTx`, badges through the badges module's `awardBadgeInTx`. The
 * badges module is built in parallel with this one, so it is loaded by its
 * public surface (`index.ts`) when first needed, against the contract fixed
 * for it; a definition that asks for a badge is refused while no badges
 * module is installed.
 */
export interface GrantPointsInput {
  participantId: string;
  amount: number;
  reason: string;
  type?: 'award' | 'bonus' | 'adjustment';
  memo?: string;
  source?: { kind: 'challenge' | 'referral'; id: string };
  engagementId?: string | null;
}

interface BadgesSurface {
  awardBadgeInTx(tx: Tx, tenantId: string, input: { participantId: string; badgeCode: string; source?: unknown }): Promise<unknown>;
}

const candidates = {
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

let badges: Promise<BadgesSurface | null> | null = null;

export async function badgesAvailable(): Promise<boolean> {
  badges ??= load<BadgesSurface>('badges', 'awardBadgeInTx');
  return (await badges) !== null;
}

export async function grantPointsInTx(tx: Tx, tenantId: string, input: GrantPointsInput) {
  return grantInTx(tx, tenantId, input);
}

export async function awardBadgeInTx(tx: Tx, tenantId: string, input: { participantId: string; badgeCode: string; source: { kind: string; id: string } }) {
  badges ??= load<BadgesSurface>('badges', 'awardBadgeInTx');
  const surface = await badges;
  if (!surface) throw ruleViolation('badges cannot be awarded: the badges module is not installed', 'BADGES_UNAVAILABLE');
  return surface.awardBadgeInTx(tx, tenantId, input);
}
