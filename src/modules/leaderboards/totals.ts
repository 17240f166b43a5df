import type { OutboxFollower } from '../../platform/outbox.js';

/**
 * The period points the period leaderboards rank, kept by the statement that
 * writes every points.awarded.v1 (the module's outbox follower: CTEs over
 * `written`, the outbox rows that statement inserts; until migration 1370 a
 * trigger on outbox_events did this where no module showed it): the sum of
 * the positive amounts per weekly and monthly period (tenant time zone),
 * reached at the latest of those events.
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
     ),
     leaderboards_periods AS (
       INSERT INTO leaderboard_period_points AS p (tenant_id, period, period_start, participant_id, score, reached_at)
       SELECT $1::uuid, k.period,
              date_trunc(CASE k.period WHEN 'weekly' THEN 'week' ELSE 'month' END,
                         a.created_at AT TIME ZONE coalesce((SELECT t.timezone FROM tenants t WHERE t.id = $1), 'UTC'))::date AS period_start,
              a.participant_id, sum(a.amount), max(a.created_at)
       FROM leaderboards_awarded a
       CROSS JOIN (VALUES ('weekly'), ('monthly')) AS k (period)
       WHERE a.amount > 0
       GROUP BY k.period, period_start, a.participant_id
       ON CONFLICT (tenant_id, period, period_start, participant_id) DO UPDATE
         SET score = p.score + EXCLUDED.score, reached_at = greatest(p.reached_at, EXCLUDED.reached_at)
     )`,
};
