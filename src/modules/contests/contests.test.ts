import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { advanceContest } from './service.js';
import { contestDefinition, recordFact, sessionFor, ENGAGEMENT_ID } from './testing.js';
import { readStatePart } from '../../platform/module.js';
import { inBatch } from '../../platform/batch.js';
import { runFactHandlers, type Fact } from '../../platform/facts.js';

test('contests: definition, publication, entries and scoring', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const key = tenant.apiKey;

  await t.test('an admin creates a draft with every field of the definition', async () => {
    const body = contestDefinition('spring-1');
    const created = await svc.request('POST', '/api/v1/admin/contests', { key, body });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.status, 'draft');
    assert.equal(created.body.title, body.title);
    assert.deepEqual(created.body.scoring, body.scoring);
    assert.deepEqual(created.body.prize_structure, body.prize_structure);
    assert.equal(created.body.max_reward_liability, 1000);
    assert.deepEqual(created.body.fraud_rules, body.fraud_rules);
    assert.equal(created.body.verification_window_hours, 48);
    const duplicate = await svc.request('POST', '/api/v1/admin/contests', { key, body });
    assert.equal(duplicate.status, 409);
  });

  await t.test('bad definitions get a 4xx with detail and store nothing', async () => {
    const start = new Date(clock.nowMs() + 3_600_000);
    const cases: Array<[string, Record<string, unknown>, number, RegExp]> = [
      ['window', { starts_at: start.toISOString(), ends_at: new Date(start.getTime() - 1000).toISOString() }, 400, /ends_at .* must be after starts_at/],
      [
        'overlap',
        {
          prize_structure: [
            { rank_from: 1, rank_to: 3, reward: { type: 'cash', value: 10 } },
            { rank_from: 3, rank_to: 5, reward: { type: 'voucher', value: 5 } },
          ],
        },
        400,
        /overlap/,
      ],
      ['reversed tier', { prize_structure: [{ rank_from: 4, rank_to: 2, reward: { type: 'cash', value: 10 } }] }, 400, /rank_to/],
      ['negative liability', { max_reward_liability: -1 }, 400, /max_reward_liability/],
      ['unknown fraud rule', { fraud_rules: { max_score_per_minute: 5, max_score_per_day: 9 } }, 400, /max_score_per_day/],
      ['verification window too short', { verification_window_hours: 12 }, 400, /verification_window_hours/],
      ['zero weight', { scoring: { event_type: 'purchase', score_attribute: 'amount', weight: 0 } }, 400, /weight/],
      ['unknown top-level field', { tenant_id: tenant.tenantId }, 400, /tenant_id/],
    ];
    for (const [name, override, status, detail] of cases) {
      const response = await svc.request('POST', '/api/v1/admin/contests', { key, body: contestDefinition(`bad-${name.replaceAll(' ', '-')}`, override) });
      assert.equal(response.status, status, `${name}: ${response.text}`);
      assert.match(response.body.detail, detail, name);
      // A domain refusal names its field, so a form places it there.
      const field = { window: '/ends_at', overlap: '/prize_structure/1/rank_from', 'reversed tier': '/prize_structure/0/rank_to' }[name];
      if (field) assert.deepEqual(response.body.errors.map((e: { path: string }) => e.path), [field], name);
    }
    const stored = await svc.sql(`SELECT count(*)::int AS n FROM contests WHERE id LIKE 'bad-%'`);
    assert.equal(stored[0].n, 0);
  });

  await t.test('callers without the admin scope, sessions and other tenants cannot administer contests', async () => {
    const jwt = await svc.login(tenant);
    const ingestKey = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'ingest only', scopes: ['ingest'] } });
    const forbidden = await svc.request('POST', '/api/v1/admin/contests', { key: ingestKey.body.key, body: contestDefinition('nope') });
    assert.equal(forbidden.status, 403);
    const session = await sessionFor(svc, tenant, 'p-admin-probe');
    const asSession = await svc.request('GET', `/api/v1/admin/contests/spring-1?session_id=${session}`);
    assert.equal(asSession.status, 403);
    const crossTenant = await svc.request('GET', '/api/v1/admin/contests/spring-1', { key: other.apiKey });
    assert.equal(crossTenant.status, 404);
    const crossPatch = await svc.request('PATCH', '/api/v1/admin/contests/spring-1', { key: other.apiKey, body: { title: 'hijack' } });
    assert.equal(crossPatch.status, 404);
  });

  await t.test('a draft changes freely, is invisible to participants, and publication freezes scoring and prizes', async () => {
    const changed = await svc.request('PATCH', '/api/v1/admin/contests/spring-1', {
      key,
      body: { scoring: { event_type: 'purchase', score_attribute: 'amount', weight: 2 }, prize_structure: [{ rank_from: 1, rank_to: 2, reward: { type: 'coupon', value: 50 } }] },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.scoring.weight, 2);
    const session = await sessionFor(svc, tenant, 'p1', 'Ada');
    assert.equal((await svc.request('GET', `/api/v1/contests/spring-1?session_id=${session}`)).status, 404);
    assert.equal((await svc.request('POST', '/api/v1/contests/spring-1/enter', { body: { session_id: session } })).status, 404);

    const published = await svc.request('POST', '/api/v1/admin/contests/spring-1/publish', { key });
    assert.equal(published.status, 200, published.text);
    assert.equal(published.body.status, 'scheduled');
    assert.ok(published.body.published_at);
    const jobs = await svc.sql(`SELECT run_at FROM graphile_worker._private_jobs WHERE key = $1`, [`contests.advance:${tenant.tenantId}:spring-1`]);
    assert.equal(jobs.length, 1, 'one lifecycle job, due at starts_at');
    assert.ok(Math.abs(new Date(jobs[0].run_at).getTime() - new Date(published.body.starts_at).getTime()) < 5_000);
    const again = await svc.request('POST', '/api/v1/admin/contests/spring-1/publish', { key });
    assert.equal(again.status, 409);
    const frozen = await svc.request('PATCH', '/api/v1/admin/contests/spring-1', { key, body: { scoring: { event_type: 'x', score_attribute: 'y', weight: 1 } } });
    assert.equal(frozen.status, 422);
    assert.match(frozen.body.detail, /scoring cannot be changed once the contest is scheduled/);
    const frozenPrizes = await svc.request('PATCH', '/api/v1/admin/contests/spring-1', { key, body: { prize_structure: [] } });
    assert.equal(frozenPrizes.status, 422);
    const retitled = await svc.request('PATCH', '/api/v1/admin/contests/spring-1', { key, body: { title: 'Spring Cup' } });
    assert.equal(retitled.status, 200);
    const summary = await svc.request('GET', `/api/v1/contests/spring-1?session_id=${session}`);
    assert.equal(summary.status, 200);
    assert.equal(summary.body.name, 'Spring Cup');
    assert.equal(summary.body.scoring_method, 'cumulative');
  });

  await t.test('entering is idempotent, a session acts only as itself, and entry signals are screened', async () => {
    const session = await sessionFor(svc, tenant, 'p1', 'Ada');
    const first = await svc.request('POST', '/api/v1/contests/spring-1/enter', { body: { session_id: session, engagement_id: ENGAGEMENT_ID, display_name: 'Ada L.', device_fingerprint: 'dev-1' } });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.body.score, 0);
    assert.equal(first.body.status, 'active');
    assert.equal(first.body.participant_id, 'p1');
    const second = await svc.request('POST', '/api/v1/contests/spring-1/enter', { body: { session_id: session } });
    assert.equal(second.status, 200);
    assert.equal(second.body.entry_id, first.body.entry_id);
    const impersonation = await svc.request('POST', '/api/v1/contests/spring-1/enter', { body: { session_id: session, participant_id: 'p2' } });
    assert.equal(impersonation.status, 403);
    const keyOnSessionRoute = await svc.request('POST', '/api/v1/contests/spring-1/enter', { key, body: { participant_id: 'p2' } });
    assert.equal(keyOnSessionRoute.status, 403);
    const meOther = await svc.request('GET', `/api/v1/contests/spring-1/me?session_id=${session}&participant_id=p2`);
    assert.equal(meOther.status, 403);

    const disposable = await svc.request('POST', '/api/v1/admin/contests/spring-1/entries', { key, body: { participant_id: 'p3', email: 'someone@mailinator.com' } });
    assert.equal(disposable.status, 422);
    assert.equal(disposable.body.code, 'CONTEST_DISPOSABLE_EMAIL');
    const repeatDevice = await svc.request('POST', '/api/v1/admin/contests/spring-1/entries', { key, body: { participant_id: 'p3', device_fingerprint: 'dev-1' } });
    assert.equal(repeatDevice.status, 422);
    assert.equal(repeatDevice.body.code, 'CONTEST_REPEAT_DEVICE');
    const ok = await svc.request('POST', '/api/v1/admin/contests/spring-1/entries', { key, body: { participant_id: 'p3', email: 'p3@example.com', payment_method: 'pm-1', display_name: 'Cy' } });
    assert.equal(ok.status, 201, ok.text);
    const repeatPayment = await svc.request('POST', '/api/v1/admin/contests/spring-1/entries', { key, body: { participant_id: 'p4', payment_method: 'pm-1' } });
    assert.equal(repeatPayment.status, 422);
    assert.equal(repeatPayment.body.code, 'CONTEST_REPEAT_PAYMENT_METHOD');
    const entries = await svc.sql(`SELECT participant_id FROM contest_entries WHERE contest_id = 'spring-1' ORDER BY participant_id`);
    assert.deepEqual(entries.map((e) => e.participant_id), ['p1', 'p3']);
    const contest = await svc.request('GET', '/api/v1/admin/contests/spring-1', { key });
    assert.equal(contest.body.entry_count, 2);

    const otherSession = await sessionFor(svc, other, 'p1');
    assert.equal((await svc.request('POST', '/api/v1/contests/spring-1/enter', { body: { session_id: otherSession } })).status, 404);
  });

  await t.test('scoring adds score_attribute × weight once per fact, only inside the window', async () => {
    // Move the window so that it is open now, and let the lifecycle step activate it.
    await svc.sql(`UPDATE contests SET starts_at = $2, ends_at = $3 WHERE id = 'spring-1' AND tenant_id = $1`, [
      tenant.tenantId,
      new Date(clock.nowMs() - 60_000),
      new Date(clock.nowMs() + 3_600_000),
    ]);
    assert.equal(await advanceContest(svc.service.db, svc.config, tenant.tenantId, 'spring-1'), 'active');
    const session = await sessionFor(svc, tenant, 'p1');
    const active = await svc.request('GET', `/api/v1/contests/active?session_id=${session}`);
    assert.equal(active.status, 200);
    assert.deepEqual(active.body.contests.map((c: { id: string; entry_count: number }) => [c.id, c.entry_count]), [['spring-1', 2]]);

    const factId = await recordFact(svc, tenant.tenantId, { name: 'purchase', participantId: 'p1', properties: { amount: 12.5 } });
    await recordFact(svc, tenant.tenantId, { id: factId, name: 'purchase', participantId: 'p1', properties: { amount: 12.5 } });
    await recordFact(svc, tenant.tenantId, { name: 'signup', participantId: 'p1', properties: { amount: 100 } });
    await recordFact(svc, tenant.tenantId, { name: 'purchase', participantId: 'p1', properties: { amount: 'lots' } });
    await recordFact(svc, tenant.tenantId, { name: 'purchase', participantId: 'p1', properties: { amount: 50 }, occurredAt: new Date(clock.nowMs() - 3_600_000) });
    await recordFact(svc, tenant.tenantId, { name: 'purchase', participantId: 'p1', properties: { amount: 50 }, occurredAt: new Date(clock.nowMs() + 2 * 3_600_000) });
    await recordFact(svc, other.tenantId, { name: 'purchase', participantId: 'p1', properties: { amount: 1000 } });
    await recordFact(svc, tenant.tenantId, { name: 'purchase', participantId: 'not-entered', properties: { amount: 1000 } });
    await recordFact(svc, tenant.tenantId, { name: 'purchase', participantId: 'p3', properties: { amount: 10 } });

    const me = await svc.request('GET', `/api/v1/contests/spring-1/me?session_id=${session}`);
    assert.equal(me.status, 200);
    assert.equal(me.body.score, 25, 'weight 2 × 12.5, counted once');
    assert.equal(me.body.score_events, 1);
    assert.equal(me.body.rank, 1);
    const board = await svc.request('GET', `/api/v1/contests/spring-1/leaderboard/public?session_id=${session}&limit=5`);
    assert.equal(board.status, 200);
    assert.deepEqual(board.body.entries.map((e: { display_name: string; score: number; rank: number }) => [e.rank, e.display_name, e.score]), [
      [1, 'Ada L.', 25],
      [2, 'Cy', 20],
    ]);
    assert.equal(board.body.total_entries, 2);
    assert.ok(board.body.entries[0].last_scored_at);
    const tooMany = await svc.request('GET', `/api/v1/contests/spring-1/leaderboard/public?session_id=${session}&limit=101`);
    assert.equal(tooMany.status, 400);
    const admin = await svc.request('GET', '/api/v1/contests/spring-1/leaderboard', { key });
    assert.equal(admin.status, 200);
    assert.equal(admin.body.window, 'active');
    assert.deepEqual(admin.body.rows.map((r: { participant_id: string }) => r.participant_id), ['p1', 'p3']);
    const adminAsSession = await svc.request('GET', `/api/v1/contests/spring-1/leaderboard?session_id=${session}`);
    assert.equal(adminAsSession.status, 403);
    const state = await svc.service.db.tenant(tenant.tenantId, async (tx) => {
      const module = (await import('./index.js')).default;
      return readStatePart(module.stateParts!.contests, tx, tenant.tenantId, 'p1', null as never);
    });
    assert.equal((state as { entries: Array<{ score: number }> }).entries[0].score, 25);
  });

  await t.test('a disqualified entry scores nothing and a completed contest takes no entries', async () => {
    await svc.sql(`UPDATE contest_entries SET status = 'disqualified' WHERE participant_id = 'p3' AND contest_id = 'spring-1'`);
    await recordFact(svc, tenant.tenantId, { name: 'purchase', participantId: 'p3', properties: { amount: 10 } });
    const [p3] = await svc.sql(`SELECT score FROM contest_entries WHERE participant_id = 'p3' AND contest_id = 'spring-1'`);
    assert.equal(p3.score, 20);
    await svc.sql(`UPDATE contests SET ends_at = $1 WHERE id = 'spring-1'`, [new Date(clock.nowMs() - 1)]);
    assert.equal(await advanceContest(svc.service.db, svc.config, tenant.tenantId, 'spring-1'), 'completed');
    const session = await sessionFor(svc, tenant, 'p9');
    const late = await svc.request('POST', '/api/v1/contests/spring-1/enter', { body: { session_id: session } });
    assert.equal(late.status, 422);
    assert.equal(late.body.code, 'CONTEST_NOT_OPEN');
    const patch = await svc.request('PATCH', '/api/v1/admin/contests/spring-1', { key, body: { ends_at: new Date(clock.nowMs() + 3_600_000).toISOString() } });
    assert.equal(patch.status, 422);
    assert.equal(await advanceContest(svc.service.db, svc.config, tenant.tenantId, 'spring-1'), 'completed', 'nothing moves back');
  });

  await t.test('with auto_disqualify_on_velocity_breach the breaching entry is disqualified and scores no more', async () => {
    const body = contestDefinition('auto', {
      starts_at: new Date(clock.nowMs() - 60_000).toISOString(),
      ends_at: new Date(clock.nowMs() + 3_600_000).toISOString(),
      fraud_rules: { max_score_per_hour: 100, auto_disqualify_on_velocity_breach: true, review_threshold_score: 10 },
    });
    assert.equal((await svc.request('POST', '/api/v1/admin/contests', { key, body })).status, 201);
    assert.equal((await svc.request('POST', '/api/v1/admin/contests/auto/publish', { key })).status, 200);
    assert.equal(await advanceContest(svc.service.db, svc.config, tenant.tenantId, 'auto'), 'active');
    for (const p of ['fast', 'steady']) {
      assert.equal((await svc.request('POST', '/api/v1/admin/contests/auto/entries', { key, body: { participant_id: p } })).status, 201);
    }
    await recordFact(svc, tenant.tenantId, { name: 'purchase', participantId: 'fast', properties: { amount: 60 } });
    await recordFact(svc, tenant.tenantId, { name: 'purchase', participantId: 'fast', properties: { amount: 60 } });
    await recordFact(svc, tenant.tenantId, { name: 'purchase', participantId: 'fast', properties: { amount: 60 } });
    await recordFact(svc, tenant.tenantId, { name: 'purchase', participantId: 'steady', properties: { amount: 50 } });
    const breaches = await svc.sql(`SELECT data FROM outbox_events WHERE event = 'fraud.velocity_breach' AND data->>'contest_id' = 'auto'`);
    assert.equal(breaches.length, 1);
    assert.equal(breaches[0].data.cap, 'per_hour');
    assert.equal(breaches[0].data.observed, 120);
    assert.equal(breaches[0].data.action, 'disqualified');
    const [fast] = await svc.sql(`SELECT status, score FROM contest_entries WHERE contest_id = 'auto' AND participant_id = 'fast'`);
    assert.deepEqual([fast.status, fast.score], ['disqualified', 120]);
    const board = await svc.request('GET', '/api/v1/contests/auto/leaderboard', { key });
    assert.deepEqual(board.body.rows.map((r: { participant_id: string }) => r.participant_id), ['steady']);

    // Completion sends the remaining winner to review (score at or above review_threshold_score).
    await svc.sql(`UPDATE contests SET ends_at = $1 WHERE id = 'auto'`, [new Date(clock.nowMs() - 1)]);
    assert.equal(await advanceContest(svc.service.db, svc.config, tenant.tenantId, 'auto'), 'completed');
    const queue = await svc.request('GET', '/api/v1/admin/fraud/reviews?status=pending&contest_id=auto', { key });
    assert.equal(queue.body.reviews.length, 1);
    const review = queue.body.reviews[0];
    assert.equal(review.participant_id, 'steady');
    const crossTenant = await svc.request('POST', '/api/v1/admin/fraud/decisions', { key: other.apiKey, body: { review_id: review.review_id, decision: 'approve' } });
    assert.equal(crossTenant.status, 404);
    const otherQueue = await svc.request('GET', '/api/v1/admin/fraud/reviews?status=pending', { key: other.apiKey });
    assert.equal(otherQueue.body.reviews.length, 0);
    const unnamed = await svc.request('POST', '/api/v1/admin/fraud/decisions', { key, body: { decision: 'approve' } });
    assert.equal(unnamed.status, 400);
    const unknownDecision = await svc.request('POST', '/api/v1/admin/fraud/decisions', { key, body: { review_id: review.review_id, decision: 'maybe' } });
    assert.equal(unknownDecision.status, 400);
    const curt = await svc.request('POST', '/api/v1/admin/fraud/decisions', { key, body: { review_id: review.review_id, decision: 'approve', reason: 'ok' } });
    assert.equal(curt.status, 400, 'a reason of a word or two explains nothing to the next reader of the trail');
    assert.deepEqual(
      curt.body.errors.map((e: { path: string; code: string; limit?: number }) => [e.path, e.code, e.limit]),
      [['/reason', 'min_length', 10]],
    );
    const [stillPending] = await svc.sql(`SELECT status FROM contest_reviews WHERE id = $1`, [review.review_id]);
    assert.equal(stillPending.status, 'pending');
  });

  await t.test('events ingested over HTTP score the contest once per event, inside the window only', async () => {
    const body = contestDefinition('http-cup', {
      starts_at: new Date(clock.nowMs() - 60_000).toISOString(),
      ends_at: new Date(clock.nowMs() + 3_600_000).toISOString(),
      scoring: { event_type: 'order_paid', score_attribute: 'total', weight: 3 },
    });
    assert.equal((await svc.request('POST', '/api/v1/admin/contests', { key, body })).status, 201);
    assert.equal((await svc.request('POST', '/api/v1/admin/contests/http-cup/publish', { key })).status, 200);
    assert.equal(await advanceContest(svc.service.db, svc.config, tenant.tenantId, 'http-cup'), 'active');
    const session = await sessionFor(svc, tenant, 'buyer', 'Buyer');
    assert.equal((await svc.request('POST', '/api/v1/contests/http-cup/enter', { body: { session_id: session } })).status, 201);
    const ingest = (idempotencyKey: string, total: unknown, timestamp?: string) =>
      svc.request('POST', '/api/v1/ingest/events/sync', {
        key,
        body: { event_name: 'order_paid', participant_id: 'buyer', properties: { total }, idempotency_key: idempotencyKey, ...(timestamp ? { timestamp } : {}) },
      });
    const first = await ingest('order-1', 7);
    assert.equal(first.status, 200, first.text);
    assert.ok(first.body.fact_id);
    const repeat = await ingest('order-1', 7);
    assert.equal(repeat.status, 200);
    assert.equal(repeat.body.duplicate, true);
    const early = await ingest('order-0', 100, new Date(clock.nowMs() - 2 * 3_600_000).toISOString());
    assert.equal(early.status, 200, early.text);
    const notNumeric = await ingest('order-2', 'seven');
    assert.equal(notNumeric.status, 200);
    const me = await svc.request('GET', `/api/v1/contests/http-cup/me?session_id=${session}`);
    assert.equal(me.body.score, 21, '3 × 7, once; the early and the non-numeric events score nothing');
    assert.equal(me.body.score_events, 1);
    const recorded = await svc.sql(`SELECT fact_id FROM contest_score_events WHERE contest_id = 'http-cup'`);
    assert.deepEqual(recorded.map((r) => r.fact_id), [first.body.fact_id]);
  });
});

