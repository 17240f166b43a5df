import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { notFound, ruleViolation } from '../../platform/errors.js';
import * as store from './store.js';
import type { ContestRow } from './store.js';
import { iso, prizeTierView, rankOf, summaryView } from './views.js';

/**
 * The reads of a published contest: the contest, its prizes, the live or final
 * leaderboard (public, administrators', bracket around one participant) and
 * the published winners.
 */

export const ACTIVE_CONTESTS_MAX = 100;
export const WINNERS_MAX = 1000;

/** A contest as participants see it: drafts do not exist for them. */
export async function visibleContest(tx: Tx, tenantId: string, id: string): Promise<ContestRow> {
  const contest = await store.readContest(tx, tenantId, id);
  if (!contest || contest.status === 'draft') throw notFound(`contest "${id}"`);
  return contest;
}

export async function readPublicContest(db: Database, tenantId: string, id: string) {
  return db.tenant(tenantId, async (tx) => summaryView(await visibleContest(tx, tenantId, id)));
}

export async function listActiveContests(db: Database, tenantId: string) {
  return db.tenant(tenantId, async (tx) => ({ contests: (await store.listActiveContests(tx, tenantId, ACTIVE_CONTESTS_MAX)).map(summaryView) }));
}

export async function prizes(db: Database, tenantId: string, id: string) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await visibleContest(tx, tenantId, id);
    const tiers = [...contest.prize_structure].sort((a, b) => a.rank_from - b.rank_from);
    return { contest_id: contest.id, prizes: tiers.map(prizeTierView) };
  });
}

async function leaderboardRows(tx: Tx, tenantId: string, contest: ContestRow, limit: number, offset: number) {
  return contest.status === 'completed'
    ? store.finalLeaderboard(tx, tenantId, contest.id, limit, offset)
    : store.liveLeaderboard(tx, tenantId, contest.id, limit, offset);
}

export async function publicLeaderboard(db: Database, tenantId: string, id: string, limit: number) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await visibleContest(tx, tenantId, id);
    const rows = await leaderboardRows(tx, tenantId, contest, limit, 0);
    return {
      contest_id: contest.id,
      entries: rows.map((r) => ({ rank: r.rank, display_name: r.display_name, score: Number(r.score), last_scored_at: iso(r.last_scored_at) })),
      total_entries: contest.entry_count,
      updated_at: clock.now(tenantId).toISOString(),
    };
  });
}

export async function adminLeaderboard(db: Database, tenantId: string, id: string, limit: number, offset: number) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await store.readContest(tx, tenantId, id);
    if (!contest) throw notFound(`contest "${id}"`);
    const rows = await leaderboardRows(tx, tenantId, contest, limit, offset);
    return {
      contest_id: contest.id,
      window: contest.status === 'completed' ? ('final' as const) : ('active' as const),
      as_of: clock.now(tenantId).toISOString(),
      rows: rows.map((r) => ({
        rank: r.rank,
        participant_id: r.participant_id,
        display_name: r.display_name,
        score: Number(r.score),
        entry_id: r.entry_id,
        status: r.status as never,
        reached_at: iso(r.reached_at)!,
      })),
      total_entries: contest.entry_count,
    };
  });
}

export async function bracket(db: Database, tenantId: string, id: string, around: string, size: number) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await visibleContest(tx, tenantId, id);
    const entry = await store.readEntry(tx, tenantId, contest.id, around);
    if (!entry) throw notFound(`an entry of participant "${around}" in contest "${id}"`);
    const rank = await rankOf(tx, tenantId, contest, entry);
    if (rank === null) throw ruleViolation('the entry is not ranked (disqualified)', 'CONTEST_ENTRY_NOT_RANKED');
    const total = contest.status === 'completed' ? rank + size : await store.rankedCount(tx, tenantId, contest.id);
    let start = Math.max(1, rank - Math.floor((size - 1) / 2));
    if (contest.status !== 'completed' && start + size - 1 > total) start = Math.max(1, total - size + 1);
    const rows = await leaderboardRows(tx, tenantId, contest, size, start - 1);
    return {
      contest_id: contest.id,
      around,
      rows: rows.map((r) => ({ rank: r.rank, participant_id: r.participant_id, display_name: r.display_name, score: Number(r.score) })),
      total_entries: contest.entry_count,
    };
  });
}

export async function winners(db: Database, tenantId: string, id: string) {
  return db.tenant(tenantId, async (tx) => {
    const contest = await visibleContest(tx, tenantId, id);
    const rows = await store.issuedWinners(tx, tenantId, contest.id, WINNERS_MAX);
    return {
      contest_id: contest.id,
      published: contest.prizes_issued_at !== null,
      winners: rows.map((r) => ({
        rank: r.rank,
        display_name: r.publish_consent ? r.display_name : null,
        reward_type: r.reward_type as never,
        reward_name: r.reward_name,
      })),
    };
  });
}
