import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { grantPoints, participantSession, startTestService } from './helper.js';
import { lowerBackendPriority } from '../src/platform/background-priority.js';
import leaderboardsModule from '../src/modules/leaderboards/index.js';

/** A client whose backend reports `pid`. */
const reporting = (pid: number) => ({ query: async () => ({ rows: [{ pid }] }) }) as never;

test('a pid that is not a PostgreSQL process of this machine is left alone', async () => {
  const own = os.getPriority(process.pid);
  assert.equal(await lowerBackendPriority(reporting(process.pid), 19), false, 'this test process is called node, not postgres');
  assert.equal(os.getPriority(process.pid), own);
  assert.equal(await lowerBackendPriority(reporting(2 ** 22 + 1), 19), false, 'no such process');
});

test('a scheduled leaderboard rebuild runs on a background connection whose backend runs at DB_BACKGROUND_NICE; the API\'s do not', async (t) => {
  const svc = await startTestService(t, { config: { DB_BACKGROUND_NICE: '7' } });
  const tenant = await svc.createTenant();
  const engagementId = randomUUID();
  for (const [participant, amount] of [['ann', 30], ['bob', 20]] as const) {
    await participantSession(svc, tenant, participant, engagementId, participant);
    assert.equal((await grantPoints(svc, tenant, participant, amount)).status, 200);
  }
  const created = await svc.request('POST', '/api/v1/admin/leaderboards', { key: tenant.apiKey, body: { leaderboard_code: 'all-time', name: 'All time', metric: 'lifetime_points' } });
  assert.equal(created.status, 201, created.text);
  const backends = (name: string) =>
    svc.sql<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, [name]);
  assert.deepEqual(await backends('loyalty-background'), [], 'nothing has run in the background yet');

  await leaderboardsModule.tasks!['leaderboards.refresh']({ tenant_id: tenant.tenantId, leaderboard_id: created.body.id }, { db: svc.service.db, config: svc.config, log: svc.service.log });

  const read = await svc.request('GET', `/api/v1/public/leaderboards/all-time?engagement_id=${engagementId}`, { key: tenant.apiKey });
  assert.deepEqual(read.body.entries.map((entry: { participant_id: string }) => entry.participant_id), ['ann', 'bob'], read.text);
  const background = await backends('loyalty-background');
  assert.equal(background.length, 1, 'the rebuild ran on the background pool');
  assert.equal(os.getPriority(background[0].pid), 7);
  if (fs.readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1') {
    // The backend is a session of its own: the session's nice value is what ranks it against the service.
    assert.match(fs.readFileSync(`/proc/${background[0].pid}/autogroup`, 'utf8'), / nice 7\n?$/);
  }
  const api = await backends('loyalty-app');
  assert.ok(api.length > 0);
  for (const { pid } of api) assert.equal(os.getPriority(pid), 0, 'the API\'s backends keep their priority');
});
