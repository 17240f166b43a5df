import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService, type TestTenant } from '../../../test/helper.js';
import { key, sendSync } from '../ingestion/testing.js';
import { assertPointsInvariants } from '../points/testing.js';

async function balance(svc: TestService, tenant: TestTenant, participantId: string): Promise<{ available: number; lifetime: number }> {
  const rows = await svc.sql('SELECT available, lifetime FROM points_balances WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, participantId]);
  return rows[0] ?? { available: 0, lifetime: 0 };
}

async function createRule(svc: TestService, tenant: TestTenant, rule: Record<string, unknown>) {
  const response = await svc.request('POST', '/api/v1/admin/rules', { key: tenant.apiKey, body: rule });
  assert.equal(response.status, 201, response.text);
  return response.body as { id: string; budget_spent: number };
}

test('earn rules: administration, conditions, effects, caps, budget, simulation', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  await svc.request('POST', '/api/v1/admin/badges', { key: tenant.apiKey, body: { code: 'big_spender', name: 'Big spender' } });

  await t.test('a rule is created, read, listed, changed and deleted; other tenants see 404', async () => {
    const rule = await createRule(svc, tenant, { name: 'crud', event_name: 'crud_evt', effects: [{ type: 'award_points', points: 5 }] });
    assert.match(rule.id, /^rul_[0-9a-f]{32}$/);
    const read = await svc.request('GET', `/api/v1/admin/rules/${rule.id}`, { key: tenant.apiKey });
    assert.equal(read.status, 200);
    assert.equal(read.body.trigger, 'event');
    assert.equal(read.body.status, 'active');
    assert.deepEqual(read.body.caps, {});
    const patched = await svc.request('PATCH', `/api/v1/admin/rules/${rule.id}`, { key: tenant.apiKey, body: { priority: 7, status: 'paused' } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.priority, 7);
    assert.equal(patched.body.status, 'paused');
    const list = await svc.request('GET', '/api/v1/admin/rules?event_name=crud_evt', { key: tenant.apiKey });
    assert.deepEqual(list.body.rules.map((r: { id: string }) => r.id), [rule.id]);
    assert.equal((await svc.request('GET', `/api/v1/admin/rules/${rule.id}`, { key: other.apiKey })).status, 404);
    assert.equal((await svc.request('PATCH', `/api/v1/admin/rules/${rule.id}`, { key: other.apiKey, body: { priority: 1 } })).status, 404);
    assert.equal((await svc.request('DELETE', `/api/v1/admin/rules/${rule.id}`, { key: other.apiKey })).status, 404);
    assert.equal((await svc.request('DELETE', `/api/v1/admin/rules/${rule.id}`, { key: tenant.apiKey })).status, 204);
    assert.equal((await svc.request('GET', `/api/v1/admin/rules/${rule.id}`, { key: tenant.apiKey })).status, 404);
  });

  await t.test('rules need an admin credential', async () => {
    const jwt = await svc.login(tenant);
    const ingestOnly = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'ingest', scopes: ['ingest'] } });
    const refused = await svc.request('POST', '/api/v1/admin/rules', { key: ingestOnly.body.key, body: { name: 'x', event_name: 'x', effects: [{ type: 'award_points', points: 1 }] } });
    assert.equal(refused.status, 403);
    assert.equal((await svc.request('GET', '/api/v1/admin/rules')).status, 401);
  });

  await t.test('malformed rules get 400 and a rule naming a missing badge or streak 422, with a detail', async () => {
    const base = { name: 'bad', event_name: 'bad_evt', effects: [{ type: 'award_points', points: 1 }] };
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ ...base, colour: 'red' }, 400, /colour/],
      [{ ...base, effects: [] }, 400, /effects/],
      [{ ...base, effects: [{ type: 'award_points' }] }, 400, /exactly one of "points"/],
      [{ ...base, effects: [{ type: 'award_points', points: 1, rate: { property: 'properties.amount', points_per_unit: 1 } }] }, 400, /exactly one/],
      [{ ...base, effects: [{ type: 'award_points', points: 1, badge_code: 'big_spender' }] }, 400, /badge_code/],
      [{ ...base, effects: [{ type: 'award_points', points: -3 }] }, 400, /points/],
      [{ ...base, effects: [{ type: 'explode' }] }, 400, /type/],
      [{ ...base, event_name: undefined }, 400, /event_name/],
      [{ ...base, conditions: { all: [{ fact: 'properties.amount', operator: 'gt', value: 'ten' }] } }, 400, /needs a number/],
      [{ ...base, conditions: { all: [{ fact: 'properties.amount', operator: 'exists', value: 1 }] } }, 400, /takes no value/],
      [{ ...base, conditions: { all: [{ fact: 'properties.amount', operator: 'in', value: [] }] } }, 400, /list/],
      [{ ...base, conditions: { all: [{ fact: 'process.env', operator: 'exists' }] } }, 400, /fact/],
      [{ ...base, conditions: { all: [{ fact: 'properties.a', operator: 'matches', value: '.*' }] } }, 400, /operator/],
      [{ ...base, starts_at: '2026-02-01T00:00:00Z', ends_at: '2026-01-01T00:00:00Z' }, 400, /before/],
      [{ ...base, trigger: 'recurring', event_name: undefined }, 400, /schedule/],
      [{ ...base, trigger: 'birthday' }, 400, /event_name/],
      [{ ...base, caps: { per_day: {} } }, 400, /per_day/],
      [{ ...base, effects: [{ type: 'award_badge', badge_code: 'no_such_badge' }] }, 422, /no_such_badge/],
      [{ ...base, effects: [{ type: 'continue_streak', streak_code: 'no_such_streak' }] }, 422, /no_such_streak/],
    ];
    for (const [body, status, detail] of cases) {
      const response = await svc.request('POST', '/api/v1/admin/rules', { key: tenant.apiKey, body });
      assert.equal(response.status, status, `${JSON.stringify(body)} -> ${response.text}`);
      assert.match(response.body.detail, detail);
    }
    const count = await svc.sql('SELECT count(*)::int AS n FROM earn_rules WHERE tenant_id = $1 AND name = $2', [tenant.tenantId, 'bad']);
    assert.equal(count[0].n, 0);
  });

  await t.test('fixed and rate-based points, conditions on properties, a badge, and the outgoing events', async () => {
    await createRule(svc, tenant, {
      name: 'purchase points',
      event_name: 'purchase',
      conditions: { all: [{ fact: 'properties.currency', operator: 'in', value: ['EUR', 'USD'] }, { fact: 'properties.amount', operator: 'gt', value: 0 }] },
      effects: [{ type: 'award_points', rate: { property: 'properties.amount', points_per_unit: 1, rounding: 'floor' } }],
    });
    await createRule(svc, tenant, {
      name: 'big basket',
      event_name: 'purchase',
      conditions: { all: [{ fact: 'properties.amount', operator: 'gte', value: 100 }] },
      effects: [{ type: 'award_points', points: 50, reason: 'big basket bonus' }, { type: 'award_badge', badge_code: 'big_spender' }],
    });
    const small = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'buyer', properties: { amount: 42.9, currency: 'EUR' } });
    assert.equal(small.status, 200, small.text);
    assert.equal(small.body.points_awarded, 42);
    const big = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'buyer', properties: { amount: 120, currency: 'USD' } });
    assert.equal(big.body.points_awarded, 170);
    assert.deepEqual(big.body.rules_applied.map((r: { rule_name: string; points: number }) => [r.rule_name, r.points]), [['purchase points', 120], ['big basket', 50]]);
    const wrongCurrency = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'buyer', properties: { amount: 10, currency: 'GBP' } });
    assert.equal(wrongCurrency.body.points_awarded, 0);
    assert.deepEqual(await balance(svc, tenant, 'buyer'), { available: 212, lifetime: 212 });
    const awarded = await svc.sql(`SELECT data FROM outbox_events WHERE tenant_id = $1 AND event = 'points.awarded.v1' AND participant_id = 'buyer' ORDER BY seq`, [tenant.tenantId]);
    assert.deepEqual(awarded.map((r) => r.data.amount), [42, 120, 50]);
    assert.equal(awarded[2].data.reason, 'big basket bonus');
    assert.equal(awarded[0].data.source_kind, 'rule');
    const badges = await svc.sql(`SELECT data FROM outbox_events WHERE tenant_id = $1 AND event = 'badge.earned.v1' AND participant_id = 'buyer'`, [tenant.tenantId]);
    assert.equal(badges.length, 1);
    assert.equal(badges[0].data.badge_code, 'big_spender');
    assert.equal(badges[0].data.badge_name, 'Big spender');
    // A second big basket awards the points again but not the badge.
    await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'buyer', properties: { amount: 100, currency: 'EUR' } });
    const badgesAfter = await svc.sql(`SELECT 1 FROM outbox_events WHERE tenant_id = $1 AND event = 'badge.earned.v1' AND participant_id = 'buyer'`, [tenant.tenantId]);
    assert.equal(badgesAfter.length, 1);
    await assertPointsInvariants(svc, tenant.tenantId);
  });

  await t.test('participant attributes in conditions: badges held and lifetime points', async () => {
    await createRule(svc, tenant, {
      name: 'vip visit',
      event_name: 'visit',
      conditions: { all: [{ fact: 'participant.badges', operator: 'contains', value: 'big_spender' }, { fact: 'participant.lifetime_points', operator: 'gte', value: 200 }] },
      effects: [{ type: 'award_points', points: 3 }],
    });
    assert.equal((await sendSync(svc, tenant, { event_name: 'visit', participant_id: 'buyer' })).body.points_awarded, 3);
    assert.equal((await sendSync(svc, tenant, { event_name: 'visit', participant_id: 'stranger' })).body.points_awarded, 0);
  });

  await t.test('priority orders rules and stop_processing skips those below', async () => {
    await createRule(svc, tenant, { name: 'low', event_name: 'prio', priority: 1, effects: [{ type: 'award_points', points: 1 }] });
    await createRule(svc, tenant, { name: 'high stop', event_name: 'prio', priority: 10, stop_processing: true, conditions: { all: [{ fact: 'properties.vip', operator: 'equals', value: true }] }, effects: [{ type: 'award_points', points: 100 }] });
    await createRule(svc, tenant, { name: 'mid', event_name: 'prio', priority: 5, effects: [{ type: 'award_points', points: 10 }] });
    const vip = await sendSync(svc, tenant, { event_name: 'prio', participant_id: 'prio-p', properties: { vip: true } });
    assert.deepEqual(vip.body.rules_applied.map((r: { rule_name: string }) => r.rule_name), ['high stop']);
    const normal = await sendSync(svc, tenant, { event_name: 'prio', participant_id: 'prio-p', properties: { vip: false } });
    assert.deepEqual(normal.body.rules_applied.map((r: { rule_name: string }) => r.rule_name), ['mid', 'low']);
  });

  await t.test('the active window uses the event timestamp; paused rules do nothing', async () => {
    const rule = await createRule(svc, tenant, { name: 'window', event_name: 'win', starts_at: '2026-03-01T00:00:00Z', ends_at: '2026-03-02T00:00:00Z', effects: [{ type: 'award_points', points: 4 }] });
    const inside = await sendSync(svc, tenant, { event_name: 'win', participant_id: 'w', timestamp: '2026-03-01T12:00:00Z' });
    const before = await sendSync(svc, tenant, { event_name: 'win', participant_id: 'w', timestamp: '2026-02-28T23:59:59Z' });
    const atEnd = await sendSync(svc, tenant, { event_name: 'win', participant_id: 'w', timestamp: '2026-03-02T00:00:00Z' });
    assert.deepEqual([inside.body.points_awarded, before.body.points_awarded, atEnd.body.points_awarded], [4, 0, 0]);
    await svc.request('PATCH', `/api/v1/admin/rules/${rule.id}`, { key: tenant.apiKey, body: { status: 'paused' } });
    assert.equal((await sendSync(svc, tenant, { event_name: 'win', participant_id: 'w', timestamp: '2026-03-01T13:00:00Z' })).body.points_awarded, 0);
  });

  await t.test('caps per day (times), per week (points) and lifetime, in the tenant time zone', async () => {
    await svc.sql(`UPDATE tenants SET timezone = 'America/New_York' WHERE id = $1`, [tenant.tenantId]);
    await createRule(svc, tenant, { name: 'daily check-in', event_name: 'checkin', caps: { per_day: { times: 2 }, per_week: { points: 25 }, lifetime: { times: 5 } }, effects: [{ type: 'award_points', points: 10 }] });
    const at = (iso: string) => sendSync(svc, tenant, { event_name: 'checkin', participant_id: 'cap-p', timestamp: iso }).then((r) => r.body.points_awarded as number);
    // 2026-03-03 03:00Z is still 2 March in New York: the first three fall on one local day.
    const day1 = [await at('2026-03-02T15:00:00Z'), await at('2026-03-02T20:00:00Z'), await at('2026-03-03T03:00:00Z')];
    assert.deepEqual(day1, [10, 10, 0]);
    // The next local day: the weekly points cap (25) leaves 5.
    assert.equal(await at('2026-03-03T15:00:00Z'), 5);
    assert.equal(await at('2026-03-03T16:00:00Z'), 0);
    // A new ISO week (Monday 9 March) resets the weekly points; this is the fifth application (a capped one at 0 points counts too).
    assert.equal(await at('2026-03-09T15:00:00Z'), 10);
    // The lifetime cap of 5 applications is reached.
    assert.equal(await at('2026-03-10T15:00:00Z'), 0);
    const usage = await svc.sql(`SELECT period, period_start::text AS start, times, points FROM earn_rule_usage WHERE tenant_id = $1 AND participant_id = 'cap-p' ORDER BY period, period_start`, [tenant.tenantId]);
    assert.deepEqual(usage.find((u) => u.period === 'lifetime'), { period: 'lifetime', start: '1970-01-01', times: 5, points: 35 });
    assert.deepEqual(usage.filter((u) => u.period === 'day').map((u) => [u.start, u.times]), [['2026-03-02', 2], ['2026-03-03', 2], ['2026-03-09', 1], ['2026-03-10', 0]]);
    assert.deepEqual((await balance(svc, tenant, 'cap-p')).lifetime, 35);
    await svc.sql(`UPDATE tenants SET timezone = 'UTC' WHERE id = $1`, [tenant.tenantId]);
  });

  await t.test('a rule budget is never overspent under concurrency; the last award is cut to what is left', async () => {
    const rule = await createRule(svc, tenant, { name: 'budgeted', event_name: 'budget_evt', budget_points: 95, effects: [{ type: 'award_points', points: 10 }] });
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => sendSync(svc, tenant, { event_name: 'budget_evt', participant_id: `bud-${i % 10}` })),
    );
    assert.ok(responses.every((r) => r.status === 200), responses.map((r) => r.status).join());
    const total = responses.reduce((sum, r) => sum + r.body.points_awarded, 0);
    assert.equal(total, 95);
    assert.deepEqual(responses.map((r) => r.body.points_awarded).filter((p) => p > 0).sort((a, b) => a - b)[0], 5);
    const [stored] = await svc.sql('SELECT budget_spent FROM earn_rules WHERE tenant_id = $1 AND id = $2', [tenant.tenantId, rule.id]);
    assert.equal(stored.budget_spent, 95);
    const ledger = await svc.sql(`SELECT sum((data->>'amount')::int)::int AS total FROM outbox_events WHERE tenant_id = $1 AND event = 'points.awarded.v1' AND data->>'source_id' = $2`, [tenant.tenantId, rule.id]);
    assert.equal(ledger[0].total, 95);
    const read = await svc.request('GET', `/api/v1/admin/rules/${rule.id}`, { key: tenant.apiKey });
    assert.equal(read.body.budget_remaining, 0);
    const lower = await svc.request('PATCH', `/api/v1/admin/rules/${rule.id}`, { key: tenant.apiKey, body: { budget_points: 50 } });
    assert.equal(lower.status, 422);
    await assertPointsInvariants(svc, tenant.tenantId);
  });

  await t.test('an active multiplier raises awards from matching events and is reported', async () => {
    await createRule(svc, tenant, { name: 'double', event_name: 'mult_evt', effects: [{ type: 'award_points', points: 7 }] });
    await svc.sql(
      `INSERT INTO points_multipliers (tenant_id, id, multiplier, starts_at, ends_at, event_type, attributes, created_at)
       VALUES ($1, 'mul_test', 2, '2026-01-01T00:00:00Z', '2026-12-31T00:00:00Z', 'mult_evt', '{"channel":"app"}', now())`,
      [tenant.tenantId],
    );
    const raised = await sendSync(svc, tenant, { event_name: 'mult_evt', participant_id: 'm', timestamp: '2026-06-01T00:00:00Z', properties: { channel: 'app' } });
    const plain = await sendSync(svc, tenant, { event_name: 'mult_evt', participant_id: 'm', timestamp: '2026-06-01T00:00:00Z', properties: { channel: 'web' } });
    assert.deepEqual([raised.body.points_awarded, plain.body.points_awarded], [14, 7]);
    const events = await svc.sql(`SELECT data FROM outbox_events WHERE tenant_id = $1 AND event = 'points.awarded.v1' AND participant_id = 'm' ORDER BY seq`, [tenant.tenantId]);
    assert.deepEqual(events.map((e) => e.data.multiplier), [2, null]);
  });

  await t.test('simulation replays stored events without side effects', async () => {
    for (let i = 0; i < 6; i++) {
      await svc.request('POST', '/api/v1/ingest/events', {
        key: tenant.apiKey,
        body: { event_name: 'sim_evt', participant_id: `sim-${i % 3}`, properties: { amount: 10 * (i + 1) }, timestamp: `2026-04-0${i + 1}T10:00:00Z`, idempotency_key: key('sim') },
      });
    }
    const countBefore = await svc.sql('SELECT (SELECT count(*) FROM points_ledger WHERE tenant_id = $1)::int AS ledger, (SELECT count(*) FROM earn_rule_usage WHERE tenant_id = $1)::int AS usage, (SELECT count(*) FROM outbox_events WHERE tenant_id = $1)::int AS outbox', [tenant.tenantId]);
    const response = await svc.request('POST', '/api/v1/admin/rules/simulate', {
      key: tenant.apiKey,
      body: {
        rule: {
          name: 'draft',
          event_name: 'sim_evt',
          conditions: { all: [{ fact: 'properties.amount', operator: 'gte', value: 20 }] },
          caps: { lifetime: { times: 1 } },
          effects: [{ type: 'award_points', rate: { property: 'properties.amount', points_per_unit: 0.5 } }, { type: 'award_badge', badge_code: 'big_spender' }],
        },
        from: '2026-04-01T00:00:00Z',
        to: '2026-04-06T00:00:00Z',
      },
    });
    assert.equal(response.status, 200, response.text);
    // Events 1..5 are in range; event 1 (amount 10) fails the condition; sim-1 (20), sim-2 (30), sim-0 (40) apply; sim-1 (50) is capped.
    assert.deepEqual(
      { scanned: response.body.events_scanned, matched: response.body.events_matched, participants: response.body.participants, points: response.body.points, capped: response.body.capped_events, badges: response.body.badges_awarded, truncated: response.body.truncated },
      { scanned: 5, matched: 3, participants: 3, points: 45, capped: 1, badges: 3, truncated: false },
    );
    const countAfter = await svc.sql('SELECT (SELECT count(*) FROM points_ledger WHERE tenant_id = $1)::int AS ledger, (SELECT count(*) FROM earn_rule_usage WHERE tenant_id = $1)::int AS usage, (SELECT count(*) FROM outbox_events WHERE tenant_id = $1)::int AS outbox', [tenant.tenantId]);
    assert.deepEqual(countAfter, countBefore);
    const bad = await svc.request('POST', '/api/v1/admin/rules/simulate', { key: tenant.apiKey, body: { from: '2026-04-01T00:00:00Z', to: '2026-04-06T00:00:00Z' } });
    assert.equal(bad.status, 400);
    const missingBadge = await svc.request('POST', '/api/v1/admin/rules/simulate', {
      key: tenant.apiKey,
      body: { rule: { name: 'd', event_name: 'sim_evt', effects: [{ type: 'award_badge', badge_code: 'ghost' }] }, from: '2026-04-01T00:00:00Z', to: '2026-04-06T00:00:00Z' },
    });
    assert.equal(missingBadge.status, 422);
  });

  await t.test('simulation names the event that would have spent the last of the budget, and null when the budget lasts', async () => {
    // The sim_evt events above: amounts 10, 20, 30, 40, 50 on April 1 to 5; 1 point per 1 unit.
    const simulate = (budget_points: number | undefined) =>
      svc.request('POST', '/api/v1/admin/rules/simulate', {
        key: tenant.apiKey,
        body: {
          rule: { name: 'budgeted', event_name: 'sim_evt', budget_points, effects: [{ type: 'award_points', rate: { property: 'properties.amount', points_per_unit: 1 } }] },
          from: '2026-04-01T00:00:00Z',
          to: '2026-04-06T00:00:00Z',
        },
      });
    const exhausted = await simulate(55);
    assert.equal(exhausted.status, 200, exhausted.text);
    // 10 + 20 = 30, then 30 of the event of April 3 is cut to 25: the budget is spent at that event; the two later ones are capped.
    assert.deepEqual(
      { points: exhausted.body.points, capped: exhausted.body.capped_events, at: exhausted.body.budget_exhausted_at },
      { points: 55, capped: 3, at: '2026-04-03T10:00:00.000Z' },
    );
    const lasting = await simulate(1_000);
    assert.equal(lasting.body.points, 150);
    assert.equal(lasting.body.budget_exhausted_at, null);
    const unbudgeted = await simulate(undefined);
    assert.equal(unbudgeted.body.budget_exhausted_at, null);
  });
});

