-- Referrals: one code per (participant, campaign), conversions with their
-- fraud signals and review state, the tenant's referral settings (velocity
-- thresholds, milestones), and the milestones already granted.

CREATE TABLE referral_codes (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  code text NOT NULL CHECK (code ~ '^[A-Z0-9]{10}$'),
  participant_id text NOT NULL,
  campaign_id uuid NOT NULL,
  -- SHA-256 of the referrer's normalised email / device id, and the IP, when the tenant passes them.
  email_hash text,
  device_hash text,
  ip_address inet,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, code),
  UNIQUE (tenant_id, participant_id, campaign_id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
-- Codes are random and globally unique in practice; this index lets the public
-- routes find the tenant from the code alone.
CREATE INDEX referral_codes_code ON referral_codes (code);
CALL enable_tenant_rls('referral_codes');

-- The public validate and convert routes carry no credential: the code itself
-- names the tenant. This runs as the owner and returns only the tenant id.
CREATE FUNCTION referral_find_code_tenant(p_code text)
  RETURNS TABLE (tenant_id uuid)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT c.tenant_id FROM referral_codes c WHERE c.code = p_code LIMIT 2 $$;

CREATE TABLE referral_conversions (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  code text NOT NULL,
  referrer_id text NOT NULL,
  campaign_id uuid NOT NULL,
  referred_session_id text NOT NULL,
  referred_participant_id text,
  email_hash text,
  device_hash text,
  ip_address inet,
  -- converted: counted; pending_review: held by a fraud signal until an admin decides; rejected: refused after review.
  status text NOT NULL CHECK (status IN ('converted', 'pending_review', 'rejected')),
  signals jsonb NOT NULL DEFAULT '[]',
  created_at timestamptz NOT NULL,
  decided_at timestamptz,
  decided_by text,
  decision_note text,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, referred_session_id),
  FOREIGN KEY (tenant_id, code) REFERENCES referral_codes (tenant_id, code) ON DELETE CASCADE
);
CREATE INDEX referral_conversions_referrer ON referral_conversions (tenant_id, referrer_id, created_at);
CREATE INDEX referral_conversions_status ON referral_conversions (tenant_id, status, created_at);
CREATE UNIQUE INDEX referral_conversions_referred_participant ON referral_conversions (tenant_id, referred_participant_id)
  WHERE referred_participant_id IS NOT NULL AND status <> 'rejected';
CREATE UNIQUE INDEX referral_conversions_referred_email ON referral_conversions (tenant_id, email_hash)
  WHERE email_hash IS NOT NULL AND status <> 'rejected';
CALL enable_tenant_rls('referral_conversions');

CREATE TABLE referral_settings (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  velocity_per_hour integer NOT NULL CHECK (velocity_per_hour > 0),
  velocity_per_day integer NOT NULL CHECK (velocity_per_day > 0),
  review_same_device boolean NOT NULL,
  review_same_ip boolean NOT NULL,
  -- [{conversions, badge_code?, points?}]
  milestones jsonb NOT NULL DEFAULT '[]',
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id)
);
CALL enable_tenant_rls('referral_settings');

CREATE TABLE referral_milestone_grants (
  tenant_id uuid NOT NULL,
  participant_id text NOT NULL,
  conversions integer NOT NULL,
  granted_at timestamptz NOT NULL,
  conversion_id uuid NOT NULL,
  PRIMARY KEY (tenant_id, participant_id, conversions),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CALL enable_tenant_rls('referral_milestone_grants');
