-- Webhook test controls (issue 16, item 7), both for sandbox tenants only:
--
-- * a destination may opt in to a receiver on the private network
--   (loopback, RFC 1918, unique-local) and plain http, for local development;
--   the service accepts the flag only for a sandbox tenant and never with
--   APP_ENV=production, and checks both again before every delivery;
-- * a per-tenant factor applied to the retry schedule (30 s, 5 min, 30 min),
--   so an integrator sees retries in seconds instead of half an hour.
--   A live tenant has no row and keeps the spec's timing.
ALTER TABLE webhook_destinations ADD COLUMN allow_private_network boolean NOT NULL DEFAULT false;

CREATE TABLE webhook_settings (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  backoff_scale double precision NOT NULL DEFAULT 1 CHECK (backoff_scale >= 0.001 AND backoff_scale <= 1),
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id)
);
CALL enable_tenant_rls('webhook_settings');
