import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { emit } from '../../platform/outbox.js';
import { wavesFor } from './delivery.js';
import { IN_FLIGHT_PER_RECEIVER_MAX, inFlightTo, withReceiverSlot } from './receiver-slots.js';
import { startReceiver, type Receiver } from './testing.js';

/**
 * How many requests a receiver sees at once (docs/webhooks.md, "Concurrency"):
 * a batch's POSTs are all under way at once, but a process never has more than
 * IN_FLIGHT_PER_RECEIVER_MAX requests open to one receiver, whichever jobs
 * they come from; and under that bound every committed event arrives once.
 */
const BASE = '/api/v1/gamify/webhooks';
const DEV_CONFIG = { ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' };
const ANSWER_AFTER_MS = 30;

/** A receiver that answers 200 after ANSWER_AFTER_MS and counts the requests it has open at once. */
async function slowReceiver(): Promise<Receiver & { open: () => number; maxOpen: () => number }> {
  let open = 0;
  let maxOpen = 0;
  const receiver = await startReceiver((_r, res) => {
    setTimeout(() => {
      open -= 1;
      res.end('ok');
    }, ANSWER_AFTER_MS);
  });
  // `respond` runs once the body arrived; a request is open from then until its answer.
  const respond = receiver.respond;
  receiver.respond = (r, res) => {
    open += 1;
    maxOpen = Math.max(maxOpen, open);
    return respond(r, res);
  };
  return Object.assign(receiver, { open: () => open, maxOpen: () => maxOpen });
}

test('receiver slots: at most IN_FLIGHT_PER_RECEIVER_MAX at once per receiver, handed on in order, receivers apart', async () => {
  const url = 'https://receiver.example.com/hooks';
  const order: number[] = [];
  let open = 0;
  let maxOpen = 0;
  const sends = Array.from({ length: IN_FLIGHT_PER_RECEIVER_MAX + 20 }, (_, i) =>
    withReceiverSlot(`${url}/${i}`, async () => {
      order.push(i);
      open += 1;
      maxOpen = Math.max(maxOpen, open);
      await new Promise((resolve) => setTimeout(resolve, 5));
      open -= 1;
      return i;
    }),
  );
  // Another receiver is not held up by the first one's queue.
  assert.equal(await withReceiverSlot('https://other.example.com/', async () => inFlightTo(url)), IN_FLIGHT_PER_RECEIVER_MAX);
  assert.deepEqual(await Promise.all(sends), order);
  assert.equal(maxOpen, IN_FLIGHT_PER_RECEIVER_MAX);
  assert.deepEqual(order, [...order].sort((a, b) => a - b), 'slots are handed on in the order they were asked for');
  assert.equal(inFlightTo(url), 0);
  assert.equal(wavesFor(32, 8), 9, 'the default deadline: eight turns of the receiver bound (eight jobs of 32) and one for the API');
  assert.equal(wavesFor(20, 8), 9, 'a smaller batch waits behind the same seven full batches of the other jobs');
});

test('webhooks: one batch posts at once; hundreds of events through the job runner arrive exactly once within the per-receiver bound', async (t) => {
  const svc = await startTestService(t, { jobs: true, config: { ...DEV_CONFIG, JOB_CONCURRENCY: '8' } });
  const tenant = await svc.createTenant();
  const receiver = await slowReceiver();
  t.after(() => receiver.close());
  const event = (i: number) => ({ event: 'badge.earned.v1', participantId: `p-${i}`, data: { participant_id: `p-${i}`, badge_code: 'b', badge_name: 'B', earned_at: new Date().toISOString() } });

  await t.test('the 20 deliveries of one commit (one job) have their POSTs open at once (it was four at a time)', async () => {
    const single = await slowReceiver();
    t.after(() => single.close());
    const created = await svc.request('POST', BASE, { key: tenant.apiKey, body: { name: 'batch', url: `${single.url}/batch`, events: ['badge.earned.v1'] } });
    assert.equal(created.status, 201);
    await svc.service.db.tenant(tenant.tenantId, (tx) => emit(tx, tenant.tenantId, Array.from({ length: 20 }, (_, i) => event(i))));
    const deadline = Date.now() + 30_000;
    while (single.received.length < 20) {
      assert.ok(Date.now() < deadline, `only ${single.received.length} of 20 deliveries arrived within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(single.maxOpen() > 4 && single.maxOpen() <= 20, `the receiver had at most ${single.maxOpen()} requests open at once`);
    await svc.request('PATCH', `${BASE}/${created.body.id}`, { key: tenant.apiKey, body: { active: false } });
  });

  await t.test('400 events to one slow receiver: each arrives once, every delivery SUCCEEDED with one attempt, never more than the bound open', async () => {
    const created = await svc.request('POST', BASE, { key: tenant.apiKey, body: { name: 'crowd', url: `${receiver.url}/crowd`, events: ['badge.earned.v1'] } });
    assert.equal(created.status, 201);
    const emitted: string[] = [];
    for (let i = 0; i < 400; i += 20) {
      emitted.push(...(await svc.service.db.tenant(tenant.tenantId, (tx) => emit(tx, tenant.tenantId, Array.from({ length: 20 }, (_, j) => event(i + j))))));
    }
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [done] = await svc.sql(`SELECT count(*) FILTER (WHERE status = 'SUCCEEDED')::int AS n FROM webhook_deliveries WHERE destination_id = $1`, [created.body.id]);
      if (done.n === emitted.length) break;
      assert.ok(Date.now() < deadline, `only ${done.n} of ${emitted.length} deliveries succeeded within 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const arrived = receiver.received.filter((r) => r.path === '/crowd').map((r) => r.body.id as string);
    assert.equal(arrived.length, emitted.length, 'one POST per event');
    assert.deepEqual([...new Set(arrived)].sort(), [...emitted].sort(), 'every committed event arrived, none twice');
    assert.ok(receiver.maxOpen() <= IN_FLIGHT_PER_RECEIVER_MAX, `the receiver had ${receiver.maxOpen()} requests open at once`);
    const logs = await svc.request('GET', `${BASE}/${created.body.id}/logs?limit=100`, { key: tenant.apiKey });
    assert.equal(logs.status, 200);
    assert.ok(logs.body.deliveries.length > 0);
    assert.ok(logs.body.deliveries.every((d: { status: string; attempts: number }) => d.status === 'SUCCEEDED' && d.attempts === 1), JSON.stringify(logs.body.deliveries[0]));
  });
});
