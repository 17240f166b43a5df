import type { Tx } from '../../platform/db.js';
import * as store from './store.js';
import type { ContestRow, EntryRow, PrizeTierDefinition } from './store.js';

/**
 * How contests, entries and prize tiers read in answers, shared by the
 * definition, the participant reads, the entries, the lifecycle and the reviews.
 */

export const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

export function adminView(c: ContestRow) {
  return {
    id: c.id,
    title: c.title,
    description: c.description,
    status: c.status,
    starts_at: iso(c.starts_at)!,
    ends_at: iso(c.ends_at)!,
    scoring: { event_type: c.event_type, score_attribute: c.score_attribute, weight: Number(c.weight) },
    prize_structure: c.prize_structure,
    max_reward_liability: Number(c.max_reward_liability),
    fraud_rules: c.fraud_rules,
    verification_window_hours: c.verification_window_hours,
    entry_count: c.entry_count,
    created_at: iso(c.created_at)!,
    updated_at: iso(c.updated_at)!,
    published_at: iso(c.published_at),
    activated_at: iso(c.activated_at),
    scoring_started_at: iso(c.scoring_started_at),
    completed_at: iso(c.completed_at),
    final_sweep_ms: c.final_sweep_ms,
    verification_ends_at: iso(c.verification_ends_at),
    prizes_issued_at: iso(c.prizes_issued_at),
    liability_allocated: Number(c.liability_allocated),
    tie_break: c.tie_break,
  };
}

export function summaryView(c: ContestRow) {
  return {
    id: c.id,
    name: c.title,
    description: c.description,
    status: c.status,
    starts_at: iso(c.starts_at)!,
    ends_at: iso(c.ends_at)!,
    scoring_method: 'cumulative' as const,
    entry_count: c.entry_count,
  };
}

export function entryView(e: EntryRow, rank: number | null) {
  return {
    entry_id: e.entry_id,
    contest_id: e.contest_id,
    participant_id: e.participant_id,
    entered_at: iso(e.entered_at)!,
    score: Number(e.score),
    rank,
    display_name: e.display_name,
    score_events: e.score_events,
    status: e.status as never,
  };
}

export async function rankOf(tx: Tx, tenantId: string, contest: ContestRow, entry: EntryRow): Promise<number | null> {
  if (entry.status === 'disqualified') return null;
  if (contest.status === 'completed') return entry.final_rank;
  return store.liveRank(tx, tenantId, entry);
}

export function prizeTierView(tier: PrizeTierDefinition) {
  return {
    rank_from: tier.rank_from,
    rank_to: tier.rank_to,
    label: tier.label ?? (tier.rank_from === tier.rank_to ? `Rank ${tier.rank_from}` : `Ranks ${tier.rank_from}–${tier.rank_to}`),
    reward_name: rewardName(tier),
    reward_type: tier.reward.type as never,
    reward_value: tier.reward.value,
  };
}

export function rewardName(tier: PrizeTierDefinition): string {
  return tier.reward.name ?? `${tier.reward.type} ${tier.reward.value}`;
}
