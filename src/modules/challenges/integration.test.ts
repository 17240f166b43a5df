import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';

const HOUR = 3600_000;

/**
 * Challenges and referrals through the other modules' real routes: events
 * through ingestion, badges from the badges module, points from the ledger.
 */
test('challenges and referrals with ingestion, badges and points', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const key = tenant.apiKey;
  const engagementId = randomUUID();
  // Sessions are issued for engagements that exist.
  await svc.createEngagement(tenant, engagementId);
  const campaign = randomUUID();

  for (const code of ['refer-friends', 'finisher']) {
    const badge = await svc.request('POST', '/api/v1/admin/badges', { key, body: { code, name: code } });
    assert.equal(badge.status, 201, badge.text);
  }

  await t.test('definitions naming an unknown badge are refused', async () => {
    const settings = await svc.request('PUT', '/api/v1/admin/referrals/settings', { key, body: { milestones: [{ conversions: 2, badge_code: 'nope' }] } });
    assert.equal(settings.status, 422);
    assert.equal(settings.body.code, 'BADGE_NOT_FOUND');
    const challenge = await svc.request('POST', '/api/v1/admin/challenges', {
      key,
      body: {
        name: 'x',
        starts_at: new Date(clock.nowMs() - HOUR).toISOString(),
        ends_at: new Date(clock.nowMs() + HOUR).toISOString(),
        objectives: [{ name: 'x', evaluator: 'badge_earned', badge_code: 'nope', target: 1 }],
      },
    });
    assert.equal(challenge.status, 422);
  });

  await t.test('events, a referral badge and conversions complete a challenge, which awards its badge', async () => {
    const settings = await svc.request('PUT', '/api/v1/admin/referrals/settings', { key, body: { milestones: [{ conversions: 2, badge_code: 'refer-friends' }] } });
    assert.equal(settings.status, 200, settings.text);
    const created = await svc.request('POST', '/api/v1/admin/challenges', {
      key,
      body: {
        name: 'Ambassador',
        starts_at: new Date(clock.nowMs() - HOUR).toISOString(),
        ends_at: new Date(clock.nowMs() + 24 * HOUR).toISOString(),
        status: 'active',
        objectives: [
          { id: 'buy', name: 'Buy twice', evaluator: 'event_count', event_name: 'purchase', target: 2, conditions: [{ property: 'amount', op: 'gte', value: 50 }] },
          { id: 'refer', name: 'Two friends convert', evaluator: 'event_count', event_name: 'referral_converted', target: 2 },
          { id: 'badge', name: 'Earn the refer-friends badge', evaluator: 'badge_earned', badge_code: 'refer-friends', target: 1 },
        ],
        completion_badge_code: 'finisher',
      },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id;
    const session = await svc.request('POST', '/api/v1/sessions', { key, body: { participant_id: 'amb', engagement_id: engagementId } });
    const q = `session_id=${session.body.session_id}&engagement_id=${engagementId}`;
    assert.equal((await svc.request('POST', `/api/v1/public/challenges/${id}/enroll`, { body: { session_id: session.body.session_id, engagement_id: engagementId } })).status, 201);

    clock.advance(1000);
    for (const amount of [80, 20, 60]) {
      const sync = await svc.request('POST', '/api/v1/ingest/events/sync', { key, body: { event_name: 'purchase', participant_id: 'amb', properties: { amount }, idempotency_key: randomUUID() } });
      assert.equal(sync.status, 200, sync.text);
    }
    let progress = await svc.request('GET', `/api/v1/public/challenges/${id}/progress?${q}`);
    assert.deepEqual(progress.body.objectives.map((o: { current: number }) => o.current), [2, 0, 0]);

    const code = (await svc.request('POST', '/api/v1/referrals/generate', { key, body: { participant_id: 'amb', campaign_id: campaign } })).body.code;
    for (const friend of ['f1', 'f2']) {
      const converted = await svc.request('POST', '/api/v1/referrals/convert', { body: { code, referred_session_id: `s-${friend}`, referred_participant_id: friend } });
      assert.equal(converted.status, 200, converted.text);
      assert.equal(converted.body.converted, true);
    }
    progress = await svc.request('GET', `/api/v1/public/challenges/${id}/progress?${q}`);
    assert.deepEqual(progress.body.objectives.map((o: { current: number }) => o.current), [2, 2, 1]);
    assert.equal(progress.body.overall_progress, 1);
    assert.ok(progress.body.completed_at);

    const badges = await svc.sql(`SELECT data->>'badge_code' AS code FROM outbox_events WHERE tenant_id = $1 AND participant_id = 'amb' AND event = 'badge.earned.v1' ORDER BY seq`, [tenant.tenantId]);
    assert.deepEqual(badges.map((b) => b.code), ['refer-friends', 'finisher']);
    // A third conversion grants the milestone no second time.
    await svc.request('POST', '/api/v1/referrals/convert', { body: { code, referred_session_id: 's-f3', referred_participant_id: 'f3' } });
    const again = await svc.sql(`SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = $1 AND participant_id = 'amb' AND event = 'badge.earned.v1'`, [tenant.tenantId]);
    assert.equal(again[0].n, 2);

    const state = await svc.request('GET', '/api/v1/gamify/state/amb?include=challenges,referrals', { key });
    assert.equal(state.status, 200, state.text);
    const part = state.body.challenges.find((c: { challenge_id: string }) => c.challenge_id === id);
    assert.equal(part.overall_progress, 1);
    assert.equal(part.objectives_completed, 3);
    assert.ok(part.completed_at);
    assert.equal(state.body.referrals.conversions, 3);
    assert.equal(state.body.referrals.referral_code, code);
  });
});
