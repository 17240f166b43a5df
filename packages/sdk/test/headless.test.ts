import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, waitFor } from '../../../test/helper.ts';
import { createEngagementSession, createLoyaltyClient, LoyaltyAuthenticationError, LoyaltyNotFoundError, LoyaltyValidationError, type StreamEvent } from '@loyalty/sdk';
import { CORRECT_ANSWERS, SITE_SLUG, publishDemoEngagement } from './fixtures.ts';

/** The headless API against a running service and an engagement made through the admin API. */

function countingFetch() {
  const calls: string[] = [];
  const impl: typeof fetch = (input, init) => {
    calls.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
    return fetch(input, init);
  };
  return { calls, impl };
}

test('headless: anonymous session, load, spin, quiz, gates, balance, badges, rewards, live events', async (t) => {
  const svc = await startTestService(t, { jobs: true });
  const tenant = await svc.createTenant();
  const published = await publishDemoEngagement(svc, tenant);
  const counter = countingFetch();
  const session = createEngagementSession({ baseUrl: svc.baseUrl, tenantSlug: tenant.slug, siteSlug: SITE_SLUG, displayName: 'Ada', fetch: counter.impl });
  const events: StreamEvent[] = [];
  const streamErrors: unknown[] = [];
  let unsubscribe = () => {};
  t.after(() => unsubscribe());

  await t.test('load returns the published engagement without server secrets', async () => {
    const engagement = await session.load();
    assert.equal(engagement.engagement_id, published.id);
    assert.equal(engagement.site_slug, SITE_SLUG);
    assert.deepEqual(engagement.activities.map((activity) => activity.id), ['wheel1', 'quiz1']);
    assert.equal(engagement.screens.find((screen) => screen.id === 'vip')?.gated, true);
    assert.ok(!JSON.stringify(engagement).includes('correct_option'));
    assert.equal(session.engagement?.engagement_id, published.id);
  });

  await t.test('ensureSession starts one anonymous session, however often it is called', async () => {
    const [first, second] = await Promise.all([session.ensureSession(), session.ensureSession()]);
    assert.deepEqual(first, second);
    assert.match(first.participant_id, /^anon_/);
    assert.ok(first.session_id);
    assert.ok(Date.parse(first.expires_at) > Date.now());
    assert.equal(counter.calls.filter((call) => call.endsWith('/sessions')).length, 1);
    unsubscribe = session.subscribe((event) => events.push(event), (error) => streamErrors.push(error));
  });

  await t.test('eligibility and gates before playing', async () => {
    const eligibility = await session.eligibility('wheel1');
    assert.deepEqual({ eligible: eligibility.eligible, attempts_used: eligibility.attempts_used, max_attempts: eligibility.max_attempts }, { eligible: true, attempts_used: 0, max_attempts: 2 });
    const gates = await session.checkGates({ targets: ['intro', 'vip', 'rich'] });
    assert.deepEqual(gates.gates.intro, { locked: false, conditions_met: [] });
    assert.equal(gates.gates.vip.locked, true);
    assert.deepEqual(gates.gates.vip.conditions_remaining, ['quiz_completed', 'screen_visited:intro']);
    assert.equal(gates.gates.rich.unlock_hint, 'Collect 50 points.');
  });

  await t.test('spin: the server draws, the completion claims the coupon and awards 5 points', async () => {
    const { draw, completion } = await session.spin('wheel1');
    assert.equal(draw.result.prize_type, 'reward');
    assert.ok(draw.attempt_id);
    assert.equal(completion.success, true);
    const types = completion.actions_executed.map((action) => action.type).sort();
    assert.deepEqual(types, ['award_points', 'award_reward']);
    const eligibility = await session.eligibility('wheel1');
    assert.equal(eligibility.attempts_used, 1);
  });

  await t.test('quiz: correct answers pass, award 50 points and the badge', async () => {
    const completion = await session.submitQuiz('quiz1', CORRECT_ANSWERS);
    assert.equal(completion.success, true);
    assert.equal(completion.result?.passed, true);
    const points = completion.actions_executed.find((action) => action.type === 'award_points');
    assert.equal(points?.points_awarded, 50);
    assert.equal(points?.new_balance, 55);
  });

  await t.test('a visited screen and the earned points unlock the gated screens', async () => {
    const visit = await session.recordScreenVisit({ screen_id: 'intro' });
    assert.equal(visit.visit_count, 1);
    const gates = await session.checkGates({ targets: ['vip', 'rich'] });
    assert.deepEqual(gates.gates.vip, { locked: false, conditions_met: ['quiz_completed', 'screen_visited:intro'] });
    assert.deepEqual(gates.gates.rich, { locked: false, conditions_met: ['min_points_50'] });
  });

  await t.test('balance, badges and rewards of the participant', async () => {
    const balance = await session.balance();
    assert.equal(balance.available_points, 55);
    assert.equal(balance.total_points, 55);
    const badges = await session.badges();
    const quizzer = badges.badges.find((badge) => badge.code === 'quizzer');
    assert.equal(quizzer?.earned, true);
    const rewards = await session.rewards();
    assert.equal(rewards.rewards.length, 1);
    assert.equal(rewards.rewards[0].reward_id, 'coupon10');
  });

  await t.test('the live stream delivers the participant\'s envelopes', async () => {
    const participantId = (await session.ensureSession()).participant_id;
    await waitFor('points and badge events on the stream', () => events.some((e) => e.event === 'badge.earned.v1') && events.filter((e) => e.event === 'points.awarded.v1').length >= 2);
    for (const event of events) {
      assert.match(event.id, /^evt_/);
      assert.equal(event.participant_id, participantId);
    }
    assert.deepEqual(streamErrors, []);
    unsubscribe();
  });

  await t.test('malformed arguments are refused before sending', async () => {
    const before = counter.calls.length;
    for (const call of [() => session.spin(''), () => session.eligibility(undefined as unknown as string), () => session.submitQuiz('quiz1', [{ question_id: 'q1', selected_option: -1 }]), () => session.submitQuiz('quiz1', 'b' as never), () => session.checkGates({ targets: [] })]) {
      await assert.rejects(call(), LoyaltyValidationError);
    }
    assert.equal(counter.calls.length, before);
    assert.throws(() => createEngagementSession({ baseUrl: svc.baseUrl, tenantSlug: '', siteSlug: 'x' }), LoyaltyValidationError);
  });

  await t.test('an unknown site is a LoyaltyNotFoundError', async () => {
    const missing = createEngagementSession({ baseUrl: svc.baseUrl, tenantSlug: tenant.slug, siteSlug: 'no-such-site' });
    await assert.rejects(missing.load(), LoyaltyNotFoundError);
    await assert.rejects(missing.balance(), LoyaltyNotFoundError);
  });
});

