-- Server-decided activities: attempts, their outcomes, the counters that
-- enforce attempts and cooldowns, spin-wheel prize stock, and facts.

-- One row per participant and activity: the guard for max_attempts and cooldowns.
CREATE TABLE activity_participations (
  tenant_id uuid NOT NULL,
  engagement_id uuid NOT NULL,
  activity_id text NOT NULL,
  participant_id text NOT NULL,
  attempts_used integer NOT NULL DEFAULT 0,
  last_attempt_at timestamptz,
  -- The attempt opened by validate and not yet completed; reused instead of drawing again.
  open_attempt_id text,
  completions integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, engagement_id, activity_id, participant_id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CALL enable_tenant_rls('activity_participations');

CREATE TABLE activity_attempts (
  tenant_id uuid NOT NULL,
  id text NOT NULL,
  engagement_id uuid NOT NULL,
  activity_id text NOT NULL,
  activity_type text NOT NULL,
  participant_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('open', 'completed')),
  -- Spin wheel: the server's draw; quiz: the server's score.
  result jsonb,
  -- The completion response, returned again when the same attempt is completed twice.
  response jsonb,
  fact_id text,
  opened_at timestamptz NOT NULL,
  completed_at timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CREATE INDEX activity_attempts_completed ON activity_attempts (tenant_id, participant_id, engagement_id, activity_type) WHERE status = 'completed';
CALL enable_tenant_rls('activity_attempts');

-- Prizes won per wheel segment, guarded against the segment's configured inventory.
CREATE TABLE spin_segment_awards (
  tenant_id uuid NOT NULL,
  engagement_id uuid NOT NULL,
  activity_id text NOT NULL,
  segment_index integer NOT NULL,
  awarded integer NOT NULL,
  PRIMARY KEY (tenant_id, engagement_id, activity_id, segment_index)
);
CALL enable_tenant_rls('spin_segment_awards');

-- Facts recorded by activities: completions and custom facts.
CREATE TABLE activity_facts (
  tenant_id uuid NOT NULL,
  id text NOT NULL,
  name text NOT NULL,
  source text NOT NULL CHECK (source IN ('activity', 'custom')),
  participant_id text NOT NULL,
  engagement_id uuid,
  activity_id text,
  properties jsonb NOT NULL,
  evaluate_challenges boolean NOT NULL,
  occurred_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CREATE INDEX activity_facts_participant ON activity_facts (tenant_id, participant_id, occurred_at DESC);
CALL enable_tenant_rls('activity_facts');
