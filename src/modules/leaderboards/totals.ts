import type { Database } from '../../platform/db.js';
import { AppError } from '../../platform/errors.js';
import { clock } from '../../platform/clock.js';
import type { OutboxFollower } from '../../platform/outbox.js';
import { GRANTS_SQL } from '../points/index.js';

/**
 * The period points the period leaderboards rank, kept by the statement that
 * writes every points.awarded.v1 (the module's outbox follower: CTEs over
 * `written`, the outbox rows that statement inserts; until migration 1370 a
 * trigger on outbox_events did this where no module showed it): the sum of
 * the positive amounts per weekly and monthly period (tenant time zone),
 * reached at the latest of those events.
 *
 * Only for tenants that have had a period board (leaderboard_period_tenants,
 * migration 1475): two upserts per award are a tenth of a grant's cost, and
 * most tenants rank lifetime points or nothing. A tenant's first period board
 * fills the totals from the ledger first (`ensurePeriodTotals`).
 *
 * Lifetime boards rank the balances' lifetime itself (the points module's
 * LIFETIME_POINTS_SQL); until migration 1460 this follower kept a copy of it
 * in leaderboard_lifetime_points, one more row written per award.
 *
 * Events of an unexpected shape and participants that do not exist
 * (`participant_known`) are skipped, and the award never fails because of
 * them.
 */
export const pointsTotalsFollower: OutboxFollower = {
  sql: `leaderboards_awarded AS (
       SELECT n.participant_id, n.created_at,
              floor((n.data ->> 'amount')::numeric)::bigint AS amount
       FROM written n
       WHERE n.event = 'points.awarded.v1' AND n.participant_known
         AND n.participant_id IS NOT NULL
         AND jsonb_typeof(n.data -> 'amount') = 'number'
         AND EXISTS (SELECT 1 FROM leaderboard_period_tenants t WHERE t.tenant_id = $1)
     ),
     leaderboards_periods AS (
       INSERT INTO leaderboard_period_points AS p (tenant_id, period, period_start, participant_id, score, reached_at)
       SELECT $1::uuid, k.period, ${periodStart('k.period', 'a.created_at')} AS period_start,
              a.participant_id, sum(a.amount), max(a.created_at)
       FROM leaderboards_awarded a
       CROSS JOIN (VALUES ('weekly'), ('monthly')) AS k (period)
       WHERE a.amount > 0
       GROUP BY k.period, period_start, a.participant_id
       ON CONFLICT (tenant_id, period, period_start, participant_id) DO UPDATE
         SET score = p.score + EXCLUDED.score, reached_at = greatest(p.reached_at, EXCLUDED.reached_at)
     )`,
};

/** The first day of the period (`weekly` or `monthly`, an SQL expression) holding the time `at`, in the tenant's (`$1`) time zone. */
function periodStart(period: string, at: string): string {
  return `date_trunc(CASE ${period} WHEN 'weekly' THEN 'week' ELSE 'month' END,
                         ${at} AT TIME ZONE coalesce((SELECT t.timezone FROM tenants t WHERE t.id = $1), 'UTC'))::date`;
}

/**
 * The tenant's period totals as the points ledger sums them (`$1` the
 * tenant): the same sums the follower adds up, since every grant writes one
 * points.awarded.v1 of its amount at its time (the points module's GRANTS_SQL).
 */
const LEDGER_SUMS = `SELECT k.period, ${periodStart('k.period', 'g.at')} AS period_start, g.participant_id,
         sum(g.amount) AS score, max(g.at) AS reached_at
       FROM (${GRANTS_SQL}) g CROSS JOIN (VALUES ('weekly'), ('monthly')) AS k (period)
       GROUP BY k.period, period_start, g.participant_id`;

/** How long a tenant's first period board waits for transactions that were running when the totals were switched on. */
const IN_FLIGHT_WAIT_MS = 30_000;
const IN_FLIGHT_POLL_MS = 20;

