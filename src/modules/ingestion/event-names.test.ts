import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { key, sendSync } from './testing.js';

test('event names seen: counts and last seen per name, paginated, filtered, tenant-isolated; properties with their JSON types', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const get = (path: string, apiKey = tenant.apiKey) => svc.request('GET', `/api/v1${path}`, { key: apiKey });
  const event = (name: string, properties: Record<string, unknown>, occurredAt: string) => ({
    event_name: name,
    participant_id: 'p-1',
    properties,
    timestamp: occurredAt,
    idempotency_key: key('n'),
  });

  const batch = await svc.request('POST', '/api/v1/ingest/events/batch', {
    key: tenant.apiKey,
    body: {
      events: [
        event('purchase_completed', { order_total: 42.5, channel: 'web', vip: true, address: { country: 'DE' } }, '2026-11-01T10:00:00Z'),
        event('purchase_completed', { order_total: 12, channel: 'app' }, '2026-11-03T10:00:00Z'),
        event('purchase_completed', { order_total: '7', channel: 'app' }, '2026-11-02T10:00:00Z'),
        event('app_opened', {}, '2026-11-02T08:00:00Z'),
      ],
    },
  });
  assert.equal(batch.status, 200, batch.text);
  assert.equal((await sendSync(svc, tenant, { event_name: 'review_written', participant_id: 'p-1', properties: { stars: 5 } })).status, 200);
  assert.equal((await sendSync(svc, other, { event_name: 'other_tenant_only', participant_id: 'p-1' })).status, 200);

  await t.test('every name with its count and the earliest and latest occurred_at, in name order; the sync route counts too', async () => {
    const answer = await get('/admin/events/names');
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(
      answer.body.names.map((n: { event_name: string; events: number }) => [n.event_name, n.events]),
      [['app_opened', 1], ['purchase_completed', 3], ['review_written', 1]],
    );
    const purchase = answer.body.names[1];
    assert.equal(purchase.first_seen_at, '2026-11-01T10:00:00.000Z');
    assert.equal(purchase.last_seen_at, '2026-11-03T10:00:00.000Z');
    assert.equal(answer.body.next_cursor, null);
  });

  await t.test('a repeated idempotency key counts nothing', async () => {
    const repeated = event('app_opened', {}, '2026-11-05T08:00:00Z');
    for (let i = 0; i < 2; i++) assert.equal((await svc.request('POST', '/api/v1/ingest/events', { key: tenant.apiKey, body: repeated })).status, 202);
    const names = (await get('/admin/events/names?q=app_')).body.names;
    assert.deepEqual(names.map((n: { event_name: string; events: number }) => [n.event_name, n.events]), [['app_opened', 2]]);
  });

  await t.test('pages by name; q matches anywhere, case-insensitively, with LIKE wildcards taken literally', async () => {
    const first = await get('/admin/events/names?limit=2');
    assert.equal(first.body.names.length, 2);
    assert.ok(first.body.next_cursor);
    const second = await get(`/admin/events/names?limit=2&cursor=${first.body.next_cursor}`);
    assert.deepEqual(second.body.names.map((n: { event_name: string }) => n.event_name), ['review_written']);
    assert.deepEqual((await get('/admin/events/names?q=PURCH')).body.names.map((n: { event_name: string }) => n.event_name), ['purchase_completed']);
    assert.deepEqual((await get('/admin/events/names?q=%25')).body.names, []);
    assert.equal((await get('/admin/events/names?cursor=not-a-cursor')).status, 400);
  });

  await t.test("another tenant's names are not listed", async () => {
    assert.deepEqual((await get('/admin/events/names', other.apiKey)).body.names.map((n: { event_name: string }) => n.event_name), ['other_tenant_only']);
  });

  await t.test('the properties of a name: each path with its types, most frequent first, nested objects by dots, no values', async () => {
    const answer = await get('/admin/events/names/purchase_completed/properties');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.sampled, 3);
    const byFact = Object.fromEntries(answer.body.properties.map((p: { fact: string; types: string[]; seen: number }) => [p.fact, p]));
    assert.deepEqual(byFact['properties.order_total'], { fact: 'properties.order_total', types: ['number', 'string'], seen: 3 });
    assert.deepEqual(byFact['properties.channel'].types, ['string']);
    assert.deepEqual(byFact['properties.vip'], { fact: 'properties.vip', types: ['boolean'], seen: 1 });
    assert.deepEqual(byFact['properties.address.country'].types, ['string']);
    assert.ok(!JSON.stringify(answer.body).includes('"web"'), 'values are not returned');
  });

  await t.test('a name never received answers an empty list; a malformed name is refused naming the field', async () => {
    const never = (await get('/admin/events/names/never_sent/properties')).body;
    assert.deepEqual([never.event_name, never.sampled, never.properties], ['never_sent', 0, []]);
    assert.deepEqual((await get('/admin/events/names/other_tenant_only/properties')).body.properties, []);
    const bad = await get('/admin/events/names/bad%20name/properties');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].path, '/event_name');
  });
});
