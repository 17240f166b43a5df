import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService, waitFor, type TestService, type TestTenant } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { createLogger } from '../../platform/logger.js';
import pointsModule from '../points/index.js';
import { startReceiver } from '../webhooks/testing.js';
import { RANGE_DAYS_MAX } from './schemas.js';

/**
 * The Overview figures end to end: points granted, deducted and expired,
 * events stored (one failing), a rule awarding points and webhook deliveries
 * that succeed or fail, each placed at a chosen instant with the service
 * clock, then read back through the route and checked day by day.
 *
 * Tenant A is in New York (EDT, UTC-4 in June): 2025-06-11T03:30Z is still
 * 10 June there, while 04:30Z is 11 June.
 */
const CONFIG = {
  ALLOW_LOOPBACK_WEBHOOKS: 'true',
  ALLOW_HTTP_WEBHOOKS: 'true',
  TIME_SCALE: '0.0001',
  RATE_LIMIT_KEY_PER_MINUTE: '1000000',
  // The clock stands still while seeding, so every ingestion falls in one rate-limit second.
  RATE_LIMIT_INGEST_BURST_PER_SECOND: '100000',
};
const OVERVIEW = '/api/v1/admin/analytics/overview';

const ZERO_DAY = {
  points_issued: 0,
  points_redeemed: 0,
  points_expired: 0,
  active_participants: 0,
  events_ingested: 0,
  events_rejected: 0,
  webhooks_succeeded: 0,
  webhooks_failed: 0,
};

function day(date: string, figures: Partial<typeof ZERO_DAY>) {
  return { date, ...ZERO_DAY, ...figures };
}

async function ok(svc: TestService, method: string, path: string, tenant: TestTenant, body?: unknown, expected = [200, 201, 202]) {
  const response = await svc.request(method, `/api/v1${path}`, { key: tenant.apiKey, body });
  assert.ok(expected.includes(response.status), `${method} ${path}: ${response.status} ${response.text}`);
  return response.body;
}

const grant = (svc: TestService, tenant: TestTenant, participantId: string, amount: number) =>
  ok(svc, 'POST', '/gamify/points/grant', tenant, { participant_id: participantId, amount, reason: 'test', idempotency_key: randomUUID() });

const sync = (svc: TestService, tenant: TestTenant, eventName: string, participantId: string, expected = [200]) =>
  ok(svc, 'POST', '/ingest/events/sync', tenant, { event_name: eventName, participant_id: participantId, idempotency_key: randomUUID() }, expected);

