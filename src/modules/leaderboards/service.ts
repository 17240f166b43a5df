import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { conflict, fieldError, invalid, notFound } from '../../platform/errors.js';
import { uuid } from '../../platform/ids.js';
import type { PublicCaller } from '../challenges/index.js';
import * as store from './store.js';
import { boardChanged, cachedAnswer, cachedEntry, type Answer, type Stamp } from './read-cache.js';
import { ensurePeriodTotals } from './totals.js';
import { LIFETIME_PERIOD_START, REFRESH_SECONDS_DEFAULT, type CreateLeaderboardBody, type PublicQuery, type StandingsQuery, type UpdateLeaderboardBody } from './schemas.js';

/**
 * Progression leaderboards. Period totals are kept current by the module's
 * outbox follower on points.awarded.v1 (totals.ts); rankings are
 * materialised snapshots rebuilt every `refresh_seconds` by a job
 * (contradiction 11: "computed on the fly" and "refresh every 30 seconds" —
 * reads never compute, they read the last snapshot, whose age is
 * `updated_at`).
 */

function present(row: store.LeaderboardRow) {
  return {
    id: row.id,
    leaderboard_code: row.leaderboard_code,
    name: row.name,
    metric: row.metric,
    period: row.period,
    engagement_id: row.engagement_id,
    refresh_seconds: row.refresh_seconds,
    status: row.status,
    last_refreshed_at: row.last_refreshed_at?.toISOString() ?? null,
    last_refresh_ms: row.last_refresh_ms,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export async function create(db: Database, tenantId: string, body: CreateLeaderboardBody) {
  if (body.metric === 'period_points' && !body.period) throw invalid('a period_points leaderboard needs period (weekly or monthly)', undefined, { errors: [fieldError('/period', 'required', 'is required for a period_points leaderboard', { allowed: ['weekly', 'monthly'] })] });
  if (body.metric === 'lifetime_points' && body.period) throw invalid('a lifetime_points leaderboard has no period', undefined, { errors: [fieldError('/period', 'not_allowed', 'is not allowed for a lifetime_points leaderboard')] });
  const id = uuid();
  const refreshSeconds = body.refresh_seconds ?? REFRESH_SECONDS_DEFAULT;
  // The tenant's first period board: its period totals are switched on and filled from the ledger first.
  if (body.metric === 'period_points') await ensurePeriodTotals(db, tenantId);
  return db.tenant(tenantId, async (tx) => {
    const inserted = await store.insertLeaderboard(tx, tenantId, {
      id,
      code: body.leaderboard_code,
      name: body.name,
      metric: body.metric,
      period: body.period ?? null,
      engagementId: body.engagement_id ?? null,
      refreshSeconds,
      now: clock.now(),
    });
    if (!inserted) throw conflict(`a leaderboard with the code "${body.leaderboard_code}" already exists`, 'LEADERBOARD_CODE_TAKEN');
    const row = (await store.findById(tx, tenantId, id))!;
    // The first ranking is built at once, so the board is readable immediately; then the job keeps it fresh.
    await refreshInTx(tx, tenantId, row);
    await store.scheduleRefresh(tx, tenantId, id, refreshSeconds, 'replace');
    return present((await store.findById(tx, tenantId, id))!);
  });
}

async function findOr404(tx: Tx, tenantId: string, code: string) {
  const row = await store.findByCode(tx, tenantId, code);
  if (!row) throw notFound('leaderboard');
  return row;
}

export async function read(db: Database, tenantId: string, code: string) {
  return db.tenant(tenantId, async (tx) => present(await findOr404(tx, tenantId, code)));
}

export async function list(db: Database, tenantId: string) {
  return db.tenant(tenantId, async (tx) => ({ leaderboards: (await store.list(tx, tenantId)).map(present) }));
}

export async function update(db: Database, tenantId: string, code: string, body: UpdateLeaderboardBody) {
  return afterChange(tenantId, code, db.tenant(tenantId, async (tx) => {
    const row = await findOr404(tx, tenantId, code);
    await store.update(tx, tenantId, row.id, body, clock.now());
    if (body.refresh_seconds !== undefined && row.status === 'active') await store.scheduleRefresh(tx, tenantId, row.id, body.refresh_seconds, 'replace');
    return present((await store.findById(tx, tenantId, row.id))!);
  }));
}

/** The public answers cached in this process forget the board once its change committed (read-cache.ts). */
async function afterChange<T>(tenantId: string, code: string, committed: Promise<T>): Promise<T> {
  try {
    return await committed;
  } finally {
    boardChanged(tenantId, code);
  }
}

export async function archive(db: Database, tenantId: string, code: string) {
  return afterChange(tenantId, code, db.tenant(tenantId, async (tx) => {
    const row = await findOr404(tx, tenantId, code);
    await store.update(tx, tenantId, row.id, { status: 'archived' }, clock.now());
    return present((await store.findById(tx, tenantId, row.id))!);
  }));
}

/**
 * Rebuilds the board's current ranking; for a period board whose previous
 * period has not been frozen yet, rebuilds that one a last time and marks it
 * final (points awarded after a period ends count in the next one, so a
 * ranking rebuilt after the end no longer changes).
 */
export async function refreshInTx(tx: Tx, tenantId: string, board: store.LeaderboardRow) {
  const now = clock.now();
  let periodStart = LIFETIME_PERIOD_START;
  if (board.period) {
    const zone = await store.tenantZone(tx, tenantId);
    const bounds = await store.currentPeriod(tx, board.period, now, zone);
    periodStart = bounds.current_start;
    const previous = await store.snapshot(tx, tenantId, board.id, bounds.previous_start);
    if (!previous?.final) await rebuildOne(tx, tenantId, board, bounds.previous_start, true, now);
  }
  return { periodStart, ...(await rebuildOne(tx, tenantId, board, periodStart, false, now)) };
}

async function rebuildOne(tx: Tx, tenantId: string, board: store.LeaderboardRow, periodStart: string, final: boolean, now: Date) {
  const started = process.hrtime.bigint();
  const ranking = await store.rebuild(tx, tenantId, board, periodStart);
  const refreshMs = Number((process.hrtime.bigint() - started) / 1_000_000n);
  await store.saveSnapshot(tx, tenantId, board.id, periodStart, { ranking, refreshedAt: now, refreshMs, final });
  return { total: ranking.total, refreshMs, refreshedAt: now };
}

export async function refreshNow(db: Database, tenantId: string, code: string) {
  return afterChange(tenantId, code, db.tenant(tenantId, async (tx) => {
    const board = await findOr404(tx, tenantId, code);
    const result = await refreshInTx(tx, tenantId, board);
    return {
      leaderboard_code: board.leaderboard_code,
      period_start: board.period ? result.periodStart : null,
      total_participants: result.total,
      refreshed_at: result.refreshedAt.toISOString(),
      refresh_ms: result.refreshMs,
    };
  }));
}

/**
 * The refresh job: rebuild, then queue the next run; an archived or deleted board stops its chain. It runs on
 * the background connections, which on one machine yield the CPU to the API's (platform/background-priority.ts).
 */
export async function refreshJob(db: Database, tenantId: string, leaderboardId: string): Promise<void> {
  const code = await db.tenantInBackground(tenantId, async (tx) => {
    const board = await store.findById(tx, tenantId, leaderboardId);
    if (!board || board.status !== 'active') return null;
    await refreshInTx(tx, tenantId, board);
    await store.scheduleRefresh(tx, tenantId, board.id, board.refresh_seconds, 'replace');
    return board.leaderboard_code;
  });
  if (code !== null) boardChanged(tenantId, code);
}

/** Every minute: make sure every active board has its refresh queued (a lost chain restarts within a minute). */
export async function scheduleSweep(db: Database): Promise<void> {
  for (const board of await store.allActive(db.system)) {
    await store.scheduleRefresh(db.system, board.tenant_id, board.id, 0, 'preserve_run_at');
  }
}

function entry(row: store.RankedRow, me: string | null) {
  return { rank: row.rank, participant_id: row.participant_id, display_name: row.display_name, score: row.score, avatar_url: null, is_me: row.participant_id === me };
}

/**
 * The public read, serialized by `serialize` (the route's own serializer) and
 * kept in memory for a moment (read-cache.ts): identical reads of the same
 * caller get the same bytes without touching the database. A participant's
 * read that is not in memory reuses the board's shared part (the board, its
 * snapshot, the top page; kept in memory the same way) and asks the database
 * only for the participant's rank and neighbours, in one round trip.
 */
export async function readPublic(db: Database, caller: PublicCaller, code: string, query: PublicQuery, serialize: (answer: Ranking) => string): Promise<Answer> {
  if (caller.engagementId && caller.engagementId !== query.engagement_id) throw invalid('engagement_id differs from the session\'s engagement');
  if (query.around > 0 && !caller.participantId) throw invalid('around needs session_id: it lists the neighbours of the caller');
  const key = { tenantId: caller.tenantId, code, engagementId: query.engagement_id, participantId: caller.participantId, limit: query.limit, around: query.around, periodStart: query.period_start };
  return cachedAnswer(key, async () => {
    const { answer, since } = await participantRanking(db, caller, code, query);
    return { body: serialize(answer), since };
  });
}

/**
 * The shared part from memory (kept as JSON), or read now. An answer made
 * from it ages from the part's read, so the part is recomputed early (from
 * 0.3 of the TTL, while still used) and not used past half of it (the read
 * waits for the recomputation): answers made from it stay fresh for at least
 * 0.3 of the TTL and fall due at different moments.
 */
const STANDING_SHARES = { fresh: 0.3, served: 0.5 };

async function sharedStanding(db: Database, tenantId: string, code: string, query: Omit<PublicQuery, 'around'>): Promise<{ standing: Standing; since: Stamp }> {
  const key = { tenantId, code, engagementId: query.engagement_id, participantId: null, limit: query.limit, around: 0, periodStart: query.period_start, part: 'standing' as const };
  const { answer, since } = await cachedEntry(key, async () => JSON.stringify(await readStanding(db, tenantId, code, query)), STANDING_SHARES);
  return { standing: JSON.parse(answer.body) as Standing, since };
}

async function participantRanking(db: Database, caller: PublicCaller, code: string, query: PublicQuery): Promise<{ answer: Ranking; since: Stamp }> {
  const me = caller.participantId;
  let { standing, since } = await sharedStanding(db, caller.tenantId, code, query);
  if (!me) return { answer: ranking(standing, null), since };
  let view = await store.participantView(db, caller.tenantId, standing.board, me, query.around);
  if (!view.current) {
    // Rebuilt by another process since the shared part was read: every answer of the board in memory is outdated.
    boardChanged(caller.tenantId, code);
    ({ standing, since } = await sharedStanding(db, caller.tenantId, code, query));
    view = await store.participantView(db, caller.tenantId, standing.board, me, query.around);
  }
  const own = view.rows.find((row) => row.participant_id === me);
  const answer = ranking(standing, {
    me: own ? entry(own, me) : { rank: null, participant_id: me, display_name: view.displayName, score: 0, avatar_url: null, is_me: true },
    around: query.around > 0 ? view.rows.map((row) => entry(row, me)) : null,
  });
  return { answer, since };
}

/**
 * The tenant's own view of a board's standings (the console): any board of the
 * tenant, whatever engagement it is scoped to, without a participant's `me`;
 * read afresh, not from memory.
 */
export async function readStandings(db: Database, tenantId: string, code: string, query: StandingsQuery) {
  return ranking(await readStanding(db, tenantId, code, query), null);
}

/** What a read of a board shows everyone, in JSON's terms (it is kept in memory as JSON). */
interface Standing {
  board: { id: string; periodStart: string; generation: number };
  leaderboard_code: string;
  name: string;
  metric: string;
  period: string | null;
  period_ends_at: string | null;
  next_reset_at: string | null;
  /** The snapshot's own `final`, null without a snapshot. */
  final: boolean | null;
  entries: store.RankedRow[];
  total_participants: number;
  updated_at: string | null;
  refresh_seconds: number;
}

type Ranking = ReturnType<typeof ranking>;

function ranking(standing: Standing, mine: { me: ReturnType<typeof entry> | { rank: null; participant_id: string; display_name: string | null; score: number; avatar_url: null; is_me: true }; around: ReturnType<typeof entry>[] | null } | null) {
  const me = mine?.me.participant_id ?? null;
  const endsAt = standing.period_ends_at;
  return {
    leaderboard_code: standing.leaderboard_code,
    name: standing.name,
    metric: standing.metric,
    period: standing.period,
    period_start: standing.period ? standing.board.periodStart : null,
    period_ends_at: endsAt,
    next_reset_at: standing.next_reset_at,
    final: standing.final ?? (endsAt !== null && Date.parse(endsAt) <= clock.nowMs()),
    entries: standing.entries.map((r) => entry(r, me)),
    total_participants: standing.total_participants,
    updated_at: standing.updated_at,
    refresh_seconds: standing.refresh_seconds,
    me: mine?.me ?? null,
    around_me: mine?.around ?? null,
  };
}

/** `engagement_id` undefined reads a board of any scope: only the tenant's admin routes pass none. */
async function readStanding(db: Database, tenantId: string, code: string, query: { limit: number; period_start?: string; engagement_id?: string }): Promise<Standing> {
  // Standings are snapshots refreshed every few seconds: they may come from the replica.
  return db.staleRead(tenantId, async (tx) => {
    const board = await store.findByCode(tx, tenantId, code);
    const outOfScope = query.engagement_id !== undefined && board?.engagement_id != null && board.engagement_id !== query.engagement_id;
    if (!board || board.status !== 'active' || outOfScope) throw notFound('leaderboard');
    const now = clock.now();
    let periodStart = LIFETIME_PERIOD_START;
    let periodEndsAt: Date | null = null;
    let nextResetAt: Date | null = null;
    if (board.period) {
      const zone = await store.tenantZone(tx, tenantId);
      const bounds = await store.currentPeriod(tx, board.period, now, zone);
      nextResetAt = bounds.current_end;
      periodStart = bounds.current_start;
      periodEndsAt = bounds.current_end;
      if (query.period_start !== undefined && query.period_start !== bounds.current_start) {
        const asked = await store.periodOf(tx, board.period, query.period_start, zone);
        if (!asked.valid) throw invalid(`period_start ${query.period_start} is not the first day of a ${board.period} period (${board.period === 'weekly' ? 'a Monday' : 'the 1st of a month'})`);
        if (query.period_start > bounds.current_start) throw invalid(`period_start ${query.period_start} is in the future; the current period started ${bounds.current_start}`);
        periodStart = query.period_start;
        periodEndsAt = asked.ends_at;
      }
    } else if (query.period_start !== undefined) {
      throw invalid('period_start applies to period leaderboards only; this one ranks lifetime points');
    }
    const snapshot = await store.snapshot(tx, tenantId, board.id, periodStart);
    const rows = snapshot ? await store.top(tx, tenantId, board.id, periodStart, snapshot.generation, query.limit) : [];
    return {
      board: { id: board.id, periodStart, generation: snapshot?.generation ?? 0 },
      leaderboard_code: board.leaderboard_code,
      name: board.name,
      metric: board.metric,
      period: board.period,
      period_ends_at: periodEndsAt?.toISOString() ?? null,
      next_reset_at: nextResetAt?.toISOString() ?? null,
      final: snapshot?.final ?? null,
      entries: rows,
      total_participants: snapshot?.total_participants ?? 0,
      updated_at: snapshot?.refreshed_at.toISOString() ?? null,
      refresh_seconds: board.refresh_seconds,
    };
  });
}
