import type { OutboxFollower } from '../../platform/outbox.js';

/**
 * A `challenges.reevaluate` job (one per participant, replacing one still
 * waiting) for every participant of a points.awarded.v1 or badge.earned.v1
 * who is enrolled, not yet complete, in a challenge with a state objective
 * (points earned, badge earned): the module's outbox follower, CTEs over
 * `written`, the outbox rows of the statement that writes the events. Until
 * migration 1370 a trigger on outbox_events queued these where no module
 * showed it.
 */
export const reevaluationFollower: OutboxFollower = {
  sql: `challenges_reevaluations AS (
       SELECT graphile_worker.add_job(
         'challenges.reevaluate',
         json_build_object('tenant_id', $1::uuid, 'participant_id', x.participant_id),
         job_key => 'challenges.reevaluate:' || $1::text || ':' || x.participant_id,
         job_key_mode => 'replace'
       )
       FROM (
         SELECT DISTINCT n.participant_id
         FROM written n
         WHERE n.event IN ('points.awarded.v1', 'badge.earned.v1') AND n.participant_id IS NOT NULL
       ) x
       -- A LATERAL with LIMIT on the participant's index, not EXISTS: a generic plan made while the
       -- tenant had few enrollments hashes all of them, and would on every award once it has many.
       CROSS JOIN LATERAL (
         SELECT 1 FROM challenge_enrollments e
         JOIN challenges c ON c.tenant_id = e.tenant_id AND c.id = e.challenge_id
         WHERE e.tenant_id = $1 AND e.participant_id = x.participant_id AND e.completed_at IS NULL
           AND c.objectives @? '$[*] ? (@.evaluator == "points_earned" || @.evaluator == "badge_earned")'
         LIMIT 1
       ) enrolled
     )`,
  read: 'challenges_reevaluations',
};
