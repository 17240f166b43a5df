import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { deductPoints, grantPoints, startTestService, type TestService } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { expireDuePoints, sendExpiryReminders, reevaluateTiers } from './service.js';
import { deductInTx, grantInTx, multiplierForEventInTx, readBalanceInTx } from './index.js';
import { assertPointsInvariants } from './testing.js';

const DAY_MS = 86_400_000;
const CONFIG = { RATE_LIMIT_KEY_PER_MINUTE: '1000000' };

async function lots(svc: TestService, tenantId: string, participantId: string) {
  return svc.sql('SELECT amount, remaining, expired, expires_at FROM points_lots WHERE tenant_id = $1 AND participant_id = $2 ORDER BY id', [
    tenantId,
    participantId,
  ]);
}
async function events(svc: TestService, tenantId: string, event: string) {
  return svc.sql('SELECT participant_id, data FROM outbox_events WHERE tenant_id = $1 AND event = $2 ORDER BY seq', [tenantId, event]);
}

test('points: settings, lots, expiry, reminders and history', async (t) => {
  const svc = await startTestService(t, { config: CONFIG });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  t.after(() => clock.reset());
  clock.freeze(new Date('2026-01-01T00:00:00Z'));

  await t.test('settings default to fifo, 365 days, reminders 60/30/7/1 and can be changed', async () => {
    const read = await svc.request('GET', '/api/v1/admin/points/settings', { key: tenant.apiKey });
    assert.equal(read.status, 200);
    assert.deepEqual(
      { ...read.body, updated_at: undefined, livemode: undefined },
      { expiry_policy: 'fifo', default_ttl_days: 365, reminder_days: [60, 30, 7, 1], currency_name: 'points', point_value: null, updated_at: undefined, livemode: undefined },
    );
    const changed = await svc.request('PATCH', '/api/v1/admin/points/settings', { key: other.apiKey, body: { currency_name: 'stars', reminder_days: [1, 14] } });
    assert.equal(changed.status, 200);
    assert.equal(changed.body.currency_name, 'stars');
    assert.deepEqual(changed.body.reminder_days, [14, 1]);
    assert.equal(changed.body.expiry_policy, 'fifo');
    const untouched = await svc.request('GET', '/api/v1/admin/points/settings', { key: tenant.apiKey });
    assert.equal(untouched.body.currency_name, 'points', 'settings are per tenant');
    for (const body of [{}, { expiry_policy: 'random' }, { default_ttl_days: 0 }, { reminder_days: [0] }, { reminder_days: [7, 7] }, { currency_name: '' }, { tenant_id: other.tenantId }]) {
      const bad = await svc.request('PATCH', '/api/v1/admin/points/settings', { key: tenant.apiKey, body });
      assert.equal(bad.status, 400, JSON.stringify(body));
    }
  });

  await t.test('fifo deducts consume the oldest lot first', async () => {
    await grantPoints(svc, tenant, 'fifo', 10);
    clock.advance(DAY_MS);
    await grantPoints(svc, tenant, 'fifo', 20);
    await deductPoints(svc, tenant, 'fifo', 15);
    assert.deepEqual((await lots(svc, tenant.tenantId, 'fifo')).map((l) => l.remaining), [0, 15]);
  });

  await t.test('lifo deducts consume the newest lot first; none grants lots without expiry', async () => {
    await svc.request('PATCH', '/api/v1/admin/points/settings', { key: tenant.apiKey, body: { expiry_policy: 'lifo' } });
    await grantPoints(svc, tenant, 'lifo', 10);
    await grantPoints(svc, tenant, 'lifo', 20);
    await deductPoints(svc, tenant, 'lifo', 25);
    assert.deepEqual((await lots(svc, tenant.tenantId, 'lifo')).map((l) => l.remaining), [5, 0]);
    await svc.request('PATCH', '/api/v1/admin/points/settings', { key: tenant.apiKey, body: { expiry_policy: 'none' } });
    await grantPoints(svc, tenant, 'forever', 10);
    assert.equal((await lots(svc, tenant.tenantId, 'forever'))[0].expires_at, null);
    await svc.request('PATCH', '/api/v1/admin/points/settings', { key: tenant.apiKey, body: { expiry_policy: 'fifo', default_ttl_days: 30 } });
    await grantPoints(svc, tenant, 'short', 10);
    const [lot] = await lots(svc, tenant.tenantId, 'short');
    assert.equal(lot.expires_at.getTime() - clock.nowMs(), 30 * DAY_MS);
    await svc.request('PATCH', '/api/v1/admin/points/settings', { key: tenant.apiKey, body: { default_ttl_days: 365 } });
  });

  await t.test('reminders go out at the configured days, once per lot and day', async () => {
    await grantPoints(svc, tenant, 'remind', 40);
    clock.advance(364 * DAY_MS - 60 * DAY_MS + 1000);
    // The 30-day lot of "short" and the lots of fifo/lifo are also inside their windows now.
    await sendExpiryReminders(svc.service.db);
    const first = (await events(svc, tenant.tenantId, 'points.expiring.v1')).filter((e) => e.participant_id === 'remind');
    assert.equal(first.length, 0, 'more than 60 days before expiry: nothing yet');
    clock.advance(DAY_MS);
    await sendExpiryReminders(svc.service.db);
    await sendExpiryReminders(svc.service.db);
    let reminders = (await events(svc, tenant.tenantId, 'points.expiring.v1')).filter((e) => e.participant_id === 'remind');
    assert.equal(reminders.length, 1);
    assert.equal(reminders[0].data.days_before, 60);
    assert.equal(reminders[0].data.points, 40);
    assert.equal(typeof reminders[0].data.expires_at, 'string');
    clock.advance(53 * DAY_MS);
    await sendExpiryReminders(svc.service.db);
    reminders = (await events(svc, tenant.tenantId, 'points.expiring.v1')).filter((e) => e.participant_id === 'remind');
    assert.deepEqual(reminders.map((r) => r.data.days_before), [60, 7], 'the 30-day reminder passed while nobody ran the job: only the nearer one goes out');
  });

  await t.test('a reminder day of the tenant\'s own (3) goes out as configured, and its event matches the published catalog', async () => {
    const own = await svc.createTenant();
    await svc.request('PATCH', '/api/v1/admin/points/settings', { key: own.apiKey, body: { reminder_days: [3] } });
    await grantPoints(svc, own, 'three', 12);
    clock.advance(365 * DAY_MS - 3 * DAY_MS + 1000);
    await sendExpiryReminders(svc.service.db);
    const reminders = (await events(svc, own.tenantId, 'points.expiring.v1')).filter((e) => e.participant_id === 'three');
    assert.deepEqual(reminders.map((r) => r.data.days_before), [3]);
    // The helper checks every outbox event against the catalog after the test (a catalog of 60/30/7/1 only failed here).
    clock.advance(-(365 * DAY_MS - 3 * DAY_MS + 1000));
  });

  await t.test('the expiry job expires due lots: available drops, lifetime stays, an expiry entry and an event in one transaction', async () => {
    const before = await svc.sql("SELECT available, lifetime FROM points_balances WHERE tenant_id = $1 AND participant_id = 'remind'", [tenant.tenantId]);
    clock.advance(8 * DAY_MS);
    const result = await expireDuePoints(svc.service.db);
    assert.ok(result.lots >= 1);
    const [after] = await svc.sql("SELECT available, lifetime FROM points_balances WHERE tenant_id = $1 AND participant_id = 'remind'", [tenant.tenantId]);
    assert.equal(after.available, before[0].available - 40);
    assert.equal(after.lifetime, before[0].lifetime);
    const expired = (await events(svc, tenant.tenantId, 'reward.points_expired.v1')).filter((e) => e.participant_id === 'remind');
    assert.equal(expired.length, 1);
    assert.equal(expired[0].data.expired_points, 40);
    assert.equal(expired[0].data.available, after.available);
    assert.equal(expired[0].data.lifetime, after.lifetime);
    const entries = await svc.sql("SELECT delta FROM points_ledger WHERE tenant_id = $1 AND participant_id = 'remind' AND type = 'expiry'", [tenant.tenantId]);
    assert.deepEqual(entries.map((e) => e.delta), [-40]);
    const again = await expireDuePoints(svc.service.db);
    assert.equal(again.lots, 0, 'a second run finds nothing');
    assert.equal((await lots(svc, tenant.tenantId, 'forever'))[0].remaining, 10, 'lots without expiry never expire');
    await assertPointsInvariants(svc, tenant.tenantId);
  });

  await t.test('history filters by participant, type and time and pages with a cursor; expiry entries stay 90 days', async () => {
    const all = await svc.request('GET', '/api/v1/points/history?participant_id=remind', { key: tenant.apiKey });
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.entries.map((e: any) => e.type), ['expiry', 'award']);
    const onlyExpiry = await svc.request('GET', '/api/v1/points/history?type=expiry', { key: tenant.apiKey });
    assert.ok(onlyExpiry.body.entries.length >= 1);
    assert.ok(onlyExpiry.body.entries.every((e: any) => e.type === 'expiry' && e.amount < 0));
    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await svc.request('GET', `/api/v1/points/history?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key: tenant.apiKey });
      assert.equal(page.status, 200);
      assert.ok(page.body.entries.length <= 2);
      pages.push(...page.body.entries.map((e: any) => e.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    const [{ n }] = await svc.sql('SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1', [tenant.tenantId]);
    assert.equal(pages.length, n);
    assert.equal(new Set(pages).size, n);
    const ranged = await svc.request('GET', `/api/v1/points/history?from=${encodeURIComponent(new Date(clock.nowMs() - DAY_MS).toISOString())}`, { key: tenant.apiKey });
    assert.ok(ranged.body.entries.every((e: any) => e.type === 'expiry'));
    clock.advance(91 * DAY_MS);
    const later = await svc.request('GET', '/api/v1/points/history?participant_id=remind', { key: tenant.apiKey });
    assert.deepEqual(later.body.entries.map((e: any) => e.type), ['award'], 'expiry entries older than 90 days are no longer listed');
    for (const query of ['type=gift', 'limit=0', 'limit=101', 'cursor=abc', 'from=yesterday', 'bogus=1']) {
      const bad = await svc.request('GET', `/api/v1/points/history?${query}`, { key: tenant.apiKey });
      assert.equal(bad.status, 400, query);
    }
    const foreign = await svc.request('GET', '/api/v1/points/history?participant_id=remind', { key: other.apiKey });
    assert.deepEqual(foreign.body.entries, []);
  });

});

test('points: session reads, multipliers, tiers', async (t) => {
  const svc = await startTestService(t, { config: CONFIG });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const engagementId = randomUUID();

  await t.test('a session reads its balance and transactions', async () => {
    // Sessions are issued for engagements that exist.
    await svc.createEngagement(tenant, engagementId);
    await grantPoints(svc, tenant, 'sam', 50);
    await grantPoints(svc, tenant, 'sam', 10, { type: 'bonus' });
    await deductPoints(svc, tenant, 'sam', 15);
    await svc.request('PATCH', '/api/v1/admin/points/settings', { key: tenant.apiKey, body: { currency_name: 'coins' } });
    const session = await svc.request('POST', '/api/v1/sessions', { key: tenant.apiKey, body: { participant_id: 'sam', engagement_id: engagementId } });
    assert.equal(session.status, 201, session.text);
    const sessionId = session.body.session_id;
    const balance = await svc.request('POST', '/api/v1/points/balance', { body: { session_id: sessionId, engagement_id: engagementId } });
    assert.equal(balance.status, 200, balance.text);
    assert.equal(balance.body.available_points, 45);
    assert.equal(balance.body.total_points, 60);
    assert.equal(balance.body.currency_name, 'coins');
    assert.equal(typeof balance.body.last_earned_at, 'string');
    const page = await svc.request('POST', '/api/v1/points/transactions', { body: { session_id: sessionId, engagement_id: engagementId, limit: 2, offset: 0 } });
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.total, 3);
    assert.equal(page.body.has_more, true);
    assert.deepEqual(page.body.transactions.map((x: any) => [x.type, x.amount]), [['redemption', -15], ['bonus', 10]]);
    const rest = await svc.request('POST', '/api/v1/points/transactions', { body: { session_id: sessionId, engagement_id: engagementId, limit: 2, offset: 2 } });
    assert.equal(rest.body.has_more, false);
    assert.deepEqual(rest.body.transactions.map((x: any) => x.type), ['award']);
    for (const extra of [{ limit: 0 }, { limit: 101 }, { offset: -1 }, { limit: 'ten' }, { participant_id: 'other' }]) {
      const bad = await svc.request('POST', '/api/v1/points/transactions', { body: { session_id: sessionId, engagement_id: engagementId, ...extra } });
      assert.equal(bad.status, 400, JSON.stringify(extra));
    }
    const noSession = await svc.request('POST', '/api/v1/points/balance', { body: { engagement_id: engagementId } });
    assert.equal(noSession.status, 401);
    const withKey = await svc.request('POST', '/api/v1/points/balance', { key: tenant.apiKey, body: { session_id: sessionId, engagement_id: engagementId } });
    assert.equal(withKey.status, 403, 'admin keys cannot act as a participant');
    const fresh = await svc.request('POST', '/api/v1/sessions', { key: tenant.apiKey, body: { participant_id: 'newbie', engagement_id: engagementId } });
    const empty = await svc.request('POST', '/api/v1/points/balance', { body: { session_id: fresh.body.session_id, engagement_id: engagementId } });
    assert.deepEqual(empty.body, { available_points: 0, total_points: 0, currency_name: 'coins', last_earned_at: null, livemode: true });
    // A tenant that never set its points settings reads the default currency; a participant of the same id elsewhere is not seen.
    const other = await svc.createTenant();
    const otherEngagement = '55555555-5555-4555-8555-555555555555';
    await svc.createEngagement(other, otherEngagement);
    const otherSession = await svc.request('POST', '/api/v1/sessions', { key: other.apiKey, body: { participant_id: 'sam', engagement_id: otherEngagement } });
    assert.equal(otherSession.status, 201, otherSession.text);
    const otherBalance = await svc.request('POST', '/api/v1/points/balance', { body: { session_id: otherSession.body.session_id, engagement_id: otherEngagement } });
    assert.deepEqual(otherBalance.body, { available_points: 0, total_points: 0, currency_name: 'points', last_earned_at: null, livemode: true });
  });

  await t.test('multipliers: create, list, read, delete; the highest matching one wins inside its window', async () => {
    const base = { starts_at: '2026-01-01T00:00:00Z', ends_at: '2026-02-01T00:00:00Z' };
    const double = await svc.request('POST', '/api/v1/admin/points/multipliers', { key: tenant.apiKey, body: { ...base, multiplier: 2, match: { event_type: 'purchase' } } });
    assert.equal(double.status, 201, double.text);
    assert.match(double.body.id, /^mul_/);
    assert.deepEqual(double.body.match, { event_type: 'purchase', attributes: {} });
    const triple = await svc.request('POST', '/api/v1/admin/points/multipliers', {
      key: tenant.apiKey,
      body: { ...base, multiplier: 3, match: { event_type: 'purchase', attributes: { category: 'shoes' } } },
    });
    assert.equal(triple.status, 201);
    const at = new Date('2026-01-15T00:00:00Z');
    const pick = (attributes: Record<string, unknown>, when = at, tenantId = tenant.tenantId) =>
      svc.service.db.tenant(tenantId, (tx) => multiplierForEventInTx(tx, tenantId, { participantId: 'sam', eventName: 'purchase', attributes, at: when }));
    assert.deepEqual(await pick({ category: 'shoes', sku: 'x' }), { multiplier: 3, multiplierId: triple.body.id });
    assert.deepEqual(await pick({ category: 'hats' }), { multiplier: 2, multiplierId: double.body.id });
    assert.deepEqual(await pick({}, new Date('2026-02-01T00:00:00Z')), { multiplier: 1, multiplierId: null }, 'ends_at is exclusive');
    assert.deepEqual(await pick({ category: 'shoes' }, at, other.tenantId), { multiplier: 1, multiplierId: null });
    const list = await svc.request('GET', '/api/v1/admin/points/multipliers?limit=1', { key: tenant.apiKey });
    assert.equal(list.body.multipliers.length, 1);
    assert.ok(list.body.next_cursor);
    const next = await svc.request('GET', `/api/v1/admin/points/multipliers?limit=1&cursor=${list.body.next_cursor}`, { key: tenant.apiKey });
    assert.equal(next.body.multipliers.length, 1);
    assert.notEqual(next.body.multipliers[0].id, list.body.multipliers[0].id);
    assert.equal((await svc.request('GET', `/api/v1/admin/points/multipliers/${double.body.id}`, { key: tenant.apiKey })).body.multiplier, 2);
    assert.equal((await svc.request('GET', `/api/v1/admin/points/multipliers/${double.body.id}`, { key: other.apiKey })).status, 404);
    assert.equal((await svc.request('DELETE', `/api/v1/admin/points/multipliers/${double.body.id}`, { key: other.apiKey })).status, 404);
    assert.equal((await svc.request('DELETE', `/api/v1/admin/points/multipliers/${double.body.id}`, { key: tenant.apiKey })).status, 204);
    assert.equal((await svc.request('GET', `/api/v1/admin/points/multipliers/${double.body.id}`, { key: tenant.apiKey })).status, 404);
    for (const body of [
      { ...base, multiplier: 0, match: { event_type: 'purchase' } },
      { ...base, multiplier: 2, match: {} },
      { starts_at: base.ends_at, ends_at: base.starts_at, multiplier: 2, match: { event_type: 'purchase' } },
      { ...base, multiplier: 2, match: { event_type: 'purchase', attributes: { nested: { a: 1 } } } },
    ]) {
      assert.equal((await svc.request('POST', '/api/v1/admin/points/multipliers', { key: tenant.apiKey, body })).status, 400, JSON.stringify(body));
    }
    const direct = await grantPoints(svc, tenant, 'sam', 10);
    assert.equal(direct.body.delta, 10, 'multipliers never apply to direct grants');
  });

  await t.test('tiers qualify by lifetime points and emit tier.changed.v1 on every change', async () => {
    const silver = await svc.request('POST', '/api/v1/admin/points/tiers', { key: tenant.apiKey, body: { code: 'silver', name: 'Silver', min_lifetime_points: 100 } });
    assert.equal(silver.status, 201, silver.text);
    await svc.request('POST', '/api/v1/admin/points/tiers', { key: tenant.apiKey, body: { code: 'gold', name: 'Gold', min_lifetime_points: 500 } });
    const dup = await svc.request('POST', '/api/v1/admin/points/tiers', { key: tenant.apiKey, body: { code: 'silver2', name: 'Dup', min_lifetime_points: 100 } });
    assert.equal(dup.status, 409);
    const list = await svc.request('GET', '/api/v1/admin/points/tiers', { key: tenant.apiKey });
    assert.deepEqual(list.body.tiers.map((x: any) => [x.code, x.level]), [['silver', 1], ['gold', 2]]);
    await grantPoints(svc, tenant, 'tina', 90);
    await deductPoints(svc, tenant, 'tina', 90);
    await grantPoints(svc, tenant, 'tina', 20);
    let changes = (await events(svc, tenant.tenantId, 'tier.changed.v1')).filter((e) => e.participant_id === 'tina');
    assert.deepEqual(changes.map((c) => c.data), [{ participant_id: 'tina', previous_tier: null, tier: 'silver', lifetime: 110 }], 'lifetime, not available, qualifies');
    await grantPoints(svc, tenant, 'tina', 400);
    await grantPoints(svc, tenant, 'tina', 1);
    changes = (await events(svc, tenant.tenantId, 'tier.changed.v1')).filter((e) => e.participant_id === 'tina');
    assert.deepEqual(changes.map((c) => [c.data.previous_tier, c.data.tier]), [[null, 'silver'], ['silver', 'gold']]);
    // Raising gold's threshold moves tina down once the definitions are re-evaluated.
    const moved = await svc.request('PATCH', '/api/v1/admin/points/tiers/gold', { key: tenant.apiKey, body: { min_lifetime_points: 1000 } });
    assert.equal(moved.status, 200);
    const jobs = await svc.sql("SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id WHERE t.identifier = 'points.tiers_reevaluate'");
    assert.equal(jobs[0].n, 1, 'one re-evaluation job per tenant (job key)');
    assert.ok((await reevaluateTiers(svc.service.db, tenant.tenantId)) >= 1);
    changes = (await events(svc, tenant.tenantId, 'tier.changed.v1')).filter((e) => e.participant_id === 'tina');
    assert.deepEqual(changes.at(-1)!.data, { participant_id: 'tina', previous_tier: 'gold', tier: 'silver', lifetime: 511 });
    assert.equal((await svc.request('GET', '/api/v1/admin/points/tiers/gold', { key: other.apiKey })).status, 404);
    assert.equal((await svc.request('DELETE', '/api/v1/admin/points/tiers/gold', { key: tenant.apiKey })).status, 204);
    assert.equal((await svc.request('POST', '/api/v1/admin/points/tiers', { key: tenant.apiKey, body: { code: 'Bad Code', name: 'x', min_lifetime_points: 1 } })).status, 400);
  });

  await t.test('grantInTx and deductInTx compose inside a caller transaction and roll back with it', async () => {
    const db = svc.service.db;
    const result = await db.tenant(tenant.tenantId, async (tx) => {
      const granted = await grantInTx(tx, tenant.tenantId, { participantId: 'composer', amount: 30, reason: 'quiz', source: { kind: 'activity', id: 'act-1' }, activityId: 'act-1', multiplier: 1.5 });
      const spent = await deductInTx(tx, tenant.tenantId, { participantId: 'composer', amount: 10, reason: 'reward' });
      return { granted, spent, balance: await readBalanceInTx(tx, tenant.tenantId, 'composer') };
    });
    assert.equal(result.granted.delta, 30);
    assert.equal(result.spent.delta, -10);
    assert.deepEqual({ ...result.balance, lastEarnedAt: null }, { available: 20, lifetime: 30, lastEarnedAt: null });
    await assert.rejects(
      db.tenant(tenant.tenantId, async (tx) => {
        await grantInTx(tx, tenant.tenantId, { participantId: 'composer', amount: 5, reason: 'x' });
        await deductInTx(tx, tenant.tenantId, { participantId: 'composer', amount: 1000, reason: 'too much' });
      }),
      (error: any) => error.status === 422 && error.extra.error === 'insufficient_points' && error.extra.available === 25,
    );
    const after = await db.tenant(tenant.tenantId, (tx) => readBalanceInTx(tx, tenant.tenantId, 'composer'));
    assert.equal(after.available, 20, 'the rolled-back grant left nothing');
    const [awarded] = (await events(svc, tenant.tenantId, 'points.awarded.v1')).filter((e) => e.participant_id === 'composer');
    assert.equal(awarded.data.source_kind, 'activity');
    assert.equal(awarded.data.multiplier, 1.5);
    await assert.rejects(db.tenant(tenant.tenantId, (tx) => grantInTx(tx, tenant.tenantId, { participantId: 'composer', amount: 0, reason: 'x' })), (e: any) => e.status === 400);
  });

  await assertPointsInvariants(svc);
});
