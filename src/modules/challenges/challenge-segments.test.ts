import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { grantPoints, participantSession, startTestService, type TestService, type TestTenant } from '../../../test/helper.js';

/**
 * Issue 36: a challenge for the members of one segment (`segment_id`):
 * validated, shown in its reads, and enrolment refused to non-members with
 * 403 NOT_IN_SEGMENT naming the segment.
 */
async function createSegment(svc: TestService, tenant: TestTenant, name: string, filter: Record<string, unknown>): Promise<string> {
  const response = await svc.request('POST', '/api/v1/admin/segments', { key: tenant.apiKey, body: { name, filter } });
  assert.equal(response.status, 201, response.text);
  return response.body.id;
}

const HOUR = 3_600_000;

function challengeBody(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Big spender sprint',
    starts_at: new Date(Date.now() - HOUR).toISOString(),
    ends_at: new Date(Date.now() + 24 * HOUR).toISOString(),
    status: 'active',
    objectives: [{ id: 'buy', name: 'Two purchases', evaluator: 'event_count', event_name: 'purchase', target: 2 }],
    ...overrides,
  };
}

test('challenges for the members of a segment', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const engagementId = randomUUID();
  const post = (path: string, body: unknown, apiKey = tenant.apiKey) => svc.request('POST', `/api/v1${path}`, { key: apiKey, body });

  assert.equal((await grantPoints(svc, tenant, 'rich', 150)).status, 200);
  assert.equal((await grantPoints(svc, tenant, 'poor', 10)).status, 200);
  const bigSpenders = await createSegment(svc, tenant, 'Big spenders', { all: [{ fact: 'lifetime_points', operator: 'gte', value: 100 }] });
  const richSession = await participantSession(svc, tenant, 'rich', engagementId);
  const poorSession = await participantSession(svc, tenant, 'poor', engagementId);
  const enroll = (id: string, sessionId: string) => svc.request('POST', `/api/v1/public/challenges/${id}/enroll`, { body: { session_id: sessionId, engagement_id: engagementId } });

  let challengeId = '';
  await t.test('created with segment_id and shown in the admin reads', async () => {
    const created = await post('/admin/challenges', challengeBody({ segment_id: bigSpenders }));
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.segment_id, bigSpenders);
    challengeId = created.body.id;
    const read = await svc.request('GET', `/api/v1/admin/challenges/${challengeId}`, { key: tenant.apiKey });
    assert.equal(read.body.segment_id, bigSpenders);
    const listed = await svc.request('GET', '/api/v1/admin/challenges', { key: tenant.apiKey });
    assert.equal(listed.body.challenges.find((c: { id: string }) => c.id === challengeId).segment_id, bigSpenders);
  });

  await t.test('a member enrols; a non-member is refused 403 NOT_IN_SEGMENT, named by the segment', async () => {
    const list = async (sessionId: string) =>
      (await svc.request('GET', `/api/v1/public/challenges?session_id=${sessionId}&engagement_id=${engagementId}`)).body.challenges.find((c: { id: string }) => c.id === challengeId);
    assert.equal((await list(richSession)).eligible, true);
    assert.equal((await list(poorSession)).eligible, false);
    const member = await enroll(challengeId, richSession);
    assert.equal(member.status, 201, member.text);
    const outsider = await enroll(challengeId, poorSession);
    assert.equal(outsider.status, 403, outsider.text);
    assert.equal(outsider.body.code, 'NOT_IN_SEGMENT');
    assert.match(outsider.body.detail, /"Big spenders"/);
    assert.doesNotMatch(outsider.body.detail, /seg_/);
    const enrolments = await svc.sql('SELECT participant_id FROM challenge_enrollments WHERE tenant_id = $1 AND challenge_id = $2', [tenant.tenantId, challengeId]);
    assert.deepEqual(enrolments.map((e) => e.participant_id), ['rich']);
    // Once the facts make them a member, they may enrol.
    await grantPoints(svc, tenant, 'poor', 95);
    assert.equal((await list(poorSession)).eligible, true);
    assert.equal((await enroll(challengeId, poorSession)).status, 201);
  });

  await t.test('a challenge for everyone: segment_id null, every participant eligible', async () => {
    const created = await post('/admin/challenges', challengeBody({ name: 'Open to all', segment_id: null }));
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.segment_id, null);
    const fresh = await participantSession(svc, tenant, 'fresh', engagementId);
    assert.equal((await enroll(created.body.id, fresh)).status, 201);
  });

  await t.test('segment_id changes on a draft, can be cleared, and is locked once active', async () => {
    const draft = await post('/admin/challenges', challengeBody({ name: 'Draft', status: 'draft' }));
    assert.equal(draft.status, 201, draft.text);
    assert.equal(draft.body.segment_id, null);
    const set = await svc.request('PATCH', `/api/v1/admin/challenges/${draft.body.id}`, { key: tenant.apiKey, body: { segment_id: bigSpenders } });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.segment_id, bigSpenders);
    const cleared = await svc.request('PATCH', `/api/v1/admin/challenges/${draft.body.id}`, { key: tenant.apiKey, body: { segment_id: null } });
    assert.equal(cleared.body.segment_id, null);
    const locked = await svc.request('PATCH', `/api/v1/admin/challenges/${challengeId}`, { key: tenant.apiKey, body: { segment_id: null } });
    assert.equal(locked.status, 422, locked.text);
    assert.equal(locked.body.code, 'CHALLENGE_NOT_EDITABLE');
  });

  await t.test('refused with the field named: a malformed id, an unknown segment, another tenant\'s', async () => {
    const malformed = await post('/admin/challenges', challengeBody({ segment_id: 'vip' }));
    assert.equal(malformed.status, 400, malformed.text);
    assert.ok(malformed.body.errors.some((e: { path: string }) => e.path === '/segment_id'), malformed.text);
    const unknown = await post('/admin/challenges', challengeBody({ segment_id: 'seg_00000000000000000000000000000000' }));
    assert.equal(unknown.status, 422, unknown.text);
    assert.equal(unknown.body.code, 'SEGMENT_NOT_FOUND');
    assert.ok(unknown.body.errors.some((e: { path: string }) => e.path.startsWith('/segment_id')), unknown.text);
    const borrowed = await post('/admin/challenges', challengeBody({ segment_id: bigSpenders }), other.apiKey);
    assert.equal(borrowed.status, 422, borrowed.text);
    assert.equal(borrowed.body.code, 'SEGMENT_NOT_FOUND');
    const draft = await post('/admin/challenges', challengeBody({ status: 'draft' }));
    const patched = await svc.request('PATCH', `/api/v1/admin/challenges/${draft.body.id}`, { key: tenant.apiKey, body: { segment_id: 'seg_00000000000000000000000000000000' } });
    assert.equal(patched.status, 422, patched.text);
    assert.equal(patched.body.code, 'SEGMENT_NOT_FOUND');
    assert.equal((await svc.sql('SELECT count(*)::int AS n FROM challenges WHERE tenant_id = $1', [other.tenantId]))[0].n, 0);
  });
});
