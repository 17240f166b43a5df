import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, waitFor, type TestService } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { assertPointsInvariants, seedParticipantWithPoints } from './testing.js';
import { runBulkGrant } from './service.js';

const CONFIG = { RATE_LIMIT_KEY_PER_MINUTE: '1000000' };

async function addJob(svc: TestService, task: string, payload: unknown = {}) {
  await svc.sql('SELECT graphile_worker.add_job($1, $2::json)', [task, JSON.stringify(payload)]);
}

test('points: jobs through the queue, bulk grants, the state read', async (t) => {
  const svc = await startTestService(t, { config: CONFIG, jobs: true });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  t.after(() => clock.reset());

  await t.test('the points:expire job expires due lots', async () => {
    const granted = await svc.request('POST', '/api/v1/gamify/points/grant', {
      key: tenant.apiKey,
      body: { participant_id: 'old', amount: 12, reason: 'r', idempotency_key: 'exp-1' },
    });
    assert.equal(granted.status, 200);
    clock.advance(366 * 86_400_000);
    await addJob(svc, 'points:expire');
    const [balance] = await waitFor('expiry', async () => {
      const rows = await svc.sql("SELECT available, lifetime FROM points_balances WHERE tenant_id = $1 AND participant_id = 'old' AND available = 0", [tenant.tenantId]);
      return rows.length ? rows : null;
    });
    assert.equal(balance.lifetime, 12);
    // The job may still be sweeping other partitions with its clock a year ahead: let it finish before the clock
    // goes back, or a lot granted by the next subtest would be expired by it.
    await waitFor('the expiry job to finish', async () => {
      const [{ n }] = await svc.sql(
        `SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = 'points:expire'`,
      );
      return n === 0;
    });
    clock.reset();
  });

  await t.test('a bulk grant runs as a job, reports progress and grants each participant once', async () => {
    await svc.request('POST', '/api/v1/gamify/points/grant', { key: tenant.apiKey, body: { participant_id: 'bulk-0', amount: 5, reason: 'before', idempotency_key: 'pre' } });
    await svc.request('POST', '/api/v1/admin/points/tiers', { key: tenant.apiKey, body: { code: 'vip', name: 'VIP', min_lifetime_points: 100 } });
    const grants = Array.from({ length: 1200 }, (_, i) => ({ participant_id: `bulk-${i}`, amount: i === 7 ? 150 : 10 }));
    const body = { idempotency_key: 'bulk-1', reason: 'holiday bonus', grants };
    const started = await svc.request('POST', '/api/v1/admin/points/bulk-grant', { key: tenant.apiKey, body });
    assert.equal(started.status, 202, started.text);
    assert.equal(started.body.total, 1200);
    assert.equal(started.body.duplicate, false);
    const jobId = started.body.job_id;
    const repeat = await svc.request('POST', '/api/v1/admin/points/bulk-grant', { key: tenant.apiKey, body });
    assert.equal(repeat.status, 202);
    assert.equal(repeat.body.job_id, jobId);
    assert.equal(repeat.body.duplicate, true);
    const reused = await svc.request('POST', '/api/v1/admin/points/bulk-grant', { key: tenant.apiKey, body: { ...body, reason: 'other' } });
    assert.equal(reused.status, 422);
    const done = await waitFor('bulk grant', async () => {
      const status = await svc.request('GET', `/api/v1/admin/points/bulk-grant/${jobId}`, { key: tenant.apiKey });
      return status.body.status === 'completed' ? status.body : null;
    });
    assert.equal(done.done, 1200);
    assert.equal(done.failed, 0);
    assert.equal(done.pending, 0);
    const [{ n, total }] = await svc.sql("SELECT count(*)::int AS n, sum(delta)::int AS total FROM points_ledger WHERE tenant_id = $1 AND source_kind = 'bulk' AND source_id = $2", [tenant.tenantId, jobId]);
    assert.equal(n, 1200);
    assert.equal(total, 1199 * 10 + 150);
    const [zero] = await svc.sql("SELECT available, lifetime FROM points_balances WHERE tenant_id = $1 AND participant_id = 'bulk-0'", [tenant.tenantId]);
    assert.deepEqual(zero, { available: 15, lifetime: 15 });
    const awarded = await svc.sql("SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = $1 AND event = 'points.awarded.v1' AND data->>'source_kind' = 'bulk'", [tenant.tenantId]);
    assert.equal(awarded[0].n, 1200);
    const tiers = await svc.sql("SELECT data FROM outbox_events WHERE tenant_id = $1 AND event = 'tier.changed.v1' AND participant_id = 'bulk-7'", [tenant.tenantId]);
    assert.equal(tiers.length, 1);
    assert.equal(tiers[0].data.tier, 'vip');

    // A retried job (the queue runs it again) grants nobody twice.
    await svc.sql("UPDATE points_bulk_grants SET status = 'running' WHERE id = $1", [jobId]);
    await addJob(svc, 'points.bulk_grant', { tenant_id: tenant.tenantId, job_id: jobId });
    await waitFor('the retried job', async () => {
      const [row] = await svc.sql('SELECT status FROM points_bulk_grants WHERE id = $1', [jobId]);
      return row.status === 'completed';
    });
    const [{ again }] = await svc.sql("SELECT count(*)::int AS again FROM points_ledger WHERE tenant_id = $1 AND source_id = $2", [tenant.tenantId, jobId]);
    assert.equal(again, 1200);
    assert.equal((await svc.request('GET', `/api/v1/admin/points/bulk-grant/${jobId}`, { key: other.apiKey })).status, 404);
  });

  await t.test('bad bulk grant bodies get 400 and create no job', async () => {
    const cases = [
      { idempotency_key: 'b1', reason: 'r', grants: [] },
      { idempotency_key: 'b2', reason: 'r', grants: [{ participant_id: 'a', amount: 1 }, { participant_id: 'a', amount: 2 }] },
      { idempotency_key: 'b3', reason: 'r', grants: [{ participant_id: 'a', amount: 0 }] },
      { reason: 'r', grants: [{ participant_id: 'a', amount: 1 }] },
      { idempotency_key: 'b5', reason: 'r', grants: [{ participant_id: 'a', amount: 1, extra: true }] },
    ];
    for (const body of cases) {
      const response = await svc.request('POST', '/api/v1/admin/points/bulk-grant', { key: other.apiKey, body });
      assert.equal(response.status, 400, JSON.stringify(body));
    }
    const [{ n }] = await svc.sql('SELECT count(*)::int AS n FROM points_bulk_grants WHERE tenant_id = $1', [other.tenantId]);
    assert.equal(n, 0);
  });

  await t.test('the state read answers the included parts; unknown parts get 400', async () => {
    const full = await svc.request('GET', '/api/v1/gamify/state/bulk-7', { key: tenant.apiKey });
    assert.equal(full.status, 200, full.text);
    assert.equal(full.body.participant_id, 'bulk-7');
    assert.deepEqual(full.body.points, { available: 150, lifetime: 150, currency_name: 'points', last_earned_at: full.body.points.last_earned_at });
    assert.equal(full.body.tier.current.code, 'vip');
    assert.equal(full.body.tier.next, null);
    for (const part of ['badges', 'streaks', 'rewards', 'challenges']) assert.ok(Array.isArray(full.body[part]), part);
    assert.deepEqual(full.body.contests.entries, []);
    assert.equal(full.body.referrals.total_referrals, 0);
    assert.equal(typeof full.body.profile, 'object');
    const some = await svc.request('GET', '/api/v1/gamify/state/bulk-1?include=points,tier', { key: tenant.apiKey });
    assert.deepEqual(Object.keys(some.body).sort(), ['livemode', 'participant_id', 'points', 'tier']);
    assert.equal(some.body.tier.points_to_next, 90);
    assert.equal(some.body.tier.current, null);
    // Parts that are one statement each are read in one round trip; mixed with the profile (read in a
    // transaction, as it logs personal-data access) they come out the same.
    const fast = await svc.request('GET', '/api/v1/gamify/state/bulk-7?include=tier,badges,points', { key: tenant.apiKey });
    assert.deepEqual(Object.keys(fast.body).sort(), ['badges', 'livemode', 'participant_id', 'points', 'tier']);
    const slow = await svc.request('GET', '/api/v1/gamify/state/bulk-7?include=tier,badges,points,profile', { key: tenant.apiKey });
    assert.deepEqual({ ...slow.body, profile: undefined }, { ...fast.body, profile: undefined });
    assert.deepEqual(fast.body.points, full.body.points);
    assert.deepEqual(fast.body.tier, full.body.tier);
    assert.equal((await svc.request('GET', '/api/v1/gamify/state/nobody?include=points', { key: tenant.apiKey })).status, 404);
    assert.equal((await svc.request('GET', '/api/v1/gamify/state/bulk-7?include=points', { key: other.apiKey })).status, 404);
    const bad = await svc.request('GET', '/api/v1/gamify/state/bulk-1?include=points,wallet', { key: tenant.apiKey });
    assert.equal(bad.status, 400);
    assert.match(bad.body.detail, /wallet/);
    assert.equal((await svc.request('GET', '/api/v1/gamify/state/bulk-1', { key: other.apiKey })).status, 404, 'another tenant sees no such participant');
    assert.equal((await svc.request('GET', '/api/v1/gamify/state/nobody', { key: tenant.apiKey })).status, 404);
  });

  await t.test('the deprecated participant read answers the full state with Deprecation and Sunset headers', async () => {
    const response = await svc.request('GET', '/api/v1/gamify/participants/bulk-7', { key: tenant.apiKey });
    assert.equal(response.status, 200);
    assert.equal(response.body.points.available, 150);
    assert.match(response.headers.get('deprecation') ?? '', /^@\d+$/);
    assert.ok(Date.parse(response.headers.get('sunset') ?? '') > Date.parse('2027-01-01'));
    assert.match(response.headers.get('link') ?? '', /\/api\/v1\/gamify\/state\/.*rel="successor-version"/);
  });

  await assertPointsInvariants(svc);
});