/**
 * Facts of one processing batch (as ingestion's lanes apply them) are scored
 * together at the end of the batch, with the outcome of scoring them one by
 * one: a repeated fact scores once, a velocity breach is reported at the fact
 * that crosses the cap with the history up to that fact, a disqualifying
 * breach stops the later facts of that entry only, and each breach event
 * keeps its fact's place among the batch's events.
 */
test('contests: the facts of a processing batch score as one by one, with two statements', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const key = tenant.apiKey;
  const window = { starts_at: new Date(clock.nowMs() - 60_000).toISOString(), ends_at: new Date(clock.nowMs() + 3_600_000).toISOString() };
  const rules = (autoDisqualify: boolean) => ({ ...contestDefinition('x').fraud_rules, max_score_per_minute: 100_000, max_score_per_hour: 100, auto_disqualify_on_velocity_breach: autoDisqualify });
  const contests = [
    contestDefinition('strict', { ...window, fraud_rules: rules(true) }),
    contestDefinition('lenient', { ...window, scoring: { event_type: 'visit', score_attribute: 'amount', weight: 1 }, fraud_rules: rules(false) }),
  ];
  for (const body of contests) {
    assert.equal((await svc.request('POST', '/api/v1/admin/contests', { key, body })).status, 201);
    assert.equal((await svc.request('POST', `/api/v1/admin/contests/${body.id}/publish`, { key })).status, 200);
    assert.equal(await advanceContest(svc.service.db, svc.config, tenant.tenantId, body.id), 'active');
    for (const p of ['b1', 'b2']) assert.equal((await svc.request('POST', `/api/v1/admin/contests/${body.id}/entries`, { key, body: { participant_id: p } })).status, 201);
  }
  // After the entries were made (a fact before its entry scores nothing).
  const base = clock.nowMs() + 1_000;
  const fact = (n: number, name: string, participantId: string, amount: number): Fact => ({
    id: `fct_batch_${name}_${n}`,
    name,
    participantId,
    engagementId: null,
    properties: { amount },
    occurredAt: new Date(base + n * 100),
    source: 'event',
    evaluateChallenges: false,
  });
  const facts = [
    fact(1, 'purchase', 'b1', 60),
    fact(2, 'purchase', 'b2', 30),
    fact(3, 'purchase', 'b1', 60), // b1 crosses 100 in the strict contest: disqualified
    fact(4, 'purchase', 'b1', 60), // scores nothing: b1 is disqualified by now
    fact(1, 'purchase', 'b1', 60), // the first fact again: scores nothing
    fact(5, 'purchase', 'b2', 30),
    fact(6, 'visit', 'b1', 70),
    fact(7, 'visit', 'b1', 70), // b1 crosses 100 in the lenient contest: flagged, still scoring
    fact(8, 'visit', 'b1', 70), // no new crossing
  ];
  const statements: string[] = [];
  await svc.service.db.tenant(tenant.tenantId, (tx) => {
    const query = tx.query.bind(tx) as (...args: unknown[]) => unknown;
    (tx as unknown as { query: unknown }).query = (...args: unknown[]) => {
      if (typeof args[0] === 'string' && /contest_score_events|contest_entries/.test(args[0])) statements.push(args[0]);
      return query(...args);
    };
    return inBatch(tx, async (batchTx) => {
      for (const f of facts) await runFactHandlers(batchTx, tenant.tenantId, f);
    });
  });
  const entries = await svc.sql(`SELECT contest_id, participant_id, score, score_events, status FROM contest_entries WHERE tenant_id = $1 ORDER BY contest_id DESC, participant_id`, [tenant.tenantId]);
  assert.deepEqual(entries.map((e) => [e.contest_id, e.participant_id, e.score, e.score_events, e.status]), [
    ['strict', 'b1', 120, 2, 'disqualified'],
    ['strict', 'b2', 60, 2, 'active'],
    ['lenient', 'b1', 210, 3, 'flagged'],
    ['lenient', 'b2', 0, 0, 'active'],
  ]);
  const breaches = await svc.sql(`SELECT data FROM outbox_events WHERE tenant_id = $1 AND event = 'fraud.velocity_breach' ORDER BY seq`, [tenant.tenantId]);
  assert.deepEqual(
    breaches.map((b) => [b.data.contest_id, b.data.action, b.data.observed, b.data.history.map((h: { score: number }) => h.score)]),
    [
      ['strict', 'disqualified', 120, [60, 60]],
      ['lenient', 'flagged', 140, [70, 70]],
    ],
    'one event per crossing, at the crossing fact, with the history up to it (not the later fact scored in the same batch)',
  );
  assert.equal(statements.filter((s) => /contest_score_events/.test(s)).length, 2 + breaches.length, 'one read and one write for the batch, and a history read per breach');
});
