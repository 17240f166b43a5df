-- Experiments (issue 36): participants split between variants of a rule, a
-- multiplier or an engagement, with an optional holdout that gets none of
-- them. Assignment is a pure function of (experiment id, participant id)
-- (src/modules/experiments/assignment.ts); the row in experiment_assignments
-- is written at the participant's first exposure and always wins afterwards,
-- so a later change of the allocation never moves anyone.
CREATE TABLE experiments (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id text NOT NULL CHECK (id ~ '^exp_[0-9a-f]{32}$'),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
  description text CHECK (char_length(description) <= 500),
  subject_type text NOT NULL CHECK (subject_type IN ('rule', 'multiplier', 'engagement')),
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'running', 'stopped', 'ended')),
  holdout_percent integer NOT NULL DEFAULT 0 CHECK (holdout_percent BETWEEN 0 AND 50),
  -- [{key, name, subject_id, allocation_percent}], 2 to 5, the first the control; with the holdout they sum to 100.
  variants jsonb NOT NULL CHECK (jsonb_typeof(variants) = 'array'),
  -- {type: event_count | event_property_sum | redemptions, event_name?, property?, reward_id?}
  goal jsonb NOT NULL,
  -- Only the segment's members take part (segments module); null: everyone.
  segment_id text,
  started_at timestamptz,
  -- Set when it stops or ends (a stopped experiment may start again, which clears it).
  ended_at timestamptz,
  rolled_out_variant text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  CHECK (rolled_out_variant IS NULL OR status = 'ended')
);
CREATE INDEX experiments_listing ON experiments (tenant_id, created_at DESC, id DESC);
CREATE INDEX experiments_running ON experiments (tenant_id) WHERE status = 'running';
CALL enable_tenant_rls('experiments');

-- Who is in which variant ('holdout' for the holdout), written at first exposure.
CREATE TABLE experiment_assignments (
  tenant_id uuid NOT NULL,
  experiment_id text NOT NULL,
  participant_id text NOT NULL,
  variant_key text NOT NULL,
  exposed_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, experiment_id, participant_id),
  FOREIGN KEY (tenant_id, experiment_id) REFERENCES experiments (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CREATE INDEX experiment_assignments_variant ON experiment_assignments (tenant_id, experiment_id, variant_key, exposed_at);
CREATE INDEX experiment_assignments_participant ON experiment_assignments (tenant_id, participant_id);
CALL enable_tenant_rls('experiment_assignments');
