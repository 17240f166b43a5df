import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { createLogger } from '../../platform/logger.js';
import { key, waitProcessed } from './testing.js';
import { LANE_BATCH_MAX, processLane, processWaitingLane } from './lanes.js';
import { processEventInTx } from './service.js';
import { processingQueue } from './normalize.js';
import { PROCESSING_LANES, waitingLanes } from './store.js';

const log = createLogger('silent');

test('lanes: each accepted event is applied once, in accept order per participant, by lanes racing each other', async (t) => {
  // No job runner in this process: accepted events stay pending until the test processes their lanes.
  const svc = await startTestService(t);
  const tenants = [await svc.createTenant(), await svc.createTenant()];
  const participants = Array.from({ length: 12 }, (_, i) => `p-${i}`);
  const accepted: Array<{ tenantId: string; participantId: string; eventId: string; n: number }> = [];
  for (const tenant of tenants) {
    // Each event's points are its position: the ledger then shows the order in which a participant's events were applied.
    await svc.request('POST', '/api/v1/admin/rules', {
      key: tenant.apiKey,
      body: { name: 'ordered', event_name: 'step', effects: [{ type: 'award_points', rate: { property: 'properties.n', points_per_unit: 1 } }] },
    });
    // Two batches, each listing every participant's next steps in timestamp order: accept order is step order.
    for (const steps of [[1, 8], [9, 15]]) {
      const events: Array<{ event_name: string; participant_id: string; properties: { n: number }; timestamp: string; idempotency_key: string }> = [];
      for (let n = steps[0]; n <= steps[1]; n++) {
        for (const participantId of participants) {
          events.push({ event_name: 'step', participant_id: participantId, properties: { n }, timestamp: new Date(Date.UTC(2026, 4, 1, 10, 0, n)).toISOString(), idempotency_key: key() });
        }
      }
      const response = await svc.request('POST', '/api/v1/ingest/events/batch', { key: tenant.apiKey, body: { events } });
      assert.equal(response.status, 200, response.text);
      response.body.results.forEach((result: { message_id: string }, i: number) => {
        accepted.push({ tenantId: tenant.tenantId, participantId: events[i].participant_id, eventId: result.message_id, n: events[i].properties.n });
      });
    }
  }
  const pending = await svc.sql<{ tenant_id: string; lane: number; event_id: string }>('SELECT tenant_id, lane, event_id FROM ingestion_pending');
  assert.equal(pending.length, accepted.length, 'accepting adds a pending row per event');
  const laneOf = new Map(pending.map((row) => [row.event_id, row.lane]));
  for (const event of accepted) {
    // A participant's events share a lane: its queue bucket modulo the lane count.
    const bucket = Number(processingQueue(event.tenantId, event.participantId).split(':')[1]);
    assert.equal(laneOf.get(event.eventId), bucket % PROCESSING_LANES);
  }
  assert.ok(new Set(pending.map((row) => row.lane)).size > 1, 'the participants spread over several lanes');

  // Eight loops at once, as several worker processes would run: a lane is taken by one transaction at a time.
  const db = svc.service.db;
  let processed = 0;
  for (;;) {
    const rounds = await Promise.all(Array.from({ length: 8 }, () => processWaitingLane(db, log)));
    processed += rounds.reduce((a, b) => a + b, 0);
    if ((await svc.sql('SELECT 1 FROM ingestion_pending LIMIT 1')).length === 0) break;
  }
  assert.equal(processed, accepted.length, 'each pending row processed once');
  const statuses = await svc.sql<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM ingested_events GROUP BY status');
  assert.deepEqual(statuses, [{ status: 'processed', n: accepted.length }]);

  for (const tenant of tenants) {
    for (const participantId of participants) {
      const ledger = await svc.sql<{ delta: number; balance_after: number }>(
        `SELECT delta FROM points_ledger WHERE tenant_id = $1 AND participant_id = $2 ORDER BY seq`,
        [tenant.tenantId, participantId],
      );
      assert.deepEqual(
        ledger.map((row) => row.delta),
        Array.from({ length: 15 }, (_, i) => i + 1),
        `${participantId}: each event once, in accept order`,
      );
    }
  }
  // A lane held by another transaction is skipped, not waited for.
  const tenant = tenants[0];
  const lane = laneOf.get(accepted[0].eventId)!;
  const holder = await db.app.connect();
  try {
    await holder.query('BEGIN');
    await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended($1::text || ':' || $2::text, 7130503))`, [tenant.tenantId, lane]);
    assert.equal(await processLane(db, log, tenant.tenantId, lane), null);
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
  assert.equal(await processLane(db, log, tenant.tenantId, lane), 0);
});

test('lanes: a batch takes at most LANE_BATCH_MAX events; a failing event is recorded and the others of its batch are applied', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const post = (path: string, body: unknown) => svc.request('POST', `/api/v1${path}`, { key: tenant.apiKey, body });
  await post('/admin/rules', { name: 'ten', event_name: 'order', effects: [{ type: 'award_points', points: 10 }] });
  await post('/admin/badges', { code: 'doomed', name: 'Doomed' });
  await post('/admin/rules', { name: 'doomed badge', event_name: 'doom', effects: [{ type: 'award_badge', badge_code: 'doomed' }] });
  // Deleting the badge after the rule was made leaves the rule unable to run: a domain error, failed at once.
  await svc.request('DELETE', '/api/v1/admin/badges/doomed', { key: tenant.apiKey });
  const events = Array.from({ length: LANE_BATCH_MAX + 20 }, (_, i) => ({
    event_name: i === 5 ? 'doom' : 'order',
    participant_id: 'one',
    timestamp: new Date(Date.UTC(2026, 4, 1, 10, 0, i)).toISOString(),
    idempotency_key: key(),
  }));
  const accepted = await post('/ingest/events/batch', { events });
  assert.equal(accepted.body.accepted, events.length);
  const [{ lane }] = await svc.sql<{ lane: number }>('SELECT DISTINCT lane FROM ingestion_pending');
  assert.equal(await processLane(svc.service.db, log, tenant.tenantId, lane), LANE_BATCH_MAX);
  assert.equal(await processLane(svc.service.db, log, tenant.tenantId, lane), 20);
  const statuses = await svc.sql<{ status: string; n: number }>('SELECT status, count(*)::int AS n FROM ingested_events GROUP BY status ORDER BY status');
  assert.deepEqual(statuses, [
    { status: 'failed', n: 1 },
    { status: 'processed', n: events.length - 1 },
  ]);
  const [ledger] = await svc.sql(`SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1`, [tenant.tenantId]);
  assert.equal(ledger.n, events.length - 1);
});

test('lanes: a tenant flooding the pipeline waits behind its own events; another tenant is served between its batches', async (t) => {
  const svc = await startTestService(t);
  const flooder = await svc.createTenant();
  const other = await svc.createTenant();
  for (let i = 0; i < 5; i++) {
    const response = await svc.request('POST', '/api/v1/ingest/events/batch', {
      key: flooder.apiKey,
      body: { events: Array.from({ length: 400 }, (_, n) => ({ event_name: 'flood', participant_id: `f-${n % 50}`, idempotency_key: key('flood') })) },
    });
    assert.equal(response.body.accepted, 400);
  }
  const single = await svc.request('POST', '/api/v1/ingest/events', { key: other.apiKey, body: { event_name: 'calm', participant_id: 'c', idempotency_key: key() } });
  // One loop: the other tenant's lane is taken within the next two batches, not after the flood's 2,000 events.
  const db = svc.service.db;
  let batches = 0;
  while ((await svc.sql('SELECT status FROM ingested_events WHERE event_id = $1', [single.body.message_id]))[0].status !== 'processed') {
    assert.ok((await processWaitingLane(db, log)) > 0);
    batches += 1;
    assert.ok(batches <= 2, `the other tenant waited ${batches} batches`);
  }
  const [left] = await svc.sql('SELECT count(*)::int AS n FROM ingestion_pending WHERE tenant_id = $1', [flooder.tenantId]);
  assert.ok(left.n >= 2_000 - 2 * LANE_BATCH_MAX, `the flood is still waiting (${left.n})`);
  // Its backlog is visible to it, and only its own.
  const usage = await svc.request('GET', '/api/v1/tenant/usage', { key: flooder.apiKey });
  assert.equal(usage.status, 200, usage.text);
  assert.equal(usage.body.event_processing.waiting, left.n);
  assert.ok(usage.body.event_processing.lag_seconds >= 0);
  const calm = await svc.request('GET', '/api/v1/tenant/usage', { key: other.apiKey });
  assert.deepEqual(calm.body.event_processing, { waiting: 0, waiting_capped: false, lag_seconds: 0 });
});

test('lanes: a lone event is processed on arrival, not at the next look', async (t) => {
  // The fallback look is a minute away: only the wake-up on arrival can process an event within seconds.
  const svc = await startTestService(t, { jobs: true, config: { EVENT_LOOK_INTERVAL_MS: '60000' } });
  const tenant = await svc.createTenant();
  const latencies: number[] = [];
  for (let i = 0; i < 5; i++) {
    const response = await svc.request('POST', '/api/v1/ingest/events', { key: tenant.apiKey, body: { event_name: 'lone', participant_id: `l-${i}`, idempotency_key: key() } });
    await waitProcessed(svc, [response.body.message_id], 10_000);
    const [row] = await svc.sql<{ ms: number }>('SELECT extract(epoch FROM processed_at - received_at) * 1000 AS ms FROM ingested_events WHERE event_id = $1', [response.body.message_id]);
    latencies.push(Number(row.ms));
  }
  t.diagnostic(`accept → processed: ${latencies.map((ms) => ms.toFixed(0)).join(', ')} ms`);
  assert.ok(Math.max(...latencies) < 5_000);
});

test('lanes: a batch leaves exactly what applying its events one at a time leaves (ledger, balances, tiers, outbox order, leaderboards, streaks)', async (t) => {
  // Two tenants with the same programme and the same events: one processed as a lane batch (grants and outbox rows
  // written set-based at the end), the other one event per transaction, the path without batching.
  const svc = await startTestService(t);
  const batched = await svc.createTenant();
  const single = await svc.createTenant();
  const participants = ['ann', 'bob', 'cy'];
  const events = Array.from({ length: 36 }, (_, i) => ({
    event_name: i % 5 === 4 ? 'visit' : 'buy',
    participant_id: participants[i % 3 === 2 && i % 2 === 0 ? 0 : i % 3],
    properties: { amount: 7 + ((i * 13) % 40) },
    timestamp: new Date(Date.UTC(2026, 4, 1, 10, 0, i)).toISOString(),
  }));
  for (const tenant of [batched, single]) {
    const post = async (path: string, body: unknown) => {
      const response = await svc.request('POST', `/api/v1${path}`, { key: tenant.apiKey, body });
      assert.ok(response.status < 300, `${path}: ${response.text}`);
    };
    await post('/admin/points/tiers', { code: 'silver', name: 'Silver', min_lifetime_points: 100 });
    await post('/admin/points/tiers', { code: 'gold', name: 'Gold', min_lifetime_points: 300 });
    await post('/admin/badges', { code: 'regular', name: 'Regular' });
    await post('/admin/streaks', { code: 'daily', name: 'Daily', period: 'daily', event_name: 'buy' });
    await post('/admin/points/multipliers', { starts_at: '2026-01-01T00:00:00Z', ends_at: '2027-01-01T00:00:00Z', multiplier: 2, match: { event_type: 'visit' } });
    await post('/admin/leaderboards', { leaderboard_code: 'all', name: 'All', metric: 'lifetime_points', refresh_seconds: 1 });
    // A period board: the awards then keep the period totals, written by the outbox's follower in both paths.
    await post('/admin/leaderboards', { leaderboard_code: 'week', name: 'Week', metric: 'period_points', period: 'weekly', refresh_seconds: 1 });
    await post('/admin/rules', { name: 'spend', event_name: 'buy', effects: [{ type: 'award_points', rate: { property: 'properties.amount', points_per_unit: 1 } }] });
    await post('/admin/rules', { name: 'visit', event_name: 'visit', effects: [{ type: 'award_points', points: 5 }] });
    // Reads the lifetime points that the earlier grants of the same batch made: held grants are written before any read.
    await post('/admin/rules', {
      name: 'regulars',
      event_name: 'buy',
      priority: -1,
      conditions: { all: [{ fact: 'participant.lifetime_points', operator: 'gte', value: 150 }] },
      effects: [
        { type: 'award_points', points: 3 },
        { type: 'award_badge', badge_code: 'regular' },
      ],
    });
    const accepted = await svc.request('POST', '/api/v1/ingest/events/batch', {
      key: tenant.apiKey,
      body: { events: events.map((event) => ({ ...event, idempotency_key: key() })) },
    });
    assert.equal(accepted.body.accepted, events.length, accepted.text);
  }
  const db = svc.service.db;
  const lanes = await svc.sql<{ lane: number }>('SELECT DISTINCT lane FROM ingestion_pending WHERE tenant_id = $1', [batched.tenantId]);
  for (const { lane } of lanes) assert.ok((await processLane(db, log, batched.tenantId, lane))! > 0);
  const singles = await svc.sql<{ event_id: string }>('SELECT event_id FROM ingestion_pending WHERE tenant_id = $1 ORDER BY seq', [single.tenantId]);
  for (const { event_id } of singles) await db.tenant(single.tenantId, (tx) => processEventInTx(tx, single.tenantId, event_id));

  const state = async (tenantId: string) => ({
    ledger: await svc.sql(
      `SELECT participant_id, type, delta, reason, source_kind, multiplier, available_after, lifetime_after
       FROM points_ledger WHERE tenant_id = $1 ORDER BY participant_id, seq`,
      [tenantId],
    ),
    balances: await svc.sql('SELECT participant_id, available, lifetime, tier_code FROM points_balances WHERE tenant_id = $1 ORDER BY participant_id', [tenantId]),
    lots: await svc.sql('SELECT participant_id, amount, remaining FROM points_lots WHERE tenant_id = $1 ORDER BY participant_id, amount, remaining', [tenantId]),
    outbox: await svc.sql(
      `SELECT participant_id, event, data - 'ledger_entry_id' - 'expires_at' - 'source_id' - 'earned_at' AS data
       FROM outbox_events WHERE tenant_id = $1 AND event NOT LIKE 'ingestion.%' ORDER BY participant_id, seq`,
      [tenantId],
    ),
    periods: await svc.sql('SELECT period, participant_id, score FROM leaderboard_period_points WHERE tenant_id = $1 ORDER BY period, participant_id', [tenantId]),
    streaks: await svc.sql('SELECT participant_id, streak_code, current_length FROM participant_streaks WHERE tenant_id = $1 ORDER BY participant_id', [tenantId]),
    outcomes: await svc.sql(`SELECT participant_id, outcome - 'rules' AS outcome FROM ingested_events WHERE tenant_id = $1 ORDER BY participant_id, seq`, [tenantId]),
  });
  const fromBatch = await state(batched.tenantId);
  const fromSingles = await state(single.tenantId);
  assert.ok(fromBatch.ledger.length > events.length, 'the conditional rule applied too');
  assert.ok(fromBatch.outbox.some((row) => row.event === 'tier.changed.v1'), 'tiers moved within the batch');
  assert.ok(fromBatch.outbox.some((row) => row.event === 'badge.earned.v1'), 'the conditional rule saw grants of the same batch');
  assert.ok(fromBatch.periods.length > 0, 'the period totals were kept');
  assert.deepEqual(fromBatch, fromSingles);
});

test('lanes: the waiting lanes are every lane with events, oldest event first, as the GROUP BY over all waiting rows gives them', async (t) => {
  const svc = await startTestService(t);
  const tenants = [await svc.createTenant(), await svc.createTenant(), await svc.createTenant()];
  // Events accepted in an interleaved order across tenants and participants (no job runner: they stay waiting).
  for (let round = 0; round < 3; round++) {
    for (const [i, tenant] of tenants.entries()) {
      const events = Array.from({ length: 5 + i * 3 }, (_, n) => ({ event_name: 'visit', participant_id: `p-${(n * 7 + round) % 11}`, idempotency_key: key() }));
      const response = await svc.request('POST', '/api/v1/ingest/events/batch', { key: tenant.apiKey, body: { events } });
      assert.equal(response.status, 200, response.text);
    }
  }
  const expected = await svc.sql<{ tenant_id: string; lane: number }>('SELECT tenant_id, lane FROM ingestion_pending GROUP BY tenant_id, lane ORDER BY min(seq)');
  assert.ok(expected.length > tenants.length, 'several lanes of several tenants wait');
  assert.deepEqual(await waitingLanes(svc.service.db.system, 1000), expected);
  assert.deepEqual(await waitingLanes(svc.service.db.system, 2), expected.slice(0, 2));

  // The processing-lag gauge reads the oldest waiting event through the same scan.
  const metrics = await svc.request('GET', '/metrics');
  const lag = Number(/^loyalty_event_processing_lag_seconds (\S+)$/m.exec(metrics.text)?.[1]);
  const [oldest] = await svc.sql<{ age: number }>(
    `SELECT extract(epoch FROM now() - e.received_at)::float8 AS age FROM ingestion_pending p
     JOIN ingested_events e ON e.tenant_id = p.tenant_id AND e.event_id = p.event_id ORDER BY p.seq LIMIT 1`,
  );
  assert.ok(lag > 0 && Math.abs(lag - oldest.age) < 5, `lag ${lag} s, oldest waiting event ${oldest.age} s old`);

  await svc.sql('DELETE FROM ingestion_pending');
  assert.deepEqual(await waitingLanes(svc.service.db.system, 10), []);
});