/**
 * Makes sure the tenant's period totals are kept and complete, before its
 * first period board ranks them; a no-op once they are.
 *
 * 1. The tenant is marked (committed): every grant statement that starts
 *    from here on sees the mark and adds its amounts.
 * 2. Statements that started before may have written grants without seeing
 *    it: this waits until every transaction running at that moment has
 *    ended (their virtual transaction ids in pg_locks, as CREATE INDEX
 *    CONCURRENTLY waits), at most IN_FLIGHT_WAIT_MS, then answers 503.
 * 3. In one transaction: the ledger's sums, read now, name the totals rows
 *    to fill; those rows are locked (inserted with 0 where missing), so no
 *    grant changes them until the end; then they are set to the ledger's
 *    sums read again by a statement that started after every lock was
 *    taken, so a grant is counted once whether it committed before (in the
 *    sums) or after (its own addition). Rows the first read did not name
 *    hold only amounts of grants that saw the mark, added by themselves.
 */
export async function ensurePeriodTotals(db: Database, tenantId: string): Promise<void> {
  const ready = await db.tenant(tenantId, async (tx) => {
    await tx.query('INSERT INTO leaderboard_period_tenants (tenant_id) VALUES ($1) ON CONFLICT (tenant_id) DO NOTHING', [tenantId]);
    const { rows } = await tx.query<{ ready_at: Date | null }>('SELECT ready_at FROM leaderboard_period_tenants WHERE tenant_id = $1', [tenantId]);
    return rows[0].ready_at !== null;
  });
  if (ready) return;
  await waitForTransactionsInFlight(db, tenantId);
  await db.tenant(tenantId, async (tx) => {
    const { rows } = await tx.query<{ ready_at: Date | null }>('SELECT ready_at FROM leaderboard_period_tenants WHERE tenant_id = $1 FOR UPDATE', [tenantId]);
    // Another request filled them while this one waited.
    if (rows[0]?.ready_at) return;
    await tx.query(`CREATE TEMP TABLE leaderboard_totals_to_fill ON COMMIT DROP AS
       SELECT s.period, s.period_start, s.participant_id FROM (${LEDGER_SUMS}) s`, [tenantId]);
    await tx.query(
      `INSERT INTO leaderboard_period_points AS p (tenant_id, period, period_start, participant_id, score, reached_at)
       SELECT $1, f.period, f.period_start, f.participant_id, 0, $2 FROM leaderboard_totals_to_fill f
       ORDER BY f.period, f.period_start, f.participant_id
       ON CONFLICT (tenant_id, period, period_start, participant_id) DO UPDATE SET score = p.score`,
      [tenantId, clock.now(tenantId)],
    );
    await tx.query(
      `UPDATE leaderboard_period_points p SET score = s.score, reached_at = s.reached_at
       FROM (${LEDGER_SUMS}) s JOIN leaderboard_totals_to_fill f USING (period, period_start, participant_id)
       WHERE p.tenant_id = $1 AND p.period = s.period AND p.period_start = s.period_start AND p.participant_id = s.participant_id`,
      [tenantId],
    );
    await tx.query('UPDATE leaderboard_period_tenants SET ready_at = $2 WHERE tenant_id = $1', [tenantId, clock.now(tenantId)]);
  });
}

async function waitForTransactionsInFlight(db: Database, tenantId: string): Promise<void> {
  const running = `SELECT array_agg(virtualxid) AS ids FROM pg_locks WHERE locktype = 'virtualxid' AND pid <> pg_backend_pid()`;
  const [{ ids }] = await db.tenantRead<{ ids: string[] | null }>(tenantId, running, []);
  if (!ids) return;
  const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
  for (;;) {
    const [{ waiting }] = await db.tenantRead<{ waiting: boolean }>(
      tenantId,
      `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'virtualxid' AND virtualxid = ANY ($1::text[])) AS waiting`,
      [ids],
    );
    if (!waiting) return;
    if (Date.now() > deadline) {
      throw new AppError('unavailable', 'LEADERBOARD_TOTALS_BUSY', `transactions that were running when the period totals were switched on have not ended within ${IN_FLIGHT_WAIT_MS / 1000} s; try again`);
    }
    await new Promise((resolve) => setTimeout(resolve, IN_FLIGHT_POLL_MS));
  }
}
