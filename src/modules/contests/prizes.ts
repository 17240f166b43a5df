import { randomBytes } from 'node:crypto';
import type { Tx } from '../../platform/db.js';
import { emit } from '../../platform/outbox.js';
import * as store from './store.js';
import type { ContestRow, EntryRow, PrizeTierDefinition, AllocationRow } from './store.js';
import type { FraudRules } from './schemas.js';
import { rewardName } from './views.js';
import { isDisposableEmail } from './entries.js';

/**
 * Prizes: allocation by rank under the liability cap, the verification checks
 * of each funded winner, and the issue of prize codes once verified.
 */

/**
 * Assigns each placed entry its tier's reward in rank order while the sum stays
 * within max_reward_liability; from the first prize that does not fit, every
 * later rank is unfunded (allocation stops).
 */
export function allocate(placed: EntryRow[], tiers: PrizeTierDefinition[], maxLiability: number) {
  const allocations: AllocationRow[] = [];
  let liability = 0;
  let stopped = false;
  for (const entry of placed) {
    const tier = tiers.find((t) => entry.final_rank! >= t.rank_from && entry.final_rank! <= t.rank_to);
    if (!tier) continue;
    const value = tier.reward.value;
    if (!stopped && liability + value > maxLiability) stopped = true;
    if (!stopped) liability += value;
    allocations.push({
      participant_id: entry.participant_id,
      entry_id: entry.entry_id,
      rank: entry.final_rank!,
      reward_type: tier.reward.type,
      reward_value: value,
      reward_name: rewardName(tier),
      status: stopped ? 'unfunded' : 'pending_verification',
      prize_code: null,
      issued_at: null,
    });
  }
  return { allocations, liability };
}

/** The verification checks (identity, payment method, device, flags, review threshold) of each funded winner. */
export async function verificationReasons(tx: Tx, tenantId: string, contest: ContestRow, placed: EntryRow[], allocations: AllocationRow[]) {
  const rules = contest.fraud_rules as FraudRules;
  const funded = new Set(allocations.filter((a) => a.status !== 'unfunded').map((a) => a.participant_id));
  const reasons = new Map<string, string[]>();
  for (const entry of placed) {
    if (!funded.has(entry.participant_id)) continue;
    const list: string[] = [];
    if (entry.status === 'flagged') list.push('flagged');
    if (rules.review_threshold_score !== undefined && Number(entry.score) >= rules.review_threshold_score) list.push('review_threshold_score');
    if (entry.email && isDisposableEmail(entry.email)) list.push('disposable_email');
    if (entry.payment_method && (await store.countSharedSignal(tx, tenantId, contest.id, entry.participant_id, 'payment_method', entry.payment_method)) > 0) {
      list.push('repeat_payment_method');
    }
    if (entry.device_fingerprint && (await store.countSharedSignal(tx, tenantId, contest.id, entry.participant_id, 'device_fingerprint', entry.device_fingerprint)) > 0) {
      list.push('repeat_device');
    }
    reasons.set(entry.participant_id, list);
  }
  return reasons;
}

const PRIZE_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
function prizeCodes(n: number): string[] {
  return Array.from({ length: n }, () => {
    const bytes = randomBytes(12);
    const chars = [...bytes].map((b) => PRIZE_CODE_ALPHABET[b % PRIZE_CODE_ALPHABET.length]).join('');
    return `PRZ-${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8, 12)}`;
  });
}

/** Issues the codes of verified allocations and emits exactly one `contest.prize_allocated.v1` per winner. */
export async function issueVerifiedPrizes(tx: Tx, tenantId: string, contestId: string, participantIds: string[] | null, now: Date) {
  const issued = await store.issuePrizes(tx, tenantId, contestId, participantIds, prizeCodes, now);
  if (issued.length === 0) return issued;
  await store.setEntryStatus(
    tx,
    tenantId,
    issued.map((a) => ({ contestId, participantId: a.participant_id, to: 'paid', reason: `prize code issued for rank ${a.rank}` })),
    'lifecycle',
    now,
  );
  await emit(
    tx,
    tenantId,
    issued.map((a) => ({
      event: 'contest.prize_allocated.v1',
      participantId: a.participant_id,
      data: {
        participant_id: a.participant_id,
        contest_id: contestId,
        entry_id: a.entry_id,
        rank: a.rank,
        reward_type: a.reward_type,
        reward_value: Number(a.reward_value),
        reward_name: a.reward_name,
        prize_code: a.prize_code,
      },
    })),
  );
  return issued;
}
