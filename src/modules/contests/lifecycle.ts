import { createHash, randomBytes } from 'node:crypto';
import type { Database, Tx } from '../../platform/db.js';
import type { Config } from '../../config.js';
import { clock } from '../../platform/clock.js';
import { emit } from '../../platform/outbox.js';
import { addJob } from '../../platform/jobs.js';
import { prefixedId } from '../../platform/ids.js';
import { readBalanceInTx } from '../points/index.js';
import * as store from './store.js';
import type { ContestRow } from './store.js';
import type { FraudRules } from './schemas.js';
import { iso } from './views.js';
import { allocate, issueVerifiedPrizes, verificationReasons } from './prizes.js';

/**
 * The lifecycle (scheduled → active → scoring → completed): the job that steps
 * a contest, the rank ticks with the rank-jump check, the final sweep with
 * tie-breakers, the end of the verification hold, and the safety sweep.
 */

export const ADVANCE_TASK = 'contests.advance';
// graphile-worker's crontab does not accept dots in task names, so the cron task uses a colon.
export const SWEEP_TASK = 'contests:sweep';
/** How often an active contest recomputes its ranks (spec time; scaled by TIME_SCALE). */
export const RANK_TICK_MS = 60_000;
/** Ticks are never closer than this in real time, however small TIME_SCALE is. */
export const RANK_TICK_MIN_MS = 250;
/** The rank-jump cap counts climbs within this window. */
export const RANK_JUMP_WINDOW_MINUTES = 60;
export const TIE_GROUPS_AUDITED_MAX = 100;
export const SWEEP_BATCH_MAX = 500;
export const LIFETIME_LOOKUPS_MAX = 1000;

type ContestStatus = ContestRow['status'];

function tickIntervalMs(config: Config): number {
  return Math.max(RANK_TICK_MIN_MS, RANK_TICK_MS * config.timeScale);
}

export function verificationWindowMs(config: Config, hours: number): number {
  return hours * 3_600_000 * config.timeScale;
}

/**
 * Schedules the contest's lifecycle job for a moment of the service clock. The
 * job queue runs on the database's time, so the delay is translated; one job
 * key per contest keeps a single pending job.
 */
export async function scheduleAdvance(tx: Tx, config: Config, tenantId: string, contestId: string, dueMs: number): Promise<void> {
  const delayMs = Math.max(0, dueMs - clock.nowMs(tenantId));
  await addJob(tx, ADVANCE_TASK, { tenant_id: tenantId, contest_id: contestId }, { runAt: new Date(Date.now() + delayMs), jobKey: advanceJobKey(tenantId, contestId) });
  void config;
}

const advanceJobKey = (tenantId: string, contestId: string) => `contests.advance:${tenantId}:${contestId}`;

/** Steps the contest forward as far as the clock allows, one transaction per step, then schedules the next step. */
export async function advanceContest(db: Database, config: Config, tenantId: string, contestId: string): Promise<ContestStatus | null> {
  for (let step = 0; step < 5; step++) {
    const moved = await db.tenant(tenantId, async (tx) => {
      const contest = await store.readContest(tx, tenantId, contestId, true);
      if (!contest) return { moved: false, status: null };
      const now = clock.now(tenantId);
      const result = await stepContest(tx, config, tenantId, contest, now);
      if (!result.moved) await scheduleNext(tx, config, tenantId, result.contest);
      return { moved: result.moved, status: result.contest.status };
    });
    if (!moved.moved) return moved.status as ContestStatus | null;
  }
  return null;
}

async function scheduleNext(tx: Tx, config: Config, tenantId: string, contest: ContestRow): Promise<void> {
  const now = clock.nowMs(tenantId);
  switch (contest.status) {
    case 'scheduled':
      return scheduleAdvance(tx, config, tenantId, contest.id, new Date(contest.starts_at).getTime());
    case 'active':
      return scheduleAdvance(tx, config, tenantId, contest.id, Math.min(new Date(contest.ends_at).getTime(), now + tickIntervalMs(config)));
    case 'scoring':
      return scheduleAdvance(tx, config, tenantId, contest.id, now);
    case 'completed':
      if (!contest.prizes_issued_at && contest.verification_ends_at) {
        return scheduleAdvance(tx, config, tenantId, contest.id, new Date(contest.verification_ends_at).getTime());
      }
      return;
    default:
      return;
  }
}

