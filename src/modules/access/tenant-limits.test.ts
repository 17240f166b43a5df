import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestService, type TestService, type TestTenant } from '../../../test/helper.js';
import { asPerson, signInConsole } from '../../../test/console-people.js';
import { createEngagement } from '../engagements/testing.js';

/**
 * A tenant's limits through HTTP: the tenant reads them with their sources
 * (`GET /tenant/limits`), only the platform operator changes them
 * (`PATCH /operator/tenants/{id}/limits` with OPERATOR_TOKEN), every change is
 * in the tenant's audit log, and enforcement follows the change at once.
 */
const OPERATOR_TOKEN = randomBytes(32).toString('hex');
const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` };

function limitsPath(tenant: TestTenant): string {
  return `/api/v1/operator/tenants/${tenant.tenantId}/limits`;
}

async function setLimits(svc: TestService, tenant: TestTenant, body: Record<string, unknown>) {
  const response = await svc.request('PATCH', limitsPath(tenant), { headers: operator, body });
  assert.equal(response.status, 200, response.text);
  return response.body;
}

interface AuditEntry {
  actor_type: string;
  actor_id: string;
  action: string;
  resource_type: string;
  resource_id: string | null;
  before: any;
  after: any;
}

async function auditEntries(svc: TestService, tenant: TestTenant, action: string): Promise<AuditEntry[]> {
  const log = await svc.request('GET', '/api/v1/admin/audit-log?resource_type=tenant', { key: tenant.apiKey });
  assert.equal(log.status, 200, log.text);
  return (log.body.entries as AuditEntry[]).filter((entry) => entry.action === action);
}

test('tenant limits: read with sources, changed by the operator only, audited, enforced', { timeout: 120_000 }, async (t) => {
  const svc = await startTestService(t, { config: { OPERATOR_TOKEN } });
  const tenant = await svc.createTenant({ plan: 'starter', requestsPerMinute: null });
  const other = await svc.createTenant({ plan: 'starter', requestsPerMinute: null });

  await t.test('a new tenant reads its plan\'s figures, each with source "plan"', async () => {
    const read = await svc.request('GET', '/api/v1/tenant/limits', { key: tenant.apiKey });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.plan, 'starter');
    assert.deepEqual(read.body.limits.requests_per_minute, { value: 200, source: 'plan', plan_default: 200, override: null });
    assert.deepEqual(read.body.limits.api_keys, { value: 2, source: 'plan', plan_default: 2, override: null });
    assert.deepEqual(read.body.limits.headless_sdk, { value: false, source: 'plan', plan_default: false, override: null });
    assert.equal(read.body.limits.event_ingestion_per_day.value, 10_000);
    assert.equal(read.body.limits.concurrent_engagements.value, 3);
    assert.equal(read.body.limits.participants_per_month.value, 5_000);
  });

  await t.test('tenant credentials get 403 on the operator routes, whatever their scopes; no or a wrong token gets 401; nothing changes', async () => {
    const jwt = await svc.login(tenant);
    const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
    const tenantCredentials: Array<Record<string, string>> = [
      { 'x-api-key': tenant.apiKey },
      { authorization: `Bearer ${tenant.apiKey}` },
      { authorization: `Bearer ${jwt}` },
      asPerson(owner).headers,
    ];
    for (const headers of tenantCredentials) {
      const patch = await svc.request('PATCH', limitsPath(tenant), { headers, body: { requests_per_minute: 100_000 } });
      assert.equal(patch.status, 403, `${Object.keys(headers).join(',')}: ${patch.text}`);
      assert.equal(patch.body.code, 'OPERATOR_ONLY');
      assert.equal((await svc.request('GET', limitsPath(tenant), { headers })).status, 403);
    }
    for (const headers of [{}, { authorization: `Bearer ${randomBytes(32).toString('hex')}` }] as Array<Record<string, string>>) {
      const patch = await svc.request('PATCH', limitsPath(tenant), { headers, body: { requests_per_minute: 100_000 } });
      assert.equal(patch.status, 401, patch.text);
    }
    // The tenant's own settings route takes no limit either.
    const viaSettings = await svc.request('PATCH', '/api/v1/tenant', { key: tenant.apiKey, body: { requests_per_minute: 100_000 } });
    assert.equal(viaSettings.status, 400, viaSettings.text);
    const read = await svc.request('GET', '/api/v1/tenant/limits', { key: tenant.apiKey });
    assert.equal(read.body.limits.requests_per_minute.value, 200);
    assert.equal((await auditEntries(svc, tenant, 'limits.update')).length, 0);
  });

  await t.test('the operator lists tenants newest first, filtered and paginated; tenant credentials get 403', async () => {
    const sandbox = await svc.request('POST', '/api/v1/tenant/sandbox', { key: tenant.apiKey });
    assert.equal(sandbox.status, 201, sandbox.text);
    const seen: Array<{ tenant_id: string; environment: string; live_tenant_id: string | null }> = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; text: string; body: { tenants: typeof seen; next_cursor: string | null } } = await svc.request('GET', `/api/v1/operator/tenants?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: operator });
      assert.equal(page.status, 200, page.text);
      assert.ok(page.body.tenants.length <= 1);
      seen.push(...page.body.tenants);
      cursor = page.body.next_cursor;
    } while (cursor);
    const ids = seen.map((row) => row.tenant_id);
    assert.equal(new Set(ids).size, ids.length, 'no tenant twice across pages');
    assert.deepEqual(ids.slice(0, 3), [sandbox.body.sandbox_tenant_id, other.tenantId, tenant.tenantId], 'newest first');
    assert.equal(seen[0].live_tenant_id, tenant.tenantId);
    const sandboxes = await svc.request('GET', '/api/v1/operator/tenants?environment=sandbox', { headers: operator });
    assert.deepEqual(sandboxes.body.tenants.map((row: { tenant_id: string }) => row.tenant_id), [sandbox.body.sandbox_tenant_id]);
    const bad = await svc.request('GET', '/api/v1/operator/tenants?plan=gold', { headers: operator });
    assert.equal(bad.status, 400);
    assert.ok(bad.body.detail);
    assert.equal((await svc.request('GET', '/api/v1/operator/tenants', { key: tenant.apiKey })).status, 403);
    assert.equal((await svc.request('GET', '/api/v1/operator/tenants')).status, 401);
  });

  await t.test('bad limits are refused with 400 and a detail; an unknown tenant is 404; nothing changes', async () => {
    const cases: Array<Record<string, unknown>> = [
      { requests_per_minute: 0 },
      { requests_per_minute: 1_000_001 },
      { api_keys: 1.5 },
      { concurrent_engagements: 'ten' },
      { event_ingestion_per_day: -1 },
      { headless_sdk: 'yes' },
      { plan: 'platinum' },
      { name: 'Renamed' },
      {},
    ];
    for (const body of cases) {
      const response = await svc.request('PATCH', limitsPath(tenant), { headers: operator, body });
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.text}`);
      assert.ok(response.body.detail, JSON.stringify(body));
    }
    const unknown = await svc.request('PATCH', '/api/v1/operator/tenants/00000000-0000-4000-8000-000000000000/limits', { headers: operator, body: { api_keys: 5 } });
    assert.equal(unknown.status, 404, unknown.text);
    assert.equal((await svc.request('PATCH', '/api/v1/operator/tenants/acme/limits', { headers: operator, body: { api_keys: 5 } })).status, 400);
    const read = await svc.request('GET', limitsPath(tenant), { headers: operator });
    assert.equal(read.status, 200, read.text);
    assert.ok(Object.values(read.body.limits).every((limit: any) => limit.source === 'plan'), JSON.stringify(read.body.limits));
  });

  await t.test('the operator sets overrides: the tenant sees them as "override", null returns to the plan, each change is in the tenant\'s audit log only', async () => {
    const changed = await setLimits(svc, tenant, { api_keys: 3, participants_per_month: 50_000, headless_sdk: true });
    assert.deepEqual(changed.limits.api_keys, { value: 3, source: 'override', plan_default: 2, override: 3 });
    const read = await svc.request('GET', '/api/v1/tenant/limits', { key: tenant.apiKey });
    assert.deepEqual(read.body, { ...changed, livemode: true }, 'the tenant reads what the operator set (its answer is marked live)');
    assert.deepEqual(read.body.limits.headless_sdk, { value: true, source: 'override', plan_default: false, override: true });
    const tenantRead = await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey });
    assert.equal(tenantRead.body.quotas.api_keys, 3);
    assert.equal(tenantRead.body.quotas.participants_per_month, 50_000);
    const usage = await svc.request('GET', '/api/v1/tenant/usage', { key: tenant.apiKey });
    assert.equal(usage.body.participants_this_month.quota, 50_000);

    const cleared = await setLimits(svc, tenant, { participants_per_month: null, headless_sdk: null });
    assert.deepEqual(cleared.limits.participants_per_month, { value: 5_000, source: 'plan', plan_default: 5_000, override: null });
    assert.equal(cleared.limits.api_keys.value, 3, 'a field not sent keeps its value');

    const [latest, first] = await auditEntries(svc, tenant, 'limits.update');
    assert.equal(first.actor_type, 'system');
    assert.equal(first.actor_id, 'operator');
    assert.equal(first.resource_id, tenant.tenantId);
    assert.equal(first.before.limits.api_keys.value, 2);
    assert.equal(first.after.limits.api_keys.value, 3);
    assert.equal(latest.before.limits.participants_per_month.value, 50_000);
    assert.equal(latest.after.limits.participants_per_month.value, 5_000);
    assert.equal((await auditEntries(svc, other, 'limits.update')).length, 0, "another tenant's log does not show the change");
    const otherRead = await svc.request('GET', '/api/v1/tenant/limits', { key: other.apiKey });
    assert.equal(otherRead.body.limits.api_keys.value, 2, 'another tenant keeps its figures');
  });

  await t.test('a raised or lowered API-key limit decides the next key creation', async () => {
    // The tenant has its first key; its override is 3 where the plan allows 2.
    const jwt = await svc.login(tenant);
    for (let i = 0; i < 2; i++) {
      const created = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: `k${i}`, scopes: ['ingest'] } });
      assert.equal(created.status, 201, created.text);
    }
    const refused = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'k3', scopes: ['ingest'] } });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.body.code, 'PLAN_QUOTA_EXCEEDED');
    assert.match(refused.body.detail, /tenant's limit allows 3/);
    await setLimits(svc, tenant, { api_keys: 1 });
    const keys = await svc.request('GET', '/api/v1/events/api-keys', { bearer: jwt });
    assert.equal(keys.body.api_keys.length, 3, 'keys above a lowered limit keep working');
  });

  await t.test('a lowered engagement limit refuses the next publication', async () => {
    await setLimits(svc, other, { concurrent_engagements: 1 });
    await createEngagement(svc, other, {});
    const second = await createEngagement(svc, other, {}, false);
    const refused = await svc.request('POST', `/api/v1/admin/engagements/${second.id}/publish`, { key: other.apiKey });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.body.code, 'PLAN_QUOTA_EXCEEDED');
    await setLimits(svc, other, { concurrent_engagements: null });
    assert.equal((await svc.request('POST', `/api/v1/admin/engagements/${second.id}/publish`, { key: other.apiKey })).status, 200);
  });

  await t.test('a lowered daily ingestion quota refuses the next event', async () => {
    await setLimits(svc, other, { event_ingestion_per_day: 2 });
    const send = (i: number) =>
      svc.request('POST', '/api/v1/ingest/events', { key: other.apiKey, body: { event_name: 'tap', participant_id: 'p-1', idempotency_key: `q-${i}-${randomBytes(4).toString('hex')}` } });
    assert.equal((await send(1)).status, 202);
    assert.equal((await send(2)).status, 202);
    const refused = await send(3);
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.code, 'INGESTION_QUOTA_EXCEEDED');
  });

  await t.test('a rate limit lowered to 5 per minute applies to the next request: the sixth gets 429 with Retry-After and the rate headers', async () => {
    const limited = await svc.createTenant({ plan: 'starter', requestsPerMinute: null });
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: limited.apiKey })).headers.get('x-ratelimit-limit'), '200');
    await setLimits(svc, limited, { requests_per_minute: 5 });
    for (let i = 1; i <= 5; i++) {
      const allowed = await svc.request('GET', '/api/v1/tenant', { key: limited.apiKey });
      assert.equal(allowed.status, 200, allowed.text);
      assert.equal(allowed.headers.get('x-ratelimit-limit'), '5');
      assert.equal(allowed.headers.get('x-ratelimit-remaining'), String(5 - i));
    }
    const refused = await svc.request('GET', '/api/v1/tenant', { key: limited.apiKey });
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.code, 'RATE_LIMITED');
    assert.equal(refused.headers.get('x-ratelimit-limit'), '5');
    assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.ok(Number(refused.headers.get('x-ratelimit-reset')) > Date.now() / 1000);
    // Another tenant is not touched, and the operator can lift the limit again at once.
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: other.apiKey })).status, 200);
    await setLimits(svc, limited, { requests_per_minute: null });
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: limited.apiKey })).status, 200);
  });

  await t.test('a plan change applies its figures wherever no override is set, the rate limit included; the sandbox follows the plan', async () => {
    const testKey = await svc.request('POST', '/api/v1/events/api-keys', { bearer: await svc.login(other), body: { name: 'sandbox', environment: 'test', scopes: ['admin'] } });
    assert.equal(testKey.status, 201, testKey.text);
    const changed = await setLimits(svc, other, { plan: 'growth' });
    assert.equal(changed.plan, 'growth');
    assert.deepEqual(changed.limits.requests_per_minute, { value: 1_000, source: 'plan', plan_default: 1_000, override: null });
    assert.equal(changed.limits.event_ingestion_per_day.source, 'override', 'an override outlives the plan change');
    const read = await svc.request('GET', '/api/v1/tenant', { key: other.apiKey });
    assert.equal(read.body.plan, 'growth');
    assert.equal(read.headers.get('x-ratelimit-limit'), '1000');
    const sandbox = await svc.request('GET', '/api/v1/tenant', { key: testKey.body.key });
    assert.deepEqual([sandbox.body.plan, sandbox.body.livemode], ['growth', false]);
  });

  await t.test('usage counts a processing backlog up to 100,000 waiting events, then says it is capped', async () => {
    const backlog = await svc.createTenant();
    const read = async () => (await svc.request('GET', '/api/v1/tenant/usage', { key: backlog.apiKey })).body.event_processing;
    assert.deepEqual(await read(), { waiting: 0, waiting_capped: false, lag_seconds: 0 });
    const fill = (count: number) =>
      svc.sql(`INSERT INTO ingestion_pending (tenant_id, event_id, queue, lane) SELECT $1, 'evt_backlog_' || g, 'p:1', 1 FROM generate_series(1, $2::int) g`, [backlog.tenantId, count]);
    await fill(100_000);
    assert.deepEqual(await read(), { waiting: 100_000, waiting_capped: false, lag_seconds: 0 });
    await svc.sql(`INSERT INTO ingestion_pending (tenant_id, event_id, queue, lane) VALUES ($1, 'evt_backlog_one_more', 'p:1', 1)`, [backlog.tenantId]);
    assert.deepEqual(await read(), { waiting: 100_000, waiting_capped: true, lag_seconds: 0 });
    await svc.sql('DELETE FROM ingestion_pending WHERE tenant_id = $1', [backlog.tenantId]);
  });
});
