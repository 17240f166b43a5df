import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService, type TestService } from './helper.js';
import { createEngagement } from '../src/modules/engagements/testing.js';

/**
 * DATABASE_REPLICA_URL: reads that may lag (public leaderboards, points
 * history, the analytics overview) go to the replica; everything else, and
 * every read that must see the caller's own write, stays on the primary.
 * The "replica" here is an empty database, so a routed read sees nothing of
 * what the primary holds: the same calls against a service without a replica
 * see it all. (A real streaming replica is exercised by `npm run drill:scale`.)
 */
async function seed(svc: TestService) {
  const tenant = await svc.createTenant();
  const engagement = await createEngagement(svc, tenant, { screens: [{ id: 'home', components: [] }], allow_anonymous_sessions: true });
  const call = async (method: string, path: string, body: unknown, expected: number) => {
    const response = await svc.request(method, path, { key: tenant.apiKey, body });
    assert.equal(response.status, expected, `${method} ${path}: ${response.text}`);
    return response.body;
  };
  await call('POST', '/api/v1/gamify/points/grant', { participant_id: 'alice', amount: 40, reason: 'test', idempotency_key: randomUUID() }, 200);
  await call('POST', '/api/v1/admin/leaderboards', { leaderboard_code: 'all-time', name: 'All time', metric: 'lifetime_points' }, 201);
  const refreshed = await call('POST', '/api/v1/admin/leaderboards/all-time/refresh', {}, 200);
  assert.equal(refreshed.total_participants, 1, 'the primary ranks alice');
  return { tenant, engagementId: engagement.id as string };
}

async function reads(svc: TestService) {
  const { tenant, engagementId } = await seed(svc);
  const key = tenant.apiKey;
  return {
    board: await svc.request('GET', `/api/v1/public/leaderboards/all-time?engagement_id=${engagementId}`),
    history: await svc.request('GET', '/api/v1/points/history?participant_id=alice', { key }),
    overview: await svc.request('GET', '/api/v1/admin/analytics/overview', { key }),
    balance: await svc.request('GET', '/api/v1/gamify/participants/alice', { key }),
    tenant: await svc.request('GET', '/api/v1/tenant', { key }),
  };
}

test('with a replica, stale-tolerant reads come from it and the rest from the primary', async (t) => {
  const [withReplica, primaryOnly] = await Promise.all([reads(await startTestService(t, { replicaStandIn: true })), reads(await startTestService(t))]);

  // Without a replica every read sees alice's 40 points.
  assert.equal(primaryOnly.board.status, 200, primaryOnly.board.text);
  assert.equal(primaryOnly.board.body.entries[0].participant_id, 'alice');
  assert.equal(primaryOnly.history.status, 200);
  assert.equal(primaryOnly.history.body.entries.length, 1);
  assert.equal(primaryOnly.overview.status, 200);
  assert.equal(primaryOnly.overview.body.totals.points_issued, 40);

  // With one, the routed reads answer from the (empty) replica …
  assert.equal(withReplica.board.status, 404, 'the leaderboard is read on the replica, which has none');
  assert.equal(withReplica.history.status, 200);
  assert.deepEqual(withReplica.history.body.entries, [], 'history is read on the replica');
  assert.equal(withReplica.overview.status, 200);
  assert.equal(withReplica.overview.body.totals.points_issued, 0, 'the overview is read on the replica');
  // … and read-your-writes paths from the primary.
  assert.equal(withReplica.balance.status, 200, withReplica.balance.text);
  assert.equal(withReplica.balance.body.points.available, 40);
  assert.equal(withReplica.tenant.status, 200);
});
