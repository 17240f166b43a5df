import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { QUIZ, balance, complete, createEngagement, createReward, outbox, session, validate, wheel } from '../engagements/testing.js';
import { weightedPick } from './index.js';

const LIMITS = { RATE_LIMIT_KEY_PER_MINUTE: '1000000' };

test('activities: spin wheel, quiz, limits, atomic actions, facts', async (t) => {
  const svc = await startTestService(t, { config: LIMITS });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  t.after(() => clock.reset());

  const coupon = await createReward(svc, tenant, { id: 'coupon10', name: '10% off', type: 'coupon', metadata: { discount_percent: 10, min_order_value: 20 } });
  const engagement = await createEngagement(svc, tenant, {
    activities: [
      wheel({
        segments: [
          { label: '100 points', prize_type: 'points', prize_value: 100, weight: 3 },
          { label: '10% coupon', prize_type: 'reward', reward_id: coupon.id, weight: 1 },
        ],
        on_completion: [{ type: 'award_points', amount: 5 }],
      }),
      QUIZ,
      { ...wheel({ id: 'once', max_attempts: 1, cooldown_seconds: 0 }) },
      { ...wheel({ id: 'cool', max_attempts: 10, cooldown_seconds: 60 }) },
    ],
  });

  await t.test('validate draws on the server; a disagreeing spin_result_index is answered valid: false with the server result', async () => {
    const s = await session(svc, tenant, engagement.id);
    const first = await validate(svc, s, 'wheel1', 'spin_wheel', { payload: { spin_result_index: 0 } });
    assert.equal(first.status, 200, first.text);
    const result = first.body.result;
    assert.ok([0, 1].includes(result.segment_index));
    assert.equal(result.prize_label, result.segment_index === 0 ? '100 points' : '10% coupon');
    assert.equal(result.prize_type, result.segment_index === 0 ? 'points' : 'reward');
    assert.equal(first.body.valid, result.segment_index === 0);
    // Validating again before completing returns the same draw and takes no new attempt.
    const again = await validate(svc, s, 'wheel1', 'spin_wheel', { payload: { spin_result_index: 1 - result.segment_index } });
    assert.equal(again.body.attempt_id, first.body.attempt_id);
    assert.deepEqual(again.body.result, result);
    assert.equal(again.body.valid, false);
    const eligibility = await svc.request('GET', `/api/v1/activities/wheel1/eligibility?session_id=${s.sessionId}&engagement_id=${s.engagementId}`);
    assert.equal(eligibility.body.attempts_used, 1);

    const done = await complete(svc, s, 'wheel1', 'spin_wheel', { attempt_id: first.body.attempt_id, payload: { spin_result_index: 1 - result.segment_index } });
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.success, true);
    assert.deepEqual(done.body.result, result, 'the completion awards the server draw, not the client index');
    assert.match(done.body.fact_id, /^fct_/);
    const prize = done.body.actions_executed[0];
    if (result.segment_index === 0) {
      assert.deepEqual(prize, { type: 'award_points', source: 'prize', points_awarded: 100, new_balance: 100 });
    } else {
      assert.equal(prize.type, 'award_reward');
      assert.equal(prize.reward_claimed.reward_id, 'coupon10');
      assert.equal(prize.reward_claimed.display_type, 'coupon');
      assert.equal(prize.reward_claimed.title, '10% off');
      assert.match(prize.reward_claimed.code, /^[A-Z2-9]{10}$/);
    }
    const bonus = done.body.actions_executed[1];
    assert.equal(bonus.type, 'award_points');
    assert.equal(bonus.points_awarded, 5);
    assert.equal(bonus.new_balance, result.segment_index === 0 ? 105 : 5);
    assert.equal(await balance(svc, tenant.tenantId, s.participantId), result.segment_index === 0 ? 105 : 5);

    const facts = await svc.sql('SELECT name, source, properties FROM activity_facts WHERE tenant_id = $1 AND id = $2', [tenant.tenantId, done.body.fact_id]);
    assert.equal(facts.length, 1);
    assert.equal(facts[0].name, 'activity_completed');
    assert.equal(facts[0].properties.segment_index, result.segment_index);
    const legacy = (await outbox(svc, tenant.tenantId, 'activity.completed')).filter((e) => e.participant_id === s.participantId);
    assert.equal(legacy.length, 1);
    assert.deepEqual(
      { activity_id: legacy[0].data.activity_id, activity_type: legacy[0].data.activity_type, fact_id: legacy[0].data.fact_id },
      { activity_id: 'wheel1', activity_type: 'spin_wheel', fact_id: done.body.fact_id },
    );
  });

  await t.test('completing the same attempt twice is idempotent: same response, duplicate: true, nothing applied again', async () => {
    const s = await session(svc, tenant, engagement.id);
    const first = await complete(svc, s, 'wheel1', 'spin_wheel', { attempt_id: 'my-attempt-0001' });
    assert.equal(first.status, 200, first.text);
    const before = await balance(svc, tenant.tenantId, s.participantId);
    const second = await complete(svc, s, 'wheel1', 'spin_wheel', { attempt_id: 'my-attempt-0001' });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.duplicate, true);
    assert.equal(second.body.fact_id, first.body.fact_id);
    assert.deepEqual(second.body.actions_executed, first.body.actions_executed);
    assert.equal(await balance(svc, tenant.tenantId, s.participantId), before);
    const facts = await svc.sql('SELECT count(*)::int AS n FROM activity_facts WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, s.participantId]);
    assert.equal(facts[0].n, 1);
    // Parallel repeats of one attempt id apply once.
    const s2 = await session(svc, tenant, engagement.id);
    const parallel = await Promise.all(Array.from({ length: 8 }, () => complete(svc, s2, 'wheel1', 'spin_wheel', { attempt_id: 'parallel-attempt-1' })));
    assert.ok(parallel.every((r) => r.status === 200), parallel.map((r) => r.text).join());
    assert.equal(parallel.filter((r) => r.body.duplicate === false).length, 1);
    const attempts = await svc.sql('SELECT attempts_used FROM activity_participations WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, s2.participantId]);
    assert.equal(attempts[0].attempts_used, 1);
    // Another participant cannot act on someone else's attempt id.
    const stranger = await complete(svc, s, 'wheel1', 'spin_wheel', { attempt_id: 'parallel-attempt-1' });
    assert.equal(stranger.status, 409);
  });

  await t.test('max_attempts and cooldowns are enforced on validate, complete and eligibility', async () => {
    const s = await session(svc, tenant, engagement.id);
    let eligibility = await svc.request('GET', `/api/v1/activities/once/eligibility?session_id=${s.sessionId}&engagement_id=${s.engagementId}`);
    assert.deepEqual(eligibility.body, { eligible: true, attempts_used: 0, max_attempts: 1, cooldown_remaining_seconds: 0, open_attempt_id: null, livemode: true });
    assert.equal((await complete(svc, s, 'once', 'spin_wheel')).status, 200);
    const exhausted = await complete(svc, s, 'once', 'spin_wheel');
    assert.equal(exhausted.status, 422);
    assert.equal(exhausted.body.code, 'ATTEMPTS_EXHAUSTED');
    assert.match(exhausted.body.detail, /1 attempts/);
    assert.equal((await validate(svc, s, 'once', 'spin_wheel')).status, 422);
    eligibility = await svc.request('GET', `/api/v1/activities/once/eligibility?session_id=${s.sessionId}&engagement_id=${s.engagementId}`);
    assert.equal(eligibility.body.eligible, false);
    assert.equal(eligibility.body.attempts_used, 1);

    assert.equal((await complete(svc, s, 'cool', 'spin_wheel')).status, 200);
    const cooling = await complete(svc, s, 'cool', 'spin_wheel');
    assert.equal(cooling.status, 422);
    assert.equal(cooling.body.code, 'COOLDOWN_ACTIVE');
    assert.equal(cooling.body.cooldown_remaining_seconds, 60);
    clock.advance(30_000);
    eligibility = await svc.request('GET', `/api/v1/activities/cool/eligibility?session_id=${s.sessionId}&engagement_id=${s.engagementId}`);
    assert.equal(eligibility.body.eligible, false);
    assert.equal(eligibility.body.cooldown_remaining_seconds, 30);
    clock.advance(30_000);
    assert.equal((await complete(svc, s, 'cool', 'spin_wheel')).status, 200);
  });

  await t.test('parallel completions never exceed max_attempts', async () => {
    const s = await session(svc, tenant, engagement.id);
    const responses = await Promise.all(Array.from({ length: 12 }, () => complete(svc, s, 'wheel1', 'spin_wheel')));
    assert.equal(responses.filter((r) => r.status === 200).length, 5, responses.map((r) => r.text).join('\n'));
    assert.ok(responses.filter((r) => r.status !== 200).every((r) => r.status === 422 && r.body.code === 'ATTEMPTS_EXHAUSTED'));
  });

  await t.test('quiz: score and passed are recomputed from the answers; client claims are ignored', async () => {
    const s = await session(svc, tenant, engagement.id);
    const wrong = await complete(svc, s, 'quiz1', 'quiz', {
      payload: { answers: [{ question_id: 'q1', selected_option: 0 }, { question_id: 'q2', selected_option: 0 }], score: 100, passed: true },
    });
    assert.equal(wrong.status, 200, wrong.text);
    assert.equal(wrong.body.result.score, 0);
    assert.equal(wrong.body.result.passed, false);
    assert.deepEqual(wrong.body.actions_executed, [], 'points are for passing only');
    const half = await complete(svc, s, 'quiz1', 'quiz', { payload: { answers: [{ question_id: 'q1', selected_option: 1 }], score: 0, passed: false } });
    assert.equal(half.body.result.score, 50);
    assert.equal(half.body.result.passed, true);
    assert.deepEqual(half.body.actions_executed, [{ type: 'award_points', source: 'on_completion', points_awarded: 50, new_balance: 50 }]);
    const events = (await outbox(svc, tenant.tenantId, 'quiz.completed')).filter((e) => e.participant_id === s.participantId);
    assert.deepEqual(
      events.map((e) => [e.data.score, e.data.passed, e.data.activity_id]),
      [
        [0, false, 'quiz1'],
        [50, true, 'quiz1'],
      ],
    );
    assert.equal(events[1].data.fact_id, half.body.fact_id);
    const validated = await validate(svc, s, 'quiz1', 'quiz', { payload: { answers: [{ question_id: 'q1', selected_option: 2 }] } });
    assert.equal(validated.status, 200);
    assert.deepEqual(validated.body, { valid: true, result: { answered: 1, total_questions: 2 }, attempt_id: null, livemode: true });
  });

  await t.test('bad input answers 4xx with detail and awards nothing', async () => {
    const s = await session(svc, tenant, engagement.id);
    const cases: Array<[string, Promise<any>, number]> = [
      ['unknown question', complete(svc, s, 'quiz1', 'quiz', { payload: { answers: [{ question_id: 'nope', selected_option: 0 }] } }), 422],
      ['option out of range', complete(svc, s, 'quiz1', 'quiz', { payload: { answers: [{ question_id: 'q2', selected_option: 5 }] } }), 422],
      ['repeated answer', complete(svc, s, 'quiz1', 'quiz', { payload: { answers: [{ question_id: 'q2', selected_option: 1 }, { question_id: 'q2', selected_option: 1 }] } }), 400],
      ['wrong activity_type', complete(svc, s, 'quiz1', 'spin_wheel'), 422],
      ['unknown activity_type', complete(svc, s, 'quiz1', 'scratch_card'), 400],
      ['unknown activity', complete(svc, s, 'nope', 'quiz'), 404],
      ['spin field on a quiz', complete(svc, s, 'quiz1', 'quiz', { payload: { spin_result_index: 1 } }), 400],
      ['malformed payload', complete(svc, s, 'quiz1', 'quiz', { payload: { answers: 'all right' } }), 400],
      ['extra body field', complete(svc, s, 'quiz1', 'quiz', { tenant_id: tenant.tenantId }), 400],
      ['negative index', validate(svc, s, 'wheel1', 'spin_wheel', { payload: { spin_result_index: -1 } }), 400],
    ];
    for (const [name, pending, status] of cases) {
      const response = await pending;
      assert.equal(response.status, status, `${name}: ${response.text}`);
      assert.ok(response.body.detail, name);
    }
    assert.equal(await balance(svc, tenant.tenantId, s.participantId), 0);
    const attempts = await svc.sql('SELECT count(*)::int AS n FROM activity_attempts WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, s.participantId]);
    assert.equal(attempts[0].n, 0);
  });

  await t.test('an activity of another engagement or tenant, and a draft engagement, are refused', async () => {
    const otherEngagement = await createEngagement(svc, tenant, { activities: [wheel({ id: 'elsewhere' })] });
    const s = await session(svc, tenant, engagement.id);
    const foreign = await complete(svc, s, 'elsewhere', 'spin_wheel');
    assert.equal(foreign.status, 404);
    // The session is bound to its engagement: naming another one is refused.
    const mismatch = await svc.request('POST', '/api/v1/activities/elsewhere/complete-with-actions', {
      body: { session_id: s.sessionId, engagement_id: otherEngagement.id, activity_type: 'spin_wheel' },
    });
    assert.equal(mismatch.status, 403);
    const otherTenantEngagement = await createEngagement(svc, other, { activities: [wheel({ id: 'theirs' })] });
    const theirs = await complete(svc, s, 'theirs', 'spin_wheel');
    assert.equal(theirs.status, 404);
    const crossSession = await svc.request('POST', '/api/v1/activities/wheel1/complete-with-actions', {
      body: { session_id: s.sessionId, engagement_id: otherTenantEngagement.id, activity_type: 'spin_wheel' },
    });
    assert.equal(crossSession.status, 403);

    const draft = await createEngagement(svc, tenant, { activities: [wheel({ id: 'drafty' })] }, false);
    const draftSession = await session(svc, tenant, draft.id);
    const refused = await complete(svc, draftSession, 'drafty', 'spin_wheel');
    assert.equal(refused.status, 422);
    assert.equal(refused.body.code, 'ENGAGEMENT_NOT_PUBLISHED');
    assert.equal(await balance(svc, tenant.tenantId, draftSession.participantId), 0);
    const apiKeyCaller = await svc.request('POST', '/api/v1/activities/wheel1/complete-with-actions', {
      key: tenant.apiKey,
      body: { session_id: s.sessionId, engagement_id: engagement.id, activity_type: 'spin_wheel' },
    });
    assert.equal(apiKeyCaller.status, 403);
  });

  await t.test('all or none: an out-of-stock reward action rolls back the points of the same completion', async () => {
    const pool = await createReward(svc, tenant, { id: 'pool-empty', name: 'Gift', type: 'voucher', code_source: 'pool', metadata: { value: 5, currency: 'EUR' } });
    const e = await createEngagement(svc, tenant, {
      activities: [wheel({ id: 'w', segments: [{ label: 'x', prize_type: 'none', weight: 1 }, { label: 'y', prize_type: 'none', weight: 1 }], on_completion: [{ type: 'award_points', amount: 10 }, { type: 'award_reward', reward_id: pool.id }] })],
    });
    const s = await session(svc, tenant, e.id);
    const response = await complete(svc, s, 'w', 'spin_wheel');
    assert.equal(response.status, 422);
    assert.equal(response.body.code, 'REWARD_OUT_OF_STOCK');
    assert.equal(await balance(svc, tenant.tenantId, s.participantId), 0);
    const ledger = await svc.sql('SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, s.participantId]);
    assert.equal(ledger[0].n, 0);
    const eligibility = await svc.request('GET', `/api/v1/activities/w/eligibility?session_id=${s.sessionId}&engagement_id=${s.engagementId}`);
    assert.equal(eligibility.body.attempts_used, 0, 'the failed completion took no attempt');
  });

  await t.test('a segment whose prize inventory is used up is never drawn', async () => {
    const e = await createEngagement(svc, tenant, {
      activities: [
        wheel({
          id: 'stock',
          max_attempts: 10,
          segments: [
            { label: 'Jackpot', prize_type: 'points', prize_value: 1000, weight: 1000, inventory: 2 },
            { label: 'Small', prize_type: 'points', prize_value: 1, weight: 0.001 },
          ],
        }),
      ],
    });
    const sessions = await Promise.all(Array.from({ length: 6 }, () => session(svc, tenant, e.id)));
    const results = await Promise.all(sessions.map((s) => complete(svc, s, 'stock', 'spin_wheel')));
    assert.ok(results.every((r) => r.status === 200), results.map((r) => r.text).join());
    const jackpots = results.filter((r) => r.body.result.segment_index === 0).length;
    assert.equal(jackpots, 2);
    const stock = await svc.sql('SELECT awarded FROM spin_segment_awards WHERE tenant_id = $1 AND activity_id = $2 AND segment_index = 0', [tenant.tenantId, 'stock']);
    assert.equal(stock[0].awarded, 2);
  });

  await t.test('weights decide the draw: a zero-chance candidate set picks by weight only', () => {
    const segments = [
      { label: 'a', prize_type: 'none' as const, weight: 1 },
      { label: 'b', prize_type: 'none' as const, weight: 3 },
    ];
    const counts = [0, 0];
    for (let i = 0; i < 4000; i++) counts[weightedPick(segments, [0, 1])] += 1;
    // Expected 1000 / 3000; six standard deviations (about 165) apart from failing by chance.
    assert.ok(Math.abs(counts[0] - 1000) < 165, `drew ${counts[0]} of segment a`);
    assert.equal(weightedPick(segments, [1]), 1);
  });

  await t.test('grant_badge actions award through the badges module, once; unknown badges are refused at save', async () => {
    const badge = await svc.request('POST', '/api/v1/admin/badges', { key: tenant.apiKey, body: { code: 'spinner', name: 'Spinner', image_url: 'https://cdn.example.com/spinner.png' } });
    assert.equal(badge.status, 201, badge.text);
    const e = await createEngagement(svc, tenant, { activities: [wheel({ id: 'b', segments: [{ label: 'x', prize_type: 'none', weight: 1 }, { label: 'y', prize_type: 'none', weight: 1 }], on_completion: [{ type: 'grant_badge', badge_code: 'spinner' }] })] });
    const s = await session(svc, tenant, e.id);
    const first = await complete(svc, s, 'b', 'spin_wheel');
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.actions_executed, [{ type: 'grant_badge', source: 'on_completion', badge_code: 'spinner', badge_name: 'Spinner', badge_image_url: 'https://cdn.example.com/spinner.png', awarded: true }]);
    const second = await complete(svc, s, 'b', 'spin_wheel');
    assert.deepEqual(second.body.actions_executed, [{ type: 'grant_badge', source: 'on_completion', badge_code: 'spinner', badge_name: 'Spinner', badge_image_url: 'https://cdn.example.com/spinner.png', awarded: false }]);
    const earned = (await outbox(svc, tenant.tenantId, 'badge.earned.v1')).filter((ev) => ev.participant_id === s.participantId);
    assert.equal(earned.length, 1);
    const unknown = await svc.request('POST', '/api/v1/admin/engagements', {
      key: tenant.apiKey,
      body: { name: 'x', site_slug: 'x', activities: [wheel({ on_completion: [{ type: 'grant_badge', badge_code: 'ghost' }] })] },
    });
    assert.equal(unknown.status, 422);
    assert.equal(unknown.body.code, 'UNKNOWN_BADGE');
  });

  await t.test('custom facts are stored and flagged for challenge evaluation; reserved names are refused', async () => {
    const s = await session(svc, tenant, engagement.id);
    const body = { session_id: s.sessionId, engagement_id: s.engagementId, fact_name: 'video_watched', properties: { seconds: 42 }, trigger_challenge_evaluation: true, idempotency_key: 'k1' };
    const emitted = await svc.request('POST', '/api/v1/activities/facts/emit', { body });
    assert.equal(emitted.status, 201, emitted.text);
    assert.equal(emitted.body.challenge_evaluation_triggered, true);
    const again = await svc.request('POST', '/api/v1/activities/facts/emit', { body });
    assert.equal(again.status, 201, 'a replay answers the first status');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.body.duplicate, true);
    assert.equal(again.body.fact_id, emitted.body.fact_id);
    const rows = await svc.sql('SELECT name, source, properties, evaluate_challenges FROM activity_facts WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, s.participantId]);
    assert.deepEqual(rows, [{ name: 'video_watched', source: 'custom', properties: { seconds: 42 }, evaluate_challenges: true }]);
    const reserved = await svc.request('POST', '/api/v1/activities/facts/emit', { body: { session_id: s.sessionId, engagement_id: s.engagementId, fact_name: 'quiz_completed' } });
    assert.equal(reserved.status, 422);
    const noSession = await svc.request('POST', '/api/v1/activities/facts/emit', { body: { engagement_id: s.engagementId, fact_name: 'x' } });
    assert.equal(noSession.status, 401);
  });
});
