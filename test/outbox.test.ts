import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService } from './helper.js';
import { DISPATCH_TASK, pumpOutbox, TAKE_FROM_START_MS, TakeCursor } from '../src/platform/outbox.js';
import { dispatchPump } from '../src/modules/webhooks/dispatcher.js';
import { startReceiver } from '../src/modules/webhooks/testing.js';

test('the outbox pump hands every pending event to exactly one dispatch job of its tenant, in bounded takes, also when pumps run together', async (t) => {
  // No job runner in this process: emitted events stay pending until the test pumps them.
  const svc = await startTestService(t);
  const tenants = [await svc.createTenant(), await svc.createTenant()];
  const GRANTS_PER_TENANT = 30;
  for (const tenant of tenants) {
    const responses = await Promise.all(
      Array.from({ length: GRANTS_PER_TENANT }, (_, i) =>
        svc.request('POST', '/api/v1/gamify/points/grant', {
          key: tenant.apiKey,
          body: { participant_id: `p-${i}`, amount: 5, reason: 'pump', idempotency_key: randomUUID() },
        }),
      ),
    );
    assert.ok(responses.every((r) => r.status === 200), JSON.stringify(responses.map((r) => r.status)));
  }
  const emitted = await svc.sql<{ tenant_id: string; id: string }>('SELECT tenant_id, id FROM outbox_events ORDER BY id');
  const pending = await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM outbox_pending');
  assert.equal(pending[0].n, emitted.length);
  assert.ok(emitted.length >= 2 * GRANTS_PER_TENANT);

  const pool = svc.service.db.system;
  const TAKE = 7;
  // A bounded take moves exactly that many and leaves the rest pending.
  assert.equal(await pumpOutbox(pool, TAKE), TAKE);
  assert.equal((await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM outbox_pending'))[0].n, emitted.length - TAKE);
  // Pumps running at once skip each other's rows: the rest is moved once in total.
  let moved = TAKE;
  for (;;) {
    const takes = await Promise.all([pumpOutbox(pool, TAKE), pumpOutbox(pool, TAKE), pumpOutbox(pool, TAKE)]);
    const sum = takes.reduce((a, b) => a + b, 0);
    if (sum === 0) break;
    moved += sum;
  }
  assert.equal(moved, emitted.length);
  assert.equal((await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM outbox_pending'))[0].n, 0);

  const jobs = await svc.sql<{ payload: { tenant_id: string; event_ids: string[] } }>(
    `SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id WHERE k.identifier = $1`,
    [DISPATCH_TASK],
  );
  const dispatched = jobs.flatMap((job) => job.payload.event_ids.map((id) => ({ tenant_id: job.payload.tenant_id, id })));
  dispatched.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  assert.deepEqual(dispatched, emitted, 'every event in exactly one job, under its own tenant');
});

test('a take starts where the last one ended, and from the heap\'s start every quarter second, where it finds the rows a vacuum let in behind the position', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const grant = (count: number, from: number) =>
    Promise.all(
      Array.from({ length: count }, (_, i) =>
        svc.request('POST', '/api/v1/gamify/points/grant', { key: tenant.apiKey, body: { participant_id: `p-${from + i}`, amount: 5, reason: 'cursor', idempotency_key: randomUUID() } }),
      ),
    );
  const pendingAt = async () => (await svc.sql<{ at: string; event_id: string }>('SELECT ctid::text AS at, event_id FROM outbox_pending ORDER BY ctid')).map((r) => r.event_id);
  await grant(40, 0);
  const first = await pendingAt();
  assert.ok(first.length >= 40, `${first.length} pending`);
  let now = 0;
  const cursor = new TakeCursor(() => now);
  const pool = svc.service.db.system;

  // The first take reads from the heap's start; its rows are the first in the heap.
  assert.equal(await pumpOutbox(pool, 30, cursor), 30);
  const ahead = first.slice(30);
  assert.deepEqual(await pendingAt(), ahead);
  // A vacuum frees the taken rows' space, and new rows go into it: before the rows still pending.
  await svc.sql('VACUUM outbox_pending');
  await grant(6, 40);
  const behind = (await pendingAt()).filter((id) => !ahead.includes(id));
  assert.ok(behind.length >= 6, `${behind.length} new rows`);
  assert.deepEqual((await pendingAt()).slice(0, behind.length), behind, 'the new rows are behind the position (the test needs them there)');

  // Within the quarter second, a take reads from where the last one ended: the rows ahead, not the new ones behind.
  now += TAKE_FROM_START_MS - 1;
  assert.equal(await pumpOutbox(pool, 5, cursor), 5);
  assert.deepEqual(await pendingAt(), [...behind, ...ahead.slice(5)]);
  assert.equal(await pumpOutbox(pool, 1_000, cursor), ahead.length - 5);
  assert.equal(await pumpOutbox(pool, 1_000, cursor), 0, 'nothing ahead: the rows behind wait for the next take from the start');
  assert.deepEqual(await pendingAt(), behind);
  // A quarter second after the last take from the start, a take starts there again, and finds them.
  now += 1;
  assert.equal(await pumpOutbox(pool, 2, cursor), 2);
  assert.deepEqual(await pendingAt(), behind.slice(2));
  assert.equal(await pumpOutbox(pool, 1_000, cursor), behind.length - 2);
});

test("the outbox pump fans every tenant's events out to that tenant's destinations in one statement, and hands them to dispatch jobs when that fails", async (t) => {
  // No job runner in this process: the test runs the pump by hand, and the deliveries' jobs stay queued.
  const svc = await startTestService(t, { config: { ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' } });
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const tenants = [await svc.createTenant(), await svc.createTenant()];
  const destinations = new Map<string, string>();
  for (const tenant of tenants) {
    const created = await svc.request('POST', '/api/v1/gamify/webhooks', { key: tenant.apiKey, body: { name: 'points', url: `${receiver.url}/${tenant.tenantId}`, events: ['points.*'] } });
    assert.equal(created.status, 201);
    destinations.set(tenant.tenantId, created.body.id);
  }
  const grant = async (round: string) => {
    for (const tenant of tenants) {
      for (let i = 0; i < 3; i++) {
        const r = await svc.request('POST', '/api/v1/gamify/points/grant', { key: tenant.apiKey, body: { participant_id: `p-${i}`, amount: 5, reason: round, idempotency_key: randomUUID() } });
        assert.equal(r.status, 200);
      }
    }
  };
  const pending = async () => (await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM outbox_pending'))[0].n;
  const pool = svc.service.db.system;
  const move = (over: object) => dispatchPump.move(over as typeof pool, svc.service.db, svc.service.log);

  // The fan-out fails: it took nothing, and the same events go to dispatch jobs, one per tenant.
  await grant('first');
  const first = await pending();
  const failing = { query: (text: string, values: unknown[]) => (text.includes('take_outbox_pending') && text.includes('webhook_deliveries') ? Promise.reject(new Error('the fan-out broke')) : pool.query(text, values)) };
  assert.equal(await move(failing), first);
  assert.equal(await pending(), 0);
  assert.equal((await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries'))[0].n, 0);
  const jobs = await svc.sql<{ payload: { tenant_id: string; event_ids: string[] } }>(
    `SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id WHERE k.identifier = $1`,
    [DISPATCH_TASK],
  );
  assert.deepEqual(jobs.map((job) => job.payload.tenant_id).sort(), tenants.map((tenant) => tenant.tenantId).sort());
  assert.equal(jobs.flatMap((job) => job.payload.event_ids).length, first);

  // It works: one statement takes both tenants' events and makes one delivery per event, under the event's tenant, to that tenant's destination.
  await grant('second');
  const second = await svc.sql<{ tenant_id: string; id: string }>(
    'SELECT e.tenant_id, e.id FROM outbox_events e JOIN outbox_pending p ON p.tenant_id = e.tenant_id AND p.event_id = e.id ORDER BY e.id',
  );
  assert.ok(second.length >= 6);
  assert.equal(await move(pool), second.length);
  assert.equal(await pending(), 0);
  const deliveries = await svc.sql<{ tenant_id: string; event_id: string; destination_id: string }>('SELECT tenant_id, event_id, destination_id FROM webhook_deliveries ORDER BY event_id');
  assert.deepEqual(
    deliveries.map((d) => ({ tenant_id: d.tenant_id, id: d.event_id })),
    second,
    'one delivery per event of this take, none for the events handed to dispatch jobs',
  );
  assert.ok(deliveries.every((d) => d.destination_id === destinations.get(d.tenant_id)), "each to its own tenant's destination");
  const deliverJobs = await svc.sql<{ payload: { tenant_id: string; delivery_ids: string[] } }>(
    `SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id WHERE k.identifier = 'webhooks.deliver'`,
  );
  assert.equal(deliverJobs.length, 2, 'one delivery job per destination');
  const ownTenant = await svc.sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries d WHERE d.id IN (SELECT jsonb_array_elements_text(j.payload::jsonb -> 'delivery_ids') FROM graphile_worker._private_jobs j WHERE (j.payload::jsonb ->> 'tenant_id')::uuid = d.tenant_id)`,
  );
  assert.equal(ownTenant[0].n, deliveries.length, "every delivery in a job of its own tenant");
  // An empty look takes nothing.
  assert.equal(await move(pool), 0);
});
