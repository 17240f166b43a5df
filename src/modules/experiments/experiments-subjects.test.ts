import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantPoints, startTestService } from '../../../test/helper.js';
import { asPerson, invitePerson, signInConsole } from '../../../test/console-people.js';
import { sendSync } from '../ingestion/testing.js';
import { assignments, createRule, pointsByParticipant, ruleExperiment, start } from './testing.js';

/** Multiplier variants, an experiment for a segment's members, and who may start and roll out. */
test('experiments: multipliers, segments, publishing permission and four-eyes roll-out', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant({ requestsPerMinute: null });
  const admin = (method: string, path: string, body?: unknown) => svc.request(method, `/api/v1/admin${path}`, { key: tenant.apiKey, ...(body !== undefined && { body }) });

  await t.test('multiplier variants: ×2 and ×3 each for their participants, none for the holdout; roll-out ends the other multiplier', async () => {
    await createRule(svc, tenant, 'ten per order', 'mul_evt', 10);
    const window = { starts_at: new Date(Date.now() - 3_600_000).toISOString(), ends_at: new Date(Date.now() + 86_400_000).toISOString() };
    const double = await admin('POST', '/points/multipliers', { multiplier: 2, ...window, match: { event_type: 'mul_evt' } });
    const triple = await admin('POST', '/points/multipliers', { multiplier: 3, ...window, match: { event_type: 'mul_evt' } });
    assert.equal(double.status, 201, double.text);
    const created = await admin('POST', '/experiments', {
      name: 'double or triple',
      subject_type: 'multiplier',
      holdout_percent: 20,
      variants: [
        { key: 'double', name: '×2', subject_id: double.body.id, allocation_percent: 40 },
        { key: 'triple', name: '×3', subject_id: triple.body.id, allocation_percent: 40 },
      ],
      goal: { type: 'event_property_sum', event_name: 'mul_evt', property: 'properties.amount' },
    });
    assert.equal(created.status, 201, created.text);
    await start(svc, tenant, created.body.id);
    const people = Array.from({ length: 40 }, (_, i) => `mul_${i}`);
    for (const person of people) assert.equal((await sendSync(svc, tenant, { event_name: 'mul_evt', participant_id: person })).status, 200);
    const assigned = await assignments(svc, tenant, created.body.id);
    const points = await pointsByParticipant(svc, tenant, people);
    const expected: Record<string, number> = { double: 20, triple: 30, holdout: 10 };
    assert.equal(assigned.size, people.length);
    for (const person of people) assert.equal(points.get(person), expected[assigned.get(person)!], `${person} in ${assigned.get(person)}`);
    // A variant of a running experiment cannot be deleted: the 409 names the experiment and how to end it.
    const deleting = await admin('DELETE', `/points/multipliers/${triple.body.id}`);
    assert.equal(deleting.status, 409, deleting.text);
    assert.equal(deleting.body.code, 'SUBJECT_IN_EXPERIMENT');
    assert.equal(deleting.body.experiment_id, created.body.id);
    assert.match(deleting.body.detail, /running experiment "double or triple"/);
    const rolled = await admin('POST', `/experiments/${created.body.id}/rollout`, { variant: 'double' });
    assert.equal(rolled.status, 200, rolled.text);
    assert.equal(rolled.body.publication, 'already_live');
    assert.deepEqual(rolled.body.stopped, [{ variant: 'triple', subject_id: triple.body.id, action: 'ended' }]);
    assert.ok(new Date((await admin('GET', `/points/multipliers/${triple.body.id}`)).body.ends_at).getTime() <= Date.now());
    const holdoutPerson = people.find((p) => assigned.get(p) === 'holdout')!;
    assert.equal((await sendSync(svc, tenant, { event_name: 'mul_evt', participant_id: holdoutPerson })).body.points_awarded, 20, 'after the roll-out everyone gets ×2');
  });

  await t.test('an experiment for a segment: members are assigned, others get the control and are not recorded', async () => {
    const segment = await admin('POST', '/segments', { name: 'Hundred club', filter: { all: [{ fact: 'lifetime_points', operator: 'gte', value: 100 }] } });
    assert.equal(segment.status, 201, segment.text);
    const members = Array.from({ length: 20 }, (_, i) => `seg_member_${i}`);
    for (const person of members) assert.equal((await grantPoints(svc, tenant, person, 100)).status, 200);
    const { id } = await ruleExperiment(svc, tenant, 'seg_evt', { holdout: 50, pointsA: 10, pointsB: 20, segmentId: segment.body.id });
    await start(svc, tenant, id);
    const outsiders = Array.from({ length: 10 }, (_, i) => `seg_outsider_${i}`);
    for (const person of [...members, ...outsiders]) await sendSync(svc, tenant, { event_name: 'seg_evt', participant_id: person });
    const assigned = await assignments(svc, tenant, id);
    assert.deepEqual([...assigned.keys()].sort(), [...members].sort(), 'only members are recorded');
    const outsiderPoints = await pointsByParticipant(svc, tenant, outsiders);
    for (const person of outsiders) assert.equal(outsiderPoints.get(person), 10, `${person} gets the control`);
    const memberPoints = await pointsByParticipant(svc, tenant, members);
    const expected: Record<string, number> = { a: 110, b: 120, holdout: 100 };
    for (const person of members) assert.equal(memberPoints.get(person), expected[assigned.get(person)!]);
  });

  await t.test('starting with a draft variant needs the publishing permission; under four-eyes the roll-out sends the draft to review', async () => {
    const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
    const marketer = await invitePerson(svc, owner, `m@${tenant.slug}.example`, 'marketer');
    const publisher = await invitePerson(svc, owner, `p@${tenant.slug}.example`, 'marketer', { can_publish: true });
    const { id, ruleA, ruleB } = await ruleExperiment(svc, tenant, 'perm_evt');
    const refused = await svc.request('POST', `/api/v1/admin/experiments/${id}/start`, asPerson(marketer));
    assert.equal(refused.status, 403, refused.text);
    const analyst = await invitePerson(svc, owner, `a@${tenant.slug}.example`, 'analyst');
    assert.equal((await svc.request('GET', `/api/v1/admin/experiments/${id}`, asPerson(analyst, false))).status, 200, 'an analyst reads experiments');
    assert.equal((await svc.request('PATCH', `/api/v1/admin/experiments/${id}`, { ...asPerson(analyst), body: { name: 'x' } })).status, 403);
    assert.equal((await svc.request('PATCH', `/api/v1/admin/experiments/${id}`, { ...asPerson(marketer), body: { name: 'Perm test' } })).status, 200, 'a marketer sets experiments up');
    assert.equal((await svc.request('POST', `/api/v1/admin/experiments/${id}/start`, asPerson(publisher))).status, 200);
    assert.equal((await svc.request('PATCH', '/api/v1/tenant', { ...asPerson(owner), body: { require_four_eyes: true } })).status, 200);
    const rolled = await svc.request('POST', `/api/v1/admin/experiments/${id}/rollout`, { ...asPerson(publisher), body: { variant: 'b' } });
    assert.equal(rolled.status, 200, rolled.text);
    assert.equal(rolled.body.publication, 'review_requested');
    assert.match(rolled.body.review_id, /^rev_/);
    assert.deepEqual(rolled.body.stopped, [{ variant: 'a', subject_id: ruleA, action: 'paused' }]);
    assert.equal((await admin('GET', `/rules/${ruleB}`)).body.status, 'draft', 'the draft waits for its review');
    const approved = await svc.request('POST', `/api/v1/admin/reviews/${rolled.body.review_id}/approve`, asPerson(owner));
    assert.equal(approved.status, 200, approved.text);
    assert.equal((await admin('GET', `/rules/${ruleB}`)).body.status, 'active');
    assert.equal((await sendSync(svc, tenant, { event_name: 'perm_evt', participant_id: 'after_review' })).body.points_awarded, 20);
  });
});
