import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { complete, createEngagement, createReward, outbox, session, validate, wheel } from './testing.js';

const LIMITS = { RATE_LIMIT_KEY_PER_MINUTE: '1000000' };

test('previews: a draft runs for a test participant, awards nothing real, and the token is scoped', async (t) => {
  const svc = await startTestService(t, { config: LIMITS });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const reward = await createReward(svc, tenant, { id: 'preview-coupon', name: 'Coupon', type: 'coupon', metadata: { discount_percent: 10 }, code_source: 'generated', code_prefix: 'SPRING-', inventory: 1 });
  // A published engagement whose draft then changes: the preview runs the draft.
  const engagement = await createEngagement(svc, tenant, {
    site_slug: 'preview-site',
    activities: [wheel({ segments: [{ label: 'Coupon', prize_type: 'reward', reward_id: reward.id, weight: 1, inventory: 1 }, { label: 'Points', prize_type: 'points', prize_value: 5, weight: 1 }] })],
  });
  const edited = await svc.request('PATCH', `/api/v1/admin/engagements/${engagement.id}`, {
    key: tenant.apiKey,
    body: { name: 'Draft name', activities: [wheel({ segments: [{ label: 'Coupon', prize_type: 'reward', reward_id: reward.id, weight: 1 }, { label: 'Coupon again', prize_type: 'reward', reward_id: reward.id, weight: 1 }], on_completion: [{ type: 'award_points', amount: 40 }] })] },
  });
  assert.equal(edited.status, 200, edited.text);
  const draftOnly = await createEngagement(svc, tenant, { site_slug: 'never-published', activities: [wheel()] }, false);

  const start = await svc.request('POST', `/api/v1/admin/engagements/${engagement.id}/preview`, { key: tenant.apiKey });
  assert.equal(start.status, 201, start.text);
  const preview = start.body;
  assert.match(preview.participant_id, /^preview_/);
  assert.equal(preview.version, edited.body.version);
  assert.equal(preview.preview_url, `/embed/${tenant.slug}/preview-site?engagement_id=${engagement.id}&preview=1`);
  const s = { sessionId: preview.session_id, engagementId: engagement.id, participantId: preview.participant_id };

  await t.test('the preview reads the draft, not the published snapshot', async () => {
    const read = await svc.request('GET', `/api/v1/sites/${tenant.slug}/preview-site/preview?session_id=${s.sessionId}&engagement_id=${engagement.id}`);
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.preview, true);
    assert.equal(read.body.name, 'Draft name');
    assert.equal(read.body.activities[0].segments[1].label, 'Coupon again');
    assert.equal(read.body.activities[0].segments[0].reward_id, undefined, 'no server secrets');
  });

  await t.test('a spin awards nothing real: no ledger, no claim, no stock, no code, no event', async () => {
    const drawn = await validate(svc, s, 'wheel1', 'spin_wheel');
    assert.equal(drawn.status, 200, drawn.text);
    const done = await complete(svc, s, 'wheel1', 'spin_wheel', { attempt_id: drawn.body.attempt_id });
    assert.equal(done.status, 200, done.text);
    const prize = done.body.actions_executed.find((a: { source: string }) => a.source === 'prize');
    assert.equal(prize.type, 'award_reward');
    assert.match(prize.reward_claimed.code, /^PREVIEW-/);
    const points = done.body.actions_executed.find((a: { type: string }) => a.type === 'award_points');
    assert.equal(points.points_awarded, 40);
    const [ledger] = await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1', [tenant.tenantId]);
    assert.equal(ledger.n, 0);
    const [claims] = await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM reward_claims WHERE tenant_id = $1', [tenant.tenantId]);
    assert.equal(claims.n, 0);
    const [stock] = await svc.sql<{ claimed_count: number }>('SELECT claimed_count FROM rewards WHERE tenant_id = $1 AND id = $2', [tenant.tenantId, reward.id]);
    assert.equal(stock.claimed_count, 0);
    assert.equal((await outbox(svc, tenant.tenantId, 'activity.completed')).length, 0);
    assert.equal((await outbox(svc, tenant.tenantId, 'reward.claimed.v1')).length, 0);
  });

  await t.test('the test participant is left out of the participant list unless asked for', async () => {
    const plain = await svc.request('GET', '/api/v1/gamify/admin/participants', { key: tenant.apiKey });
    assert.equal(plain.status, 200, plain.text);
    assert.ok(!plain.body.participants.some((p: { participant_id: string }) => p.participant_id === preview.participant_id));
    const all = await svc.request('GET', '/api/v1/gamify/admin/participants?include_test=true', { key: tenant.apiKey });
    assert.ok(all.body.participants.some((p: { participant_id: string }) => p.participant_id === preview.participant_id));
  });

  await t.test('a preview token is refused on another engagement, another tenant, and a real session cannot read a draft', async () => {
    const wrongEngagement = await svc.request('GET', `/api/v1/sites/${tenant.slug}/never-published/preview?session_id=${s.sessionId}&engagement_id=${draftOnly.id}`);
    assert.equal(wrongEngagement.status, 403, wrongEngagement.text);
    assert.equal(wrongEngagement.body.code, 'SESSION_ENGAGEMENT_MISMATCH');
    const wrongActivity = await svc.request('POST', '/api/v1/activities/wheel1/validate', { body: { session_id: s.sessionId, engagement_id: draftOnly.id, activity_type: 'spin_wheel' } });
    assert.equal(wrongActivity.status, 403);
    const wrongTenant = await svc.request('GET', `/api/v1/sites/${other.slug}/preview-site/preview?session_id=${s.sessionId}&engagement_id=${engagement.id}`);
    assert.equal(wrongTenant.status, 403, wrongTenant.text);
    assert.equal(wrongTenant.body.code, 'SESSION_TENANT_MISMATCH');
    const real = await session(svc, tenant, engagement.id, 'real-person');
    const refused = await svc.request('GET', `/api/v1/sites/${tenant.slug}/preview-site/preview?session_id=${real.sessionId}&engagement_id=${engagement.id}`);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'PREVIEW_SESSION_REQUIRED');
    // A real participant named like a test one is not one: it runs the published snapshot.
    const lookalike = await session(svc, tenant, draftOnly.id, `preview_${draftOnly.id.replace(/-/g, '')}_x`);
    const drawn = await validate(svc, lookalike, 'wheel1', 'spin_wheel');
    assert.equal(drawn.status, 422);
    assert.equal(drawn.body.code, 'ENGAGEMENT_NOT_PUBLISHED');
    assert.equal((await svc.request('POST', `/api/v1/admin/engagements/${engagement.id}/preview`, { key: other.apiKey })).status, 404);
  });

  await t.test('a never-published draft is previewed too, and stays a draft', async () => {
    const started = await svc.request('POST', `/api/v1/admin/engagements/${draftOnly.id}/preview`, { key: tenant.apiKey });
    assert.equal(started.status, 201, started.text);
    const done = await complete(svc, { sessionId: started.body.session_id, engagementId: draftOnly.id, participantId: started.body.participant_id }, 'wheel1', 'spin_wheel');
    assert.equal(done.status, 200, done.text);
    const read = await svc.request('GET', `/api/v1/admin/engagements/${draftOnly.id}`, { key: tenant.apiKey });
    assert.equal(read.body.status, 'draft');
  });

  await t.test('a reset deletes the test participants and ends the preview session', async () => {
    const reset = await svc.request('DELETE', `/api/v1/admin/engagements/${engagement.id}/preview`, { key: tenant.apiKey });
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body.deleted_test_participants, 1);
    const [left] = await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM participants WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, preview.participant_id]);
    assert.equal(left.n, 0);
    const after = await validate(svc, s, 'wheel1', 'spin_wheel');
    assert.equal(after.status, 401);
  });
});
