-- A live tenant may own one sandbox: a tenant of its own (environment
-- 'sandbox') whose live_tenant_id names the live tenant. `lk_test_` keys that
-- a live tenant issues are stored in its sandbox, so a test key reads and
-- writes the sandbox's participants, ledger, events, outcomes and webhook
-- destinations and never the live data (docs/decisions/sandbox.md).
ALTER TABLE tenants ADD COLUMN live_tenant_id uuid REFERENCES tenants (id) ON DELETE CASCADE;
ALTER TABLE tenants ADD CONSTRAINT tenants_live_tenant_is_sandbox CHECK (live_tenant_id IS NULL OR environment = 'sandbox');
CREATE UNIQUE INDEX tenants_one_sandbox_per_live ON tenants (live_tenant_id) WHERE live_tenant_id IS NOT NULL;

-- Test keys issued before this migration sat in their live tenant and wrote
-- live data. Each such live tenant gets its sandbox now and its test keys move
-- there: from the next request on, they reach the sandbox. What they wrote
-- before stays live data (it cannot be told apart from the rest).
INSERT INTO tenants (id, slug, name, plan, timezone, currency, locale, environment, live_tenant_id)
SELECT gen_random_uuid(),
       left(t.slug, 46) || '-sandbox-' || substr(md5(t.id::text), 1, 8),
       left(t.name, 190) || ' (sandbox)',
       t.plan, t.timezone, t.currency, t.locale, 'sandbox', t.id
  FROM tenants t
 WHERE t.environment = 'live'
   AND EXISTS (SELECT 1 FROM api_keys k WHERE k.tenant_id = t.id AND k.environment = 'test');

UPDATE api_keys k
   SET tenant_id = s.id
  FROM tenants s
 WHERE s.live_tenant_id = k.tenant_id
   AND k.environment = 'test';
