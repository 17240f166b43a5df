import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Database } from '../../platform/db.js';
import { createDatabase, kill, startWorker, type Worker } from '../../../test/child-service.js';
import { emit } from '../../platform/outbox.js';
import { createLogger } from '../../platform/logger.js';
import { loadConfig } from '../../config.js';
import { createTenant } from '../access/index.js';
import { createDestination } from './service.js';
import { startReceiver } from './testing.js';
import { DELIVERY_BATCH_MAX } from './store.js';
import { waitFor } from '../../../test/helper.js';

/**
 * At-least-once delivery across a crash. The service runs as a child process
 * (the compiled service, worker role, against this test's own database); a
 * burst of events is emitted, the child is killed with SIGKILL while
 * deliveries are in flight, more events are committed while it is dead, and
 * a new child is started. Every committed event must reach the receiver at
 * least once; no event of a rolled-back change may reach it.
 */
const COMMITTED_TRANSACTIONS = 30;
const EVENTS_PER_TRANSACTION = 5;
const ROLLED_BACK_TRANSACTIONS = 5;

test('crash: SIGKILL mid-delivery loses no committed event and delivers no rolled-back one', { timeout: 180_000 }, async (t) => {
  const database = await createDatabase(t);
  const db = new Database(database.appUrl, database.ownerUrl, 5);
  t.after(() => db.close());
  const config = loadConfig({ APP_ENV: 'test', ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' });
  const context = { db, config, log: createLogger('silent') };

  // A receiver slow enough that the kill lands while deliveries are in flight.
  const receiver = await startReceiver((_r, res) => setTimeout(() => res.end('ok'), 40));
  t.after(() => receiver.close());
  const tenant = await createTenant(db, { name: 'Crash', slug: `crash-${randomBytes(3).toString('hex')}`, plan: 'enterprise' });
  await createDestination(context, tenant.tenant_id, { name: 'crash receiver', url: `${receiver.url}/crash`, events: ['points.awarded.v1'], timeout_seconds: 3 });

  const committed: string[] = [];
  const emitBurst = async (transactions: number, label: string) => {
    for (let i = 0; i < transactions; i++) {
      const events = Array.from({ length: EVENTS_PER_TRANSACTION }, (_, j) => ({
        event: 'points.awarded.v1',
        participantId: `${label}-${i}-${j}`,
        data: { participant_id: `${label}-${i}-${j}`, amount: 1, available: 1, lifetime: 1, reason: 'crash', ledger_entry_id: 'led', source_kind: 'grant', multiplier: null },
      }));
      committed.push(...(await db.tenant(tenant.tenant_id, (tx) => emit(tx, tenant.tenant_id, events))));
    }
  };
  const emitRolledBack = async () => {
    for (let i = 0; i < ROLLED_BACK_TRANSACTIONS; i++) {
      await assert.rejects(
        db.tenant(tenant.tenant_id, async (tx) => {
          await emit(tx, tenant.tenant_id, { event: 'points.awarded.v1', participantId: `rolled-back-${i}`, data: { participant_id: `rolled-back-${i}` } });
          throw new Error('the change fails');
        }),
      );
    }
  };

  let worker = await startWorker(database.ownerUrl, database.appPassword);
  t.after(() => kill(worker, 'SIGKILL'));
  await emitBurst(COMMITTED_TRANSACTIONS, 'before');
  await emitRolledBack();
  const total = COMMITTED_TRANSACTIONS * EVENTS_PER_TRANSACTION;
  await waitFor('deliveries under way', () => receiver.received.length >= total / 4, 60_000, 10);
  await kill(worker, 'SIGKILL');
  const atKill = receiver.received.length;
  const count = async (sql: string) => db.tenant(tenant.tenant_id, async (tx) => (await tx.query(sql)).rows[0].n as number);
  const unfinished = await count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'SUCCEEDED'`);
  const inFlight = await count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'DELIVERING'`);
  t.diagnostic(`killed after ${atKill} of ${total} receipts; ${unfinished} deliveries unfinished (${inFlight} in flight), the rest not yet created`);
  assert.ok(atKill < total, 'the kill landed mid-burst');

  // Committed while no worker runs: the outbox keeps them.
  await emitBurst(4, 'while-dead');
  worker = await startWorker(database.ownerUrl, database.appPassword);
  const started = Date.now();
  await waitFor(
    'every committed event at the receiver',
    () => {
      const seen = new Set(receiver.received.map((r) => r.body?.id));
      return committed.every((id) => seen.has(id));
    },
    120_000,
    200,
  );
  t.diagnostic(`all ${committed.length} committed events received ${Date.now() - started} ms after the restart; ${receiver.received.length} receipts in all (duplicates are allowed)`);
  assert.ok(!receiver.received.some((r) => String(r.body?.participant_id).startsWith('rolled-back')), 'no rolled-back event was delivered');
  const states = await db.tenant(tenant.tenant_id, async (tx) => (await tx.query(`SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`)).rows);
  await waitFor('every delivery recorded as SUCCEEDED', async () => {
    const rows = await db.tenant(tenant.tenant_id, async (tx) => (await tx.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'SUCCEEDED'`)).rows);
    return rows[0].n === committed.length;
  }, 30_000);
  t.diagnostic(`delivery states just after the last receipt: ${JSON.stringify(states)}`);
  // Each attempt the kill cut short was taken over once its deadline passed, and logged.
  const interrupted = await count(`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE outcome = 'interrupted'`);
  assert.equal(interrupted, inFlight);
  t.diagnostic(`${interrupted} interrupted attempts repeated; ${receiver.received.length} receipts for ${committed.length} events`);
  await kill(worker, 'SIGTERM');
});

/**
 * Repeated crashes during a burst (outside review, issue 16 item 1): a worker killed with SIGKILL
 * several times while a slow receiver holds its attempts. Each attempt a kill cuts short is taken
 * over once its deadline passes, logged `interrupted` under its own number, and made again under the
 * next number, so an event reaches the receiver at most once more per cut attempt, the attempt
 * numbers of a delivery run 1, 2, 3… without repeats, and no take-over makes a job fail.
 */
const KILLS = 6;
const BURST_EVENTS = 240;
const EVENTS_PER_EMIT = 40;
const SLOW_RECEIVER_MS = 150;
const KILL_WORKER_CONCURRENCY = 4;

test('crash: a worker killed six times during a burst to a slow receiver repeats each cut attempt once, under the next attempt number', { timeout: 110_000 }, async (t) => {
  const database = await createDatabase(t);
  const db = new Database(database.appUrl, database.ownerUrl, 5);
  t.after(() => db.close());
  const config = loadConfig({ APP_ENV: 'test', ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' });
  const context = { db, config, log: createLogger('silent') };
  const receiver = await startReceiver((_r, res) => setTimeout(() => res.end('ok'), SLOW_RECEIVER_MS));
  t.after(() => receiver.close());
  const tenant = await createTenant(db, { name: 'Kills', slug: `kills-${randomBytes(3).toString('hex')}`, plan: 'enterprise' });
  await createDestination(context, tenant.tenant_id, { name: 'slow receiver', url: `${receiver.url}/slow`, events: ['points.awarded.v1'], timeout_seconds: 3 });
  const query = async <T = any>(sql: string): Promise<T[]> => db.tenant(tenant.tenant_id, async (tx) => (await tx.query(sql)).rows as T[]);

  const committed: string[] = [];
  for (let i = 0; i < BURST_EVENTS / EVENTS_PER_EMIT; i++) {
    const events = Array.from({ length: EVENTS_PER_EMIT }, (_, j) => ({
      event: 'points.awarded.v1',
      participantId: `kills-${i}-${j}`,
      data: { participant_id: `kills-${i}-${j}`, amount: 1, available: 1, lifetime: 1, reason: 'crash', ledger_entry_id: 'led', source_kind: 'grant', multiplier: null },
    }));
    committed.push(...(await db.tenant(tenant.tenant_id, (tx) => emit(tx, tenant.tenant_id, events))));
  }

  const workers: Worker[] = [];
  const startLoggedWorker = async () => {
    const worker = await startWorker(database.ownerUrl, database.appPassword, { captureLog: true, env: { LOG_LEVEL: 'warn', JOB_CONCURRENCY: String(KILL_WORKER_CONCURRENCY) } });
    workers.push(worker);
    return worker;
  };
  t.after(() => Promise.all(workers.map((worker) => kill(worker, 'SIGKILL'))).then(() => undefined));

  // Each worker delivers a share of the burst and is killed mid-flight; the attempts it held
  // (a delivery and the token of its attempt: a job's batch of deliveries shares one token) are
  // the ones that must come back as `interrupted`.
  const receiptsPerWorker = Math.floor(BURST_EVENTS / (KILLS + 2));
  const cutAttempts = new Set<string>();
  const started = Date.now();
  for (let k = 1; k <= KILLS; k++) {
    const worker = await startLoggedWorker();
    const from = receiver.received.length;
    await waitFor(`${receiptsPerWorker} receipts before kill ${k}`, () => receiver.received.length >= from + receiptsPerWorker, 60_000, 5);
    await kill(worker, 'SIGKILL');
    // A statement the dead worker had already sent may still be finishing in its backend.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const held = await query<{ id: string; attempt_token: string }>(`SELECT id, attempt_token FROM webhook_deliveries WHERE status = 'DELIVERING'`);
    for (const row of held) cutAttempts.add(`${row.id}/${row.attempt_token}`);
    t.diagnostic(`kill ${k} after ${receiver.received.length} receipts (${Date.now() - started} ms): ${held.length} attempts in flight`);
  }
  const seenBeforeLastStart = new Set(receiver.received.map((r) => r.body?.id));
  assert.ok(seenBeforeLastStart.size < committed.length, 'the kills landed during the burst');
  assert.ok(cutAttempts.size > 0, 'the kills cut attempts short');

  const last = await startLoggedWorker();
  await waitFor('every event at the receiver', () => {
    const seen = new Set(receiver.received.map((r) => r.body?.id));
    return committed.every((id) => seen.has(id));
  }, 90_000, 100);
  await waitFor('every delivery SUCCEEDED', async () => (await query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'SUCCEEDED'`))[0].n === committed.length, 30_000);
  await kill(last, 'SIGTERM');
  t.diagnostic(`all ${committed.length} events delivered ${Date.now() - started} ms after the first start; ${receiver.received.length} receipts, ${cutAttempts.size} attempts cut by ${KILLS} kills`);
  // Taking over a cut attempt is routine: no error, and no job that failed and waited to be retried.
  const complaints = workers.flatMap((worker) => worker.log).filter((line) => Number(line.level) >= 50 || /job failed/.test(String(line.msg)));
  t.diagnostic(`${complaints.length} error lines or failed jobs in the workers' logs${complaints.length ? `, first: ${JSON.stringify(complaints[0]).slice(0, 400)}` : ''}`);

  // The attempt log: per delivery, numbers 1..n in time order, the cut ones `interrupted`, the last one `succeeded`.
  const attempts = await query<{ event_id: string; attempts: number; log: Array<{ attempt: number; outcome: string; started_at: string }> }>(
    `SELECT w.event_id, w.attempts,
            json_agg(json_build_object('attempt', a.attempt, 'outcome', a.outcome, 'started_at', a.started_at) ORDER BY a.attempt, a.started_at) AS log
     FROM webhook_deliveries w JOIN webhook_delivery_attempts a ON a.tenant_id = w.tenant_id AND a.delivery_id = w.id
     GROUP BY w.event_id, w.attempts`,
  );
  assert.equal(attempts.length, committed.length, 'every delivery has an attempt log');
  const receipts = new Map<string, number>();
  for (const r of receiver.received) receipts.set(r.body?.id, (receipts.get(r.body?.id) ?? 0) + 1);
  let interrupted = 0;
  const repeated: string[] = [];
  for (const delivery of attempts) {
    const numbers = delivery.log.map((a) => a.attempt);
    const outcomes = delivery.log.map((a) => a.outcome);
    const cut = outcomes.filter((o) => o === 'interrupted').length;
    interrupted += cut;
    if (numbers.some((n, i) => n !== i + 1)) repeated.push(`${delivery.event_id}: ${JSON.stringify(delivery.log)}`);
    assert.deepEqual(outcomes, [...Array(cut).fill('interrupted'), 'succeeded'], `${delivery.event_id}: ${JSON.stringify(delivery.log)}`);
    const times = delivery.log.map((a) => new Date(a.started_at).getTime());
    assert.ok(times.every((time, i) => i === 0 || time >= times[i - 1]), `attempts in time order: ${JSON.stringify(delivery.log)}`);
    assert.equal(delivery.attempts, 1, 'a cut attempt does not count against the retry budget');
    const received = receipts.get(delivery.event_id) ?? 0;
    assert.ok(received <= 1 + cut && received <= 1 + KILLS, `${delivery.event_id} received ${received} times with ${cut} cut attempts: ${JSON.stringify(delivery.log)}`);
  }
  assert.deepEqual(repeated, [], 'attempt numbers run 1, 2, 3… per delivery');
  assert.equal(interrupted, cutAttempts.size, 'each attempt a kill cut short is logged once as interrupted');
  assert.ok(interrupted <= KILLS * KILL_WORKER_CONCURRENCY * DELIVERY_BATCH_MAX);
  const extra = receiver.received.length - committed.length;
  assert.ok(extra <= interrupted, `${extra} extra receipts, ${interrupted} cut attempts`);
  t.diagnostic(`${extra} extra receipts for ${interrupted} interrupted attempts; most receipts of one event: ${Math.max(...receipts.values())}`);

  assert.deepEqual(complaints, []);
});
