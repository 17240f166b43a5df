import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, waitFor } from '../../../test/helper.js';
import { startReceiver } from '../webhooks/testing.js';

/**
 * Sandbox mode through HTTP: a live tenant's `lk_test_` key acts in its paired
 * sandbox (its own participants, ledger, events and webhook destinations),
 * never on live data; every answer to a credential and every webhook says
 * which side it comes from (`livemode`); test controls work with the test key
 * and not with the live one.
 */
const KEYS = '/api/v1/events/api-keys';
const SANDBOX = '/api/v1/tenant/sandbox';

test('sandbox mode: test keys act in the paired sandbox, never on live data', async (t) => {
  const svc = await startTestService(t, { jobs: true, config: { RATE_LIMIT_KEY_PER_MINUTE: '1000000', ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' } });
  const live = await svc.createTenant();
  const other = await svc.createTenant();
  const jwt = await svc.login(live);

  let testKey = '';
  let testKeyId = '';
  let sandboxId = '';

  await t.test('before a sandbox exists, GET /tenant/sandbox is 404 SANDBOX_NOT_FOUND', async () => {
    const missing = await svc.request('GET', SANDBOX, { key: live.apiKey });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'SANDBOX_NOT_FOUND');
  });

  await t.test('the first test key opens the sandbox; the key authenticates as the sandbox', async () => {
    const created = await svc.request('POST', KEYS, { bearer: jwt, body: { name: 'ci', environment: 'test', scopes: ['admin', 'gamify:admin', 'ingest'] } });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.key, /^lk_test_[0-9a-f]{32}$/);
    assert.equal(created.body.environment, 'test');
    assert.equal(created.body.livemode, true, 'the answer comes from the live tenant that issued the key');
    testKey = created.body.key;
    testKeyId = created.body.id;

    const pair = await svc.request('GET', SANDBOX, { key: live.apiKey });
    assert.equal(pair.status, 200, pair.text);
    assert.equal(pair.body.live_tenant_id, live.tenantId);
    assert.notEqual(pair.body.sandbox_tenant_id, live.tenantId);
    assert.equal(pair.body.livemode, true);
    sandboxId = pair.body.sandbox_tenant_id;

    const fromSandbox = await svc.request('GET', SANDBOX, { key: testKey });
    assert.equal(fromSandbox.status, 200);
    assert.equal(fromSandbox.body.sandbox_tenant_id, sandboxId);
    assert.equal(fromSandbox.body.livemode, false);

    const tenant = await svc.request('GET', '/api/v1/tenant', { key: testKey });
    assert.equal(tenant.body.tenant_id, sandboxId);
    assert.equal(tenant.body.environment, 'sandbox');
    assert.equal(tenant.body.livemode, false);
    const [stored] = await svc.sql('SELECT tenant_id FROM api_keys WHERE id = $1', [testKeyId]);
    assert.equal(stored.tenant_id, sandboxId, 'the test key is kept in the sandbox');
  });

  await t.test('grants and events with the test key change the sandbox only; the live participant is untouched', async () => {
    const liveGrant = await svc.request('POST', '/api/v1/gamify/points/grant', { key: live.apiKey, body: { participant_id: 'ada', amount: 100, reason: 'welcome', idempotency_key: 'same-key' } });
    assert.equal(liveGrant.status, 200, liveGrant.text);
    assert.equal(liveGrant.body.livemode, true);
    // The same participant id and the same idempotency key: separate data, so a second, separate grant.
    const testGrant = await svc.request('POST', '/api/v1/gamify/points/grant', { key: testKey, body: { participant_id: 'ada', amount: 7, reason: 'welcome', idempotency_key: 'same-key' } });
    assert.equal(testGrant.status, 200, testGrant.text);
    assert.equal(testGrant.body.duplicate, false);
    assert.equal(testGrant.body.available, 7);
    assert.equal(testGrant.body.livemode, false);

    const event = await svc.request('POST', '/api/v1/ingest/events', { key: testKey, body: { event_name: 'page_view', participant_id: 'grace', idempotency_key: 'ev-1' } });
    assert.equal(event.status, 202, event.text);
    const stored = await svc.sql("SELECT tenant_id FROM event_idempotency_keys WHERE key = 'ev-1'");
    assert.deepEqual(stored.map((r) => r.tenant_id), [sandboxId], 'the event is stored in the sandbox');

    const ledger = await svc.sql('SELECT tenant_id, delta FROM points_ledger WHERE tenant_id = ANY($1::uuid[]) ORDER BY delta', [[live.tenantId, sandboxId]]);
    assert.deepEqual(ledger.map((r) => [r.tenant_id, Number(r.delta)]), [[sandboxId, 7], [live.tenantId, 100]]);

    const liveRead = await svc.request('GET', '/api/v1/gamify/participants/ada', { key: live.apiKey });
    const testRead = await svc.request('GET', '/api/v1/gamify/participants/ada', { key: testKey });
    assert.equal(liveRead.body.livemode, true);
    assert.equal(testRead.body.livemode, false);
    assert.notDeepEqual({ ...liveRead.body, livemode: null }, { ...testRead.body, livemode: null });
  });

  await t.test('the live tenant lists, rotates and revokes its test keys; a sandbox issues test keys only', async () => {
    const listing = await svc.request('GET', KEYS, { bearer: jwt });
    const environments = listing.body.api_keys.map((k: { environment: string }) => k.environment).sort();
    assert.deepEqual(environments, ['live', 'test']);

    // Keys are managed with an admin login token: a sandbox made alone has admin users of its own.
    const alone = await svc.createTenant({ environment: 'sandbox' });
    const liveFromSandbox = await svc.request('POST', KEYS, { bearer: await svc.login(alone), body: { name: 'x', environment: 'live', scopes: ['ingest'] } });
    assert.equal(liveFromSandbox.status, 400);
    assert.equal(liveFromSandbox.body.code, 'LIVE_KEY_IN_SANDBOX');
    const defaulted = await svc.request('POST', KEYS, { bearer: jwt, body: { name: 'live by default', scopes: ['ingest'] } });
    assert.equal(defaulted.body.environment, 'live');

    const rotated = await svc.request('POST', `${KEYS}/${testKeyId}/rotate`, { bearer: jwt });
    assert.equal(rotated.status, 200, rotated.text);
    assert.match(rotated.body.key, /^lk_test_/);
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: testKey })).status, 401, 'the old secret is refused');
    testKey = rotated.body.key;
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: testKey })).body.tenant_id, sandboxId);

    const spare = await svc.request('POST', KEYS, { bearer: jwt, body: { name: 'spare', environment: 'test', scopes: ['ingest'] } });
    const revoked = await svc.request('DELETE', `${KEYS}/${spare.body.id}`, { bearer: jwt });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal((await svc.request('GET', '/api/v1/gamify/participants/ada', { key: spare.body.key })).status, 401);

    const otherJwt = await svc.login(other);
    const crossTenant = await svc.request('DELETE', `${KEYS}/${testKeyId}`, { bearer: otherJwt });
    assert.equal(crossTenant.status, 404, "another tenant cannot revoke this tenant's test key");
    assert.equal((await svc.request('GET', SANDBOX, { key: other.apiKey })).status, 404, "another tenant sees no sandbox of this tenant's");
  });

  await t.test('test controls answer the test key and refuse the live key', async () => {
    const sandboxClock = await svc.request('GET', '/api/v1/admin/test-clock', { key: testKey });
    assert.equal(sandboxClock.status, 200, sandboxClock.text);
    const liveClock = await svc.request('POST', '/api/v1/admin/test-clock/advance', { key: live.apiKey, body: { seconds: 60 } });
    assert.equal(liveClock.status, 403);
    assert.equal(liveClock.body.code, 'SANDBOX_ONLY');
  });

  await t.test('webhooks of the sandbox carry livemode false, of the live tenant livemode true', async () => {
    const receiver = await startReceiver();
    t.after(() => receiver.close());
    for (const [key, path] of [[testKey, '/sandbox'], [live.apiKey, '/live']]) {
      const destination = await svc.request('POST', '/api/v1/gamify/webhooks', { key, body: { name: 'local', url: `${receiver.url}${path}`, events: ['points.*'] } });
      assert.equal(destination.status, 201, destination.text);
      const granted = await svc.request('POST', '/api/v1/gamify/points/grant', { key, body: { participant_id: 'lin', amount: 5, reason: 'test', idempotency_key: 'hook-1' } });
      assert.equal(granted.status, 200);
    }
    const envelopeAt = async (path: string) =>
      JSON.parse((await waitFor(`the ${path} grant webhook`, () => receiver.received.find((r) => r.path === path && r.body?.event === 'points.awarded.v1'))).rawBody);
    const sandboxEnvelope = await envelopeAt('/sandbox');
    assert.equal(sandboxEnvelope.livemode, false);
    assert.equal(sandboxEnvelope.tenant_id, sandboxId);
    assert.equal(sandboxEnvelope.participant_id, 'lin');
    const liveEnvelope = await envelopeAt('/live');
    assert.equal(liveEnvelope.livemode, true);
    assert.equal(liveEnvelope.tenant_id, live.tenantId);
  });

  await t.test('opening the sandbox is idempotent under 100 parallel calls, and refused to a sandbox credential', async () => {
    const fresh = await svc.createTenant();
    const answers = await Promise.all(Array.from({ length: 100 }, () => svc.request('POST', SANDBOX, { key: fresh.apiKey })));
    assert.equal(answers.filter((a) => a.status === 201).length, 1, answers.map((a) => a.status).join(','));
    assert.equal(answers.filter((a) => a.status === 200).length, 99);
    assert.equal(new Set(answers.map((a) => a.body.sandbox_tenant_id)).size, 1);
    const sandboxes = await svc.sql('SELECT count(*)::int AS n FROM tenants WHERE live_tenant_id = $1', [fresh.tenantId]);
    assert.equal(sandboxes[0].n, 1);
    const fromSandbox = await svc.request('POST', SANDBOX, { key: testKey });
    assert.equal(fromSandbox.status, 409);
    assert.equal(fromSandbox.body.code, 'SANDBOX_CREDENTIAL');
    const notAdmin = await svc.request('POST', KEYS, { bearer: jwt, body: { name: 'ingest only', scopes: ['ingest'] } });
    const refused = await svc.request('POST', SANDBOX, { key: notAdmin.body.key });
    assert.equal(refused.status, 403);
  });
});
