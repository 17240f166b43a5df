-- Segments (issue 36): saved, named filters over participants, and the
-- membership of the segments kept materialized. The filter is validated and
-- compiled to SQL by the service (src/modules/segments/compile.ts).
CREATE TABLE segments (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id text NOT NULL CHECK (id ~ '^seg_[0-9a-f]{32}$'),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 120),
  description text CHECK (char_length(description) <= 500),
  filter jsonb NOT NULL,
  materialized boolean NOT NULL DEFAULT false,
  -- Members as of the last refresh (materialized segments only).
  size bigint,
  refreshed_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX segments_listing ON segments (tenant_id, created_at, id);
CREATE INDEX segments_materialized ON segments (tenant_id) WHERE materialized;
CALL enable_tenant_rls('segments');

-- The members of each materialized segment; refreshed by a set-based diff.
CREATE TABLE segment_members (
  tenant_id uuid NOT NULL,
  segment_id text NOT NULL,
  participant_id text NOT NULL,
  entered_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, segment_id, participant_id),
  FOREIGN KEY (tenant_id, segment_id) REFERENCES segments (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CREATE INDEX segment_members_participant ON segment_members (tenant_id, participant_id);
CALL enable_tenant_rls('segment_members');

-- Set-based facts: counts grouped by participant read these indexes.
CREATE INDEX IF NOT EXISTS participant_badges_code ON participant_badges (tenant_id, badge_code, participant_id);
CREATE INDEX IF NOT EXISTS referral_conversions_converted ON referral_conversions (tenant_id, referrer_id) WHERE status = 'converted';
