import type { Statement } from '../../platform/db.js';
import type { OutboxFollower } from '../../platform/outbox.js';

/**
 * A `challenges.reevaluate` job (one per participant, replacing one still
 * waiting) for every participant of a points.awarded.v1 or badge.earned.v1
 * who is enrolled, not yet complete, in a challenge with a state objective
 * (points earned, badge earned): the module's outbox follower, in the
 * transaction of the events. Until migration 1370 a trigger on outbox_events
 * queued these where no module showed it.
 */
function queueReevaluations(tenantId: string, eventIds: string[]): Statement {
  return {
    text: `SELECT graphile_worker.add_job(
       'challenges.reevaluate',
       json_build_object('tenant_id', $1::uuid, 'participant_id', x.participant_id),
       job_key => 'challenges.reevaluate:' || $1 || ':' || x.participant_id,
       job_key_mode => 'replace'
     )
     FROM (
       SELECT DISTINCT n.participant_id
       -- One primary-key look-up per id, in a LATERAL that LIMIT keeps from being flattened (a generic plan of
       -- the flat join starts from the tenant's enrollments or participants instead).
       FROM unnest($2::text[]) AS w (id)
       CROSS JOIN LATERAL (
         SELECT o.participant_id FROM outbox_events o
         WHERE o.tenant_id = $1 AND o.id = w.id AND o.participant_id IS NOT NULL
           AND EXISTS (
             SELECT 1 FROM challenge_enrollments e
             JOIN challenges c ON c.tenant_id = e.tenant_id AND c.id = e.challenge_id
             WHERE e.tenant_id = $1 AND e.participant_id = o.participant_id AND e.completed_at IS NULL
               AND c.objectives @? '$[*] ? (@.evaluator == "points_earned" || @.evaluator == "badge_earned")'
           )
         LIMIT 1
       ) n
     ) x`,
    values: [tenantId, eventIds],
  };
}

export const reevaluationFollower: OutboxFollower = {
  events: ['points.awarded.v1', 'badge.earned.v1'],
  statements: (tenantId, eventIds) => [queueReevaluations(tenantId, eventIds)],
};
