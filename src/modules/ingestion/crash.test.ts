import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Database } from '../../platform/db.js';
import { createDatabase, kill, startWorker } from '../../../test/child-service.js';
import { startTestService, testCluster, waitFor } from '../../../test/helper.js';
import { createTenant } from '../access/index.js';
import { createRule } from '../rules/service.js';
import { findInvariantViolations } from '../points/invariants.js';
import { isRejection, normalize } from './normalize.js';
import { storeEventsInTx } from './service.js';
import { key } from './testing.js';

/**
 * Batch processing across crashes. Worker processes of the compiled service
 * are killed with SIGKILL while they apply batches of accepted events; every
 * event must end up applied exactly once, each participant's in accept
 * order, with balances equal to their ledger.
 */
const PARTICIPANTS = 300;
const STEPS = 20;

test('crash: workers killed mid-batch lose no event, apply none twice and keep each participant’s order', { timeout: 240_000 }, async (t) => {
  const database = await createDatabase(t);
  const db = new Database(database.appUrl, database.ownerUrl, 5);
  t.after(() => db.close());
  const tenant = await createTenant(db, { name: 'Crash', slug: `crash-${randomBytes(3).toString('hex')}`, plan: 'enterprise' });
  const tenantId = tenant.tenant_id;
  // Each event's points are its step: the ledger shows the order in which a participant's events were applied.
  await createRule(db, tenantId, { name: 'steps', event_name: 'step', effects: [{ type: 'award_points', rate: { property: 'properties.n', points_per_unit: 1 } }] });

  // Accepted as the ingestion routes accept them (a pending row per event), with no worker running.
  for (let n = 1; n <= STEPS; n++) {
    const events = Array.from({ length: PARTICIPANTS }, (_, p) => {
      const event = normalize(tenantId, { event_name: 'step', participant_id: `p-${p}`, properties: { n }, timestamp: new Date(Date.UTC(2026, 4, 1, 10, 0, n)).toISOString(), idempotency_key: key() }, undefined, true);
      if (isRejection(event)) throw new Error(event.detail);
      return event;
    });
    const stored = await db.tenant(tenantId, (tx) => storeEventsInTx(tx, tenantId, events));
    assert.ok(stored.every((result) => result.status === 'accepted'));
  }
  const total = PARTICIPANTS * STEPS;
  const processed = async () =>
    (await db.system.query<{ n: number }>(`SELECT count(*)::int AS n FROM ingested_events WHERE status = 'processed'`)).rows[0].n;

  const kills: number[] = [];
  // The worker's transactions open at the moment of a kill: batches it was applying.
  const openBatches = async () =>
    (await db.system.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'loyalty-app' AND xact_start IS NOT NULL`)).rows[0].n;
  for (const threshold of [total / 6, total / 2]) {
    const worker = await startWorker(database.ownerUrl, database.appPassword);
    t.after(() => kill(worker, 'SIGKILL'));
    await waitFor('batches under way', async () => (await processed()) >= threshold && (await openBatches()) > 0, 120_000);
    await kill(worker, 'SIGKILL');
    kills.push(await processed());
  }
  t.diagnostic(`killed with ${kills.join(' and ')} of ${total} events processed, each time while a batch transaction was open`);
  assert.ok(kills[1] < total, 'the second kill landed before the end');

  const last = await startWorker(database.ownerUrl, database.appPassword);
  t.after(() => kill(last, 'SIGKILL'));
  await waitFor('every event processed', async () => (await processed()) === total, 180_000);
  await kill(last, 'SIGTERM');

  const statuses = (await db.system.query(`SELECT status, attempts, count(*)::int AS n FROM ingested_events GROUP BY status, attempts`)).rows;
  // A batch cut short by a kill rolled back whole: every event was applied by exactly one committed attempt.
  assert.deepEqual(statuses, [{ status: 'processed', attempts: 1, n: total }]);
  assert.equal((await db.system.query('SELECT count(*)::int AS n FROM ingestion_pending')).rows[0].n, 0);
  const ledger = (
    await db.system.query<{ participant_id: string; deltas: number[] }>(
      `SELECT participant_id, array_agg(delta ORDER BY seq)::int[] AS deltas FROM points_ledger WHERE tenant_id = $1 GROUP BY participant_id`,
      [tenantId],
    )
  ).rows;
  assert.equal(ledger.length, PARTICIPANTS);
  const steps = Array.from({ length: STEPS }, (_, i) => i + 1);
  for (const row of ledger) assert.deepEqual(row.deltas, steps, `${row.participant_id}: each event once, in accept order`);
  assert.deepEqual(await findInvariantViolations(db.system, tenantId), []);
});

test('wake-up: an API-only process wakes a worker process’s lanes over NOTIFY', { timeout: 120_000 }, async (t) => {
  // The API is this process (role api); the worker is another, whose fallback look is a minute away.
  const api = await startTestService(t);
  const tenant = await api.createTenant();
  const worker = await startWorker(api.ownerUrl, testCluster().appPassword, { env: { EVENT_LOOK_INTERVAL_MS: '60000' } });
  t.after(() => kill(worker, 'SIGKILL'));
  const send = async (participantId: string) =>
    (await api.request('POST', '/api/v1/ingest/events', { key: tenant.apiKey, body: { event_name: 'lone', participant_id: participantId, idempotency_key: key() } })).body.message_id as string;
  const statusOf = async (eventId: string) => (await api.sql('SELECT status FROM ingested_events WHERE event_id = $1', [eventId]))[0].status;
  // The first is processed once the worker has started (at its first look or by a wake-up).
  const first = await send('first');
  await waitFor('the worker to start', async () => (await statusOf(first)) === 'processed', 90_000);
  const latencies: number[] = [];
  for (let i = 0; i < 5; i++) {
    const eventId = await send(`lone-${i}`);
    await waitFor('a woken worker', async () => (await statusOf(eventId)) === 'processed', 10_000);
    const [row] = await api.sql('SELECT extract(epoch FROM processed_at - received_at) * 1000 AS ms FROM ingested_events WHERE event_id = $1', [eventId]);
    latencies.push(Number(row.ms));
  }
  t.diagnostic(`accept → processed in the other process: ${latencies.map((ms) => ms.toFixed(0)).join(', ')} ms`);
  // Stopped here: the test database goes with the API's after-hook, which runs before this test's later ones.
  await kill(worker, 'SIGKILL');
});
