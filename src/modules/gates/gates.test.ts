import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { QUIZ, complete, createEngagement, session } from '../engagements/testing.js';

const LIMITS = { RATE_LIMIT_KEY_PER_MINUTE: '1000000' };

test('gates: conditions combined with AND, screen visits, hints', async (t) => {
  const svc = await startTestService(t, { config: LIMITS });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  {
    const badge = await svc.request('POST', '/api/v1/admin/badges', { key: tenant.apiKey, body: { code: 'gold', name: 'Gold' } });
    assert.equal(badge.status, 201, badge.text);
  }
  const engagement = await createEngagement(svc, tenant, {
    screens: [
      { id: 'intro', name: 'Intro' },
      { id: 'vip', name: 'VIP', gate: { conditions: ['quiz_completed', 'min_points_100', 'screen_visited:intro'] } },
      { id: 'exact', gate: { conditions: ['activity_completed:quiz1'], unlock_hint: 'Finish the product quiz first.' } },
      { id: 'any', gate: { conditions: ['activity_completed'] } },
      { id: 'golden', gate: { conditions: ['badge_earned:gold'] } },
    ],
    activities: [QUIZ],
  });
  const s = await session(svc, tenant, engagement.id);
  const check = (targets: string[], who = s) =>
    svc.request('POST', '/api/v1/runtime/gates/check', { body: { session_id: who.sessionId, engagement_id: who.engagementId, targets } });
  const visit = (screenId: string) => svc.request('POST', '/api/v1/runtime/screens/visits', { body: { session_id: s.sessionId, engagement_id: s.engagementId, screen_id: screenId } });

  await t.test('locked screens list what is met, what remains and a hint; open screens are unlocked', async () => {
    const response = await check(['intro', 'vip', 'exact']);
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body.gates.intro, { locked: false, conditions_met: [] });
    assert.deepEqual(response.body.gates.vip, {
      locked: true,
      conditions_met: [],
      conditions_remaining: ['quiz_completed', 'min_points_100', 'screen_visited:intro'],
      unlock_hint: 'Complete a quiz, then earn 100 more points, then visit Intro to unlock.',
    });
    assert.equal(response.body.gates.exact.unlock_hint, 'Finish the product quiz first.');
  });

  await t.test('a visit is recorded for open screens only', async () => {
    const locked = await visit('vip');
    assert.equal(locked.status, 422);
    assert.equal(locked.body.code, 'SCREEN_LOCKED');
    assert.deepEqual(locked.body.conditions_remaining, ['quiz_completed', 'min_points_100', 'screen_visited:intro']);
    const first = await visit('intro');
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.visit_count, 1);
    assert.equal((await visit('intro')).body.visit_count, 2);
    assert.equal((await visit('nowhere')).status, 404);
  });

  await t.test('conditions unlock one by one and all must hold', async () => {
    const done = await complete(svc, s, 'quiz1', 'quiz', { payload: { answers: [{ question_id: 'q1', selected_option: 1 }, { question_id: 'q2', selected_option: 1 }] } });
    assert.equal(done.status, 200, done.text);
    let response = await check(['vip', 'exact', 'any']);
    assert.deepEqual(response.body.gates.vip, {
      locked: true,
      conditions_met: ['quiz_completed', 'screen_visited:intro'],
      conditions_remaining: ['min_points_100'],
      unlock_hint: 'Earn 50 more points to unlock.',
    });
    assert.deepEqual(response.body.gates.exact, { locked: false, conditions_met: ['activity_completed:quiz1'] });
    assert.deepEqual(response.body.gates.any, { locked: false, conditions_met: ['activity_completed'] });
    const grant = await svc.request('POST', '/api/v1/gamify/points/grant', { key: tenant.apiKey, body: { participant_id: s.participantId, amount: 50, reason: 'bonus', idempotency_key: 'gate-1' } });
    assert.equal(grant.status, 200, grant.text);
    response = await check(['vip']);
    assert.deepEqual(response.body.gates.vip, { locked: false, conditions_met: ['quiz_completed', 'min_points_100', 'screen_visited:intro'] });
    assert.equal((await visit('vip')).status, 200);
    // Another participant of the same engagement has its own state.
    const newcomer = await session(svc, tenant, engagement.id);
    assert.equal((await check(['vip'], newcomer)).body.gates.vip.locked, true);
  });

  await t.test('badge conditions read the badges module', async () => {
    assert.equal((await check(['golden'])).body.gates.golden.locked, true);
    const award = await svc.request('POST', '/api/v1/admin/badges/gold/award', { key: tenant.apiKey, body: { participant_id: s.participantId } });
    assert.ok(award.status < 300, award.text);
    assert.deepEqual((await check(['golden'])).body.gates.golden, { locked: false, conditions_met: ['badge_earned:gold'] });
  });

  await t.test('bad targets and foreign sessions are refused', async () => {
    assert.equal((await check(['nowhere'])).status, 404);
    assert.equal((await check([])).status, 400);
    assert.equal((await check(['intro', 'intro'])).status, 400);
    assert.equal((await check(Array.from({ length: 51 }, (_, i) => `s${i}`))).status, 400);
    const foreignEngagement = await createEngagement(svc, other, { screens: [{ id: 'intro' }] });
    const foreign = await svc.request('POST', '/api/v1/runtime/gates/check', { body: { session_id: s.sessionId, engagement_id: foreignEngagement.id, targets: ['intro'] } });
    assert.equal(foreign.status, 403);
    const withKey = await svc.request('POST', '/api/v1/runtime/gates/check', { key: tenant.apiKey, body: { session_id: s.sessionId, engagement_id: s.engagementId, targets: ['intro'] } });
    assert.equal(withKey.status, 403);
  });
});
