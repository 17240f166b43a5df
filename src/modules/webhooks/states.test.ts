import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { emit } from '../../platform/outbox.js';
import { clock } from '../../platform/clock.js';
import * as participants from '../participants/index.js';
import { attemptDeliveries, attemptDelivery } from './delivery.js';
import { dispatch } from './dispatcher.js';
import { claimDue, DELIVERY_BATCH_MAX } from './store.js';
import { startReceiver } from './testing.js';

/**
 * The less travelled paths, driven step by step without the job runner:
 * cancellation on deactivation, the forgery check at delivery time,
 * pagination, and the access log for payloads with personal data.
 */
const BASE = '/api/v1/gamify/webhooks';
const DEV_CONFIG = { ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' };

test('webhooks: states and paths without the job runner', async (t) => {
  const svc = await startTestService(t, { config: DEV_CONFIG });
  const context = { db: svc.service.db, config: svc.config, log: svc.service.log };
  const tenant = await svc.createTenant();
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const emitNow = (data: Record<string, unknown>, participantId = 'p-1') =>
    svc.service.db.tenant(tenant.tenantId, (tx) => emit(tx, tenant.tenantId, { event: 'badge.earned.v1', participantId, data: { participant_id: participantId, badge_code: 'b', badge_name: 'B', earned_at: new Date().toISOString(), ...data } }));

  await t.test('a destination deactivated before its pending delivery is made: the delivery is CANCELLED, not sent, and cannot be replayed while inactive', async () => {
    const created = await svc.request('POST', BASE, { key: tenant.apiKey, body: { name: 'c', url: `${receiver.url}/cancel`, events: ['badge.earned.v1'] } });
    const ids = await emitNow({});
    assert.deepEqual(await dispatch(context, tenant.tenantId, ids), { events: 1, deliveries: 1, jobs: 1 });
    assert.deepEqual(await dispatch(context, tenant.tenantId, ids), { events: 1, deliveries: 0, jobs: 0 }, 'a repeated dispatch creates nothing');
    await svc.request('PATCH', `${BASE}/${created.body.id}`, { key: tenant.apiKey, body: { active: false } });
    const [row] = await svc.sql(`SELECT id FROM webhook_deliveries WHERE destination_id = $1`, [created.body.id]);
    assert.equal(await attemptDelivery(context, tenant.tenantId, row.id), 'cancelled');
    const logs = await svc.request('GET', `${BASE}/${created.body.id}/logs`, { key: tenant.apiKey });
    assert.equal(logs.body.deliveries[0].status, 'CANCELLED');
    assert.equal(logs.body.deliveries[0].attempts, 0);
    assert.equal(receiver.received.filter((r) => r.path === '/cancel').length, 0);
    const replay = await svc.request('POST', `${BASE}/${created.body.id}/deliveries/${row.id}/replay`, { key: tenant.apiKey });
    assert.equal(replay.status, 409);
    assert.equal(replay.body.code, 'WEBHOOK_DESTINATION_INACTIVE');
    assert.equal(await attemptDelivery(context, tenant.tenantId, row.id), 'not_due', 'a finished delivery is never attempted again');
  });

  await t.test('concurrent dispatches and attempts: one delivery per event and destination, one POST per attempt', async () => {
    const created = await svc.request('POST', BASE, { key: tenant.apiKey, body: { name: 'race', url: `${receiver.url}/race`, events: ['badge.earned.v1'] } });
    const ids = await emitNow({});
    const dispatched = await Promise.all(Array.from({ length: 8 }, () => dispatch(context, tenant.tenantId, ids)));
    assert.equal(dispatched.reduce((sum, d) => sum + d.deliveries, 0), 1);
    const [row] = await svc.sql(`SELECT id FROM webhook_deliveries WHERE destination_id = $1`, [created.body.id]);
    const results = await Promise.all(Array.from({ length: 10 }, () => attemptDelivery(context, tenant.tenantId, row.id)));
    assert.equal(results.filter((r) => r === 'SUCCEEDED').length, 1, JSON.stringify(results));
    assert.ok(results.every((r) => r === 'SUCCEEDED' || r === 'not_due'));
    assert.equal(receiver.received.filter((r) => r.path === '/race').length, 1);
    const [after] = await svc.sql(`SELECT attempts, status FROM webhook_deliveries WHERE id = $1`, [row.id]);
    assert.deepEqual(after, { attempts: 1, status: 'SUCCEEDED' });
  });

  await t.test('an attempt cut short and its repeat have their own numbers, even when both start in the same millisecond', async () => {
    const created = await svc.request('POST', BASE, { key: tenant.apiKey, body: { name: 'cut', url: `${receiver.url}/cut`, events: ['badge.earned.v1'] } });
    await dispatch(context, tenant.tenantId, await emitNow({}));
    const [row] = await svc.sql(`SELECT id FROM webhook_deliveries WHERE destination_id = $1`, [created.body.id]);
    // A worker claims the delivery and dies before it records anything; its deadline passes.
    await svc.service.db.tenant(tenant.tenantId, (tx) => claimDue(tx, tenant.tenantId, [row.id], 'dead-worker', 1, 5, clock.now()));
    await svc.sql(`UPDATE webhook_deliveries SET attempt_deadline = now() - interval '1 second' WHERE id = $1`, [row.id]);
    // The take-over and the repeat's POST then happen within one millisecond.
    clock.freeze();
    try {
      assert.equal(await attemptDelivery(context, tenant.tenantId, row.id), 'SUCCEEDED');
    } finally {
      clock.reset();
    }
    const logs = await svc.request('GET', `${BASE}/${created.body.id}/logs`, { key: tenant.apiKey });
    const [delivery] = logs.body.deliveries;
    assert.deepEqual(delivery.attempt_log.map((a: { attempt: number; outcome: string }) => [a.attempt, a.outcome]), [[1, 'interrupted'], [2, 'succeeded']]);
    assert.equal(delivery.attempts, 1, 'the cut attempt does not count against the retry budget');
    assert.equal(delivery.status, 'SUCCEEDED');
    assert.equal(receiver.received.filter((r) => r.path === '/cut').length, 1);
  });

  await t.test('an in-progress delivery cannot be replayed', async () => {
    const created = await svc.request('POST', BASE, { key: tenant.apiKey, body: { name: 'p', url: `${receiver.url}/pending`, events: ['badge.earned.v1'] } });
    await dispatch(context, tenant.tenantId, await emitNow({}));
    const [row] = await svc.sql(`SELECT id, status FROM webhook_deliveries WHERE destination_id = $1`, [created.body.id]);
    assert.equal(row.status, 'PENDING');
    const replay = await svc.request('POST', `${BASE}/${created.body.id}/deliveries/${row.id}/replay`, { key: tenant.apiKey });
    assert.equal(replay.status, 409);
    assert.equal(replay.body.code, 'WEBHOOK_DELIVERY_IN_PROGRESS');
  });

  await t.test('lists and logs are paginated with a bounded limit', async () => {
    const created = await svc.request('POST', BASE, { key: tenant.apiKey, body: { name: 'pages', url: `${receiver.url}/pages`, events: ['badge.earned.v1'] } });
    for (let i = 0; i < 5; i++) await svc.request('POST', `${BASE}/${created.body.id}/test`, { key: tenant.apiKey });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { deliveries: Array<{ log_id: string }>; next_cursor: string | null } } = await svc.request('GET', `${BASE}/${created.body.id}/logs?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key: tenant.apiKey });
      assert.ok(page.body.deliveries.length <= 2);
      seen.push(...page.body.deliveries.map((d) => d.log_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    assert.equal(seen.length, 5);
    assert.equal(new Set(seen).size, 5);
    assert.equal((await svc.request('GET', `${BASE}/${created.body.id}/logs?limit=101`, { key: tenant.apiKey })).status, 400);
    const destinations = await svc.request('GET', `${BASE}?limit=1`, { key: tenant.apiKey });
    assert.equal(destinations.body.destinations.length, 1);
    assert.ok(destinations.body.next_cursor);
    assert.equal((await svc.request('GET', `${BASE}?cursor=not-a-cursor`, { key: tenant.apiKey })).status, 400);
  });

  await t.test('a payload carrying personal data leaves a pii_access_log row with actor_type webhook', async () => {
    const created = await svc.request('POST', BASE, { key: tenant.apiKey, body: { name: 'pii', url: `${receiver.url}/pii`, events: ['badge.earned.v1'] } });
    await svc.service.db.tenant(tenant.tenantId, (tx) => participants.ensureParticipant(tx, tenant.tenantId, 'p-pii'));
    await dispatch(context, tenant.tenantId, await emitNow({ email: 'someone@example.com' }, 'p-pii'));
    await dispatch(context, tenant.tenantId, await emitNow({}, 'p-pii'));
    const rows = await svc.sql(`SELECT id FROM webhook_deliveries WHERE destination_id = $1 ORDER BY created_at`, [created.body.id]);
    for (const row of rows) assert.equal(await attemptDelivery(context, tenant.tenantId, row.id), 'SUCCEEDED');
    const logged = await svc.sql(`SELECT * FROM pii_access_log WHERE tenant_id = $1 AND actor_type = 'webhook'`, [tenant.tenantId]);
    assert.equal(logged.length, 1, 'only the payload with personal data is logged');
    assert.equal(logged[0].actor_id, created.body.id);
    assert.equal(logged[0].participant_id, 'p-pii');
    assert.deepEqual(logged[0].fields_accessed, ['email']);
  });

  await t.test(`a dispatch makes delivery jobs of at most ${DELIVERY_BATCH_MAX} per destination, in event order; one job posts them all and records each outcome, and a failed one retries on its own`, async () => {
    const created = await svc.request('POST', BASE, { key: tenant.apiKey, body: { name: 'batch', url: `${receiver.url}/batch`, events: ['points.awarded.v1'], retry_count: 2 } });
    const failing = 6;
    const events = Array.from({ length: 2 * DELIVERY_BATCH_MAX + 5 }, (_, i) => ({
      event: 'points.awarded.v1',
      participantId: `p-batch-${i}`,
      data: { participant_id: `p-batch-${i}`, amount: i + 1, available: i + 1, lifetime: i + 1, reason: i === failing ? 'fail' : 'ok', ledger_entry_id: 'led', source_kind: 'grant', multiplier: null },
    }));
    const ids = await svc.service.db.tenant(tenant.tenantId, (tx) => emit(tx, tenant.tenantId, events));
    assert.deepEqual(await dispatch(context, tenant.tenantId, ids), { events: 2 * DELIVERY_BATCH_MAX + 5, deliveries: 2 * DELIVERY_BATCH_MAX + 5, jobs: 3 });
    const jobs = await svc.sql(
      `SELECT j.payload FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
       WHERE t.identifier = 'webhooks.deliver' AND j.payload->'delivery_ids' IS NOT NULL AND j.payload->>'tenant_id' = $1`,
      [tenant.tenantId],
    );
    const byId = new Map((await svc.sql(`SELECT id, event_id FROM webhook_deliveries WHERE destination_id = $1`, [created.body.id])).map((r) => [r.id, r.event_id]));
    const batches: string[][] = jobs.map((j) => j.payload.delivery_ids).filter((batch: string[]) => byId.has(batch[0]));
    assert.deepEqual(batches.map((b) => b.length).sort((a, b) => a - b), [5, DELIVERY_BATCH_MAX, DELIVERY_BATCH_MAX]);
    const inOrder = batches.sort((a, b) => ids.indexOf(byId.get(a[0])) - ids.indexOf(byId.get(b[0]))).flat().map((id) => byId.get(id));
    assert.deepEqual(inOrder, ids, 'every delivery in exactly one job, in the order of its events');

    receiver.respond = (r, res) => {
      res.statusCode = (r.body as { data?: { reason?: string } })?.data?.reason === 'fail' ? 500 : 200;
      res.end();
    };
    try {
      const results = await attemptDeliveries(context, tenant.tenantId, batches[0]);
      const failed = [...results].filter(([, status]) => status !== 'SUCCEEDED');
      assert.equal(results.size, DELIVERY_BATCH_MAX);
      assert.deepEqual(failed, [[batches[0][failing], 'RETRYING']]);
    } finally {
      receiver.respond = (_r, res) => res.end('ok');
    }
    assert.equal(receiver.received.filter((r) => r.path === '/batch').length, DELIVERY_BATCH_MAX, 'one POST per delivery of the job');
    const logs = await svc.sql(
      `SELECT w.status, w.attempts, count(a.*)::int AS logged, w.completed_at IS NOT NULL AS completed
       FROM webhook_deliveries w LEFT JOIN webhook_delivery_attempts a ON a.tenant_id = w.tenant_id AND a.delivery_id = w.id
       WHERE w.id = ANY ($1) GROUP BY w.tenant_id, w.id ORDER BY w.status`,
      [batches[0]],
    );
    assert.deepEqual(logs.filter((l) => l.status === 'SUCCEEDED').length, DELIVERY_BATCH_MAX - 1);
    assert.ok(logs.every((l) => l.attempts === 1 && l.logged === 1 && l.completed === (l.status === 'SUCCEEDED')), JSON.stringify(logs));
    const [retry] = await svc.sql(`SELECT run_at FROM graphile_worker._private_jobs WHERE payload->>'delivery_id' = $1`, [batches[0][failing]]);
    assert.ok(retry, 'the failed delivery has a retry job of its own');
    assert.deepEqual(await attemptDeliveries(context, tenant.tenantId, batches[0]), new Map(batches[0].map((id, i) => [id, i === failing ? 'SUCCEEDED' : 'not_due'])),
      'running the job again (a retry after a crash) posts only what is still due');
  });
});

test('webhooks: the forgery check runs again at delivery time', async (t) => {
  const strict = await startTestService(t);
  const tenant = await strict.createTenant();
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const created = await strict.request('POST', BASE, { key: tenant.apiKey, body: { name: 'later', url: 'https://93.184.216.34/hook', events: ['badge.earned.v1'], retry_count: 0 } });
  assert.equal(created.status, 201);
  // The stored URL now points at a loopback receiver (as if its name had been re-pointed).
  await strict.sql(`UPDATE webhook_destinations SET url = $2 WHERE id = $1`, [created.body.id, `https://127.0.0.1:${receiver.port}/stolen`]);
  const result = await strict.request('POST', `${BASE}/${created.body.id}/test`, { key: tenant.apiKey });
  assert.equal(result.status, 200);
  assert.equal(result.body.status, 'EXHAUSTED');
  assert.equal(result.body.last_response_status, null);
  assert.match(result.body.last_error, /^blocked: .*loopback/);
  assert.equal(receiver.received.length, 0);
});
