-- Queue a re-evaluation only for participants with an open enrollment in a
-- challenge that has a state objective (points_earned, badge_earned): other
-- enrollments cannot change on a grant, so their jobs would do nothing.
CREATE OR REPLACE FUNCTION challenge_queue_reevaluation() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.participant_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM challenge_enrollments e
    JOIN challenges c ON c.tenant_id = e.tenant_id AND c.id = e.challenge_id
    WHERE e.tenant_id = NEW.tenant_id AND e.participant_id = NEW.participant_id AND e.completed_at IS NULL
      AND c.objectives @? '$[*] ? (@.evaluator == "points_earned" || @.evaluator == "badge_earned")'
  ) THEN
    PERFORM graphile_worker.add_job(
      'challenges.reevaluate',
      json_build_object('tenant_id', NEW.tenant_id, 'participant_id', NEW.participant_id),
      job_key => 'challenges.reevaluate:' || NEW.tenant_id || ':' || NEW.participant_id,
      job_key_mode => 'replace'
    );
  END IF;
  RETURN NULL;
END $$;
