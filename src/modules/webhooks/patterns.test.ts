import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyWithScopes, startTestService } from '../../../test/helper.js';
import { emit } from '../../platform/outbox.js';
import { verifyWebhook } from '../../../packages/sdk/src/webhooks.js';
import { CATALOG, eventsMatching, sampleEventData, validateEventData } from './catalog.js';
import { dispatch } from './dispatcher.js';
import { startReceiver } from './testing.js';

/**
 * Subscriptions by pattern (`points.*`, `*`) matched where the outbox fans out,
 * and the test-event sender, through HTTP with a local receiver.
 */
const BASE = '/api/v1/gamify/webhooks';
const DEV_CONFIG = { ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' };

test('webhook subscriptions by pattern and test events', async (t) => {
  const svc = await startTestService(t, { config: DEV_CONFIG });
  const context = { db: svc.service.db, config: svc.config, log: svc.service.log };
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const create = (path: string, events: unknown) => svc.request('POST', BASE, { key: tenant.apiKey, body: { name: path, url: `${receiver.url}/${path}`, events } });
  const deliveredEvents = async (destinationId: string) =>
    (await svc.sql<{ event: string }>('SELECT event FROM webhook_deliveries WHERE destination_id = $1 ORDER BY event', [destinationId])).map((r) => r.event);

  await t.test('points.* gets the points events only, * gets every event, and an exact name behaves as before', async () => {
    const points = await create('points', ['points.*']);
    const all = await create('all', ['*']);
    const exact = await create('exact', ['badge.earned.v1']);
    const mixed = await create('mixed', ['reward.*', 'badge.earned.v1']);
    for (const created of [points, all, exact, mixed]) assert.equal(created.status, 201, created.text);
    assert.deepEqual(points.body.events, ['points.*'], 'the pattern is stored and shown as given');
    const emitted = ['points.awarded.v1', 'points.deducted.v1', 'points.expiring.v1', 'badge.earned.v1', 'reward.points_expired.v1', 'contest.completed.v1'];
    const ids = await svc.service.db.tenant(tenant.tenantId, (tx) =>
      emit(tx, tenant.tenantId, emitted.map((event) => ({ event, participantId: 'p-1', data: { ...sampleEventData(event, new Date().toISOString()), participant_id: 'p-1' } }))),
    );
    await dispatch(context, tenant.tenantId, ids);
    assert.deepEqual(await deliveredEvents(points.body.id), ['points.awarded.v1', 'points.deducted.v1', 'points.expiring.v1']);
    assert.deepEqual(await deliveredEvents(all.body.id), [...emitted].sort());
    assert.deepEqual(await deliveredEvents(exact.body.id), ['badge.earned.v1']);
    assert.deepEqual(await deliveredEvents(mixed.body.id), ['badge.earned.v1', 'reward.points_expired.v1']);
    // The SQL of the fan-out and the matcher the stream uses agree on every catalog event.
    assert.deepEqual(eventsMatching(['points.*']), ['points.awarded.v1', 'points.deducted.v1', 'points.expiring.v1']);
    assert.equal(eventsMatching(['*']).length, CATALOG.length);
  });

  await t.test('invalid patterns are 422 naming each one, at creation and in a PATCH, and change nothing', async () => {
    const count = async () => (await svc.sql('SELECT count(*)::int AS n FROM webhook_destinations WHERE tenant_id = $1', [tenant.tenantId]))[0].n as number;
    const before = await count();
    const cases: Array<[unknown, RegExp]> = [
      [['points*'], /invalid pattern "points\*"/],
      [['*.granted'], /invalid pattern "\*\.granted"/],
      [['points.*.v1'], /invalid pattern "points\.\*\.v1"/],
      [['nosuch.*'], /the pattern "nosuch\.\*" matches no event in the catalog/],
      [['poi.*'], /the pattern "poi\.\*" matches no event/],
      [[''], /an empty event name or pattern/],
      [[], /at least one event/],
      [['badge.earned.v1', 'nosuch.*', 'points*'], /"nosuch\.\*".*"points\*"/],
    ];
    const target = await create('patched', ['points.*']);
    for (const [events, detail] of cases) {
      const created = await create('bad', events);
      assert.equal(created.status, 422, `${JSON.stringify(events)}: ${created.text}`);
      assert.equal(created.body.code, 'VALIDATION_INVALID_VALUE');
      assert.match(created.body.detail, detail);
      const patched = await svc.request('PATCH', `${BASE}/${target.body.id}`, { key: tenant.apiKey, body: { events, retry_count: 0 } });
      assert.equal(patched.status, 422, `PATCH ${JSON.stringify(events)}: ${patched.text}`);
      assert.match(patched.body.detail, detail);
    }
    assert.equal(await count(), before + 1);
    const unchanged = await svc.request('GET', `${BASE}/${target.body.id}`, { key: tenant.apiKey });
    assert.deepEqual([unchanged.body.events, unchanged.body.retry_count], [['points.*'], 3]);
    const patched = await svc.request('PATCH', `${BASE}/${target.body.id}`, { key: tenant.apiKey, body: { events: ['*', 'tier.*'] } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.events, ['*', 'tier.*']);
    const replayFilter = await svc.request('POST', `${BASE}/${target.body.id}/replay`, { key: tenant.apiKey, body: { events: ['points.*'] } });
    assert.equal(replayFilter.status, 422, 'a bulk replay filters by exact names only');
    assert.match(replayFilter.body.detail, /unknown event name "points\.\*"/);
    // The body may be left out (the defaults apply), and the document says so.
    const replayAll = await svc.request('POST', `${BASE}/${target.body.id}/replay`, { key: tenant.apiKey });
    assert.equal(replayAll.status, 202, replayAll.text);
    const document = (await svc.request('GET', '/openapi.json')).body;
    assert.equal(document.paths['/api/v1/gamify/webhooks/{destination_id}/replay'].post.requestBody.required, false);
    assert.equal(document.paths['/api/v1/tenant/sandbox/reset'].post.requestBody.required, false);
    assert.equal(document.paths['/api/v1/gamify/webhooks/{destination_id}'].patch.requestBody.required, true);
  });

  await t.test('every catalog event has a sample payload that its schema accepts', () => {
    for (const entry of CATALOG) {
      const data = sampleEventData(entry.name, new Date().toISOString());
      assert.deepEqual(validateEventData(entry.name, data), [], entry.name);
    }
    assert.equal(sampleEventData('contest.completed.v1', new Date().toISOString()).participant_id, null);
  });

  await t.test('a test event is a signed delivery with a sample payload and test: true, recorded in the log', async () => {
    const created = await create('test-events', ['badge.earned.v1']);
    const sent = await svc.request('POST', `${BASE}/${created.body.id}/test-events`, { key: tenant.apiKey, body: { event: 'points.awarded.v1' } });
    assert.equal(sent.status, 200, sent.text);
    assert.equal(sent.body.status, 'SUCCEEDED', JSON.stringify(sent.body.attempt_log));
    assert.equal(sent.body.event, 'points.awarded.v1');
    assert.match(sent.body.delivery_id, /^evt_test_[0-9a-f]+$/);
    const [request] = receiver.received.filter((r) => r.path === '/test-events');
    assert.ok(request, 'the receiver got it');
    const envelope = await verifyWebhook(request.rawBody, request.headers as Record<string, string>, created.body.secret);
    assert.equal(envelope.event, 'points.awarded.v1');
    assert.equal(envelope.id, sent.body.delivery_id);
    assert.equal((envelope as { test?: boolean }).test, true);
    assert.equal(request.headers['x-service-event'], 'points.awarded.v1');
    assert.deepEqual(validateEventData('points.awarded.v1', envelope.data), []);
    assert.equal(envelope.participant_id, envelope.data.participant_id);
    assert.match(String(envelope.data.ledger_entry_id), /^test_/);
    const logs = await svc.request('GET', `${BASE}/${created.body.id}/logs`, { key: tenant.apiKey });
    assert.deepEqual(logs.body.deliveries.map((d: { delivery_id: string }) => d.delivery_id), [sent.body.delivery_id]);

    // A replay of a test event is still a test event, with the same id.
    const replay = await svc.request('POST', `${BASE}/${created.body.id}/deliveries/${sent.body.log_id}/replay`, { key: tenant.apiKey });
    assert.equal(replay.status, 202, replay.text);
  });

  await t.test('test events: unknown names are 422, another tenant\'s destination 404, a key without gamify:admin 403', async () => {
    const created = await create('refusals', ['badge.earned.v1']);
    const path = `${BASE}/${created.body.id}/test-events`;
    const deliveries = async () => (await svc.sql('SELECT count(*)::int AS n FROM webhook_deliveries WHERE destination_id = $1', [created.body.id]))[0].n as number;
    for (const event of ['nosuch.event', 'points.*', 'ping']) {
      const refused = await svc.request('POST', path, { key: tenant.apiKey, body: { event } });
      assert.equal(refused.status, 422, `${event}: ${refused.text}`);
      assert.equal(refused.body.code, 'VALIDATION_INVALID_VALUE');
      assert.match(refused.body.detail, /unknown event name/);
    }
    for (const body of [{}, { event: '' }, { event: 'points.awarded.v1', extra: 1 }]) {
      const malformed = await svc.request('POST', path, { key: tenant.apiKey, body });
      assert.equal(malformed.status, 400, `${JSON.stringify(body)}: ${malformed.text}`);
      assert.ok(malformed.body.detail);
    }
    const foreign = await svc.request('POST', path, { key: other.apiKey, body: { event: 'points.awarded.v1' } });
    assert.equal(foreign.status, 404, foreign.text);
    assert.equal(foreign.body.code, 'WEBHOOK_DESTINATION_NOT_FOUND');
    const readOnly = (await keyWithScopes(svc, tenant, ['ingest'])).key;
    const forbidden = await svc.request('POST', path, { key: readOnly, body: { event: 'points.awarded.v1' } });
    assert.equal(forbidden.status, 403, forbidden.text);
    assert.equal(await deliveries(), 0);
    assert.equal(receiver.received.filter((r) => r.path === '/refusals').length, 0);
  });
});