test('points: bulk grant failures are counted and listed per participant', async (t) => {
  // No job runner: the test runs the job body itself, so it controls what happens between acceptance and run.
  const svc = await startTestService(t, { config: CONFIG });
  const tenant = await svc.createTenant();
  const near = Number.MAX_SAFE_INTEGER - 5;
  // A participant close to the balance limit, with a consistent lot and ledger entry.
  await seedParticipantWithPoints(svc, tenant.tenantId, 'whale', near);
  for (const id of ['gone', 'kept']) {
    const funded = await svc.request('POST', '/api/v1/gamify/points/grant', { key: tenant.apiKey, body: { participant_id: id, amount: 3, reason: 'r', idempotency_key: `f-${id}` } });
    assert.equal(funded.status, 200, funded.text);
  }
  const grants = [
    { participant_id: 'whale', amount: 6 },
    { participant_id: 'gone', amount: 10 },
    { participant_id: 'kept', amount: 10 },
    ...Array.from({ length: 37 }, (_, i) => ({ participant_id: `new-${i}`, amount: 10 })),
  ];
  const started = await svc.request('POST', '/api/v1/admin/points/bulk-grant', { key: tenant.apiKey, body: { idempotency_key: 'fail-1', reason: 'bonus', grants } });
  assert.equal(started.status, 202, started.text);
  assert.deepEqual(started.body.failure_counts, { balance_limit: 0, participant_erased: 0 });
  assert.deepEqual(started.body.failures, []);
  const jobId = started.body.job_id;

  // Erased after the job was accepted, before its grant.
  const erased = await svc.request('DELETE', '/api/v1/gamify/admin/participants/gone', { key: tenant.apiKey });
  assert.equal(erased.status, 200, erased.text);

  await runBulkGrant(svc.service.db, tenant.tenantId, jobId);
  const status = await svc.request('GET', `/api/v1/admin/points/bulk-grant/${jobId}`, { key: tenant.apiKey });
  assert.equal(status.status, 200, status.text);
  assert.equal(status.body.status, 'completed');
  assert.equal(status.body.total, 40);
  assert.equal(status.body.done, 38);
  assert.equal(status.body.failed, 2);
  assert.equal(status.body.pending, 0);
  assert.deepEqual(status.body.failure_counts, { balance_limit: 1, participant_erased: 1 });
  assert.deepEqual(status.body.failures, [{ participant_id: 'whale', amount: 6, reason: 'balance_limit' }]);

  const rows = await svc.sql('SELECT participant_id, available, lifetime FROM points_balances WHERE tenant_id = $1 AND participant_id = ANY($2) ORDER BY participant_id', [
    tenant.tenantId,
    ['gone', 'kept', 'whale'],
  ]);
  assert.deepEqual(rows, [
    { participant_id: 'kept', available: 13, lifetime: 13 },
    { participant_id: 'whale', available: near, lifetime: near },
  ], 'the erased participant was not re-created; the whale was not granted');
  const [{ n: gone }] = await svc.sql("SELECT count(*)::int AS n FROM participants WHERE tenant_id = $1 AND participant_id = 'gone'", [tenant.tenantId]);
  assert.equal(gone, 0);
  const events = await svc.sql("SELECT participant_id, data FROM outbox_events WHERE tenant_id = $1 AND event = 'points.awarded.v1' AND data->>'source_id' = $2", [tenant.tenantId, jobId]);
  assert.equal(events.length, 38);
  const kept = events.find((e) => e.participant_id === 'kept')!;
  const [entry] = await svc.sql("SELECT id FROM points_ledger WHERE tenant_id = $1 AND participant_id = 'kept' AND source_kind = 'bulk'", [tenant.tenantId]);
  const [lot] = await svc.sql('SELECT expires_at FROM points_lots WHERE tenant_id = $1 AND ledger_entry_id = $2', [tenant.tenantId, entry.id]);
  assert.deepEqual(kept.data, {
    participant_id: 'kept',
    amount: 10,
    available: 13,
    lifetime: 13,
    reason: 'bonus',
    ledger_entry_id: entry.id,
    source_kind: 'bulk',
    source_id: jobId,
    multiplier: null,
    type: 'bonus',
    activity_id: null,
    expires_at: lot.expires_at.toISOString(),
  });

  // A retried job changes nothing: no second grant, no second failure.
  await svc.sql("UPDATE points_bulk_grants SET status = 'running' WHERE id = $1", [jobId]);
  await runBulkGrant(svc.service.db, tenant.tenantId, jobId);
  const again = await svc.request('GET', `/api/v1/admin/points/bulk-grant/${jobId}`, { key: tenant.apiKey });
  assert.deepEqual([again.body.done, again.body.failed, again.body.failure_counts], [38, 2, { balance_limit: 1, participant_erased: 1 }]);
  const [{ n: entries }] = await svc.sql('SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1 AND source_id = $2', [tenant.tenantId, jobId]);
  assert.equal(entries, 38);
  await assertPointsInvariants(svc, tenant.tenantId);
});

