import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService } from './helper.js';
import { DISPATCH_TASK, pumpOutbox } from '../src/platform/outbox.js';

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
