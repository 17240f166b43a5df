import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './helper.js';
import { IDEMPOTENCY_ABANDONED_AFTER_MS } from '../src/platform/idempotency-http.js';

/**
 * The `Idempotency-Key` header on every credentialed POST, through HTTP: a
 * creating route keeps its answer and replays it; the money-moving routes take
 * the header into the body's key, in the transaction of the change.
 */
const multiplier = (factor: number) => ({
  multiplier: factor,
  starts_at: '2026-01-01T00:00:00Z',
  ends_at: '2027-01-01T00:00:00Z',
  match: { event_type: 'purchase' },
});

test('Idempotency-Key on every credentialed POST', { timeout: 120_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant({ plan: 'enterprise' });
  const other = await svc.createTenant({ plan: 'enterprise' });
  const as = (apiKey: string, key?: string) => ({ key: apiKey, headers: key === undefined ? {} : { 'idempotency-key': key } }) as { key: string; headers: Record<string, string> };
  const multipliers = async (apiKey: string) => (await svc.request('GET', '/api/v1/admin/points/multipliers', { key: apiKey })).body.multipliers.length;

  await t.test('a creating route answers a repeat with the first answer and creates once', async () => {
    const first = await svc.request('POST', '/api/v1/admin/points/multipliers', { ...as(tenant.apiKey, 'create-1'), body: multiplier(2) });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const repeat = await svc.request('POST', '/api/v1/admin/points/multipliers', { ...as(tenant.apiKey, 'create-1'), body: multiplier(2) });
    assert.equal(repeat.status, 201);
    assert.equal(repeat.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(repeat.body, first.body);
    assert.equal(await multipliers(tenant.apiKey), 1);

    // Another tenant's key space is its own.
    const elsewhere = await svc.request('POST', '/api/v1/admin/points/multipliers', { ...as(other.apiKey, 'create-1'), body: multiplier(2) });
    assert.equal(elsewhere.status, 201);
    assert.notEqual(elsewhere.body.id, first.body.id);
    assert.equal(elsewhere.headers.get('idempotent-replayed'), null);
  });

  await t.test('the same key with another body, or on another route, is refused and changes nothing', async () => {
    const otherBody = await svc.request('POST', '/api/v1/admin/points/multipliers', { ...as(tenant.apiKey, 'create-1'), body: multiplier(3) });
    assert.equal(otherBody.status, 422);
    assert.equal(otherBody.body.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.match(otherBody.body.detail, /different request/);
    const otherRoute = await svc.request('POST', '/api/v1/admin/badges', { ...as(tenant.apiKey, 'create-1'), body: { code: 'first', name: 'First' } });
    assert.equal(otherRoute.status, 422);
    assert.equal(otherRoute.body.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(await multipliers(tenant.apiKey), 1);
    assert.equal((await svc.request('GET', '/api/v1/admin/badges', { key: tenant.apiKey })).body.badges.length, 0);
  });

  await t.test('a malformed key is a 400 with a detail, and nothing is created', async () => {
    for (const key of ['x'.repeat(256), 'has space', '']) {
      const response = await svc.request('POST', '/api/v1/admin/points/multipliers', { ...as(tenant.apiKey, key), body: multiplier(4) });
      assert.equal(response.status, 400, `${JSON.stringify(key)}: ${response.text}`);
      assert.match(response.body.detail, /idempotency-key/i);
    }
    assert.equal(await multipliers(tenant.apiKey), 1);
  });

  await t.test('a body refused by validation keeps no answer: the key is free for the corrected request', async () => {
    const refused = await svc.request('POST', '/api/v1/admin/points/multipliers', { ...as(tenant.apiKey, 'fix-me'), body: { ...multiplier(5), multiplier: 0 } });
    assert.equal(refused.status, 400);
    const corrected = await svc.request('POST', '/api/v1/admin/points/multipliers', { ...as(tenant.apiKey, 'fix-me'), body: multiplier(5) });
    assert.equal(corrected.status, 201, corrected.text);
  });

  await t.test("a domain refusal is the key's answer, replayed", async () => {
    const badge = { code: 'twice', name: 'Twice' };
    assert.equal((await svc.request('POST', '/api/v1/admin/badges', { key: tenant.apiKey, body: badge })).status, 201);
    const refused = await svc.request('POST', '/api/v1/admin/badges', { ...as(tenant.apiKey, 'badge-again'), body: badge });
    assert.equal(refused.status, 409, refused.text);
    // 409 is not kept (a conflict may clear): the repeat runs again and gets its own 409.
    const again = await svc.request('POST', '/api/v1/admin/badges', { ...as(tenant.apiKey, 'badge-again'), body: badge });
    assert.equal(again.status, 409);
    assert.equal(again.headers.get('idempotent-replayed'), null);
    const missing = await svc.request('POST', '/api/v1/admin/badges/nosuch/award', { ...as(tenant.apiKey, 'award-missing'), body: { participant_id: 'p1' } });
    assert.equal(missing.status, 404, missing.text);
    const replayed = await svc.request('POST', '/api/v1/admin/badges/nosuch/award', { ...as(tenant.apiKey, 'award-missing'), body: { participant_id: 'p1' } });
    assert.equal(replayed.status, 404);
    assert.equal(replayed.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(replayed.body, missing.body);
  });

  await t.test('200 parallel repeats of one key create one multiplier; the others replay it or wait their turn', async () => {
    const before = await multipliers(tenant.apiKey);
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => svc.request('POST', '/api/v1/admin/points/multipliers', { ...as(tenant.apiKey, 'parallel'), body: multiplier(6) })),
    );
    const statuses = new Map<number, number>();
    for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    assert.deepEqual([...statuses.keys()].filter((status) => status !== 201 && status !== 409), [], JSON.stringify([...statuses]));
    const created = answers.filter((answer) => answer.status === 201);
    assert.ok(created.length >= 1);
    assert.equal(new Set(created.map((answer) => answer.body.id)).size, 1);
    for (const waiting of answers.filter((answer) => answer.status === 409)) assert.equal(waiting.body.code, 'IDEMPOTENCY_IN_PROGRESS');
    assert.equal(await multipliers(tenant.apiKey), before + 1);
  });

  await t.test('a key whose request stopped without an answer is reported as abandoned, not run again', async () => {
    const createdAt = new Date(Date.now() - IDEMPOTENCY_ABANDONED_AFTER_MS - 1_000);
    const request = { ...as(tenant.apiKey, 'stopped'), body: multiplier(7) };
    // The first request claims the key; then its process "stops" before the answer is stored.
    assert.equal((await svc.request('POST', '/api/v1/admin/points/multipliers', request)).status, 201);
    await svc.sql(`UPDATE idempotency_keys SET response = NULL, created_at = $2 WHERE tenant_id = $1 AND scope = 'http' AND key = 'stopped'`, [tenant.tenantId, createdAt]);
    const before = await multipliers(tenant.apiKey);
    const repeat = await svc.request('POST', '/api/v1/admin/points/multipliers', request);
    assert.equal(repeat.status, 409);
    assert.equal(repeat.body.code, 'IDEMPOTENCY_KEY_ABANDONED');
    assert.match(repeat.body.detail, /did not finish/);
    assert.equal(await multipliers(tenant.apiKey), before);
  });

  await t.test('points grants and deducts take the header as their idempotency key, in the transaction of the change', async () => {
    const grant = { participant_id: 'ada', amount: 100, reason: 'welcome' };
    const first = await svc.request('POST', '/api/v1/gamify/points/grant', { ...as(tenant.apiKey, 'grant-ada'), body: grant });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.duplicate, false);
    // The header and the body field are one key space.
    const byBody = await svc.request('POST', '/api/v1/gamify/points/grant', { key: tenant.apiKey, body: { ...grant, idempotency_key: 'grant-ada' } });
    assert.equal(byBody.body.duplicate, true);
    assert.equal(byBody.body.available, 100);

    const mismatch = await svc.request('POST', '/api/v1/gamify/points/grant', { ...as(tenant.apiKey, 'one'), body: { ...grant, idempotency_key: 'two' } });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.code, 'IDEMPOTENCY_KEY_MISMATCH');
    const none = await svc.request('POST', '/api/v1/gamify/points/deduct', { key: tenant.apiKey, body: { participant_id: 'ada', amount: 10, reason: 'shop' } });
    assert.equal(none.status, 400);
    assert.equal(none.body.code, 'IDEMPOTENCY_KEY_REQUIRED');
    assert.deepEqual(none.body.errors, [{ in: 'headers', path: '/idempotency-key', code: 'required', message: 'send the Idempotency-Key header, or idempotency_key in the body' }]);
    // A missing key does not hide the body's own problems: they are told together.
    const both = await svc.request('POST', '/api/v1/gamify/points/deduct', { key: tenant.apiKey, body: { participant_id: 'ada', amount: 'ten', reason: 'shop' } });
    assert.equal(both.status, 400);
    assert.equal(both.body.code, 'VALIDATION_INVALID_REQUEST');
    assert.deepEqual(both.body.errors.map((e: { in: string; path: string }) => `${e.in}${e.path}`), ['body/amount', 'headers/idempotency-key']);
    assert.equal(await svc.sql('SELECT 1 FROM points_ledger WHERE tenant_id = $1 AND participant_id = $2 AND delta < 0', [tenant.tenantId, 'ada']).then((rows) => rows.length), 0, 'nothing was deducted');

    const deducts = await Promise.all(
      Array.from({ length: 200 }, () =>
        svc.request('POST', '/api/v1/gamify/points/deduct', { ...as(tenant.apiKey, 'deduct-ada'), body: { participant_id: 'ada', amount: 30, reason: 'shop' } }),
      ),
    );
    assert.deepEqual([...new Set(deducts.map((answer) => answer.status))], [200]);
    assert.equal(deducts.filter((answer) => !answer.body.duplicate).length, 1);
    const last = deducts.find((answer) => !answer.body.duplicate)!;
    assert.equal(last.body.available, 70);
    const balances = await svc.sql(`SELECT available FROM points_balances WHERE tenant_id = $1 AND participant_id = 'ada'`, [tenant.tenantId]);
    assert.equal(Number(balances[0].available), 70);
  });

  await t.test('the OpenAPI document offers the header on every credentialed POST', async () => {
    const document = (await svc.request('GET', '/openapi.json')).body;
    const missing: string[] = [];
    for (const [path, item] of Object.entries<any>(document.paths)) {
      const post = item.post;
      if (!post || (post.security ?? []).length === 0) continue;
      if (!(post.parameters ?? []).some((parameter: any) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key')) missing.push(path);
    }
    assert.deepEqual(missing, []);
  });
});
