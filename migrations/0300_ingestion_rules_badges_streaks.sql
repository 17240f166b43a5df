-- Event ingestion (the event store), earn rules, badges and streaks.

-- The event store: every accepted event, append-only as far as its content
-- goes. Only the processing columns (status, attempts, last_error,
-- processed_at, outcome) change, as the background processing records what
-- happened to the event.
CREATE TABLE ingested_events (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  event_id text NOT NULL,
  -- Insertion order, for cursors and for ordering events with equal timestamps.
  seq bigint GENERATED ALWAYS AS IDENTITY,
  event_name text NOT NULL,
  participant_id text NOT NULL,
  engagement_id uuid,
  properties jsonb NOT NULL,
  occurred_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL,
  idempotency_key text NOT NULL,
  -- The fact this event becomes once processed; fixed at ingestion so that it is stable across retries.
  fact_id text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'processed', 'retrying', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  processed_at timestamptz,
  outcome jsonb,
  PRIMARY KEY (tenant_id, event_id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CREATE INDEX ingested_events_participant ON ingested_events (tenant_id, participant_id, occurred_at, seq);
CREATE INDEX ingested_events_name ON ingested_events (tenant_id, event_name, occurred_at, seq);
CREATE INDEX ingested_events_occurred ON ingested_events (tenant_id, occurred_at, seq);
CREATE INDEX ingested_events_unfinished ON ingested_events (tenant_id, status, seq) WHERE status <> 'processed';
CALL enable_tenant_rls('ingested_events');

-- Idempotency keys of events: a key repeated within 24 hours is a duplicate of
-- the event that first used it. Kept apart from the event so that the key can
-- be reused after the window while the event store keeps every event.
CREATE TABLE event_idempotency_keys (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  key text NOT NULL,
  event_id text NOT NULL,
  fingerprint text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, key)
);
CREATE INDEX event_idempotency_keys_expiry ON event_idempotency_keys (expires_at);
CALL enable_tenant_rls('event_idempotency_keys');

-- Badge definitions and the badges participants earned.
CREATE TABLE badge_definitions (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  code text NOT NULL CHECK (code ~ '^[A-Za-z0-9_.:-]{1,64}$'),
  name text NOT NULL,
  description text,
  image_url text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, code)
);
CALL enable_tenant_rls('badge_definitions');

CREATE TABLE participant_badges (
  tenant_id uuid NOT NULL,
  participant_id text NOT NULL,
  badge_code text NOT NULL,
  earned_at timestamptz NOT NULL,
  source_kind text NOT NULL,
  source_id text NOT NULL,
  PRIMARY KEY (tenant_id, participant_id, badge_code),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, badge_code) REFERENCES badge_definitions (tenant_id, code) ON DELETE CASCADE
);
CALL enable_tenant_rls('participant_badges');

-- Streak definitions and each participant's streak.
CREATE TABLE streak_definitions (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  code text NOT NULL CHECK (code ~ '^[A-Za-z0-9_.:-]{1,64}$'),
  name text NOT NULL,
  period text NOT NULL CHECK (period IN ('daily', 'weekly')),
  -- The event that counts; null when only earn rules continue the streak.
  event_name text,
  -- Missed periods that are forgiven (a "freeze") before the streak breaks.
  grace_periods integer NOT NULL DEFAULT 0 CHECK (grace_periods BETWEEN 0 AND 7),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, code)
);
CREATE INDEX streak_definitions_event ON streak_definitions (tenant_id, event_name) WHERE event_name IS NOT NULL;
CALL enable_tenant_rls('streak_definitions');

CREATE TABLE participant_streaks (
  tenant_id uuid NOT NULL,
  participant_id text NOT NULL,
  streak_code text NOT NULL,
  current_length integer NOT NULL,
  longest_length integer NOT NULL,
  -- First day (tenant time zone) of the last period that counted.
  last_period_start date NOT NULL,
  started_at timestamptz NOT NULL,
  last_activity_at timestamptz NOT NULL,
  freezes_used integer NOT NULL DEFAULT 0,
  broken_at timestamptz,
  PRIMARY KEY (tenant_id, participant_id, streak_code),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, streak_code) REFERENCES streak_definitions (tenant_id, code) ON DELETE CASCADE
);
CREATE INDEX participant_streaks_running ON participant_streaks (tenant_id, last_period_start) WHERE current_length > 0;
CALL enable_tenant_rls('participant_streaks');

-- Earn rules. Conditions, effects and caps are validated by the service and
-- stored as JSON; the columns the processing filters on are columns.
CREATE TABLE earn_rules (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id text NOT NULL,
  name text NOT NULL,
  description text,
  status text NOT NULL CHECK (status IN ('active', 'paused')),
  trigger text NOT NULL CHECK (trigger IN ('event', 'birthday', 'recurring')),
  event_name text,
  schedule text CHECK (schedule IN ('daily', 'weekly', 'monthly')),
  conditions jsonb NOT NULL,
  effects jsonb NOT NULL,
  caps jsonb NOT NULL,
  budget_points bigint CHECK (budget_points > 0),
  budget_spent bigint NOT NULL DEFAULT 0 CHECK (budget_spent >= 0),
  priority integer NOT NULL DEFAULT 0,
  stop_processing boolean NOT NULL DEFAULT false,
  starts_at timestamptz,
  ends_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  CHECK (budget_points IS NULL OR budget_spent <= budget_points),
  CHECK ((trigger = 'event') = (event_name IS NOT NULL)),
  CHECK ((trigger = 'recurring') = (schedule IS NOT NULL))
);
CREATE INDEX earn_rules_event ON earn_rules (tenant_id, event_name) WHERE status = 'active';
CALL enable_tenant_rls('earn_rules');

-- How often and for how many points a rule applied to a participant, per
-- period (a day or an ISO week in the tenant time zone, or the lifetime).
CREATE TABLE earn_rule_usage (
  tenant_id uuid NOT NULL,
  rule_id text NOT NULL,
  participant_id text NOT NULL,
  period text NOT NULL CHECK (period IN ('day', 'week', 'lifetime')),
  period_start date NOT NULL,
  times integer NOT NULL DEFAULT 0,
  points bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, rule_id, participant_id, period, period_start),
  FOREIGN KEY (tenant_id, rule_id) REFERENCES earn_rules (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CALL enable_tenant_rls('earn_rule_usage');

-- Scheduled rules (birthday, recurring): one row per occurrence that was
-- started, and one per participant it was applied to, so that a re-run after
-- a crash applies nothing twice.
CREATE TABLE earn_rule_occurrences (
  tenant_id uuid NOT NULL,
  rule_id text NOT NULL,
  occurrence date NOT NULL,
  started_at timestamptz NOT NULL,
  finished_at timestamptz,
  participants_applied integer NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, rule_id, occurrence),
  FOREIGN KEY (tenant_id, rule_id) REFERENCES earn_rules (tenant_id, id) ON DELETE CASCADE
);
CALL enable_tenant_rls('earn_rule_occurrences');

CREATE TABLE earn_rule_occurrence_participants (
  tenant_id uuid NOT NULL,
  rule_id text NOT NULL,
  occurrence date NOT NULL,
  participant_id text NOT NULL,
  applied_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, rule_id, occurrence, participant_id),
  FOREIGN KEY (tenant_id, rule_id, occurrence) REFERENCES earn_rule_occurrences (tenant_id, rule_id, occurrence) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CALL enable_tenant_rls('earn_rule_occurrence_participants');
