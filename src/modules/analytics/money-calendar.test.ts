import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService, type TestService, type TestTenant } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { createLogger } from '../../platform/logger.js';
import pointsModule from '../points/index.js';

/**
 * Liability in money, the expiry forecast and breakage (docs/decisions.md,
 * "Liability in money") from known lots placed with the service clock, and
 * the campaign calendar's windows, states and overlaps. The tenant is in
 * Berlin (UTC+1 in March) and keeps its books in euros.
 */
const CONFIG = { TIME_SCALE: '0.0001', RATE_LIMIT_KEY_PER_MINUTE: '1000000' };

async function call(svc: TestService, tenant: TestTenant, method: string, path: string, body?: unknown, expected = [200, 201]) {
  const response = await svc.request(method, `/api/v1${path}`, { key: tenant.apiKey, body });
  assert.ok(expected.includes(response.status), `${method} ${path}: ${response.status} ${response.text}`);
  return response.body;
}

test('liability in money, expiry forecast, breakage and the campaign calendar', async (t) => {
  const svc = await startTestService(t, { config: CONFIG, jobs: true });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  await svc.sql(`UPDATE tenants SET timezone = 'Europe/Berlin', currency = 'EUR' WHERE id = $1`, [tenant.tenantId]);
  t.after(() => clock.reset());
  const settings = (body: unknown, expected = [200]) => svc.request('PATCH', '/api/v1/admin/points/settings', { key: tenant.apiKey, body }).then((r) => (assert.ok(expected.includes(r.status), r.text), r));
  const grant = (participantId: string, amount: number) => call(svc, tenant, 'POST', '/gamify/points/grant', { participant_id: participantId, amount, reason: 'test', idempotency_key: randomUUID() });

  await t.test('the point value: set, validated on its field, cleared with null', async () => {
    assert.equal((await call(svc, tenant, 'GET', '/admin/points/settings')).point_value, null);
    for (const [value, code] of [
      [0, 'exclusive_minimum'],
      [-1, 'exclusive_minimum'],
      [1001, 'maximum'],
      [0.0000001, 'multiple_of'],
      ['0.01', 'type'],
    ] as const) {
      const refused = await settings({ point_value: value }, [400]);
      assert.equal(refused.body.errors?.[0]?.path, '/point_value', JSON.stringify(refused.body));
      assert.equal(refused.body.errors[0].code, code, JSON.stringify(refused.body));
    }
    assert.equal((await settings({ point_value: 0.25 })).body.point_value, 0.25);
    const cleared = await settings({ point_value: null });
    assert.equal(cleared.body.point_value, null);
    // Setting another field leaves the point value as it is.
    await settings({ point_value: 0.01 });
    assert.equal((await settings({ currency_name: 'stars' })).body.point_value, 0.01);
    assert.equal((await call(svc, other, 'GET', '/admin/points/settings')).point_value, null, 'another tenant keeps its own');
    const audited = await svc.sql(`SELECT after FROM audit_log WHERE tenant_id = $1 AND route = '/api/v1/admin/points/settings' ORDER BY id`, [tenant.tenantId]);
    assert.ok(audited.some((row) => row.after?.point_value === 0.25), `the change is in the audit log with its value: ${JSON.stringify(audited)}`);
  });

  await t.test('outstanding points in money, the end of each day, the forecast by month and breakage', async () => {
    clock.freeze(new Date('2026-03-01T10:00:00Z'));
    await settings({ default_ttl_days: 10, expiry_policy: 'fifo' });
    await grant('alice', 1000); // expires 2026-03-11 10:00Z
    await settings({ default_ttl_days: 45 });
    await grant('bob', 400); // expires 2026-04-15
    await settings({ default_ttl_days: 400 });
    await grant('carol', 200); // expires 2027-04-05: after the twelve months from March 2026
    await settings({ expiry_policy: 'none' });
    await grant('dave', 50); // never expires
    await call(svc, tenant, 'POST', '/gamify/points/deduct', { participant_id: 'bob', amount: 100, reason: 'redeemed', idempotency_key: randomUUID() });
    clock.freeze(new Date('2026-03-12T00:00:00Z')); // 01:00 on 12 March in Berlin
    await pointsModule.tasks!['points:expire'](null, { db: svc.service.db, config: svc.config, log: createLogger('silent') });
    clock.freeze(new Date('2026-03-20T12:00:00Z'));

    const body = await call(svc, tenant, 'GET', '/admin/analytics/overview?from=2026-03-01&to=2026-03-20');
    assert.equal(body.currency, 'EUR');
    assert.equal(body.point_value, 0.01);
    assert.equal(body.liability.outstanding_points, 550);
    assert.equal(body.liability.outstanding_value, 5.5);
    assert.equal(body.liability.history.length, 20);
    assert.deepEqual(body.liability.history[0], { date: '2026-03-01', outstanding_points: 1550, outstanding_value: 15.5 });
    assert.deepEqual(body.liability.history[10], { date: '2026-03-11', outstanding_points: 1550, outstanding_value: 15.5 });
    assert.deepEqual(body.liability.history[11], { date: '2026-03-12', outstanding_points: 550, outstanding_value: 5.5 });
    assert.deepEqual(body.liability.history[19], { date: '2026-03-20', outstanding_points: 550, outstanding_value: 5.5 });
    assert.deepEqual(body.breakage, { points_issued: 1650, points_expired: 1000, rate: 0.6061, value: 10 });
    const months = body.expiry_forecast.months as Array<{ month: string; points: number; value: number }>;
    assert.equal(months.length, 12);
    assert.equal(months[0].month, '2026-03');
    assert.equal(months[11].month, '2027-02');
    assert.deepEqual(months[1], { month: '2026-04', points: 300, value: 3 });
    assert.equal(months.reduce((total, m) => total + m.points, 0), 300, 'only bob’s 300 fall in the twelve months');
    assert.equal(body.expiry_forecast.later_points, 200);
    assert.equal(body.expiry_forecast.later_value, 2);
    assert.equal(body.expiry_forecast.never_points, 50);

    // A range ending before now: the end of its last day is now less what changed since.
    const earlier = await call(svc, tenant, 'GET', '/admin/analytics/overview?from=2026-03-01&to=2026-03-05');
    assert.deepEqual(earlier.liability.history.at(-1), { date: '2026-03-05', outstanding_points: 1550, outstanding_value: 15.5 });
    assert.deepEqual(earlier.breakage, { points_issued: 1650, points_expired: 0, rate: 0, value: 0 });

    // Without a point value every money figure is null; the points stay.
    await settings({ point_value: null });
    const plain = await call(svc, tenant, 'GET', '/admin/analytics/overview?from=2026-03-01&to=2026-03-20');
    assert.equal(plain.liability.outstanding_value, null);
    assert.equal(plain.breakage.value, null);
    assert.equal(plain.expiry_forecast.months[1].value, null);
    assert.equal(plain.expiry_forecast.months[1].points, 300);
    // Another tenant sees none of it.
    const theirs = await call(svc, other, 'GET', '/admin/analytics/overview?from=2026-03-01&to=2026-03-20');
    assert.equal(theirs.liability.outstanding_points, 0);
    assert.equal(theirs.breakage.rate, null);
    await settings({ point_value: 0.01 });
  });

  await t.test('the calendar: windows, states, overlaps of one event, validated window, tenant isolation', async () => {
    clock.freeze(new Date('2026-03-20T12:00:00Z'));
    const ruleA = await call(svc, tenant, 'POST', '/admin/rules', { name: 'Spring orders', trigger: 'event', event_name: 'order_placed', effects: [{ type: 'award_points', points: 10 }], status: 'active', starts_at: '2026-03-10T00:00:00Z', ends_at: '2026-03-25T00:00:00Z' });
    const ruleB = await call(svc, tenant, 'POST', '/admin/rules', { name: 'Every order', trigger: 'event', event_name: 'order_placed', effects: [{ type: 'award_points', points: 5 }], status: 'active' });
    const paused = await call(svc, tenant, 'POST', '/admin/rules', { name: 'Sign-up bonus', trigger: 'event', event_name: 'order_placed', effects: [{ type: 'award_points', points: 5 }], status: 'paused' });
    const later = await call(svc, tenant, 'POST', '/admin/rules', { name: 'Summer orders', trigger: 'event', event_name: 'order_placed', effects: [{ type: 'award_points', points: 5 }], status: 'active', starts_at: '2026-06-01T00:00:00Z' });
    const multiplier = await call(svc, tenant, 'POST', '/admin/points/multipliers', { multiplier: 2, match: { event_type: 'order_placed', attributes: {} }, starts_at: '2026-03-15T00:00:00Z', ends_at: '2026-03-18T00:00:00Z' });
    const contest = await call(svc, tenant, 'POST', '/admin/contests', {
      id: 'march-rally',
      title: 'March rally',
      starts_at: '2026-03-22T09:00:00.000Z',
      ends_at: '2026-04-05T09:00:00.000Z',
      scoring: { event_type: 'order_placed', score_attribute: 'order_total', weight: 1 },
      prize_structure: [{ rank_from: 1, rank_to: 1, label: 'Winner', reward: { type: 'cash', value: 100, name: 'Store credit' } }],
      max_reward_liability: 100,
    });
    const engagementId = await svc.createEngagement(tenant);

    const read = await call(svc, tenant, 'GET', '/admin/calendar?from=2026-03-01&to=2026-03-31');
    assert.equal(read.from, '2026-03-01');
    assert.equal(read.timezone, 'Europe/Berlin');
    assert.equal(read.truncated, false);
    const byId = new Map((read.items as Array<Record<string, any>>).map((item) => [item.id, item]));
    assert.ok(!byId.has(later.id), 'a rule starting in June is not in March');
    assert.deepEqual(
      { state: byId.get(ruleA.id)!.state, starts_at: byId.get(ruleA.id)!.starts_at, ends_at: byId.get(ruleA.id)!.ends_at },
      { state: 'live', starts_at: '2026-03-10T00:00:00.000Z', ends_at: '2026-03-25T00:00:00.000Z' },
    );
    assert.deepEqual({ starts_at: byId.get(ruleB.id)!.starts_at, ends_at: byId.get(ruleB.id)!.ends_at }, { starts_at: null, ends_at: null }, 'open-ended both ways');
    assert.equal(byId.get(paused.id)!.state, 'paused');
    assert.deepEqual(byId.get(paused.id)!.overlaps, [], 'a paused rule earns nothing and overlaps nothing');
    assert.equal(byId.get(multiplier.id)!.state, 'ended');
    assert.equal(byId.get(multiplier.id)!.multiplier, 2);
    assert.equal(byId.get(contest.id)!.kind, 'contest');
    assert.equal(byId.get(contest.id)!.name, 'March rally');
    assert.deepEqual(byId.get(contest.id)!.overlaps, [], 'a contest scores, it does not change what an event earns');
    assert.equal(byId.get(engagementId)!.state, 'draft');
    const overlapIds = (id: string) => (byId.get(id)!.overlaps as Array<{ id: string }>).map((o) => o.id).sort();
    assert.deepEqual(overlapIds(ruleA.id), [multiplier.id, ruleB.id].sort());
    assert.deepEqual(overlapIds(ruleB.id), [multiplier.id, ruleA.id].sort());
    assert.deepEqual(
      byId.get(ruleA.id)!.overlaps.find((o: { id: string }) => o.id === ruleB.id),
      { kind: 'rule', id: ruleB.id, starts_at: '2026-03-10T00:00:00.000Z', ends_at: '2026-03-25T00:00:00.000Z' },
    );

    // The default window is the current month; a bad window is refused naming it.
    const current = await call(svc, tenant, 'GET', '/admin/calendar');
    assert.deepEqual([current.from, current.to], ['2026-03-01', '2026-03-31']);
    for (const query of ['from=2026-02-30', 'from=2026-04-01&to=2026-03-01', 'from=2025-01-01&to=2026-03-01', 'kind=rule']) {
      const refused = await svc.request('GET', `/api/v1/admin/calendar?${query}`, { key: tenant.apiKey });
      assert.equal(refused.status, 400, `${query}: ${refused.text}`);
    }
    const theirs = await call(svc, other, 'GET', '/admin/calendar?from=2026-03-01&to=2026-03-31');
    assert.deepEqual(theirs.items, [], 'another tenant sees none of these');
  });
});
