import type { Database } from '../../platform/db.js';
import { FORECAST_MONTHS } from './schemas.js';

/**
 * The analytics reads. Analytics owns one table (analytics_webhook_delivery_counts,
 * written by a trigger of migration 1010); everything else it reads, read only,
 * from the tables of the modules that own the figures (points, ingestion, rules),
 * in one statement and therefore one snapshot: see docs/decisions/analytics.md.
 */

/** How many rules `top_rules` lists. */
export const TOP_RULES_MAX = 10;

export interface TenantDay {
  timezone: string;
  /** Today in the tenant's time zone (YYYY-MM-DD). */
  today: string;
}

/** The tenant's time zone and today's date in it, at `now` (the service clock). */
export async function tenantDay(db: Database, tenantId: string, now: Date): Promise<TenantDay | null> {
  const [row] = await db.tenantRead<TenantDay>(
    tenantId,
    `SELECT timezone, to_char(($2::timestamptz AT TIME ZONE timezone)::date, 'YYYY-MM-DD') AS today FROM tenants WHERE id = $1`,
    [tenantId, now],
  );
  return row ?? null;
}

export interface DayRow {
  date: string;
  points_issued: number;
  points_redeemed: number;
  points_expired: number;
  active_participants: number;
  events_ingested: number;
  events_rejected: number;
  webhooks_succeeded: number;
  webhooks_failed: number;
}

export interface RuleRow {
  rule_id: string;
  name: string | null;
  points: number;
  events: number;
}

export interface OverviewRow {
  days: DayRow[];
  active_participants_total: number;
  top_rules: RuleRow[];
  outstanding_points: number;
  participants_with_balance: number;
}

/** The range in time: local midnight of the first day, and of the day after the last, in the tenant's zone. */
const STARTS_AT = '($2::date::timestamp AT TIME ZONE $4)';
const ENDS_AT = '(($3::date + 1)::timestamp AT TIME ZONE $4)';

/**
 * The whole overview in one read-only statement. `$2`/`$3` are the first and
 * last local day, `$4` the tenant's time zone; the range in time is [local
 * midnight of $2, local midnight after $3) in that zone, so days of 23 or 25
 * hours come out right. The bounds are expressions of the parameters (not of
 * a joined row), so the planner sees the range and estimates the index scans.
 *
 * - The ledger is read once, through points_ledger_tenant_time, and folded per
 *   (day, participant, rule) into `ledger`, which the day sums, the active
 *   participants and the top rules all read.
 * - Events are placed on the day of their own timestamp (`occurred_at`,
 *   through ingested_events_occurred), as caps and streaks place them.
 * - `active_days` holds each participant once per day, deduplicated by
 *   hashing; the days count it, and the range counts its distinct participants.
 * - Webhook counters are the quarter hours of migration 1010 that fall in the range.
 * - The liability is the current balances (points_balances primary key).
 *
 * Sums are cast to bigint: sum(bigint) is numeric in PostgreSQL.
 */
export const OVERVIEW_STATEMENT = `
WITH ledger AS MATERIALIZED (
  SELECT (l.created_at AT TIME ZONE $4)::date AS day,
         l.participant_id,
         CASE WHEN l.source_kind = 'rule' THEN l.source_id END AS rule_id,
         coalesce(sum(l.delta) FILTER (WHERE l.delta > 0), 0)::bigint AS issued,
         coalesce(-sum(l.delta) FILTER (WHERE l.delta < 0 AND l.type <> 'expiry'), 0)::bigint AS redeemed,
         coalesce(-sum(l.delta) FILTER (WHERE l.type = 'expiry'), 0)::bigint AS expired,
         count(*) FILTER (WHERE l.delta > 0) AS grants,
         bool_or(l.type <> 'expiry') AS active
  FROM points_ledger l
  WHERE l.tenant_id = $1 AND l.created_at >= ${STARTS_AT} AND l.created_at < ${ENDS_AT}
  GROUP BY 1, 2, 3
),
events AS MATERIALIZED (
  SELECT (e.occurred_at AT TIME ZONE $4)::date AS day,
         e.participant_id,
         count(*) AS ingested,
         count(*) FILTER (WHERE e.status = 'failed') AS rejected
  FROM ingested_events e
  WHERE e.tenant_id = $1 AND e.occurred_at >= ${STARTS_AT} AND e.occurred_at < ${ENDS_AT}
  GROUP BY 1, 2
),
points_by_day AS (
  SELECT day, sum(issued)::bigint AS issued, sum(redeemed)::bigint AS redeemed, sum(expired)::bigint AS expired
  FROM ledger GROUP BY day
),
events_by_day AS (
  SELECT day, sum(ingested)::bigint AS ingested, sum(rejected)::bigint AS rejected FROM events GROUP BY day
),
-- Each participant once per day on which they were active (hashed, not sorted: see the decisions page).
active_days AS MATERIALIZED (
  SELECT day, participant_id FROM ledger WHERE active
  UNION
  SELECT day, participant_id FROM events
),
active AS (
  SELECT day, count(*) AS participants FROM active_days GROUP BY day
),
webhooks_by_day AS (
  SELECT (c.bucket_start AT TIME ZONE $4)::date AS day, sum(c.succeeded)::bigint AS succeeded, sum(c.failed)::bigint AS failed
  FROM analytics_webhook_delivery_counts c
  WHERE c.tenant_id = $1 AND c.bucket_start >= ${STARTS_AT} AND c.bucket_start < ${ENDS_AT}
  GROUP BY 1
),
days AS (
  SELECT d::date AS day FROM generate_series($2::date, $3::date, interval '1 day') d
),
top_rules AS (
  SELECT l.rule_id, sum(l.issued)::bigint AS points, sum(l.grants)::bigint AS events
  FROM ledger l WHERE l.rule_id IS NOT NULL
  GROUP BY l.rule_id
  ORDER BY points DESC, l.rule_id
  LIMIT ${TOP_RULES_MAX}
),
liability AS (
  SELECT coalesce(sum(pb.available), 0)::bigint AS outstanding_points, count(*) FILTER (WHERE pb.available > 0) AS participants_with_balance
  FROM points_balances pb WHERE pb.tenant_id = $1
)
SELECT
  (SELECT coalesce(json_agg(json_build_object(
            'date', to_char(d.day, 'YYYY-MM-DD'),
            'points_issued', coalesce(p.issued, 0),
            'points_redeemed', coalesce(p.redeemed, 0),
            'points_expired', coalesce(p.expired, 0),
            'active_participants', coalesce(a.participants, 0),
            'events_ingested', coalesce(e.ingested, 0),
            'events_rejected', coalesce(e.rejected, 0),
            'webhooks_succeeded', coalesce(w.succeeded, 0),
            'webhooks_failed', coalesce(w.failed, 0)
          ) ORDER BY d.day), '[]'::json)
   FROM days d
   LEFT JOIN points_by_day p ON p.day = d.day
   LEFT JOIN events_by_day e ON e.day = d.day
   LEFT JOIN active a ON a.day = d.day
   LEFT JOIN webhooks_by_day w ON w.day = d.day) AS days,
  (SELECT count(*) FROM (SELECT DISTINCT participant_id FROM active_days) p) AS active_participants_total,
  (SELECT coalesce(json_agg(json_build_object('rule_id', r.rule_id, 'name', er.name, 'points', r.points, 'events', r.events)
                            ORDER BY r.points DESC, r.rule_id), '[]'::json)
   FROM top_rules r
   LEFT JOIN earn_rules er ON er.tenant_id = $1 AND er.id = r.rule_id) AS top_rules,
  lb.outstanding_points,
  lb.participants_with_balance
FROM liability lb
`;