/**
 * A backtest takes every decision with the live engine's code (applyRuleInTx
 * with state in memory), so it predicts exactly what the rule will award when
 * the same events come live: caps by the tenant's local day and week, the
 * lifetime cap, the budget, the rate's rounding and the badges.
 */
test('earn rules: a backtest predicts exactly what the rule then awards live for the same events', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  await svc.sql(`UPDATE tenants SET timezone = 'America/New_York' WHERE id = $1`, [tenant.tenantId]);
  await svc.request('POST', '/api/v1/admin/badges', { key: tenant.apiKey, body: { code: 'regular', name: 'Regular' } });
  const rule = await createRule(svc, tenant, {
    name: 'backtested',
    event_name: 'bt_evt',
    conditions: { all: [{ fact: 'properties.amount', operator: 'gte', value: 5 }] },
    // The weekly cap binds in every week, so the weeks must be cut where the database cuts them
    // (Monday in New York); the budget is spent through but not used up.
    caps: { per_day: { times: 2, points: 25 }, per_week: { points: 20 }, lifetime: { points: 50 } },
    budget_points: 1_000,
    effects: [{ type: 'award_points', rate: { property: 'properties.amount', points_per_unit: 0.7, rounding: 'ceil' } }, { type: 'award_badge', badge_code: 'regular' }],
  });
  const setStatus = async (status: string) => assert.equal((await svc.request('PATCH', `/api/v1/admin/rules/${rule.id}`, { key: tenant.apiKey, body: { status } })).status, 200);
  // Around New York midnights (04:00Z in May): 02:00Z belongs to the day before there.
  const hours = ['2026-05-01T02:00:00Z', '2026-05-01T10:00:00Z', '2026-05-01T23:00:00Z', '2026-05-02T03:30:00Z', '2026-05-04T05:00:00Z', '2026-05-11T01:00:00Z', '2026-05-11T12:00:00Z'];
  const sendAll = async () => {
    let sent = 0;
    for (const [p, participant] of ['bt-a', 'bt-b', 'bt-c', 'bt-d'].entries()) {
      for (const [i, timestamp] of hours.entries()) {
        const response = await sendSync(svc, tenant, { event_name: 'bt_evt', participant_id: participant, timestamp, properties: { amount: 3 + ((p * 7 + i * 5) % 19) } });
        assert.equal(response.status, 200, response.text);
        sent += 1;
      }
    }
    return sent;
  };

  // The events are stored while the rule is paused; the backtest replays them.
  await setStatus('paused');
  const sent = await sendAll();
  const backtest = await svc.request('POST', '/api/v1/admin/rules/simulate', {
    key: tenant.apiKey,
    body: { rule_id: rule.id, from: '2026-04-30T00:00:00Z', to: '2026-05-12T00:00:00Z' },
  });
  assert.equal(backtest.status, 200, backtest.text);
  assert.equal(backtest.body.events_scanned, sent);

  // The same events again, now live.
  await setStatus('active');
  await sendAll();
  const [live] = await svc.sql(
    `SELECT coalesce(sum(delta), 0)::int AS points, count(DISTINCT participant_id)::int AS participants, count(*)::int AS awards
     FROM points_ledger WHERE tenant_id = $1 AND source_kind = 'rule' AND source_id = $2`,
    [tenant.tenantId, rule.id],
  );
  const [badges] = await svc.sql(`SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = $1 AND event = 'badge.earned.v1'`, [tenant.tenantId]);
  assert.deepEqual(
    { points: backtest.body.points, participants: backtest.body.participants, badges: backtest.body.badges_awarded },
    { points: live.points, participants: live.participants, badges: badges.n },
  );
  assert.ok(live.points > 0 && live.awards < sent, `the caps and the budget cut the awards (${live.points} points in ${live.awards} awards for ${sent} events)`);
});
