import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { assignments, start } from './testing.js';

/** Engagement variants: sessions only for the participant's variant's engagement; roll-out unpublishes the others. */
test('experiments: engagement variants', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant({ requestsPerMinute: null });
  const admin = (method: string, path: string, body?: unknown) => svc.request(method, `/api/v1/admin${path}`, { key: tenant.apiKey, ...(body !== undefined && { body }) });
  const wheel = await svc.createEngagement(tenant);
  const quiz = await svc.createEngagement(tenant);
  const body = {
    name: 'wheel or quiz',
    subject_type: 'engagement',
    variants: [
      { key: 'wheel', name: 'Wheel', subject_id: wheel, allocation_percent: 50 },
      { key: 'quiz', name: 'Quiz', subject_id: quiz, allocation_percent: 50 },
    ],
    goal: { type: 'redemptions' },
  };

  await t.test('an engagement experiment has no holdout, and starts only with published engagements', async () => {
    const holdout = await admin('POST', '/experiments', { ...body, holdout_percent: 10, variants: body.variants.map((v) => ({ ...v, allocation_percent: 45 })) });
    assert.equal(holdout.status, 400, holdout.text);
    assert.equal(holdout.body.errors[0].path, '/holdout_percent');
    const created = await admin('POST', '/experiments', body);
    assert.equal(created.status, 201, created.text);
    const early = await admin('POST', `/experiments/${created.body.id}/start`);
    assert.equal(early.status, 422, early.text);
    assert.deepEqual(early.body.errors.map((e: { path: string; code: string }) => [e.path, e.code]), [['/variants/0/subject_id', 'not_published'], ['/variants/1/subject_id', 'not_published']]);
    assert.equal((await admin('DELETE', `/experiments/${created.body.id}`)).status, 204);
  });

  await t.test('a session is issued for the participant\'s variant only; the refusal names the engagement to ask for', async () => {
    for (const id of [wheel, quiz]) assert.equal((await admin('POST', `/engagements/${id}/publish`)).status, 200);
    const created = await admin('POST', '/experiments', body);
    await start(svc, tenant, created.body.id);
    const people = Array.from({ length: 20 }, (_, i) => `eng_${i}`);
    for (const person of people) {
      const asked = await svc.request('POST', '/api/v1/sessions', { key: tenant.apiKey, body: { participant_id: person, engagement_id: wheel } });
      if (asked.status === 201) continue;
      assert.equal(asked.status, 403, asked.text);
      assert.equal(asked.body.code, 'EXPERIMENT_OTHER_VARIANT');
      assert.equal(asked.body.engagement_id, quiz);
      const again = await svc.request('POST', '/api/v1/sessions', { key: tenant.apiKey, body: { participant_id: person, engagement_id: asked.body.engagement_id } });
      assert.equal(again.status, 201, again.text);
    }
    const assigned = await assignments(svc, tenant, created.body.id);
    assert.equal(assigned.size, people.length, 'everyone is recorded at their first issued session');
    assert.deepEqual(new Set(assigned.values()), new Set(['wheel', 'quiz']));
    const quizPerson = people.find((p) => assigned.get(p) === 'quiz')!;
    const rolled = await admin('POST', `/experiments/${created.body.id}/rollout`, { variant: 'wheel' });
    assert.equal(rolled.status, 200, rolled.text);
    assert.equal(rolled.body.publication, 'already_live');
    assert.deepEqual(rolled.body.stopped, [{ variant: 'quiz', subject_id: quiz, action: 'unpublished' }]);
    assert.equal((await admin('GET', `/engagements/${quiz}`)).body.status, 'draft');
    const after = await svc.request('POST', '/api/v1/sessions', { key: tenant.apiKey, body: { participant_id: quizPerson, engagement_id: wheel } });
    assert.equal(after.status, 201, 'after the roll-out everyone gets the wheel');
  });
});
