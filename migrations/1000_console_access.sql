-- Console access (issue 18): the tenant's admin users become console users with
-- a role, invitations, cookie sessions, and an audit log of every change.

-- Every existing admin user was all-powerful: they stay owners who may publish.
ALTER TABLE admin_users
  ADD COLUMN role text NOT NULL DEFAULT 'owner' CHECK (role IN ('owner', 'marketer', 'support', 'reviewer', 'analyst')),
  ADD COLUMN can_publish boolean NOT NULL DEFAULT true,
  ADD COLUMN name text CHECK (char_length(name) BETWEEN 1 AND 200),
  ADD COLUMN status text NOT NULL DEFAULT 'active' CHECK (status IN ('invited', 'active', 'disabled')),
  ADD COLUMN invite_token_hash text,
  ADD COLUMN invite_expires_at timestamptz,
  ADD COLUMN invited_by uuid,
  ADD COLUMN password_changed_at timestamptz,
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now(),
  ALTER COLUMN password_hash DROP NOT NULL,
  ADD CONSTRAINT admin_users_password_when_active CHECK (status = 'invited' OR password_hash IS NOT NULL);
CREATE UNIQUE INDEX admin_users_invite ON admin_users (tenant_id, invite_token_hash) WHERE invite_token_hash IS NOT NULL;

-- A console sign-in: the cookie carries `<tenant id>.<secret>`, the row its hash.
CREATE TABLE console_sessions (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  token_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  ip_address inet,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, token_hash),
  FOREIGN KEY (tenant_id, user_id) REFERENCES admin_users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
CALL enable_tenant_rls('console_sessions');

-- Who changed what, when: kept when participants are erased (it names
-- participants by id only and holds no personal values).
CREATE TABLE audit_log (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id bigint GENERATED ALWAYS AS IDENTITY,
  occurred_at timestamptz NOT NULL,
  actor_type text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'system')),
  actor_id text NOT NULL,
  actor_label text,
  action text NOT NULL,
  method text NOT NULL,
  route text NOT NULL,
  resource_type text NOT NULL,
  resource_id text,
  status integer NOT NULL,
  before jsonb,
  after jsonb,
  details jsonb,
  request_id text,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX audit_log_time ON audit_log (tenant_id, occurred_at DESC, id DESC);
CREATE INDEX audit_log_resource ON audit_log (tenant_id, resource_type, resource_id, occurred_at DESC);
CALL enable_tenant_rls('audit_log');

-- A reveal of one personal field states why.
ALTER TABLE pii_access_log ADD COLUMN reason text CHECK (char_length(reason) BETWEEN 1 AND 500);
