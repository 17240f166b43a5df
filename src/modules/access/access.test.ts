import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';

test('access: keys, login, sessions', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();

  await t.test('an API key reads its own tenant', async () => {
    const response = await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey });
    assert.equal(response.status, 200);
    assert.equal(response.body.tenant_id, tenant.tenantId);
    assert.ok(response.headers.get('x-ratelimit-limit'));
    assert.ok(response.headers.get('x-request-id'));
  });

  await t.test('a tenant is live unless created as a sandbox, whose first key is a test key', async () => {
    const live = await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey });
    assert.equal(live.body.environment, 'live');
    assert.match(tenant.apiKey, /^lk_live_/);
    const sandbox = await svc.createTenant({ environment: 'sandbox' });
    assert.match(sandbox.apiKey, /^lk_test_/);
    const read = await svc.request('GET', '/api/v1/tenant', { key: sandbox.apiKey });
    assert.equal(read.status, 200);
    assert.equal(read.body.environment, 'sandbox');
    const keys = await svc.request('GET', '/api/v1/events/api-keys', { bearer: await svc.login(sandbox) });
    assert.equal(keys.status, 200);
  });

  await t.test('a missing key gets 401 with the coded envelope', async () => {
    const response = await svc.request('GET', '/api/v1/tenant');
    assert.equal(response.status, 401);
    assert.deepEqual(Object.keys(response.body).sort(), ['code', 'detail', 'doc_url', 'error_version', 'request_id']);
    assert.equal(response.body.code, 'AUTH_UNAUTHENTICATED');
    assert.equal(response.body.error_version, 1);
  });

  await t.test('a bearer key with the tenant header of another tenant gets 403', async () => {
    const response = await svc.request('GET', '/api/v1/tenant', { bearer: tenant.apiKey, headers: { 'x-service-tenant': other.tenantId } });
    assert.equal(response.status, 403);
    assert.equal(response.body.code, 'AUTH_TENANT_MISMATCH');
    const ok = await svc.request('GET', '/api/v1/tenant', { bearer: tenant.apiKey, headers: { 'x-service-tenant': tenant.slug } });
    assert.equal(ok.status, 200);
  });

  await t.test('a created key works, is stored hashed, and stops working once revoked', async () => {
    const jwt = await svc.login(tenant);
    const created = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'server', scopes: ['admin'] } });
    assert.equal(created.status, 201);
    assert.match(created.body.key, /^lk_live_[0-9a-f]{32}$/);
    const stored = await svc.sql('SELECT * FROM api_keys WHERE id = $1', [created.body.id]);
    assert.ok(!JSON.stringify(stored).includes(created.body.key));
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: created.body.key })).status, 200);
    const revoked = await svc.request('DELETE', `/api/v1/events/api-keys/${created.body.id}`, { bearer: jwt });
    assert.equal(revoked.status, 200);
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: created.body.key })).status, 401);
  });
});
