-- The reward catalogue, its code pools and the claims participants hold.
CREATE TABLE rewards (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id text NOT NULL CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  description text,
  type text NOT NULL CHECK (type IN ('coupon', 'voucher', 'physical', 'digital', 'points_multiplier')),
  metadata jsonb NOT NULL DEFAULT '{}',
  code_source text NOT NULL CHECK (code_source IN ('pool', 'generated', 'none')),
  code_prefix text NOT NULL DEFAULT '',
  -- Total claims allowed; NULL is unlimited. Pool rewards are also bounded by their codes.
  inventory integer CHECK (inventory >= 0),
  claimed_count integer NOT NULL DEFAULT 0 CHECK (claimed_count >= 0),
  -- Claims are refused after this instant; a claim itself expires after valid_for_days.
  available_until timestamptz,
  valid_for_days integer CHECK (valid_for_days > 0),
  active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  CHECK (inventory IS NULL OR claimed_count <= inventory)
);
CALL enable_tenant_rls('rewards');

CREATE TABLE reward_codes (
  tenant_id uuid NOT NULL,
  reward_id text NOT NULL,
  code text NOT NULL CHECK (char_length(code) BETWEEN 1 AND 128),
  claim_id text,
  uploaded_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, reward_id, code),
  FOREIGN KEY (tenant_id, reward_id) REFERENCES rewards (tenant_id, id) ON DELETE CASCADE
);
-- Free codes are taken with FOR UPDATE SKIP LOCKED through this index.
CREATE INDEX reward_codes_free ON reward_codes (tenant_id, reward_id, uploaded_at) WHERE claim_id IS NULL;
CALL enable_tenant_rls('reward_codes');

CREATE TABLE reward_claims (
  tenant_id uuid NOT NULL,
  id text NOT NULL,
  reward_id text NOT NULL,
  participant_id text NOT NULL,
  engagement_id uuid,
  activity_id text,
  attempt_id text,
  -- What was claimed, as it was at claim time (the catalogue may change later).
  name text NOT NULL,
  type text NOT NULL,
  display_type text NOT NULL,
  metadata jsonb NOT NULL,
  code text,
  multiplier_id text,
  claimed_at timestamptz NOT NULL,
  expires_at timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, reward_id) REFERENCES rewards (tenant_id, id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CREATE INDEX reward_claims_participant ON reward_claims (tenant_id, participant_id, claimed_at DESC, id DESC);
CALL enable_tenant_rls('reward_claims');
