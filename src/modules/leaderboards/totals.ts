import type { Statement } from '../../platform/db.js';
import type { OutboxFollower } from '../../platform/outbox.js';

/**
 * The points totals the progression leaderboards rank, kept in the
 * transaction of every points.awarded.v1 (the module's outbox follower; until
 * migration 1370 a trigger on outbox_events did this where no module showed
 * it):
 *
 * - lifetime points: the highest `lifetime` announced, reached at the first
 *   event that announced it, and only if higher than the stored score;
 * - period points: the sum of the positive amounts per weekly and monthly
 *   period (tenant time zone), reached at the latest of those events.
 *
 * Events of an unexpected shape and participants that do not exist are
 * skipped, and the award never fails because of them.
 */
function pointsTotals(tenantId: string, eventIds: string[]): Statement {
  return {
    text: `WITH awarded AS (
       SELECT n.participant_id, n.created_at, n.seq,
              floor((n.data ->> 'amount')::numeric)::bigint AS amount,
              floor((n.data ->> 'lifetime')::numeric)::bigint AS lifetime
       -- One primary-key look-up per id, in a LATERAL that LIMIT keeps from being flattened: a generic plan
       -- of the flat join scanned every participant of the tenant and their events (30 ms for 100 events).
       FROM unnest($2::text[]) AS w (id)
       CROSS JOIN LATERAL (
         SELECT o.participant_id, o.created_at, o.seq, o.data FROM outbox_events o
         WHERE o.tenant_id = $1 AND o.id = w.id
           AND o.event = 'points.awarded.v1'
           AND o.participant_id IS NOT NULL
           AND jsonb_typeof(o.data -> 'amount') = 'number'
           AND jsonb_typeof(o.data -> 'lifetime') = 'number'
         LIMIT 1
       ) n
       -- The participant, by its key (LIMIT again: under row-level security an EXISTS became a scan of every participant).
       CROSS JOIN LATERAL (SELECT 1 FROM participants p WHERE p.tenant_id = $1 AND p.participant_id = n.participant_id LIMIT 1) known
     ),
     highest AS (
       SELECT DISTINCT ON (participant_id) participant_id, lifetime, created_at
       FROM awarded
       ORDER BY participant_id, lifetime DESC, seq
     ),
     lifetime_points AS (
       INSERT INTO leaderboard_lifetime_points AS l (tenant_id, participant_id, score, reached_at)
       SELECT $1, participant_id, lifetime, created_at FROM highest
       ON CONFLICT (tenant_id, participant_id) DO UPDATE
         SET score = EXCLUDED.score, reached_at = EXCLUDED.reached_at
         WHERE EXCLUDED.score > l.score
     ),
     earned AS (
       SELECT k.period,
              date_trunc(CASE k.period WHEN 'weekly' THEN 'week' ELSE 'month' END,
                         a.created_at AT TIME ZONE coalesce((SELECT t.timezone FROM tenants t WHERE t.id = $1), 'UTC'))::date AS period_start,
              a.participant_id, a.amount, a.created_at
       FROM awarded a
       CROSS JOIN (VALUES ('weekly'), ('monthly')) AS k (period)
       WHERE a.amount > 0
     )
     INSERT INTO leaderboard_period_points AS p (tenant_id, period, period_start, participant_id, score, reached_at)
     SELECT $1, period, period_start, participant_id, sum(amount), max(created_at)
     FROM earned
     GROUP BY period, period_start, participant_id
     ON CONFLICT (tenant_id, period, period_start, participant_id) DO UPDATE
       SET score = p.score + EXCLUDED.score, reached_at = greatest(p.reached_at, EXCLUDED.reached_at)`,
    values: [tenantId, eventIds],
  };
}

export const pointsTotalsFollower: OutboxFollower = {
  events: ['points.awarded.v1'],
  statements: (tenantId, eventIds) => [pointsTotals(tenantId, eventIds)],
};
