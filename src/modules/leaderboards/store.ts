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
): Promise<{ total: number; generation: number }> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`leaderboard:${tenantId}:${board.id}:${periodStart}`]);
  const previous = await snapshot(tx, tenantId, board.id, periodStart);
  const generation = (previous?.generation ?? 0) + 1;
  const source =
    board.metric === 'lifetime_points'
      ? LIFETIME_POINTS_SQL
      : `SELECT participant_id, score, reached_at FROM leaderboard_period_points WHERE tenant_id = $1 AND period = $5 AND period_start = $3::date AND score > 0`;
  const params: unknown[] = [tenantId, board.id, periodStart, generation];
  if (board.metric !== 'lifetime_points') params.push(board.period);
  const inserted = await tx.query(
    `INSERT INTO leaderboard_rankings (tenant_id, leaderboard_id, period_start, generation, rank, participant_id, score)
     SELECT $1, $2, $3::date, $4, row_number() OVER (ORDER BY s.score DESC, s.reached_at, s.participant_id), s.participant_id, s.score
     FROM (${source}) s`,
    params,
  );
  return { total: inserted.rowCount ?? 0, generation };
}

export async function saveSnapshot(
  tx: Tx,
  tenantId: string,
  leaderboardId: string,
  periodStart: string,
  s: { generation: number; total: number; refreshedAt: Date; refreshMs: number; final: boolean },
): Promise<void> {
  await tx.query(
    `INSERT INTO leaderboard_snapshots (tenant_id, leaderboard_id, period_start, generation, total_participants, refreshed_at, refresh_ms, final)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (tenant_id, leaderboard_id, period_start) DO UPDATE
       SET generation = $4, total_participants = $5, refreshed_at = $6, refresh_ms = $7, final = $8`,
    [tenantId, leaderboardId, periodStart, s.generation, s.total, s.refreshedAt, s.refreshMs, s.final],
  );
  await tx.query(
    'DELETE FROM leaderboard_rankings WHERE tenant_id = $1 AND leaderboard_id = $2 AND period_start = $3 AND generation < $4',
    [tenantId, leaderboardId, periodStart, s.generation],
  );
}

export interface RankedRow {
  rank: number;
  participant_id: string;
  display_name: string | null;
  score: number;
}

export async function top(tx: Tx, tenantId: string, leaderboardId: string, periodStart: string, generation: number, limit: number): Promise<RankedRow[]> {
  const { rows } = await tx.query(
    `SELECT r.rank, r.participant_id, p.display_name, r.score
     FROM leaderboard_rankings r
     LEFT JOIN participants p ON p.tenant_id = r.tenant_id AND p.participant_id = r.participant_id
     WHERE r.tenant_id = $1 AND r.leaderboard_id = $2 AND r.period_start = $3 AND r.generation = $4 AND r.rank <= $5
     ORDER BY r.rank`,
    [tenantId, leaderboardId, periodStart, generation, limit],
  );
  return rows;
}

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
      // The neighbours as a LATERAL with a LIMIT: a range bounded by another row's rank is estimated at a ninth of
      // the table, and planned as a hash join over every participant (1M rows: a parallel scan per read).
      // The generation as a sub-select (an InitPlan, a value unknown to the planner): each rebuild's generation is
      // newer than the column's statistics, so a constant is estimated at one row, the primary key (which ends in
      // the rank) ties with the participant index, and when it wins the lookup filters every row of the board
      // (1M: 5.8 ms mean at 1,000 reads/s, 1 s under load, 3 Dec). Unknown, it is estimated as the board's
      // share, and only the participant index finds one row.
      `SELECT r.rank, r.participant_id, p.display_name, r.score
       FROM leaderboard_rankings m
       CROSS JOIN LATERAL (
         SELECT n.rank, n.participant_id, n.score FROM leaderboard_rankings n
         WHERE n.tenant_id = m.tenant_id AND n.leaderboard_id = m.leaderboard_id AND n.period_start = m.period_start
           AND n.generation = m.generation AND n.rank BETWEEN m.rank - $6 AND m.rank + $6
         ORDER BY n.rank LIMIT 2 * $6::int + 1) r
       LEFT JOIN LATERAL (SELECT q.display_name FROM participants q WHERE q.tenant_id = m.tenant_id AND q.participant_id = r.participant_id LIMIT 1) p ON true
       WHERE m.tenant_id = $1 AND m.leaderboard_id = $2 AND m.period_start = $3 AND m.generation = (SELECT $4::bigint) AND m.participant_id = $5
       ORDER BY r.rank`,
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