test('points: a bulk grant in parallel batches grants every participant once, beside concurrent direct grants', async (t) => {
  const svc = await startTestService(t, { config: CONFIG });
  const tenant = await svc.createTenant();
  const grants = Array.from({ length: 12_000 }, (_, i) => ({ participant_id: `m-${i}`, amount: 1 + (i % 5) }));
  const started = await svc.request('POST', '/api/v1/admin/points/bulk-grant', { key: tenant.apiKey, body: { idempotency_key: 'par-1', reason: 'many', grants } });
  assert.equal(started.status, 202, started.text);
  // Direct grants to some of the same participants while the batches run: both land, in either order.
  const direct = Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      svc.request('POST', '/api/v1/gamify/points/grant', { key: tenant.apiKey, body: { participant_id: `m-${i * 300}`, amount: 100, reason: 'side', idempotency_key: `side-${i}` } }),
    ),
  );
  await Promise.all([runBulkGrant(svc.service.db, tenant.tenantId, started.body.job_id), direct]);
  assert.ok((await direct).every((r) => r.status === 200));
  const status = await svc.request('GET', `/api/v1/admin/points/bulk-grant/${started.body.job_id}`, { key: tenant.apiKey });
  assert.deepEqual([status.body.status, status.body.done, status.body.failed, status.body.pending], ['completed', 12_000, 0, 0]);
  const [sums] = await svc.sql("SELECT count(*)::int AS n, sum(delta)::int AS total FROM points_ledger WHERE tenant_id = $1 AND source_kind = 'bulk'", [tenant.tenantId]);
  assert.deepEqual(sums, { n: 12_000, total: grants.reduce((sum, g) => sum + g.amount, 0) });
  const [{ n: pending }] = await svc.sql('SELECT count(*)::int AS n FROM outbox_pending WHERE tenant_id = $1', [tenant.tenantId]);
  assert.equal(pending, 12_000 + 40, 'every event has its pending marker');
  await assertPointsInvariants(svc, tenant.tenantId);
});