async function stepContest(tx: Tx, config: Config, tenantId: string, contest: ContestRow, now: Date): Promise<{ moved: boolean; contest: ContestRow }> {
  const nowMs = now.getTime();
  switch (contest.status) {
    case 'scheduled':
      if (nowMs < new Date(contest.starts_at).getTime()) return { moved: false, contest };
      return { moved: true, contest: await store.updateContest(tx, tenantId, contest.id, { status: 'active', activatedAt: now }, now) };
    case 'active': {
      await checkRankJumps(tx, tenantId, contest, now);
      if (nowMs < new Date(contest.ends_at).getTime()) return { moved: false, contest };
      return { moved: true, contest: await store.updateContest(tx, tenantId, contest.id, { status: 'scoring', scoringStartedAt: now }, now) };
    }
    case 'scoring':
      return { moved: true, contest: await finalSweep(tx, config, tenantId, contest, now) };
    case 'completed':
      if (contest.prizes_issued_at || !contest.verification_ends_at || nowMs < new Date(contest.verification_ends_at).getTime()) {
        return { moved: false, contest };
      }
      await issueVerifiedPrizes(tx, tenantId, contest.id, null, now);
      return { moved: true, contest: await store.updateContest(tx, tenantId, contest.id, { prizesIssuedAt: now }, now) };
    default:
      return { moved: false, contest };
  }
}

async function checkRankJumps(tx: Tx, tenantId: string, contest: ContestRow, now: Date): Promise<void> {
  const cap = (contest.fraud_rules as FraudRules).max_rank_jump_per_hour ?? null;
  const jumps = await store.tickRanks(tx, tenantId, contest.id, now, cap);
  if (jumps.length === 0) return;
  await emit(
    tx,
    tenantId,
    jumps.map((j) => ({
      event: 'fraud.suspicious_rank_jump',
      participantId: j.participant_id,
      data: {
        participant_id: j.participant_id,
        contest_id: contest.id,
        entry_id: j.entry_id,
        from_rank: j.from_rank,
        to_rank: j.to_rank,
        window_minutes: RANK_JUMP_WINDOW_MINUTES,
        limit: cap,
      },
    })),
  );
  await store.setEntryStatus(
    tx,
    tenantId,
    jumps.map((j) => ({ contestId: contest.id, participantId: j.participant_id, to: 'flagged', reason: `suspicious_rank_jump:${j.from_rank}->${j.to_rank}` })),
    'fraud',
    now,
    ['active'],
  );
}

/**
 * The lifetime score of tied participants, for the second tie-breaker: the
 * participant's lifetime points, read through the points module's public
 * surface. Only entries that tie on score and time are looked up, at most
 * LIFETIME_LOOKUPS_MAX of them; beyond that the draw decides.
 */
async function lifetimeScores(tx: Tx, tenantId: string, participantIds: string[]): Promise<Map<string, number>> {
  const result = new Map<string, number>();
  for (const participantId of participantIds.slice(0, LIFETIME_LOOKUPS_MAX)) {
    result.set(participantId, (await readBalanceInTx(tx, tenantId, participantId)).lifetime);
  }
  return result;
}

/**
 * The final sweep (status `scoring`): freezes the final ranks with the
 * tie-breakers, allocates the prizes by rank until the liability cap, puts
 * winners into verification (suspicious ones into manual review), marks the
 * contest completed and emits `contest.completed.v1` — all in one transaction.
 */
