import type pg from 'pg';
import type { Database, Tx } from '../../platform/db.js';
import { LIFETIME_PERIOD_START } from './schemas.js';
import { LIFETIME_POINTS_SQL } from '../points/index.js';

/** Every SQL statement on the leaderboard tables. */
export interface LeaderboardRow {
  id: string;
  leaderboard_code: string;
  name: string;
  metric: 'lifetime_points' | 'period_points';
  period: 'weekly' | 'monthly' | null;
  engagement_id: string | null;
  refresh_seconds: number;
  status: 'active' | 'archived';
  created_at: Date;
  updated_at: Date;
  last_refreshed_at: Date | null;
  last_refresh_ms: number | null;
}

const COLUMNS = `l.id, l.leaderboard_code, l.name, l.metric, l.period, l.engagement_id, l.refresh_seconds, l.status, l.created_at, l.updated_at,
  (SELECT max(s.refreshed_at) FROM leaderboard_snapshots s WHERE s.tenant_id = l.tenant_id AND s.leaderboard_id = l.id) AS last_refreshed_at,
  (SELECT s.refresh_ms FROM leaderboard_snapshots s WHERE s.tenant_id = l.tenant_id AND s.leaderboard_id = l.id ORDER BY s.refreshed_at DESC LIMIT 1) AS last_refresh_ms`;

