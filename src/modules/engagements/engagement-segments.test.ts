import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService, type TestService, type TestTenant } from '../../../test/helper.js';
import { complete, createEngagement, wheel } from './testing.js';

/** Segments as targets of engagements, activities and gates (issue 36, targeting.ts). */

const LIMITS = { RATE_LIMIT_KEY_PER_MINUTE: '1000000' };
const NO_POINTS = [
  { label: 'Sticker', prize_type: 'none', weight: 1 },
  { label: 'Nothing', prize_type: 'none', weight: 1 },
];

async function segment(svc: TestService, tenant: TestTenant, name: string, minPoints: number): Promise<string> {
  const created = await svc.request('POST', '/api/v1/admin/segments', {
    key: tenant.apiKey,
    body: { name, filter: { all: [{ fact: 'available_points', operator: 'gte', value: minPoints }] } },
  });
  assert.equal(created.status, 201, created.text);
  return created.body.id;
}

async function points(svc: TestService, tenant: TestTenant, participantId: string, amount: number, route: 'grant' | 'deduct' = 'grant') {
  const response = await svc.request('POST', `/api/v1/gamify/points/${route}`, {
    key: tenant.apiKey,
    body: { participant_id: participantId, amount, reason: 'test', idempotency_key: randomUUID() },
  });
  assert.equal(response.status, 200, response.text);
}

function sessionFor(svc: TestService, tenant: TestTenant, engagementId: string, participantId: string) {
  return svc.request('POST', '/api/v1/sessions', { key: tenant.apiKey, body: { participant_id: participantId, engagement_id: engagementId } });
}

