import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestService, type TestService } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { assertPointsInvariants } from './testing.js';

const CONFIG = { RATE_LIMIT_KEY_PER_MINUTE: '1000000' };

async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

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
    assert.deepEqual(Object.keys(some.body).sort(), ['participant_id', 'points', 'tier']);
    assert.equal(some.body.tier.points_to_next, 90);
    assert.equal(some.body.tier.current, null);
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
