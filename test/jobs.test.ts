import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { startTestService } from './helper.js';

test('a process\'s job-queue pool records its heartbeat (the id its jobs are locked by), so a dead process\'s jobs can be taken over', async (t) => {
  const svc = await startTestService(t, { jobs: true });
  const deadline = Date.now() + 15_000;
  let rows: Array<{ worker_id: string; age_seconds: number }> = [];
  while (Date.now() < deadline) {
    rows = await svc.sql('SELECT worker_id, extract(epoch FROM now() - last_seen_at)::float AS age_seconds FROM worker_heartbeats');
    if (rows.length > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(rows.length >= 1, 'no worker recorded a heartbeat');
  assert.ok(rows.every((row) => row.age_seconds < 15), JSON.stringify(rows));
});

/**
 * A job of a live process that runs longer than WORKER_STALE_AFTER_SECONDS stays locked by it; a job
 * locked by an id that checks in nowhere is unlocked by the next sweep (every 10 s). The long job is a
 * leaderboard refresh held on the rebuild's advisory lock by this test.
 */
test('the stale-lock sweep unlocks a dead process\'s jobs and never a job this process is still running', { timeout: 60_000 }, async (t) => {
  const svc = await startTestService(t, { jobs: true });
  const tenant = await svc.createTenant();
  const created = await svc.request('POST', '/api/v1/admin/leaderboards', { key: tenant.apiKey, body: { leaderboard_code: 'held', name: 'Held', metric: 'lifetime_points', refresh_seconds: 1 } });
  assert.equal(created.status, 201, created.text);
  const holder = new pg.Client({ connectionString: svc.ownerUrl });
  holder.on('error', () => undefined);
  await holder.connect();
  t.after(() => holder.end());
  await holder.query('BEGIN');
  await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`leaderboard:${tenant.tenantId}:${created.body.id}:1970-01-01`]);
  const refresh = `leaderboards.refresh:${tenant.tenantId}:${created.body.id}`;
  const lockedBy = async () =>
    (await svc.sql<{ locked_by: string | null }>('SELECT locked_by FROM graphile_worker._private_jobs WHERE key = $1', [refresh]))[0]?.locked_by ?? null;
  let owner: string | null = null;
  for (const deadline = Date.now() + 15_000; owner === null && Date.now() < deadline; ) {
    owner = await lockedBy();
    if (owner === null) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(owner, 'the refresh job was picked up and waits on the lock');
  const checkedIn = await svc.sql<{ worker_id: string }>('SELECT worker_id FROM worker_heartbeats');
  assert.ok(checkedIn.some((row) => row.worker_id === owner), `the id the job is locked by (${owner}) checks in: ${JSON.stringify(checkedIn)}`);

  // Both as if locked an hour ago: ours, still running, and one of a process that stopped.
  await svc.sql(`SELECT graphile_worker.add_job('leaderboards.refresh', '{}'::json, job_key => 'orphan', run_at => now() + interval '1 day')`);
  await svc.sql(`UPDATE graphile_worker._private_jobs SET locked_by = 'pool-gone', locked_at = now() - interval '1 hour' WHERE key = 'orphan'`);
  await svc.sql(`UPDATE graphile_worker._private_jobs SET locked_at = now() - interval '1 hour' WHERE key = $1`, [refresh]);
  let orphan: string | null = 'pool-gone';
  for (const deadline = Date.now() + 25_000; orphan !== null && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    orphan = (await svc.sql<{ locked_by: string | null }>(`SELECT locked_by FROM graphile_worker._private_jobs WHERE key = 'orphan'`))[0].locked_by;
  }
  assert.equal(orphan, null, 'a sweep ran and unlocked the job of the process that stopped');
  assert.equal(await lockedBy(), owner, 'the job this process is running is still its own');
  await holder.query('ROLLBACK');
});