/** Waits until the tenant has `count` finished (SUCCEEDED or EXHAUSTED) deliveries, while the clock stands still. */
async function deliveriesFinished(svc: TestService, tenant: TestTenant, count: number) {
  await waitFor(`${count} finished deliveries`, async () => {
    const [row] = await svc.sql(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND status IN ('SUCCEEDED', 'EXHAUSTED')`, [tenant.tenantId]);
    return row.n === count;
  });
}

test('analytics overview', async (t) => {
  const svc = await startTestService(t, { config: CONFIG, jobs: true });
  const a = await svc.createTenant();
  const b = await svc.createTenant();
  await svc.sql(`UPDATE tenants SET timezone = 'America/New_York' WHERE id = $1`, [a.tenantId]);
  const succeeding = await startReceiver();
  const failing = await startReceiver((_request, res) => {
    res.statusCode = 500;
    res.end('no');
  });
  t.after(async () => {
    clock.reset();
    await succeeding.close();
    await failing.close();
  });
  const read = (tenant: TestTenant, query: string) => svc.request('GET', `${OVERVIEW}${query}`, { key: tenant.apiKey });

  await t.test('seeding: grants, a deduct, rule awards, a failing event, deliveries, an expiry', async () => {
    // Awards go to a receiver that answers 200, deducts to one that answers 500 with no retry.
    await ok(svc, 'POST', '/gamify/webhooks', a, { name: 'ok', url: succeeding.url, events: ['points.awarded.v1'] });
    await ok(svc, 'POST', '/gamify/webhooks', a, { name: 'broken', url: failing.url, events: ['points.deducted.v1'], retry_count: 0 });
    await ok(svc, 'POST', '/admin/rules', a, { name: 'order points', event_name: 'order', effects: [{ type: 'award_points', points: 10 }] });
    await ok(svc, 'POST', '/admin/rules', a, { name: 'big spender', event_name: 'purchase', effects: [{ type: 'award_points', points: 25 }] });
    await ok(svc, 'POST', '/admin/badges', a, { code: 'doomed', name: 'Doomed' });
    await ok(svc, 'POST', '/admin/rules', a, { name: 'doomed badge', event_name: 'doom', effects: [{ type: 'award_badge', badge_code: 'doomed' }] });
    // With its badge deleted the rule cannot run: events it matches fail.
    await ok(svc, 'DELETE', '/admin/badges/doomed', a, undefined, [200, 204]);

    // 10 June 10:00 in New York.
    clock.freeze(new Date('2025-06-10T14:00:00Z'));
    await ok(svc, 'PATCH', '/admin/points/settings', a, { default_ttl_days: 1 });
    await grant(svc, a, 'alice', 100); // expires 11 June 14:00Z
    await ok(svc, 'PATCH', '/admin/points/settings', a, { default_ttl_days: 365 });
    await grant(svc, a, 'bob', 50);
    await ok(svc, 'POST', '/gamify/points/deduct', a, { participant_id: 'bob', amount: 20, reason: 'coffee', idempotency_key: randomUUID() });
    await sync(svc, a, 'order', 'carol'); // rule "order points": 10
    await sync(svc, a, 'doom', 'dave', [422]); // stored, failed
    await grant(svc, b, 'bert', 5);
    await deliveriesFinished(svc, a, 4);

    // 10 June 23:30 in New York (11 June in UTC).
    clock.freeze(new Date('2025-06-11T03:30:00Z'));
    await grant(svc, a, 'erin', 7);
    await ok(svc, 'POST', '/ingest/events/sync', a, { event_name: 'visit', participant_id: 'frank', idempotency_key: randomUUID() });
    await deliveriesFinished(svc, a, 5);

    // 11 June 00:30 in New York.
    clock.freeze(new Date('2025-06-11T04:30:00Z'));
    await grant(svc, a, 'erin', 3);
    await sync(svc, a, 'purchase', 'gina'); // rule "big spender": 25
    await deliveriesFinished(svc, a, 7);

    // 11 June 11:00 in New York: alice's lot is past its expiry.
    clock.freeze(new Date('2025-06-11T15:00:00Z'));
    await pointsModule.tasks!['points:expire'](null, { db: svc.service.db, config: svc.config, log: createLogger('silent') });
    const [expiry] = await svc.sql(`SELECT delta FROM points_ledger WHERE tenant_id = $1 AND type = 'expiry'`, [a.tenantId]);
    assert.equal(expiry.delta, -100);
    clock.reset();
  });

  await t.test("every day of the range, cut in the tenant's time zone, with totals, liability and top rules", async () => {
    const response = await read(a, '?from=2025-06-09&to=2025-06-12');
    assert.equal(response.status, 200, response.text);
    const body = response.body;
    assert.equal(body.from, '2025-06-09');
    assert.equal(body.to, '2025-06-12');
    assert.equal(body.timezone, 'America/New_York');
    assert.deepEqual(body.days, [
      day('2025-06-09', {}),
      // alice 100 + bob 50 + carol 10 (rule) + erin 7 at 23:30; bob's deduct of 20; dave's event failed;
      // four awards delivered, the deduct's delivery exhausted.
      day('2025-06-10', {
        points_issued: 167,
        points_redeemed: 20,
        active_participants: 6,
        events_ingested: 3,
        events_rejected: 1,
        webhooks_succeeded: 4,
        webhooks_failed: 1,
      }),
      // erin 3 at 00:30 + gina 25 (rule); alice's 100 expired (the expiry does not make alice active).
      day('2025-06-11', { points_issued: 28, points_expired: 100, active_participants: 2, events_ingested: 1, webhooks_succeeded: 2 }),
      day('2025-06-12', {}),
    ]);
    assert.deepEqual(body.totals, {
      points_issued: 195,
      points_redeemed: 20,
      points_expired: 100,
      // alice, bob, carol, dave, erin (both days, counted once), frank, gina.
      active_participants: 7,
      events_ingested: 4,
      events_rejected: 1,
      webhooks_succeeded: 6,
      webhooks_failed: 1,
    });
    // bob 30, carol 10, erin 10, gina 25; alice is at 0.
    assert.equal(body.liability.outstanding_points, 75);
    assert.equal(body.liability.participants_with_balance, 4);
    assert.ok(Math.abs(Date.parse(body.liability.as_of) - Date.now()) < 60_000);
    const rules = await svc.sql(`SELECT id, name FROM earn_rules WHERE tenant_id = $1`, [a.tenantId]);
    const ruleId = (name: string) => rules.find((r) => r.name === name)!.id;
    assert.deepEqual(body.top_rules, [
      { rule_id: ruleId('big spender'), name: 'big spender', points: 25, events: 1 },
      { rule_id: ruleId('order points'), name: 'order points', points: 10, events: 1 },
    ]);
  });

  await t.test('the day boundary follows tenants.timezone: in UTC the 23:30 activity moves to the next day', async () => {
    await svc.sql(`UPDATE tenants SET timezone = 'UTC' WHERE id = $1`, [a.tenantId]);
    try {
      const response = await read(a, '?from=2025-06-10&to=2025-06-11');
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.timezone, 'UTC');
      assert.deepEqual(response.body.days, [
        day('2025-06-10', { points_issued: 160, points_redeemed: 20, active_participants: 4, events_ingested: 2, events_rejected: 1, webhooks_succeeded: 3, webhooks_failed: 1 }),
        day('2025-06-11', { points_issued: 35, points_expired: 100, active_participants: 3, events_ingested: 2, webhooks_succeeded: 3 }),
      ]);
    } finally {
      await svc.sql(`UPDATE tenants SET timezone = 'America/New_York' WHERE id = $1`, [a.tenantId]);
    }
  });

  await t.test("tenant B sees only its own figures, none of A's", async () => {
    const response = await read(b, '?from=2025-06-09&to=2025-06-12');
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.timezone, 'UTC');
    assert.deepEqual(response.body.days, [
      day('2025-06-09', {}),
      day('2025-06-10', { points_issued: 5, active_participants: 1 }),
      day('2025-06-11', {}),
      day('2025-06-12', {}),
    ]);
    assert.deepEqual(response.body.liability.outstanding_points, 5);
    assert.deepEqual(response.body.liability.participants_with_balance, 1);
    assert.deepEqual(response.body.top_rules, []);
  });

  await t.test('webhook counts outlive the delivery log', async () => {
    // What the retention job does WEBHOOK_LOG_RETENTION_DAYS after a delivery finished.
    await svc.sql(`DELETE FROM webhook_deliveries WHERE tenant_id = $1`, [a.tenantId]);
    const response = await read(a, '?from=2025-06-10&to=2025-06-11');
    assert.deepEqual(
      response.body.days.map((d: typeof ZERO_DAY) => [d.webhooks_succeeded, d.webhooks_failed]),
      [
        [4, 1],
        [2, 0],
      ],
    );
  });

  await t.test('without from and to: the last 30 days ending today in the tenant time zone', async () => {
    const response = await read(a, '');
    assert.equal(response.status, 200, response.text);
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
    assert.equal(response.body.to, today);
    assert.equal(response.body.days.length, 30);
    assert.equal(response.body.days[0].date, response.body.from);
    assert.equal(response.body.days[29].date, today);
    const onlyTo = await read(a, '?to=2025-06-11');
    assert.equal(onlyTo.body.from, '2025-05-13');
    assert.equal(onlyTo.body.totals.points_issued, 195);
  });

  await t.test('bad dates, a backward range and a range over 366 days are 400 with the reason', async () => {
    const cases: Array<[string, RegExp]> = [
      ['?from=2025-02-30&to=2025-03-01', /from/],
      ['?from=yesterday', /from/],
      ['?to=2025-6-1', /to/],
      ['?from=2025-06-12&to=2025-06-10', /from \(2025-06-12\) is after to \(2025-06-10\)/],
      ['?from=2024-01-01&to=2025-01-01', /covers 367 days; at most 366/],
      ['?from=2025-06-10&to=2025-06-11&participant_id=x', /not allowed/],
    ];
    for (const [query, detail] of cases) {
      const response = await read(a, query);
      assert.equal(response.status, 400, `${query}: ${response.text}`);
      assert.match(response.body.detail, detail, query);
      assert.match(response.body.code, /^VALIDATION_INVALID_(REQUEST|VALUE)$/);
      assert.equal(response.body.error_version, 1);
    }
    const longest = await read(a, '?from=2024-01-01&to=2024-12-31');
    assert.equal(longest.status, 200, longest.text);
    assert.equal(longest.body.days.length, RANGE_DAYS_MAX);
  });

  await t.test('an admin credential is needed: 401 without one, 403 for a key without an admin scope', async () => {
    const anonymous = await svc.request('GET', OVERVIEW);
    assert.equal(anonymous.status, 401);
    const jwt = await svc.login(a);
    const ingestKey = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'ingest only', scopes: ['ingest'] } });
    assert.equal(ingestKey.status, 201, ingestKey.text);
    const forbidden = await svc.request('GET', `${OVERVIEW}?from=2025-06-10&to=2025-06-11`, { key: ingestKey.body.key });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.code, 'AUTH_FORBIDDEN');
    const asAdmin = await svc.request('GET', `${OVERVIEW}?from=2025-06-10&to=2025-06-11`, { bearer: jwt });
    assert.equal(asAdmin.status, 200, asAdmin.text);
    assert.equal(asAdmin.body.totals.points_issued, 195);
  });
});
