-- A sandbox tenant's test clock (issue 16, item 7c): how far the tenant's
-- "now" runs ahead of the service clock. Only sandbox tenants get a row (the
-- service refuses live tenants); no row means real time. Every process keeps
-- the rows in memory and hears changes on the channel `tenant_clock_changed`
-- (src/platform/test-clock.ts), so reading a tenant's now costs no query.
CREATE TABLE tenant_test_clocks (
  tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
  -- Forward only: the service never moves a tenant's clock back except by deleting the row.
  offset_ms bigint NOT NULL CHECK (offset_ms > 0),
  advanced_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL
);
CALL enable_tenant_rls('tenant_test_clocks');
