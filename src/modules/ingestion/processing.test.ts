import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, waitFor } from '../../../test/helper.js';
import { key, waitProcessed } from './testing.js';
import { processEvents } from './service.js';

test('processing: exactly-once effects, failures recorded and skipped, participant order', async (t) => {
  const svc = await startTestService(t, { jobs: true });
  const tenant = await svc.createTenant();
  const db = svc.service.db;
  const post = (path: string, body: unknown) => svc.request('POST', `/api/v1${path}`, { key: tenant.apiKey, body });
  await post('/admin/badges', { code: 'first_order', name: 'First order' });
  await post('/admin/rules', { name: 'order points', event_name: 'order', effects: [{ type: 'award_points', points: 10 }, { type: 'award_badge', badge_code: 'first_order' }] });

  await t.test('an event processed again (a crashed worker retried, or two at once) has its effects once', async () => {
    const accepted = await post('/ingest/events', { event_name: 'order', participant_id: 'once', idempotency_key: key() });
    const eventId = accepted.body.message_id;
    await waitProcessed(svc, [eventId]);
    // Replay the job twice at once, as a retried job racing a late original would.
    const errors: unknown[] = [];
    await Promise.all([processEvents(db, tenant.tenantId, [eventId], (_id, e) => errors.push(e)), processEvents(db, tenant.tenantId, [eventId], (_id, e) => errors.push(e))]);
    assert.deepEqual(errors, []);
    const ledger = await svc.sql(`SELECT count(*)::int AS n, sum(delta)::int AS total FROM points_ledger WHERE tenant_id = $1 AND participant_id = 'once'`, [tenant.tenantId]);
    assert.deepEqual(ledger[0], { n: 1, total: 10 });
    const events = await svc.sql(`SELECT event FROM outbox_events WHERE tenant_id = $1 AND participant_id = 'once' ORDER BY seq`, [tenant.tenantId]);
    assert.deepEqual(events.map((e) => e.event), ['points.awarded.v1', 'badge.earned.v1']);
  });

  await t.test('concurrent first processing of one event applies it once', async () => {
    // Store without a job (the sync path's storage), then race two processors on it.
    const { storeEventsInTx } = await import('./service.js');
    const { normalize } = await import('./normalize.js');
    const event = normalize(tenant.tenantId, { event_name: 'order', participant_id: 'race', idempotency_key: key() }, undefined, false);
    if ('code' in event && !('eventId' in event)) throw new Error('unexpected rejection');
    const [stored] = await db.tenant(tenant.tenantId, (tx) => storeEventsInTx(tx, tenant.tenantId, [event as never]));
    assert.equal(stored.status, 'accepted');
    const eventId = (stored as { eventId: string }).eventId;
    await Promise.all(Array.from({ length: 4 }, () => processEvents(db, tenant.tenantId, [eventId], () => undefined)));
    const ledger = await svc.sql(`SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1 AND participant_id = 'race'`, [tenant.tenantId]);
    assert.equal(ledger[0].n, 1);
    const [row] = await svc.sql('SELECT status, attempts FROM ingested_events WHERE event_id = $1', [eventId]);
    assert.deepEqual(row, { status: 'processed', attempts: 1 });
  });

  await t.test('a failing event is recorded with its error, visible to admins, and does not block the events behind it', async () => {
    await post('/admin/badges', { code: 'doomed', name: 'Doomed' });
    await post('/admin/rules', { name: 'doomed badge', event_name: 'doom', effects: [{ type: 'award_badge', badge_code: 'doomed' }] });
    // Deleting the badge after the rule was made leaves the rule unable to run.
    await svc.request('DELETE', '/api/v1/admin/badges/doomed', { key: tenant.apiKey });
    const batch = await post('/ingest/events/batch', {
      events: [
        { event_name: 'doom', participant_id: 'victim', timestamp: '2026-05-01T10:00:00Z', idempotency_key: key() },
        { event_name: 'order', participant_id: 'victim', timestamp: '2026-05-01T10:01:00Z', idempotency_key: key() },
      ],
    });
    const [failedId, nextId] = batch.body.results.map((r: { message_id: string }) => r.message_id);
    await waitProcessed(svc, [failedId, nextId]);
    const rows = await svc.sql('SELECT event_id, status, last_error FROM ingested_events WHERE event_id = ANY($1::text[])', [[failedId, nextId]]);
    const failed = rows.find((r) => r.event_id === failedId);
    assert.equal(failed.status, 'failed');
    assert.match(failed.last_error, /doomed/);
    assert.equal(rows.find((r) => r.event_id === nextId).status, 'processed');
    const search = await svc.request('GET', '/api/v1/events/search?status=failed', { key: tenant.apiKey });
    assert.deepEqual(search.body.events.map((e: { event_id: string }) => e.event_id), [failedId]);
    assert.match(search.body.events[0].last_error, /BADGE_NOT_FOUND/);
    // Once the cause is fixed, an admin retries it.
    await post('/admin/badges', { code: 'doomed', name: 'Doomed again' });
    const retried = await post(`/admin/events/${failedId}/retry`, undefined);
    assert.equal(retried.status, 202);
    await waitFor('the retried event', async () => (await svc.sql('SELECT status FROM ingested_events WHERE event_id = $1', [failedId]))[0].status === 'processed');
    const again = await post(`/admin/events/${failedId}/retry`, undefined);
    assert.equal(again.status, 409);
    const badges = await svc.sql(`SELECT badge_code FROM participant_badges WHERE tenant_id = $1 AND participant_id = 'victim' ORDER BY badge_code`, [tenant.tenantId]);
    assert.deepEqual(badges.map((b) => b.badge_code), ['doomed', 'first_order']);
  });

  await t.test('a sync event whose processing fails is kept as failed and answered 422 with its id', async () => {
    await post('/admin/badges', { code: 'fleeting', name: 'Fleeting' });
    await post('/admin/rules', { name: 'fleeting badge', event_name: 'fleet', effects: [{ type: 'award_badge', badge_code: 'fleeting' }] });
    await svc.request('DELETE', '/api/v1/admin/badges/fleeting', { key: tenant.apiKey });
    const response = await post('/ingest/events/sync', { event_name: 'fleet', participant_id: 'sync-victim', idempotency_key: key() });
    assert.equal(response.status, 422);
    assert.equal(response.body.code, 'EVENT_PROCESSING_FAILED');
    const [row] = await svc.sql('SELECT status, last_error FROM ingested_events WHERE event_id = $1', [response.body.event_id]);
    assert.equal(row.status, 'failed');
  });

  await t.test("events of one participant arriving together are processed in timestamp order", async () => {
    await post('/admin/streaks', { code: 'daily_visit', name: 'Daily visit', period: 'daily', event_name: 'visit' });
    // Sent newest first: processed in arrival order the streak would stop at 1; in timestamp order it reaches 3.
    const batch = await post('/ingest/events/batch', {
      events: ['2026-06-03', '2026-06-01', '2026-06-02'].map((day) => ({ event_name: 'visit', participant_id: 'orderly', timestamp: `${day}T09:00:00Z`, idempotency_key: key() })),
    });
    await waitProcessed(svc, batch.body.results.map((r: { message_id: string }) => r.message_id));
    const [streak] = await svc.sql(`SELECT current_length, longest_length FROM participant_streaks WHERE tenant_id = $1 AND participant_id = 'orderly'`, [tenant.tenantId]);
    assert.deepEqual(streak, { current_length: 3, longest_length: 3 });
  });

  await t.test('many participants at once: every event processed once', async () => {
    const events = Array.from({ length: 200 }, (_, i) => ({ event_name: 'order', participant_id: `bulk-${i % 40}`, idempotency_key: key('bulk') }));
    const response = await post('/ingest/events/batch', { events });
    await waitProcessed(svc, response.body.results.map((r: { message_id: string }) => r.message_id), 60_000);
    const ledger = await svc.sql(`SELECT count(*)::int AS n, sum(delta)::int AS total FROM points_ledger WHERE tenant_id = $1 AND participant_id LIKE 'bulk-%'`, [tenant.tenantId]);
    assert.deepEqual(ledger[0], { n: 200, total: 2000 });
    const badges = await svc.sql(`SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = $1 AND event = 'badge.earned.v1' AND participant_id LIKE 'bulk-%'`, [tenant.tenantId]);
    assert.equal(badges[0].n, 40);
  });
});
