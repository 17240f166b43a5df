import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './helper.js';
import { ensureDemoTenant } from '../scripts/demo-tenant.js';
import { DEMO_PARTICIPANTS } from '../scripts/demo-console-seed.js';

/**
 * `npm run demo` seeds through `ensureDemoTenant`: run twice against one
 * database, the second run adds nothing (same counts everywhere) and gives
 * the owner a new password that signs in.
 */
const COUNTS = `
  SELECT (SELECT count(*) FROM tenants WHERE slug = $2)::int AS tenants,
         (SELECT count(*) FROM admin_users WHERE tenant_id = $1)::int AS admin_users,
         (SELECT count(*) FROM api_keys WHERE tenant_id = $1)::int AS api_keys,
         (SELECT count(*) FROM participants WHERE tenant_id = $1)::int AS participants,
         (SELECT count(*) FROM participants WHERE tenant_id = $1 AND email IS NOT NULL)::int AS profiles,
         (SELECT count(*) FROM points_ledger WHERE tenant_id = $1 AND reason = 'welcome')::int AS welcome_grants,
         (SELECT count(*) FROM points_tiers WHERE tenant_id = $1)::int AS tiers,
         (SELECT count(*) FROM badge_definitions WHERE tenant_id = $1)::int AS badges,
         (SELECT count(*) FROM earn_rules WHERE tenant_id = $1)::int AS rules,
         (SELECT count(*) FROM ingested_events WHERE tenant_id = $1)::int AS events,
         (SELECT count(*) FROM webhook_destinations WHERE tenant_id = $1)::int AS destinations,
         (SELECT count(*) FROM engagements WHERE tenant_id = $1)::int AS engagements`;

test('the demo seeding is idempotent', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t);
  const { app, db } = svc.service;
  assert.ok(app);
  const first = await ensureDemoTenant(db, app, 'demo-twice');
  assert.equal(first.created, true);
  const [before] = await svc.sql(COUNTS, [first.tenantId, 'demo-twice']);
  assert.equal(before.tenants, 1);
  assert.equal(before.participants >= DEMO_PARTICIPANTS.length, true, JSON.stringify(before));
  assert.equal(before.profiles, DEMO_PARTICIPANTS.length);
  assert.equal(before.tiers, 3);
  assert.equal(before.badges >= 4, true, JSON.stringify(before));
  assert.equal(before.rules, 3);
  assert.ok(before.events > 10, JSON.stringify(before));
  assert.equal(before.destinations, 1);
  assert.equal(before.engagements, 1);
  const deliveries = await svc.sql('SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1', [first.tenantId]);
  assert.ok(deliveries[0].n >= 1, 'the destination has a delivery');

  const second = await ensureDemoTenant(db, app, 'demo-twice');
  assert.equal(second.created, false);
  assert.equal(second.tenantId, first.tenantId);
  assert.equal(second.engagementId, first.engagementId);
  const [after] = await svc.sql(COUNTS, [first.tenantId, 'demo-twice']);
  assert.deepEqual(after, before);

  assert.notEqual(second.ownerPassword, first.ownerPassword);
  const signIn = await svc.request('POST', '/api/v1/console/session', { body: { email: second.ownerEmail, password: second.ownerPassword } });
  assert.equal(signIn.status, 200, signIn.text);
  const stale = await svc.request('POST', '/api/v1/console/session', { body: { email: first.ownerEmail, password: first.ownerPassword } });
  assert.equal(stale.status, 401);
});