export async function insertLeaderboard(
  tx: Tx,
  tenantId: string,
  b: { id: string; code: string; name: string; metric: string; period: string | null; engagementId: string | null; refreshSeconds: number; now: Date },
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO leaderboards (tenant_id, id, leaderboard_code, name, metric, period, engagement_id, refresh_seconds, status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'active', $9, $9) ON CONFLICT (tenant_id, leaderboard_code) DO NOTHING`,
    [tenantId, b.id, b.code, b.name, b.metric, b.period, b.engagementId, b.refreshSeconds, b.now],
  );
  return rowCount === 1;
}

export async function findByCode(tx: Tx, tenantId: string, code: string): Promise<LeaderboardRow | null> {
  const { rows } = await tx.query(`SELECT ${COLUMNS} FROM leaderboards l WHERE l.tenant_id = $1 AND l.leaderboard_code = $2`, [tenantId, code]);
  return rows[0] ?? null;
}

export async function findById(tx: Tx, tenantId: string, id: string): Promise<LeaderboardRow | null> {
  const { rows } = await tx.query(`SELECT ${COLUMNS} FROM leaderboards l WHERE l.tenant_id = $1 AND l.id = $2`, [tenantId, id]);
  return rows[0] ?? null;
}

export async function list(tx: Tx, tenantId: string): Promise<LeaderboardRow[]> {
  const { rows } = await tx.query(`SELECT ${COLUMNS} FROM leaderboards l WHERE l.tenant_id = $1 ORDER BY l.leaderboard_code LIMIT 500`, [tenantId]);
  return rows;
}

export async function update(tx: Tx, tenantId: string, id: string, fields: Record<string, unknown>, now: Date): Promise<void> {
  const names = Object.keys(fields);
  await tx.query(
    `UPDATE leaderboards SET ${names.map((n, i) => `${n} = $${i + 4}`).join(', ')}${names.length ? ', ' : ''}updated_at = $3 WHERE tenant_id = $1 AND id = $2`,
    [tenantId, id, now, ...names.map((n) => fields[n])],
  );
}

export async function tenantZone(tx: Tx, tenantId: string): Promise<string> {
  const { rows } = await tx.query('SELECT timezone FROM tenants WHERE id = $1', [tenantId]);
  return (rows[0]?.timezone as string | undefined) ?? 'UTC';
}

export interface PeriodBounds {
  current_start: string;
  current_end: Date;
  previous_start: string;
}

export async function currentPeriod(tx: Tx, period: string, now: Date, zone: string): Promise<PeriodBounds> {
  const { rows } = await tx.query(
    `SELECT to_char(s, 'YYYY-MM-DD') AS current_start, leaderboard_period_end($1, s, $3) AS current_end,
            to_char(leaderboard_period_previous($1, s), 'YYYY-MM-DD') AS previous_start
     FROM leaderboard_period_start($1, $2::timestamptz, $3) AS s`,
    [period, now, zone],
  );
  return rows[0];
}

/** Whether the date starts a period of this kind, and when that period ends. */
export async function periodOf(tx: Tx, period: string, start: string, zone: string): Promise<{ valid: boolean; ends_at: Date }> {
  const { rows } = await tx.query(
    `SELECT leaderboard_period_start($1, ($2::date)::timestamp AT TIME ZONE $3, $3) = $2::date AS valid, leaderboard_period_end($1, $2::date, $3) AS ends_at`,
    [period, start, zone],
  );
  return rows[0];
}

export interface Snapshot {
  generation: number;
  total_participants: number;
  refreshed_at: Date;
  refresh_ms: number;
  final: boolean;
}

export async function snapshot(tx: Tx, tenantId: string, leaderboardId: string, periodStart: string): Promise<Snapshot | null> {
  const { rows } = await tx.query(
    `SELECT generation, total_participants, refreshed_at, refresh_ms, final FROM leaderboard_snapshots
     WHERE tenant_id = $1 AND leaderboard_id = $2 AND period_start = $3`,
    [tenantId, leaderboardId, periodStart],
  );
  return rows[0] ?? null;
}

/**
 * A ranking is kept in pages of ranks (leaderboard_rank_pages: page n holds
 * ranks n * RANKS_PER_PAGE + 1 onwards, in order) and a look-up of each
 * participant's rank (leaderboard_rank_lookup), in as many buckets as there
 * are pages (the snapshot's `lookup_buckets`), by a hash of the participant's
 * id: two rows per hundred participants, where a row per participant cost
 * four to five times as much to rebuild (migration 1480,
 * docs/performance/leaderboards.md). A page of 100 ranks is the largest top
 * page a read asks for, and the tables keep rows of up to 8 KB whole (100
 * ids of up to about 70 characters): nothing to decompress.
 */
const RANKS_PER_PAGE = 100;

/** SQL: the look-up bucket of participant `id` among `count` buckets. */
const bucketOf = (id: string, count: string) => `((hashtextextended(${id}, 0) & 9223372036854775807) % ${count})::int`;

/** A ranking as rebuilt, for its snapshot. */
export interface Ranking {
  generation: number;
  total: number;
  lookupBuckets: number;
}

/**
 * Rebuilds one ranking as a new generation, points the snapshot at it and
 * drops the previous generation, all in the caller's transaction: readers
 * see the old ranking or the new one, never a mix. Ties: higher score first,
 * then whoever reached the score first, then participant id.
 */
export async function rebuild(
  tx: Tx,
  tenantId: string,
  board: { id: string; metric: string; period: string | null },
  periodStart: string,
): Promise<Ranking> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`leaderboard:${tenantId}:${board.id}:${periodStart}`]);
  const previous = await snapshot(tx, tenantId, board.id, periodStart);
  const generation = (previous?.generation ?? 0) + 1;
  const source =
    board.metric === 'lifetime_points'
      ? LIFETIME_POINTS_SQL
      : `SELECT participant_id, score, reached_at FROM leaderboard_period_points WHERE tenant_id = $1 AND period = $5 AND period_start = $3::date AND score > 0`;
  const params: unknown[] = [tenantId, board.id, periodStart, generation];
  if (board.metric !== 'lifetime_points') params.push(board.period);
  const { rows } = await tx.query(
    `WITH ranked AS MATERIALIZED (
       SELECT row_number() OVER (ORDER BY s.score DESC, s.reached_at, s.participant_id)::int AS rank, s.participant_id, s.score FROM (${source}) s),
     counted AS MATERIALIZED (SELECT count(*)::int AS total, greatest(1, ceil(count(*) / ${RANKS_PER_PAGE}.0))::int AS buckets FROM ranked),
     pages AS (
       INSERT INTO leaderboard_rank_pages (tenant_id, leaderboard_id, period_start, generation, page, participant_ids, scores)
       SELECT $1, $2, $3::date, $4, (rank - 1) / ${RANKS_PER_PAGE}, array_agg(participant_id ORDER BY rank), array_agg(score ORDER BY rank)
       FROM ranked GROUP BY 5),
     lookup AS (
       INSERT INTO leaderboard_rank_lookup (tenant_id, leaderboard_id, period_start, generation, bucket, participant_ids, ranks)
       SELECT $1, $2, $3::date, $4, ${bucketOf('r.participant_id', 'c.buckets')}, array_agg(r.participant_id), array_agg(r.rank)
       FROM ranked r CROSS JOIN counted c GROUP BY 5)
     SELECT total, buckets FROM counted`,
    params,
  );
  return { generation, total: rows[0].total as number, lookupBuckets: rows[0].buckets as number };
}

export async function saveSnapshot(
  tx: Tx,
  tenantId: string,
  leaderboardId: string,
  periodStart: string,
  s: { ranking: Ranking; refreshedAt: Date; refreshMs: number; final: boolean },
): Promise<void> {
  const { generation, total, lookupBuckets } = s.ranking;
  await tx.query(
    `INSERT INTO leaderboard_snapshots (tenant_id, leaderboard_id, period_start, generation, total_participants, lookup_buckets, refreshed_at, refresh_ms, final)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (tenant_id, leaderboard_id, period_start) DO UPDATE
       SET generation = $4, total_participants = $5, lookup_buckets = $6, refreshed_at = $7, refresh_ms = $8, final = $9`,
    [tenantId, leaderboardId, periodStart, generation, total, lookupBuckets, s.refreshedAt, s.refreshMs, s.final],
  );
  await tx.query(
    `WITH pages AS (DELETE FROM leaderboard_rank_pages WHERE tenant_id = $1 AND leaderboard_id = $2 AND period_start = $3 AND generation < $4)
     DELETE FROM leaderboard_rank_lookup WHERE tenant_id = $1 AND leaderboard_id = $2 AND period_start = $3 AND generation < $4`,
    [tenantId, leaderboardId, periodStart, generation],
  );
}

export interface RankedRow {
  rank: number;
  participant_id: string;
  display_name: string | null;
  score: number;
}

/**
 * The `unnest` of ranks `first` to `last` of each joined page `g` (SQL; both bounds may fall outside the page),
 * as `x(participant_id, score, rank)`.
 */
const pageSlice = (first: string, last: string) =>
  `CROSS JOIN LATERAL (SELECT greatest(${first} - g.page * ${RANKS_PER_PAGE}, 1) AS lo, ${last} - g.page * ${RANKS_PER_PAGE} AS hi) w
   CROSS JOIN LATERAL (SELECT u.participant_id, u.score, (g.page * ${RANKS_PER_PAGE} + w.lo - 1 + u.i)::int AS rank
     FROM unnest(g.participant_ids[w.lo:w.hi], g.scores[w.lo:w.hi]) WITH ORDINALITY AS u(participant_id, score, i)) x`;

/** The top `$5` ranks of generation `$4` of a ranking (`$1` tenant, `$2` board, `$3` period), with display names. */
export const TOP_SQL = `SELECT x.rank, x.participant_id, p.display_name, x.score
  FROM leaderboard_rank_pages g
  ${pageSlice('1', '$5::int')}
  LEFT JOIN participants p ON p.tenant_id = g.tenant_id AND p.participant_id = x.participant_id
  WHERE g.tenant_id = $1 AND g.leaderboard_id = $2 AND g.period_start = $3 AND g.generation = $4 AND g.page <= ($5::int - 1) / ${RANKS_PER_PAGE}
  ORDER BY x.rank`;

export async function top(tx: Tx, tenantId: string, leaderboardId: string, periodStart: string, generation: number, limit: number): Promise<RankedRow[]> {
  const { rows } = await tx.query(TOP_SQL, [tenantId, leaderboardId, periodStart, generation, limit]);
  return rows;
}

/**
 * Participant `$5`'s row of generation `$4` of a ranking (`$1` tenant, `$2`
 * board, `$3` period) and its neighbours `$6` ranks either side, in rank
 * order: its rank from the look-up, then the pages it and its neighbours are
 * on. Row-level security applies its policy before any condition that calls a
 * function not marked leakproof on a column (division is not), and such a
 * condition is no index condition: the pages' bounds are computed first
 * (span), and compared as plain columns. The pages are read in a LATERAL
 * kept apart by OFFSET 0, so that its bounds are values from outside it (an
 * index range) and not a join's condition: as a join, a generation newer
 * than the statistics (each rebuild's) was estimated at one row, scanning
 * every page of it looked as cheap as the range, and was chosen (10,000 pages
 * read per view, 10 ms; 3 Dec).
 */
export const AROUND_SQL = `WITH me AS MATERIALIZED (
    SELECT l.ranks[array_position(l.participant_ids, $5)] AS rank FROM leaderboard_rank_lookup l
    WHERE l.tenant_id = $1 AND l.leaderboard_id = $2 AND l.period_start = $3 AND l.generation = $4
      AND l.bucket = ${bucketOf('$5', '(SELECT s.lookup_buckets FROM leaderboard_snapshots s WHERE s.tenant_id = $1 AND s.leaderboard_id = $2 AND s.period_start = $3 AND s.generation = $4)')}),
  span AS MATERIALIZED (
    SELECT greatest(rank - $6, 1) AS first_rank, rank + $6 AS last_rank,
           (greatest(rank - $6, 1) - 1) / ${RANKS_PER_PAGE} AS first_page, (rank + $6 - 1) / ${RANKS_PER_PAGE} AS last_page
    FROM me WHERE rank IS NOT NULL)
  SELECT x.rank, x.participant_id, p.display_name, x.score
  FROM span
  CROSS JOIN LATERAL (
    SELECT g.page, g.participant_ids, g.scores FROM leaderboard_rank_pages g
    WHERE g.tenant_id = $1 AND g.leaderboard_id = $2 AND g.period_start = $3 AND g.generation = $4
      AND g.page BETWEEN span.first_page AND span.last_page
    OFFSET 0) g
  ${pageSlice('span.first_rank', 'span.last_rank')}
  LEFT JOIN LATERAL (SELECT q.display_name FROM participants q WHERE q.tenant_id = $1 AND q.participant_id = x.participant_id LIMIT 1) p ON true
  ORDER BY x.rank`;

/**
 * A participant's part of a public read, in ONE round trip (`db.staleReadAll`,
 * on the replica when there is one), for a board whose shared part (the
 * board, its snapshot's generation, the top page) the caller already has,
 * perhaps from memory: the participant's row and its neighbours `around`
 * ranks either side (only its own row with 0), in rank order; its display
 * name, for when it is not ranked; and whether `generation` is still the
 * board's current one (0 for a board never built). When it is not (a rebuild
 * since the shared part was read), the rows are empty and the caller reads
 * the shared part again.
 */
export async function participantView(
  db: Database,
  tenantId: string,
  board: { id: string; periodStart: string; generation: number },
  participantId: string,
  around: number,
): Promise<{ rows: RankedRow[]; displayName: string | null; current: boolean }> {
  const [rows, [own]] = await db.staleReadAll(
    tenantId,
    [
      AROUND_SQL,
      `SELECT (SELECT display_name FROM participants WHERE tenant_id = $1 AND participant_id = $5) AS display_name,
              coalesce((SELECT generation FROM leaderboard_snapshots WHERE tenant_id = $1 AND leaderboard_id = $2 AND period_start = $3), 0) = $4 AS current`,
    ],
    [tenantId, board.id, board.periodStart, board.generation, participantId, around],
  );
  const view = own as { display_name: string | null; current: boolean };
  return { rows: rows as RankedRow[], displayName: view.display_name, current: view.current };
}

/** Queues the board's next refresh `afterSeconds` from now (database time), replacing any queued one. */
export async function scheduleRefresh(tx: Tx | pg.Pool, tenantId: string, leaderboardId: string, afterSeconds: number, mode: 'replace' | 'preserve_run_at'): Promise<void> {
  await tx.query(
    `SELECT graphile_worker.add_job('leaderboards.refresh', json_build_object('tenant_id', $1::uuid, 'leaderboard_id', $2::uuid),
       run_at => now() + make_interval(secs => $3), job_key => 'leaderboards.refresh:' || $1 || ':' || $2, job_key_mode => $4, max_attempts => 5)`,
    [tenantId, leaderboardId, afterSeconds, mode],
  );
}

/** Every active board of every tenant (for the schedule sweep, on the owner pool). */
export async function allActive(system: pg.Pool): Promise<Array<{ tenant_id: string; id: string; refresh_seconds: number }>> {
  const { rows } = await system.query(`SELECT tenant_id, id, refresh_seconds FROM leaderboards WHERE status = 'active'`);
  return rows;
}

