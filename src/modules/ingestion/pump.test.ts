import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { key } from './test-support.js';
import { pumpIngestion, EVENTS_PER_PROCESSING_JOB } from './pump.js';
import { processingQueue } from './normalize.js';
import { PROCESS_TASK } from './store.js';

test('ingestion pump: every accepted event reaches exactly one processing job of its tenant and participant queue, in accept order', async (t) => {
  // No job runner in this process: accepted events stay pending until the test pumps them.
  const svc = await startTestService(t);
  const tenants = [await svc.createTenant(), await svc.createTenant()];
  const accepted: Array<{ tenantId: string; participantId: string; eventId: string }> = [];
  for (const tenant of tenants) {
    // One at a time per participant, so that accept order is known; participants in parallel.
    await Promise.all(
      ['p-1', 'p-2', 'p-3'].map(async (participantId) => {
        for (let i = 0; i < 8; i++) {
          const response = await svc.request('POST', '/api/v1/ingest/events', {
            key: tenant.apiKey,
            body: { event_name: 'visit', participant_id: participantId, properties: { n: i }, idempotency_key: key() },
          });
          assert.equal(response.status, 202, response.text);
          accepted.push({ tenantId: tenant.tenantId, participantId, eventId: response.body.message_id });
        }
      }),
    );
    // A batch, too: its events are queued in the order they were sent.
    const batch = await svc.request('POST', '/api/v1/ingest/events/batch', {
      key: tenant.apiKey,
      body: { events: Array.from({ length: 5 }, (_, n) => ({ event_name: 'batch', participant_id: 'p-1', properties: { n }, idempotency_key: key() })) },
    });
    assert.equal(batch.status, 200, batch.text);
    assert.equal(batch.body.accepted, 5);
    for (const result of batch.body.results) accepted.push({ tenantId: tenant.tenantId, participantId: 'p-1', eventId: result.message_id });
  }
  const pendingCount = async () => (await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM ingestion_pending'))[0].n;
  assert.equal(await pendingCount(), accepted.length, 'accepting adds no job, only a pending row per event');
  const jobsNow = async () =>
    svc.sql<{ id: number; queue_name: string; payload: { tenant_id: string; event_ids: string[] } }>(
      `SELECT j.id, q.queue_name, j.payload FROM graphile_worker._private_jobs j
       JOIN graphile_worker._private_tasks k ON k.id = j.task_id
       LEFT JOIN graphile_worker._private_job_queues q ON q.id = j.job_queue_id
       WHERE k.identifier = $1 ORDER BY j.id`,
      [PROCESS_TASK],
    );
  assert.equal((await jobsNow()).length, 0);

  const pool = svc.service.db.system;
  // A bounded take moves exactly that many; pumps running at once never move a row twice.
  assert.equal(await pumpIngestion(pool, 7), 7);
  let moved = 7;
  for (;;) {
    const takes = await Promise.all([pumpIngestion(pool, 10), pumpIngestion(pool, 10), pumpIngestion(pool, 10)]);
    const sum = takes.reduce((a, b) => a + b, 0);
    if (sum === 0 && (await pendingCount()) === 0) break;
    moved += sum;
  }
  assert.equal(moved, accepted.length);

  const jobs = await jobsNow();
  const seen = new Map<string, { tenantId: string; queue: string }>();
  for (const job of jobs) {
    assert.ok(job.payload.event_ids.length <= EVENTS_PER_PROCESSING_JOB);
    for (const eventId of job.payload.event_ids) {
      assert.ok(!seen.has(eventId), `${eventId} in one job only`);
      seen.set(eventId, { tenantId: job.payload.tenant_id, queue: job.queue_name });
    }
  }
  assert.equal(seen.size, accepted.length);
  for (const event of accepted) {
    assert.deepEqual(seen.get(event.eventId), { tenantId: event.tenantId, queue: processingQueue(event.tenantId, event.participantId) });
  }
  // Within a participant, jobs (in id order) and their ids list the events in the order they were accepted.
  for (const tenant of tenants) {
    for (const participantId of ['p-1', 'p-2', 'p-3']) {
      const queue = processingQueue(tenant.tenantId, participantId);
      const mine = new Set(accepted.filter((e) => e.tenantId === tenant.tenantId && e.participantId === participantId).map((e) => e.eventId));
      const queued = jobs.filter((j) => j.queue_name === queue && j.payload.tenant_id === tenant.tenantId).flatMap((j) => j.payload.event_ids).filter((id) => mine.has(id));
      const acceptOrder = accepted.filter((e) => mine.has(e.eventId)).map((e) => e.eventId);
      assert.deepEqual(queued, acceptOrder, `${participantId}: accept order`);
    }
  }
});