test('engagements for a segment: sessions, attempts, gates, eligibility, validation, previews', async (t) => {
  const svc = await startTestService(t, { config: LIMITS });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const savers = await segment(svc, tenant, 'Savers (100+ points)', 100);
  const big = await segment(svc, tenant, 'Big savers (1000+ points)', 1000);
  const foreign = await segment(svc, other, 'Another tenant', 1);
  await points(svc, tenant, 'member', 150);
  await points(svc, tenant, 'outsider', 10);

  const engagement = await createEngagement(svc, tenant, {
    segment_id: savers,
    screens: [
      { id: 'intro' },
      { id: 'vault', gate: { conditions: [`in_segment:${big}`] } },
    ],
    // Prizes without points: a spin must not move anyone in or out of a segment.
    activities: [wheel({ segments: NO_POINTS }), wheel({ id: 'vip-wheel', segment_id: big, segments: NO_POINTS })],
  });

  await t.test('the read shows the segment; the public site does not', async () => {
    const read = await svc.request('GET', `/api/v1/admin/engagements/${engagement.id}`, { key: tenant.apiKey });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.segment_id, savers);
    assert.equal(read.body.activities[1].segment_id, big);
    const site = await svc.request('GET', `/api/v1/sites/${tenant.slug}/${engagement.site_slug}`);
    assert.equal(site.status, 200, site.text);
    assert.equal(site.body.segment_id, undefined);
    assert.equal(JSON.stringify(site.body).includes(savers), false, 'the public definition names no segment');
    const plain = await createEngagement(svc, tenant, {}, false);
    assert.equal(plain.segment_id, null, 'no segment: everyone');
  });

  await t.test('a session for a non-member is refused with 403 NOT_IN_SEGMENT naming the segment; a member gets one', async () => {
    const refused = await sessionFor(svc, tenant, engagement.id, 'outsider');
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.code, 'NOT_IN_SEGMENT');
    assert.match(refused.body.detail, /^this engagement is for the members of the segment "Savers \(100\+ points\)", and the participant is not one of them$/);
    assert.equal(refused.body.segment_id, savers);
    const unknown = await sessionFor(svc, tenant, engagement.id, 'brand-new');
    assert.equal(unknown.status, 403, 'a new participant is in no segment');
    assert.equal((await svc.sql('SELECT 1 FROM participants WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, 'brand-new'])).length, 0, 'the refused participant was not created');
    const granted = await sessionFor(svc, tenant, engagement.id, 'member');
    assert.equal(granted.status, 201, granted.text);
  });

  await t.test('attempts: the activity for another segment refuses; leaving the segment refuses the next attempt', async () => {
    const session = await svc.createSession(tenant, { engagementId: engagement.id, participantId: 'leaver' }).catch((e) => e as Error);
    assert.ok(session instanceof Error, 'not a member yet');
    await points(svc, tenant, 'leaver', 200);
    const s = await svc.createSession(tenant, { engagementId: engagement.id, participantId: 'leaver' });
    const vip = await complete(svc, s, 'vip-wheel', 'spin_wheel');
    assert.equal(vip.status, 403, vip.text);
    assert.equal(vip.body.code, 'NOT_IN_SEGMENT');
    assert.match(vip.body.detail, /vip-wheel/);
    const spun = await complete(svc, s, 'wheel1', 'spin_wheel');
    assert.equal(spun.status, 200, spun.text);
    // Spending points takes the participant out of the segment: the session is held to it at every attempt.
    await points(svc, tenant, 'leaver', 150, 'deduct');
    const after = await complete(svc, s, 'wheel1', 'spin_wheel');
    assert.equal(after.status, 403, after.text);
    assert.equal(after.body.code, 'NOT_IN_SEGMENT');
  });

  await t.test('gates: in_segment locks the screen for non-members with a hint that does not name the segment', async () => {
    const s = await svc.createSession(tenant, { engagementId: engagement.id, participantId: 'member' });
    const checked = await svc.request('POST', '/api/v1/runtime/gates/check', { body: { session_id: s.sessionId, engagement_id: engagement.id, targets: ['intro', 'vault'] } });
    assert.equal(checked.status, 200, checked.text);
    assert.equal(checked.body.gates.intro.locked, false);
    assert.equal(checked.body.gates.vault.locked, true);
    assert.deepEqual(checked.body.gates.vault.conditions_remaining, [`in_segment:${big}`]);
    assert.equal(checked.body.gates.vault.unlock_hint.includes(big), false);
    await points(svc, tenant, 'member', 1000);
    const open = await svc.request('POST', '/api/v1/runtime/gates/check', { body: { session_id: s.sessionId, engagement_id: engagement.id, targets: ['vault'] } });
    assert.equal(open.body.gates.vault.locked, false, open.text);
  });

  await t.test("the segment is in use while an engagement is for it: it cannot be deleted, and used_by names the engagement", async () => {
    const refused = await svc.request('DELETE', `/api/v1/admin/segments/${savers}`, { key: tenant.apiKey });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.code, 'SEGMENT_IN_USE');
    assert.ok(refused.body.used_by.some((u: { type: string; id: string }) => u.type === 'engagement' && u.id === engagement.id), refused.text);
    // A segment named only inside the definition (an activity's segment_id, a gate's in_segment:) is in use too, the engagement named once.
    const inside = await svc.request('DELETE', `/api/v1/admin/segments/${big}`, { key: tenant.apiKey });
    assert.equal(inside.status, 409, inside.text);
    assert.deepEqual(inside.body.used_by.map((u: { type: string; id: string }) => [u.type, u.id]), [['engagement', engagement.id]]);
  });

  await t.test('eligibility names the segment rule', async () => {
    const outsider = await svc.request('GET', `/api/v1/public/eligibility?engagement_id=${engagement.id}&participant_id=outsider`, { key: tenant.apiKey });
    assert.equal(outsider.status, 200, outsider.text);
    assert.equal(outsider.body.eligible, false);
    assert.deepEqual(outsider.body.rules.find((r: { rule: string }) => r.rule === 'segment').passed, false);
    const member = await svc.request('GET', `/api/v1/public/eligibility?engagement_id=${engagement.id}&participant_id=member`, { key: tenant.apiKey });
    assert.equal(member.body.eligible, true, member.text);
    const anonymous = await svc.request('GET', `/api/v1/public/eligibility?engagement_id=${engagement.id}&visitor_id=v1`, { key: tenant.apiKey });
    assert.equal(anonymous.body.eligible, false);
    assert.match(anonymous.body.rules.find((r: { rule: string }) => r.rule === 'segment').detail, /participant_id is needed/);
  });

  await t.test('validation: per-field errors for a malformed, unknown or foreign segment, and for anonymous sessions', async () => {
    const base = { name: 'Bad', site_slug: 'bad-segment' };
    const malformed = await svc.request('POST', '/api/v1/admin/engagements', { key: tenant.apiKey, body: { ...base, segment_id: 'vip' } });
    assert.equal(malformed.status, 400, malformed.text);
    assert.ok(malformed.body.errors.some((e: { path: string }) => e.path === '/segment_id'), malformed.text);
    const unknownId = `seg_${'0'.repeat(32)}`;
    for (const [segmentId, what] of [[unknownId, 'unknown'], [foreign, "another tenant's"]]) {
      const refused = await svc.request('POST', '/api/v1/admin/engagements', { key: tenant.apiKey, body: { ...base, segment_id: segmentId } });
      assert.equal(refused.status, 422, `${what}: ${refused.text}`);
      assert.equal(refused.body.code, 'SEGMENT_NOT_FOUND');
      assert.deepEqual(refused.body.errors.map((e: { path: string }) => e.path), ['/segment_id']);
    }
    const activity = await svc.request('POST', '/api/v1/admin/engagements', { key: tenant.apiKey, body: { ...base, activities: [wheel({ segment_id: foreign })] } });
    assert.equal(activity.status, 422, activity.text);
    assert.deepEqual(activity.body.errors.map((e: { path: string }) => e.path), ['/activities/0/segment_id']);
    const gate = await svc.request('POST', '/api/v1/admin/engagements', { key: tenant.apiKey, body: { ...base, screens: [{ id: 'a', gate: { conditions: [`in_segment:${unknownId}`] } }] } });
    assert.equal(gate.status, 422, gate.text);
    assert.deepEqual(gate.body.errors.map((e: { path: string }) => e.path), ['/screens/0/gate/conditions/0']);
    const anonymous = await svc.request('POST', '/api/v1/admin/engagements', { key: tenant.apiKey, body: { ...base, segment_id: savers, allow_anonymous_sessions: true } });
    assert.equal(anonymous.status, 400, anonymous.text);
    assert.equal(anonymous.body.code, 'SEGMENT_WITH_ANONYMOUS_SESSIONS');
    assert.deepEqual(anonymous.body.errors.map((e: { path: string }) => e.path).sort(), ['/allow_anonymous_sessions', '/segment_id']);
  });

  await t.test('drafts: the draft segment applies to its sessions; null clears it; previews are not held to it', async () => {
    const draft = await createEngagement(svc, tenant, { segment_id: big, activities: [wheel()] }, false);
    assert.equal((await sessionFor(svc, tenant, draft.id, 'outsider')).status, 403);
    const preview = await svc.request('POST', `/api/v1/admin/engagements/${draft.id}/preview`, { key: tenant.apiKey });
    assert.equal(preview.status, 201, preview.text);
    const spun = await complete(svc, { sessionId: preview.body.session_id, participantId: preview.body.participant_id, engagementId: draft.id }, 'wheel1', 'spin_wheel');
    assert.equal(spun.status, 200, spun.text);
    const cleared = await svc.request('PATCH', `/api/v1/admin/engagements/${draft.id}`, { key: tenant.apiKey, body: { segment_id: null } });
    assert.equal(cleared.status, 200, cleared.text);
    assert.equal(cleared.body.segment_id, null);
    assert.equal((await sessionFor(svc, tenant, draft.id, 'outsider')).status, 201);
    // A published engagement keeps its published segment until the draft is published again.
    const live = await createEngagement(svc, tenant, { segment_id: big });
    await svc.request('PATCH', `/api/v1/admin/engagements/${live.id}`, { key: tenant.apiKey, body: { segment_id: null } });
    assert.equal((await sessionFor(svc, tenant, live.id, 'outsider')).status, 403);
  });
});
