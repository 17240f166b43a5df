-- Challenges: definitions with objectives and milestones, status moves,
-- enrollments with their progress, and the facts already applied to each
-- enrollment (so a fact counts exactly once however often it is replayed).

CREATE TABLE challenges (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  description text NOT NULL DEFAULT '',
  -- draft -> scheduled -> active -> ended -> archived; scheduled/active/ended
  -- also follow the window (see challenge_effective_status).
  status text NOT NULL CHECK (status IN ('draft', 'scheduled', 'active', 'ended', 'archived')),
  starts_at timestamptz NOT NULL,
  ends_at timestamptz NOT NULL,
  engagement_id uuid,
  -- Arrays validated by the service: objectives [{id, name, evaluator, target, ...}], milestones [{name, threshold}].
  objectives jsonb NOT NULL,
  milestones jsonb NOT NULL DEFAULT '[]',
  completion_points bigint CHECK (completion_points > 0),
  completion_badge_code text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  CHECK (ends_at > starts_at)
);
CREATE INDEX challenges_listing ON challenges (tenant_id, status, starts_at);
CALL enable_tenant_rls('challenges');

-- The status a published challenge has at a moment: its window decides
-- between scheduled, active and ended. Draft and archived are never moved by time.
CREATE FUNCTION challenge_effective_status(p_status text, p_starts_at timestamptz, p_ends_at timestamptz, p_now timestamptz)
  RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN p_status IN ('draft', 'archived') THEN p_status
    WHEN p_status = 'ended' OR p_now >= p_ends_at THEN 'ended'
    WHEN p_now >= p_starts_at THEN 'active'
    ELSE 'scheduled'
  END
$$;

-- Every status move, whether made by an admin or by the lifecycle job.
CREATE TABLE challenge_status_moves (
  tenant_id uuid NOT NULL,
  challenge_id uuid NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  from_status text,
  to_status text NOT NULL,
  moved_by text NOT NULL,
  moved_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, challenge_id, seq),
  FOREIGN KEY (tenant_id, challenge_id) REFERENCES challenges (tenant_id, id) ON DELETE CASCADE
);
CALL enable_tenant_rls('challenge_status_moves');

CREATE TABLE challenge_enrollments (
  tenant_id uuid NOT NULL,
  challenge_id uuid NOT NULL,
  participant_id text NOT NULL,
  enrolled_at timestamptz NOT NULL,
  -- Objective id -> current value.
  progress jsonb NOT NULL DEFAULT '{}',
  overall_progress numeric NOT NULL DEFAULT 0,
  score numeric NOT NULL DEFAULT 0,
  objectives_completed integer NOT NULL DEFAULT 0,
  milestones_reached text[] NOT NULL DEFAULT '{}',
  -- When the score last rose: the earlier, the better the rank among equal scores.
  score_reached_at timestamptz NOT NULL,
  completed_at timestamptz,
  PRIMARY KEY (tenant_id, challenge_id, participant_id),
  FOREIGN KEY (tenant_id, challenge_id) REFERENCES challenges (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CREATE INDEX challenge_enrollments_participant ON challenge_enrollments (tenant_id, participant_id);
CREATE INDEX challenge_enrollments_ranking ON challenge_enrollments (tenant_id, challenge_id, score DESC, score_reached_at, participant_id);
CALL enable_tenant_rls('challenge_enrollments');

-- One row per (enrollment, fact) applied: the exactly-once guard.
CREATE TABLE challenge_fact_applications (
  tenant_id uuid NOT NULL,
  challenge_id uuid NOT NULL,
  participant_id text NOT NULL,
  fact_id text NOT NULL,
  applied_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, challenge_id, participant_id, fact_id),
  FOREIGN KEY (tenant_id, challenge_id, participant_id) REFERENCES challenge_enrollments (tenant_id, challenge_id, participant_id) ON DELETE CASCADE
);
CALL enable_tenant_rls('challenge_fact_applications');

-- Objectives that read state (points_earned, badge_earned) change when points
-- or badges are granted, which may happen without any fact (a direct grant) or
-- after the challenge handler ran for a fact. Such grants queue one
-- re-evaluation of the participant's open enrollments, after commit.
CREATE FUNCTION challenge_queue_reevaluation() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.participant_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM challenge_enrollments e
    WHERE e.tenant_id = NEW.tenant_id AND e.participant_id = NEW.participant_id AND e.completed_at IS NULL
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

CREATE TRIGGER challenge_progression_event
  AFTER INSERT ON outbox_events
  FOR EACH ROW WHEN (NEW.event IN ('points.awarded.v1', 'badge.earned.v1'))
  EXECUTE FUNCTION challenge_queue_reevaluation();