async function finalSweep(tx: Tx, config: Config, tenantId: string, contest: ContestRow, now: Date): Promise<ContestRow> {
  const startedMs = Date.now();
  const groups = await store.tiedGroups(tx, tenantId, contest.id, TIE_GROUPS_AUDITED_MAX);
  const seed = randomBytes(16).toString('hex');
  const lifetime = await lifetimeScores(tx, tenantId, groups.flatMap((g) => g.participants));
  const tiers = [...contest.prize_structure].sort((a, b) => a.rank_from - b.rank_from);
  const lastPrizeRank = tiers.length ? tiers[tiers.length - 1].rank_to : 0;
  await store.freezeFinalRanks(tx, tenantId, contest.id, seed, lifetime, lastPrizeRank);
  const resolved = groups.length ? await store.finalRanksOf(tx, tenantId, contest.id, groups.flatMap((g) => g.participants)) : [];
  const rankOfParticipant = new Map(resolved.map((r) => [r.participant_id, r.final_rank]));
  const tieBreak = {
    seed,
    method: 'score desc, earliest to reach the score, lifetime points desc, then md5(seed || entry_id) asc',
    groups: groups.map((g) => ({
      score: Number(g.score),
      reached_at: iso(g.reached_at),
      entries: g.participants
        .map((p, i) => ({ participant_id: p, entry_id: g.entry_ids[i], lifetime: lifetime.get(p) ?? 0, draw: drawOf(seed, g.entry_ids[i]), final_rank: rankOfParticipant.get(p) ?? null }))
        .sort((a, b) => (a.final_rank ?? 0) - (b.final_rank ?? 0)),
    })),
  };

  const placed = await store.entriesUpToRank(tx, tenantId, contest.id, lastPrizeRank);
  const { allocations, liability } = allocate(placed, tiers, Number(contest.max_reward_liability));
  const reviews = await verificationReasons(tx, tenantId, contest, placed, allocations);

  const statusChanges: Array<{ contestId: string; participantId: string; to: string; reason: string }> = [];
  const reviewRows: Array<{ id: string; contestId: string; participantId: string; entryId: string; reasons: string[] }> = [];
  for (const allocation of allocations) {
    if (allocation.status === 'unfunded') {
      statusChanges.push({ contestId: contest.id, participantId: allocation.participant_id, to: 'unfunded', reason: 'max_reward_liability reached' });
      continue;
    }
    const reasons = reviews.get(allocation.participant_id);
    if (reasons && reasons.length > 0) {
      allocation.status = 'held';
      reviewRows.push({ id: prefixedId('rev', 12), contestId: contest.id, participantId: allocation.participant_id, entryId: allocation.entry_id, reasons });
      statusChanges.push({ contestId: contest.id, participantId: allocation.participant_id, to: 'under_review', reason: reasons.join(',') });
    } else {
      statusChanges.push({ contestId: contest.id, participantId: allocation.participant_id, to: 'winner', reason: `rank ${allocation.rank}: pending verification` });
    }
  }
  // Ranks inside the prize range that fall in a gap between tiers win nothing.
  const allocated = new Set(allocations.map((a) => a.participant_id));
  for (const entry of placed) {
    if (!allocated.has(entry.participant_id) && (entry.status === 'active' || entry.status === 'flagged')) {
      statusChanges.push({ contestId: contest.id, participantId: entry.participant_id, to: 'finished', reason: 'ranked outside the prizes' });
    }
  }
  await store.insertAllocations(tx, tenantId, contest.id, allocations, now);
  await store.insertReviews(tx, tenantId, reviewRows, now);
  await store.setEntryStatus(tx, tenantId, statusChanges, 'lifecycle', now);

  const events = reviewRows.map((r) => ({
    event: 'fraud.review_required',
    participantId: r.participantId,
    data: { participant_id: r.participantId, contest_id: contest.id, entry_id: r.entryId, reason: r.reasons.join(','), reasons: r.reasons },
  }));
  const completed = await store.updateContest(
    tx,
    tenantId,
    contest.id,
    {
      status: 'completed',
      completedAt: now,
      verificationEndsAt: new Date(now.getTime() + verificationWindowMs(config, contest.verification_window_hours)),
      liabilityAllocated: liability,
      tieBreak,
      finalSweepMs: Date.now() - startedMs,
    },
    now,
  );
  await emit(tx, tenantId, [
    ...events,
    { event: 'contest.completed.v1', participantId: null, data: { participant_id: null, contest_id: contest.id, completed_at: now.toISOString(), total_entries: contest.entry_count } },
  ]);
  return completed;
}

function drawOf(seed: string, entryId: string): string {
  // Mirrors md5(seed || entry_id) in the final ranking so the audit shows the draw that decided.
  return createHash('md5').update(seed + entryId).digest('hex');
}

/**
 * The safety sweep: finds contests with a due step across tenants and makes
 * sure their job runs now; then does the same for each sandbox tenant whose
 * test clock runs ahead, on that tenant's clock.
 */
export async function enqueueDueContests(db: Database, config: Config): Promise<number> {
  const { rows } = await db.system.query<{ tenant_id: string; id: string }>(store.DUE_CONTESTS_SQL, [clock.now(), SWEEP_BATCH_MAX]);
  for (const tenantId of clock.tenantsWithTestClock()) {
    const due = await db.tenant(tenantId, (tx) => store.dueContestsOfTenant(tx, tenantId, clock.now(tenantId), SWEEP_BATCH_MAX));
    rows.push(...due.map((d) => ({ tenant_id: tenantId, id: d.id })));
  }
  for (const row of rows) {
    await db.tenant(row.tenant_id, (tx) => scheduleAdvance(tx, config, row.tenant_id, row.id, clock.nowMs(row.tenant_id)));
  }
  return rows.length;
}

/**
 * Runs the tenant's due contest steps now, in this call, rather than through
 * the queue (the test clock's advance): each due contest is stepped as far as
 * the tenant's clock allows. Returns how many contests started, completed (final
 * sweep and winners drawn) and had their prizes issued.
 */
export async function advanceDueContests(db: Database, config: Config, tenantId: string): Promise<Record<string, number>> {
  const due = await db.tenant(tenantId, (tx) => store.dueContestsOfTenant(tx, tenantId, clock.now(tenantId), SWEEP_BATCH_MAX));
  const counts = { contests_started: 0, contests_completed: 0, contest_prizes_issued: 0 };
  for (const before of due) {
    await advanceContest(db, config, tenantId, before.id);
    const after = await db.tenant(tenantId, (tx) => store.readContest(tx, tenantId, before.id));
    if (!after) continue;
    if (before.status === 'scheduled' && after.status !== 'scheduled') counts.contests_started += 1;
    if (before.status !== 'completed' && after.status === 'completed') counts.contests_completed += 1;
    if (before.prizes_issued_at === null && after.prizes_issued_at !== null) counts.contest_prizes_issued += 1;
  }
  return counts;
}