/**
 * Memory for the overview's sorts and hash tables, for its own transaction
 * only. With the default 4 MB, 30 days of a busy tenant (80,000 ledger entries
 * and 80,000 events) spilled its groupings to disk and took 60% longer; 16 MB
 * (hash tables get twice that) keeps them in memory while bounding what one
 * overview may take (docs/decisions/analytics.md, Cost).
 */
export const OVERVIEW_WORK_MEM = '16MB';

export interface MoneyRow {
  /** Money per point (points settings), null when not set. */
  point_value: number | null;
  currency: string;
  /** The net ledger change (every entry) from the end of the range until now: what separates the end of the last day from now. */
  net_after_range: number;
  /** The forecast months, oldest first: the current month in the tenant's zone and the ones after it. */
  forecast: Array<{ month: string; points: number }>;
  later_points: number;
  never_points: number;
}

/**
 * The money side of the overview, in the same snapshot as OVERVIEW_STATEMENT
 * (same parameters, `$5` the instant now): the point value and currency, the
 * ledger's net change since the end of the range (for the liability at the
 * end of each day), and the open lots by the month of their expiry date in
 * the tenant's zone (points_lots_due), lots already due counted in the
 * current month, those due after the last month and those without expiry apart.
 */
export const MONEY_STATEMENT = `
WITH months AS (
  SELECT m AS month
  FROM generate_series(date_trunc('month', $5::timestamptz AT TIME ZONE $4),
                       date_trunc('month', $5::timestamptz AT TIME ZONE $4) + interval '${FORECAST_MONTHS - 1} months',
                       interval '1 month') m
),
due AS MATERIALIZED (
  SELECT greatest(date_trunc('month', lot.expires_at AT TIME ZONE $4), (SELECT min(month) FROM months)) AS month, sum(lot.remaining)::bigint AS points
  FROM points_lots lot
  WHERE lot.tenant_id = $1 AND lot.remaining > 0 AND lot.expires_at IS NOT NULL
  GROUP BY 1
)
SELECT
  (SELECT ps.point_value FROM points_settings ps WHERE ps.tenant_id = $1) AS point_value,
  (SELECT t.currency FROM tenants t WHERE t.id = $1) AS currency,
  (SELECT coalesce(sum(l.delta), 0)::bigint FROM points_ledger l WHERE l.tenant_id = $1 AND l.created_at >= ${ENDS_AT}) AS net_after_range,
  (SELECT json_agg(json_build_object('month', to_char(m.month, 'YYYY-MM'), 'points', coalesce(d.points, 0)) ORDER BY m.month)
   FROM months m LEFT JOIN due d ON d.month = m.month) AS forecast,
  (SELECT coalesce(sum(d.points), 0)::bigint FROM due d WHERE d.month > (SELECT max(month) FROM months)) AS later_points,
  (SELECT coalesce(sum(lot.remaining), 0)::bigint FROM points_lots lot WHERE lot.tenant_id = $1 AND lot.remaining > 0 AND lot.expires_at IS NULL) AS never_points
`;

/** The overview of the local days `from` to `to` (inclusive) in the tenant's time zone `timezone`, with its money side, in one snapshot. */
export async function overview(db: Database, tenantId: string, from: string, to: string, timezone: string, now: Date): Promise<{ overview: OverviewRow; money: MoneyRow }> {
  const [, rows, money] = await db.staleReadAll(
    tenantId,
    [`SELECT set_config('work_mem', '${OVERVIEW_WORK_MEM}', true)`, OVERVIEW_STATEMENT, MONEY_STATEMENT],
    [tenantId, from, to, timezone, now],
  );
  return { overview: rows[0] as OverviewRow, money: money[0] as MoneyRow };
}
