import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService, type TestService, type TestTenant } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { contestDefinition } from '../contests/testing.js';

const DAY_S = 24 * 60 * 60;

async function sessionFor(svc: TestService, tenant: TestTenant, participantId: string, engagementId: string): Promise<string> {
  const response = await svc.request('POST', '/api/v1/sessions', { key: tenant.apiKey, body: { participant_id: participantId, engagement_id: engagementId } });
  assert.equal(response.status, 201, response.text);
  return response.body.session_id;
}

/** The tenant's now, as the test clock reports it. */
async function tenantNowMs(svc: TestService, tenant: TestTenant): Promise<number> {
  const response = await svc.request('GET', '/api/v1/admin/test-clock', { key: tenant.apiKey });
  assert.equal(response.status, 200, response.text);
  return Date.parse(response.body.now);
}

test('test clock', async (t) => {
  // No job runner: everything that happens below is run by the advance call itself.
  const svc = await startTestService(t);
  const sandbox = await svc.createTenant({ environment: 'sandbox' });
  const otherSandbox = await svc.createTenant({ environment: 'sandbox' });
  const live = await svc.createTenant();
  const key = sandbox.apiKey;
  const engagementId = randomUUID();
  await svc.createEngagement(sandbox, engagementId);

  await t.test('a fresh sandbox tenant runs on real time', async () => {
    const response = await svc.request('GET', '/api/v1/admin/test-clock', { key });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.environment, 'sandbox');
    assert.equal(response.body.offset_seconds, 0);
    assert.equal(response.body.advanced_at, null);
    assert.ok(Math.abs(Date.parse(response.body.now) - clock.nowMs()) < 5_000);
  });

  await t.test('a contest that ends in 7 days is closed, its winners drawn and then paid, by advancing the clock', async () => {
    const now = clock.nowMs();
    const definition = contestDefinition('spring-cup', {
      starts_at: new Date(now + 60_000).toISOString(),
      ends_at: new Date(now + 7 * DAY_S * 1000).toISOString(),
      fraud_rules: { review_threshold_score: 1_000_000 },
      verification_window_hours: 24,
    });
    assert.equal((await svc.request('POST', '/api/v1/admin/contests', { key, body: definition })).status, 201);
    assert.equal((await svc.request('POST', '/api/v1/admin/contests/spring-cup/publish', { key })).status, 200);
    const sessions: Record<string, string> = {};
    for (const p of ['ann', 'bob']) {
      sessions[p] = await sessionFor(svc, sandbox, p, engagementId);
      const entered = await svc.request('POST', '/api/v1/contests/spring-cup/enter', { body: { session_id: sessions[p], display_name: p, publish_consent: true } });
      assert.equal(entered.status, 201, entered.text);
    }

    const started = await svc.request('POST', '/api/v1/admin/test-clock/advance', { key, body: { seconds: 120 } });
    assert.equal(started.status, 200, started.text);
    assert.equal(started.body.ran.contests_started, 1);
    assert.equal(started.body.clock.offset_seconds, 120);
    assert.equal((await svc.request('GET', '/api/v1/admin/contests/spring-cup', { key })).body.status, 'active');

    // Events without a timestamp are stamped with the tenant's clock, inside the contest window.
    for (const [p, amount] of [['ann', 300], ['bob', 100]] as const) {
      const ingested = await svc.request('POST', '/api/v1/ingest/events/sync', {
        key,
        body: { event_name: 'purchase', participant_id: p, properties: { amount }, idempotency_key: `buy-${p}` },
      });
      assert.equal(ingested.status, 200, ingested.text);
    }
    const scored = await svc.request('GET', `/api/v1/contests/spring-cup/me?session_id=${sessions.ann}`);
    assert.equal(scored.body.score, 300, scored.text);

    const closed = await svc.request('POST', '/api/v1/admin/test-clock/advance', { key, body: { seconds: 8 * DAY_S } });
    assert.equal(closed.status, 200, closed.text);
    assert.equal(closed.body.ran.contests_completed, 1);
    assert.equal(closed.body.ran.contest_prizes_issued, 0);
    const contest = (await svc.request('GET', '/api/v1/admin/contests/spring-cup', { key })).body;
    assert.equal(contest.status, 'completed');
    assert.ok(Date.parse(contest.completed_at) > clock.nowMs() + 7 * DAY_S * 1000, 'completed on the tenant clock');
    const me = await svc.request('GET', `/api/v1/contests/spring-cup/me?session_id=${sessions.ann}`);
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.rank, 1);
    assert.equal(me.body.status, 'winner');
    const pending = await svc.request('GET', `/api/v1/contests/spring-cup/winners?session_id=${sessions.bob}`);
    assert.equal(pending.body.published, false);

    // Entering after the end, on the advanced clock, is refused.
    const late = await svc.request('POST', '/api/v1/contests/spring-cup/enter', { body: { session_id: await sessionFor(svc, sandbox, 'cat', engagementId) } });
    assert.equal(late.status, 422, late.text);
    assert.equal(late.body.code, 'CONTEST_NOT_OPEN');

    // The 24-hour verification hold passes on the next advance: the prizes are issued.
    const paid = await svc.request('POST', '/api/v1/admin/test-clock/advance', { key, body: { seconds: 2 * DAY_S } });
    assert.equal(paid.status, 200, paid.text);
    assert.equal(paid.body.ran.contest_prizes_issued, 1);
    const winners = await svc.request('GET', `/api/v1/contests/spring-cup/winners?session_id=${sessions.bob}`);
    assert.equal(winners.body.published, true);
    assert.deepEqual(winners.body.winners.map((w: { rank: number; display_name: string }) => [w.rank, w.display_name]), [[1, 'ann'], [2, 'bob']]);
  });

  await t.test('a contest whose end passed on the tenant clock refuses entries even before its lifecycle step ran', async () => {
    const now = await tenantNowMs(svc, sandbox);
    const definition = contestDefinition('short-cup', { starts_at: new Date(now - 60_000).toISOString(), ends_at: new Date(now + 60_000).toISOString() });
    assert.equal((await svc.request('POST', '/api/v1/admin/contests', { key, body: definition })).status, 201);
    assert.equal((await svc.request('POST', '/api/v1/admin/contests/short-cup/publish', { key })).status, 200);
    // Move the clock in the database only (as another process would), so no due work runs here.
    await svc.sql('UPDATE tenant_test_clocks SET offset_ms = offset_ms + 120000 WHERE tenant_id = $1', [sandbox.tenantId]);
    clock.setTenantOffset(sandbox.tenantId, clock.tenantOffsetMs(sandbox.tenantId) + 120_000);
    const late = await svc.request('POST', '/api/v1/contests/short-cup/enter', { body: { session_id: await sessionFor(svc, sandbox, 'dan', engagementId) } });
    assert.equal(late.status, 422, late.text);
    assert.equal(late.body.code, 'CONTEST_NOT_OPEN');
  });

  await t.test('challenge windows follow the tenant clock', async () => {
    const now = await tenantNowMs(svc, sandbox);
    const created = await svc.request('POST', '/api/v1/admin/challenges', {
      key,
      body: {
        name: 'Three-day sprint',
        starts_at: new Date(now + 3_600_000).toISOString(),
        ends_at: new Date(now + 3 * DAY_S * 1000).toISOString(),
        status: 'active',
        objectives: [{ id: 'buy', name: 'One purchase', evaluator: 'event_count', event_name: 'purchase', target: 1 }],
      },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.status, 'scheduled');
    const sessionId = await sessionFor(svc, sandbox, 'eve', engagementId);
    const early = await svc.request('POST', `/api/v1/public/challenges/${created.body.id}/enroll`, { body: { session_id: sessionId, engagement_id: engagementId } });
    assert.equal(early.body.code, 'CHALLENGE_NOT_STARTED');

    const started = await svc.request('POST', '/api/v1/admin/test-clock/advance', { key, body: { seconds: 2 * 3600 } });
    assert.equal(started.body.ran.challenge_status_moves, 1);
    const enrolled = await svc.request('POST', `/api/v1/public/challenges/${created.body.id}/enroll`, { body: { session_id: sessionId, engagement_id: engagementId } });
    assert.ok([200, 201].includes(enrolled.status), enrolled.text);

    const ended = await svc.request('POST', '/api/v1/admin/test-clock/advance', { key, body: { to: new Date(now + 4 * DAY_S * 1000).toISOString() } });
    assert.equal(ended.status, 200, ended.text);
    assert.equal(ended.body.ran.challenge_status_moves, 1);
    assert.equal((await svc.request('GET', `/api/v1/admin/challenges/${created.body.id}`, { key })).body.status, 'ended');
  });

  await t.test('points granted on the tenant clock expire when the clock passes their expiry', async () => {
    const settings = await svc.request('PATCH', '/api/v1/admin/points/settings', { key, body: { default_ttl_days: 30 } });
    assert.ok([200, 201].includes(settings.status), settings.text);
    const granted = await svc.request('POST', '/api/v1/gamify/points/grant', { key, body: { participant_id: 'fay', amount: 40, reason: 'welcome', idempotency_key: 'fay-welcome' } });
    assert.equal(granted.status, 200, granted.text);
    const notYet = await svc.request('POST', '/api/v1/admin/test-clock/advance', { key, body: { seconds: 29 * DAY_S } });
    assert.equal(notYet.body.ran.points_lots_expired, 0);
    const expired = await svc.request('POST', '/api/v1/admin/test-clock/advance', { key, body: { seconds: 2 * DAY_S } });
    assert.equal(expired.body.ran.points_lots_expired, 1);
    assert.equal(expired.body.ran.points_expired, 40);
    const balance = await svc.request('GET', '/api/v1/gamify/state/fay?include=points', { key });
    assert.equal(balance.body.points.available, 0, balance.text);
  });

  await t.test('the clock only moves forward, within bounds, with one of seconds or to', async () => {
    const now = await tenantNowMs(svc, sandbox);
    const cases: Array<[unknown, number, string]> = [
      [{}, 400, 'TEST_CLOCK_ADVANCE_INVALID'],
      [{ seconds: 60, to: new Date(now + DAY_S * 1000).toISOString() }, 400, 'TEST_CLOCK_ADVANCE_INVALID'],
      [{ to: new Date(now - 60_000).toISOString() }, 422, 'TEST_CLOCK_BACKWARDS'],
      [{ to: new Date(now + 401 * DAY_S * 1000).toISOString() }, 422, 'TEST_CLOCK_STEP_TOO_LARGE'],
      [{ seconds: 0 }, 400, 'VALIDATION_INVALID_REQUEST'],
    ];
    for (const [body, status, code] of cases) {
      const response = await svc.request('POST', '/api/v1/admin/test-clock/advance', { key, body });
      assert.equal(response.status, status, `${JSON.stringify(body)}: ${response.text}`);
      if (code !== 'VALIDATION_INVALID_REQUEST') assert.equal(response.body.code, code);
    }
  });

  await t.test("another sandbox tenant's clock is unaffected", async () => {
    const response = await svc.request('GET', '/api/v1/admin/test-clock', { key: otherSandbox.apiKey });
    assert.equal(response.body.offset_seconds, 0);
    assert.ok(Math.abs(Date.parse(response.body.now) - clock.nowMs()) < 5_000);
    assert.ok(clock.tenantOffsetMs(sandbox.tenantId) > 40 * DAY_S * 1000);
    assert.equal(clock.tenantOffsetMs(otherSandbox.tenantId), 0);
    assert.equal(clock.tenantOffsetMs(live.tenantId), 0);
  });

  await t.test('a live tenant is refused with SANDBOX_ONLY, and a key without an admin scope with 403', async () => {
    for (const [method, path, body] of [
      ['GET', '/api/v1/admin/test-clock', undefined],
      ['POST', '/api/v1/admin/test-clock/advance', { seconds: 60 }],
      ['DELETE', '/api/v1/admin/test-clock', undefined],
    ] as const) {
      const response = await svc.request(method, path, { key: live.apiKey, body });
      assert.equal(response.status, 403, response.text);
      assert.equal(response.body.code, 'SANDBOX_ONLY');
      assert.match(response.body.detail, /sandbox/);
    }
    assert.equal((await svc.sql('SELECT count(*)::int AS n FROM tenant_test_clocks WHERE tenant_id = $1', [live.tenantId]))[0].n, 0);
    const jwt = await svc.login(sandbox);
    const ingestKey = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'ingest only', scopes: ['ingest'] } });
    const refused = await svc.request('POST', '/api/v1/admin/test-clock/advance', { key: ingestKey.body.key, body: { seconds: 60 } });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.code, 'AUTH_FORBIDDEN');
    assert.equal((await svc.request('GET', '/api/v1/admin/test-clock')).status, 401);
  });

  await t.test('DELETE puts the tenant back on real time', async () => {
    const reset = await svc.request('DELETE', '/api/v1/admin/test-clock', { key });
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body.offset_seconds, 0);
    assert.equal(clock.tenantOffsetMs(sandbox.tenantId), 0);
    assert.ok(Math.abs((await tenantNowMs(svc, sandbox)) - clock.nowMs()) < 5_000);
  });
});
