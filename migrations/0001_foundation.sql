-- Foundation: tenants, credentials, sessions, participants, idempotency, the
-- outbox, and the row-level security that isolates tenants.

-- The tenant of the current transaction, set by the service with
-- set_config('app.tenant_id', ..., true). Unset means no tenant: no rows.
CREATE FUNCTION app_current_tenant() RETURNS uuid
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT nullif(current_setting('app.tenant_id', true), '')::uuid $$;

-- Every tenant-owned table calls this once. The application role sees only
-- the current tenant's rows; the owner (migrations, job queue, cross-tenant
-- scans for due work) keeps full access.
CREATE PROCEDURE enable_tenant_rls(target regclass)
  LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', target);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', target);
  EXECUTE format('CREATE POLICY tenant_isolation ON %s TO loyalty_app USING (tenant_id = app_current_tenant()) WITH CHECK (tenant_id = app_current_tenant())', target);
  EXECUTE format('CREATE POLICY system_access ON %s TO %I USING (true) WITH CHECK (true)', target, current_user);
END $$;

CREATE TABLE tenants (
  id uuid PRIMARY KEY,
  slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{1,62}$'),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  plan text NOT NULL CHECK (plan IN ('starter', 'growth', 'scale', 'enterprise')),
  -- Overrides the plan's API requests per minute (the enterprise "custom" figure).
  rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0),
  timezone text NOT NULL DEFAULT 'UTC',
  created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
ALTER TABLE tenants FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON tenants TO loyalty_app USING (id = app_current_tenant()) WITH CHECK (id = app_current_tenant());
DO $$ BEGIN EXECUTE format('CREATE POLICY system_access ON tenants TO %I USING (true) WITH CHECK (true)', current_user); END $$;

CREATE TABLE admin_users (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  email text NOT NULL,
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX admin_users_email ON admin_users (lower(email));
CALL enable_tenant_rls('admin_users');

CREATE TABLE api_keys (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  name text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('live', 'test')),
  -- The first characters of the key, enough to recognise it in a listing.
  prefix text NOT NULL,
  -- SHA-256 of the full key. Keys carry 128 random bits, so a fast hash is enough.
  key_hash text NOT NULL UNIQUE,
  scopes text[] NOT NULL,
  rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  PRIMARY KEY (tenant_id, id)
);
CALL enable_tenant_rls('api_keys');

CREATE TABLE participants (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  participant_id text NOT NULL CHECK (char_length(participant_id) BETWEEN 1 AND 128),
  display_name text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, participant_id)
);
CALL enable_tenant_rls('participants');

CREATE TABLE sessions (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  token_hash text NOT NULL UNIQUE,
  participant_id text NOT NULL,
  engagement_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CREATE INDEX sessions_expiry ON sessions (expires_at);
CALL enable_tenant_rls('sessions');

CREATE TABLE idempotency_keys (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  scope text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  response jsonb,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, scope, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
CALL enable_tenant_rls('idempotency_keys');

-- Every outgoing event, written in the transaction of the change that caused it.
CREATE TABLE outbox_events (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  event text NOT NULL,
  participant_id text,
  engagement_id uuid,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX outbox_events_participant ON outbox_events (tenant_id, participant_id, seq);
CREATE INDEX outbox_events_created ON outbox_events (created_at);
CALL enable_tenant_rls('outbox_events');

-- Secrets the service generates for itself (the JWT key when JWT_SECRET is unset).
CREATE TABLE service_secrets (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
REVOKE ALL ON service_secrets FROM loyalty_app;

-- Job queue workers check in here; a worker silent for too long has its jobs handed on.
CREATE TABLE worker_heartbeats (
  worker_id text PRIMARY KEY,
  last_seen_at timestamptz NOT NULL
);
REVOKE ALL ON worker_heartbeats FROM loyalty_app;

-- Credential look-ups happen before the tenant is known. These functions run
-- as the owner and return only the matching row, so the tables stay closed.
CREATE FUNCTION auth_find_api_key(p_key_hash text)
  RETURNS TABLE (tenant_id uuid, id uuid, scopes text[], rate_limit_per_minute integer, revoked_at timestamptz,
                 plan text, tenant_rate_limit_per_minute integer)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT k.tenant_id, k.id, k.scopes, k.rate_limit_per_minute, k.revoked_at, t.plan, t.rate_limit_per_minute
    FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
    WHERE k.key_hash = p_key_hash
  $$;

CREATE FUNCTION auth_find_session(p_token_hash text)
  RETURNS TABLE (tenant_id uuid, id uuid, participant_id text, engagement_id uuid, expires_at timestamptz,
                 revoked_at timestamptz, plan text, tenant_rate_limit_per_minute integer)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT s.tenant_id, s.id, s.participant_id, s.engagement_id, s.expires_at, s.revoked_at, t.plan, t.rate_limit_per_minute
    FROM sessions s JOIN tenants t ON t.id = s.tenant_id
    WHERE s.token_hash = p_token_hash
  $$;

CREATE FUNCTION auth_find_admin_user(p_email text)
  RETURNS TABLE (tenant_id uuid, id uuid, password_hash text)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT u.tenant_id, u.id, u.password_hash FROM admin_users u WHERE lower(u.email) = lower(p_email) $$;

CREATE FUNCTION auth_find_tenant(p_tenant_id uuid)
  RETURNS TABLE (id uuid, slug text, plan text, rate_limit_per_minute integer)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT t.id, t.slug, t.plan, t.rate_limit_per_minute FROM tenants t WHERE t.id = p_tenant_id $$;

CREATE FUNCTION auth_find_tenant_by_slug(p_slug text)
  RETURNS TABLE (id uuid, slug text, plan text, rate_limit_per_minute integer)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT t.id, t.slug, t.plan, t.rate_limit_per_minute FROM tenants t WHERE t.slug = p_slug $$;
