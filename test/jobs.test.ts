import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './helper.js';

test('every job-queue worker of a process records its heartbeat, so a dead process\'s jobs can be taken over', async (t) => {
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