test('headless: a session issued by the host page is used as given', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const published = await publishDemoEngagement(svc, tenant, { allow_anonymous_sessions: false });
  const server = createLoyaltyClient({ baseUrl: svc.baseUrl, apiKey: tenant.apiKey });
  const issued = await server.createSession({ body: { participant_id: 'member-42', engagement_id: published.id } });
  await server.grantPoints({ body: { participant_id: 'member-42', amount: 70, reason: 'welcome' } });
  const counter = countingFetch();
  const session = createEngagementSession({ baseUrl: svc.baseUrl, tenantSlug: tenant.slug, siteSlug: SITE_SLUG, sessionId: issued.session_id, participantId: 'member-42', fetch: counter.impl });
  await server.upsertParticipantProfile({ path: { participant_id: 'member-42' }, body: { locale: 'de-at' } });
  // The service tells the page the session's expiry and the participant's language (canonical).
  const info = await session.ensureSession();
  assert.deepEqual({ ...info, expires_at: Date.parse(info.expires_at) }, { session_id: issued.session_id, participant_id: 'member-42', expires_at: Date.parse(issued.expires_at), locale: 'de-AT' });
  assert.equal((await session.balance()).available_points, 70);
  assert.equal((await session.checkGates({ targets: ['rich'] })).gates.rich.locked, false);
  assert.equal(counter.calls.filter((call) => call.endsWith('/sessions')).length, 0);
  // Without a session, an engagement that refuses anonymous visitors answers 403 through the SDK.
  const anonymous = createEngagementSession({ baseUrl: svc.baseUrl, tenantSlug: tenant.slug, siteSlug: SITE_SLUG });
  await assert.rejects(anonymous.ensureSession(), (error: any) => error.status === 403 && error.code === 'ANONYMOUS_SESSIONS_DISABLED');

  // An unknown session reports a typed error once to the stream's subscriber and does not reconnect: the
  // session is asked about first (GET /public/participant answers 401), so no stream is even opened.
  const streamCounter = countingFetch();
  const stale = createEngagementSession({ baseUrl: svc.baseUrl, tenantSlug: tenant.slug, siteSlug: SITE_SLUG, sessionId: 'no-such-session', fetch: streamCounter.impl });
  const errors: unknown[] = [];
  const stop = stale.subscribe(() => assert.fail('no event expected'), (error) => errors.push(error));
  await waitFor('the stream error', () => errors.length > 0);
  await new Promise((resolve) => setTimeout(resolve, 500));
  stop();
  assert.equal(errors.length, 1);
  assert.equal((errors[0] as LoyaltyAuthenticationError).status, 401);
  assert.ok(errors[0] instanceof LoyaltyAuthenticationError);
  assert.equal(streamCounter.calls.filter((call) => call.endsWith('/public/participant')).length, 1);
  assert.equal(streamCounter.calls.filter((call) => call.endsWith('/events/stream')).length, 0);
});

test('headless preview: with a preview session, load reads the draft of the engagement and a spin awards nothing real', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const created = await svc.request('POST', '/api/v1/admin/engagements', {
    key: tenant.apiKey,
    body: { name: 'Draft only', site_slug: 'draft-only', activities: [{ id: 'w', type: 'spin_wheel', segments: [{ label: 'Ten', prize_type: 'points', prize_value: 10, weight: 1 }, { label: 'Twenty', prize_type: 'points', prize_value: 20, weight: 1 }] }] },
  });
  assert.equal(created.status, 201, created.text);
  const started = await svc.request('POST', `/api/v1/admin/engagements/${created.body.id}/preview`, { key: tenant.apiKey });
  assert.equal(started.status, 201, started.text);
  const session = createEngagementSession({ baseUrl: svc.baseUrl, tenantSlug: tenant.slug, siteSlug: 'draft-only', sessionId: started.body.session_id, previewEngagementId: created.body.id });
  const engagement = await session.load();
  assert.equal(engagement.engagement_id, created.body.id);
  assert.equal(engagement.name, 'Draft only');
  const info = await session.ensureSession();
  assert.equal(info.participant_id, started.body.participant_id);
  const { completion } = await session.spin('w');
  assert.ok([10, 20].includes(completion.actions_executed[0].points_awarded!));
  assert.equal((await session.balance()).available_points, 0, 'a preview grants no points');
});
