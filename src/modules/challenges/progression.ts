import type { Tx } from '../../platform/db.js';
import { ruleViolation } from '../../platform/errors.js';
import { awardsSinceInTx, grantInTx } from '../points/index.js';
import { awardBadgeInTx as awardBadge, earnedBadgesInTx, missingBadgeCodesInTx } from '../badges/index.js';

/**
 * What challenges and referrals give: points through the points module's
 * `grantInTx`, badges through the badges module's `awardBadgeInTx`, both in
 * the caller's transaction.
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

export async function grantPointsInTx(tx: Tx, tenantId: string, input: GrantPointsInput) {
  return grantInTx(tx, tenantId, input);
}

export async function awardBadgeInTx(tx: Tx, tenantId: string, input: { participantId: string; badgeCode: string; source: { kind: 'challenge' | 'referral'; id: string } }) {
  return awardBadge(tx, tenantId, input);
}

/** Refuses a definition that names badges the tenant has not defined. */
export async function checkBadgesExistInTx(tx: Tx, tenantId: string, codes: Array<string | null | undefined>): Promise<void> {
  const wanted = [...new Set(codes.filter((c): c is string => !!c))];
  const missing = await missingBadgeCodesInTx(tx, tenantId, wanted);
  if (missing.length > 0) throw ruleViolation(`no badge is defined with the code ${missing.map((c) => `"${c}"`).join(', ')}`, 'BADGE_NOT_FOUND');
}

/**
 * What the participant holds, for the state objectives: the points granted since
 * `pointsSince` (from the points ledger) and the badges earned (from the badges
 * module), each with its time.
 */
export async function holdingsInTx(tx: Tx, tenantId: string, participantId: string, pointsSince: Date) {
  const awards = await awardsSinceInTx(tx, tenantId, participantId, pointsSince);
  const badges = await earnedBadgesInTx(tx, tenantId, participantId);
  return { awards, badges: badges.map((b) => ({ code: b.code, at: new Date(b.earned_at!) })) };
}
