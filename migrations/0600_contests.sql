-- Contests: time-bound competitions scored from facts, ranked, prized after a
-- verification hold, and guarded by fraud controls. See docs/decisions/contests.md.

CREATE TABLE contests (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id text NOT NULL CHECK (id ~ '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$'),
  title text NOT NULL,
  description text,
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'scheduled', 'active', 'scoring', 'completed')),
  starts_at timestamptz NOT NULL,
  ends_at timestamptz NOT NULL,
  -- scoring: the fact name to match, the numeric attribute to read, and its weight.
  event_type text NOT NULL,
  score_attribute text NOT NULL,
  weight numeric NOT NULL CHECK (weight > 0),
  prize_structure jsonb NOT NULL,
  max_reward_liability numeric NOT NULL CHECK (max_reward_liability >= 0),
  fraud_rules jsonb NOT NULL DEFAULT '{}',
  verification_window_hours integer NOT NULL DEFAULT 24 CHECK (verification_window_hours BETWEEN 24 AND 72),
  entry_count integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  published_at timestamptz,
  activated_at timestamptz,
  scoring_started_at timestamptz,
  completed_at timestamptz,
  final_sweep_ms integer,
  verification_ends_at timestamptz,
  prizes_issued_at timestamptz,
  liability_allocated numeric NOT NULL DEFAULT 0,
  -- The seed of the random tie-break draw and the tied groups it resolved, for audit.
  tie_break jsonb,
  PRIMARY KEY (tenant_id, id),
  CHECK (ends_at > starts_at)
);
-- The fact handler finds the running contests of a fact's name.
CREATE INDEX contests_scoring ON contests (tenant_id, event_type, status);
-- The safety sweep finds due transitions across tenants.
CREATE INDEX contests_due ON contests (status, starts_at, ends_at) WHERE status IN ('scheduled', 'active', 'scoring');
CREATE INDEX contests_verification_due ON contests (verification_ends_at) WHERE status = 'completed' AND prizes_issued_at IS NULL;
CALL enable_tenant_rls('contests');

CREATE TABLE contest_entries (
  tenant_id uuid NOT NULL,
  contest_id text NOT NULL,
  participant_id text NOT NULL,
  entry_id text NOT NULL,
  display_name text,
  entered_at timestamptz NOT NULL,
  status text NOT NULL DEFAULT 'active'
    CHECK (status IN ('active', 'flagged', 'disqualified', 'winner', 'under_review', 'paid', 'unfunded', 'finished')),
  score bigint NOT NULL DEFAULT 0,
  score_events integer NOT NULL DEFAULT 0,
  -- When the entry reached its current score (the entry time while it is 0): the first tie-breaker.
  reached_at timestamptz NOT NULL,
  last_scored_at timestamptz,
  -- The rank computed by the last lifecycle tick, and the rank at the start of the rank-jump window.
  rank integer,
  rank_window_rank integer,
  rank_window_at timestamptz,
  rank_jump_flagged_at timestamptz,
  final_rank integer,
  -- Verification signals, see docs/decisions/contests.md.
  email text,
  payment_method text,
  device_fingerprint text,
  publish_consent boolean NOT NULL DEFAULT false,
  PRIMARY KEY (tenant_id, contest_id, participant_id),
  UNIQUE (tenant_id, entry_id),
  FOREIGN KEY (tenant_id, contest_id) REFERENCES contests (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
-- The leaderboard order (score, then earliest to reach it); disqualified entries are not ranked.
CREATE INDEX contest_entries_leaderboard ON contest_entries (tenant_id, contest_id, score DESC, reached_at, entry_id)
  WHERE status <> 'disqualified';
CREATE INDEX contest_entries_final ON contest_entries (tenant_id, contest_id, final_rank) WHERE final_rank IS NOT NULL;
CREATE INDEX contest_entries_device ON contest_entries (tenant_id, contest_id, device_fingerprint) WHERE device_fingerprint IS NOT NULL;
CREATE INDEX contest_entries_payment ON contest_entries (tenant_id, contest_id, payment_method) WHERE payment_method IS NOT NULL;
CREATE INDEX contest_entries_participant ON contest_entries (tenant_id, participant_id);
CALL enable_tenant_rls('contest_entries');

-- One row per (contest, source fact): the idempotency of scoring and the velocity history.
CREATE TABLE contest_score_events (
  tenant_id uuid NOT NULL,
  contest_id text NOT NULL,
  fact_id text NOT NULL,
  participant_id text NOT NULL,
  delta bigint NOT NULL,
  occurred_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, contest_id, fact_id),
  FOREIGN KEY (tenant_id, contest_id, participant_id) REFERENCES contest_entries (tenant_id, contest_id, participant_id) ON DELETE CASCADE
);
CREATE INDEX contest_score_events_velocity ON contest_score_events (tenant_id, contest_id, participant_id, occurred_at) INCLUDE (delta);
CALL enable_tenant_rls('contest_score_events');

CREATE TABLE contest_entry_status_history (
  tenant_id uuid NOT NULL,
  contest_id text NOT NULL,
  participant_id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  from_status text,
  to_status text NOT NULL,
  reason text NOT NULL,
  actor text NOT NULL,
  changed_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, contest_id, participant_id, seq),
  FOREIGN KEY (tenant_id, contest_id, participant_id) REFERENCES contest_entries (tenant_id, contest_id, participant_id) ON DELETE CASCADE
);
CALL enable_tenant_rls('contest_entry_status_history');

-- Entries held for manual review; resolved through POST /admin/fraud/decisions.
CREATE TABLE contest_reviews (
  tenant_id uuid NOT NULL,
  id text NOT NULL,
  contest_id text NOT NULL,
  participant_id text NOT NULL,
  entry_id text NOT NULL,
  reasons text[] NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'disqualified')),
  created_at timestamptz NOT NULL,
  decided_at timestamptz,
  decided_by text,
  note text,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, contest_id, participant_id) REFERENCES contest_entries (tenant_id, contest_id, participant_id) ON DELETE CASCADE
);
CREATE INDEX contest_reviews_queue ON contest_reviews (tenant_id, status, created_at);
CREATE UNIQUE INDEX contest_reviews_one_pending ON contest_reviews (tenant_id, contest_id, participant_id) WHERE status = 'pending';
CALL enable_tenant_rls('contest_reviews');

-- Prizes allocated by final rank at completion, issued after verification.
CREATE TABLE contest_prize_allocations (
  tenant_id uuid NOT NULL,
  contest_id text NOT NULL,
  participant_id text NOT NULL,
  entry_id text NOT NULL,
  rank integer NOT NULL,
  reward_type text NOT NULL,
  reward_value numeric NOT NULL,
  reward_name text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending_verification', 'held', 'issued', 'cancelled', 'unfunded')),
  prize_code text,
  allocated_at timestamptz NOT NULL,
  issued_at timestamptz,
  PRIMARY KEY (tenant_id, contest_id, participant_id),
  UNIQUE (tenant_id, contest_id, rank),
  FOREIGN KEY (tenant_id, contest_id, participant_id) REFERENCES contest_entries (tenant_id, contest_id, participant_id) ON DELETE CASCADE
);
CALL enable_tenant_rls('contest_prize_allocations');
