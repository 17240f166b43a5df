import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { createEngagement, outbox, session, wheel } from '../engagements/testing.js';

const HOUR = 3_600_000;

/**
 * Completions reported by the tenant's server (issue 16, item 7d): they advance
 * `activity_count` objectives once per completion_id, only server credentials
 * may report them, and the activity must be the tenant's.
 */
test('activities: completions reported by the tenant server', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const key = tenant.apiKey;
  const engagement = await createEngagement(svc, tenant, { activities: [wheel({ id: 'kiosk', max_attempts: 3, cooldown_seconds: 3600 })] });
  const challenge = await svc.request('POST', '/api/v1/admin/challenges', {
    key,
    body: {
      name: 'Visit the kiosk twice',
      starts_at: new Date(clock.nowMs() - HOUR).toISOString(),
      ends_at: new Date(clock.nowMs() + 24 * HOUR).toISOString(),
      status: 'active',
      objectives: [{ id: 'kiosk', name: 'Two kiosk games', evaluator: 'activity_count', activity_id: 'kiosk', target: 2 }],
    },
  });
  assert.equal(challenge.status, 201, challenge.text);
  const s = await session(svc, tenant, engagement.id, 'kim');
  const enrolled = await svc.request('POST', `/api/v1/public/challenges/${challenge.body.id}/enroll`, { body: { session_id: s.sessionId, engagement_id: engagement.id } });
  assert.ok([200, 201].includes(enrolled.status), enrolled.text);
  const progress = async () => {
    const response = await svc.request('GET', `/api/v1/public/challenges/${challenge.body.id}/progress?session_id=${s.sessionId}&engagement_id=${engagement.id}`);
    assert.equal(response.status, 200, response.text);
    return response.body.objectives[0].current as number;
  };
  const report = (completionId: string, extra: Record<string, unknown> = {}, credential: { key?: string } = { key }) =>
    svc.request('POST', '/api/v1/activities/kiosk/completions', {
      ...credential,
      body: { participant_id: 'kim', engagement_id: engagement.id, completion_id: completionId, ...extra },
    });

  await t.test('a reported completion advances the activity_count objective once; the same completion_id again changes nothing', async () => {
    // A completion before the enrolment does not count (challenge rule), so it happened just now.
    const occurredAt = new Date(clock.nowMs()).toISOString();
    const first = await report('pos-1001', { occurred_at: occurredAt });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.body.duplicate, false);
    assert.equal(first.body.activity_type, 'spin_wheel');
    assert.equal(first.body.attempts_used, 1);
    assert.equal(first.body.max_attempts, 3);
    assert.equal(await progress(), 1);

    const again = await report('pos-1001', { occurred_at: occurredAt });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.duplicate, true);
    assert.equal(again.body.fact_id, first.body.fact_id);
    assert.equal(again.body.attempts_used, 1);
    assert.equal(await progress(), 1);
    const events = (await outbox(svc, tenant.tenantId, 'activity.completed')).filter((e) => e.data.fact_id === first.body.fact_id);
    assert.equal(events.length, 1);

    // A second completion (no cooldown for reports: they already happened) completes the objective.
    const second = await report('pos-1002');
    assert.equal(second.status, 201, second.text);
    assert.equal(await progress(), 2);
  });

  await t.test('the activity attempt limit caps reported completions with the runtime ones', async () => {
    assert.equal((await report('pos-1003')).status, 201);
    const fourth = await report('pos-1004');
    assert.equal(fourth.status, 422, fourth.text);
    assert.equal(fourth.body.code, 'ATTEMPTS_EXHAUSTED');
    const facts = await svc.sql(`SELECT count(*)::int AS n FROM activity_facts WHERE tenant_id = $1 AND properties->>'reported_by' = 'server'`, [tenant.tenantId]);
    assert.equal(facts[0].n, 3);
  });

  await t.test('a completion_id reused for another participant is a conflict', async () => {
    const reused = await svc.request('POST', '/api/v1/activities/kiosk/completions', {
      key,
      body: { participant_id: 'lea', engagement_id: engagement.id, completion_id: 'pos-1001' },
    });
    assert.equal(reused.status, 409, reused.text);
    assert.equal(reused.body.code, 'COMPLETION_ID_REUSED');
  });

  await t.test('a participant session cannot report a completion, nor emit an activity completion fact', async () => {
    const bySession = await svc.request('POST', '/api/v1/activities/kiosk/completions', {
      body: { session_id: s.sessionId, participant_id: 'kim', engagement_id: engagement.id, completion_id: 'self-1' },
    });
    assert.ok([401, 403].includes(bySession.status), bySession.text);
    for (const factName of ['activity.completed', 'activity_completed']) {
      const emitted = await svc.request('POST', '/api/v1/activities/facts/emit', {
        body: { session_id: s.sessionId, engagement_id: engagement.id, fact_name: factName, properties: { activity_id: 'kiosk' }, trigger_challenge_evaluation: true },
      });
      assert.equal(emitted.status, 422, emitted.text);
      assert.equal(emitted.body.code, 'RESERVED_FACT_NAME');
    }
  });

  await t.test("another tenant cannot report a completion of this tenant's activity", async () => {
    const crossTenant = await report('other-1', {}, { key: other.apiKey });
    assert.equal(crossTenant.status, 404, crossTenant.text);
    const jwt = await svc.login(tenant);
    const readOnly = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'pii only', scopes: ['read:pii'] } });
    assert.equal(readOnly.status, 201, readOnly.text);
    assert.equal((await report('pii-1', {}, { key: readOnly.body.key })).status, 403);
    assert.equal((await svc.request('POST', '/api/v1/activities/unknown/completions', { key, body: { participant_id: 'kim', engagement_id: engagement.id, completion_id: 'x-1' } })).status, 404);
  });
});
