import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { sendSync } from '../ingestion/testing.js';
import { assignVariant } from './assignment.js';
import { assignments, createRule, pointsByParticipant, ruleExperiment, start } from './testing.js';

test('experiments: administration, validation, rule variants, holdout, roll-out', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const admin = (method: string, path: string, body?: unknown) => svc.request(method, `/api/v1/admin/experiments${path}`, { key: tenant.apiKey, ...(body !== undefined && { body }) });

  await t.test('an experiment is created as a draft, read, listed page by page, changed and deleted; other tenants see 404', async () => {
    const { id, ruleA, body } = await ruleExperiment(svc, tenant, 'crud_evt', { holdout: 10 });
    assert.match(id, /^exp_[0-9a-f]{32}$/);
    assert.equal(body.status, 'draft');
    assert.deepEqual(body.variants.map((v: { key: string; control: boolean; allocation_percent: number }) => [v.key, v.control, v.allocation_percent]), [['a', true, 45], ['b', false, 45]]);
    assert.equal((await admin('GET', `/${id}`)).body.variants[0].subject_id, ruleA);
    const second = await ruleExperiment(svc, tenant, 'crud_evt2');
    const page1 = await admin('GET', '?limit=1');
    assert.equal(page1.status, 200);
    assert.deepEqual(page1.body.experiments.map((e: { id: string }) => e.id), [second.id]);
    const page2 = await admin('GET', `?limit=1&cursor=${encodeURIComponent(page1.body.next_cursor)}`);
    assert.deepEqual(page2.body.experiments.map((e: { id: string }) => e.id), [id]);
    assert.equal((await admin('GET', '?status=running')).body.experiments.length, 0);
    const patched = await admin('PATCH', `/${id}`, { name: 'Renamed', holdout_percent: 0, variants: body.variants.map((v: Record<string, unknown>) => ({ key: v.key, name: v.name, subject_id: v.subject_id, allocation_percent: 50 })) });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.name, 'Renamed');
    assert.equal(patched.body.holdout_percent, 0);
    for (const [method, path] of [['GET', `/${id}`], ['PATCH', `/${id}`], ['DELETE', `/${id}`], ['POST', `/${id}/start`]] as const) {
      const answer = await svc.request(method, `/api/v1/admin/experiments${path}`, { key: other.apiKey, ...(method === 'PATCH' && { body: { name: 'x' } }) });
      assert.equal(answer.status, 404, `${method} ${path} from another tenant`);
    }
    assert.equal((await svc.request('GET', '/api/v1/admin/experiments', { key: other.apiKey })).body.experiments.length, 0);
    assert.equal((await admin('DELETE', `/${second.id}`)).status, 204);
    assert.equal((await admin('GET', `/${second.id}`)).status, 404);
  });

  await t.test('invalid experiments are refused with the field named', async () => {
    const ruleA = await createRule(svc, tenant, 'v A', 'val_evt', 1);
    const ruleB = await createRule(svc, tenant, 'v B', 'val_evt', 2, 'draft');
    const birthday = await svc.request('POST', '/api/v1/admin/rules', { key: tenant.apiKey, body: { name: 'bday', trigger: 'birthday', effects: [{ type: 'award_points', points: 5 }] } });
    const base = {
      name: 'v',
      subject_type: 'rule',
      variants: [
        { key: 'a', name: 'A', subject_id: ruleA, allocation_percent: 50 },
        { key: 'b', name: 'B', subject_id: ruleB, allocation_percent: 50 },
      ],
      goal: { type: 'event_count', event_name: 'val_evt' },
    };
    const variant = (index: number, change: Record<string, unknown>) => base.variants.map((v, i) => (i === index ? { ...v, ...change } : v));
    const cases: Array<[string, Record<string, unknown>, number, string, string]> = [
      ['allocation not summing to 100', { ...base, holdout_percent: 5 }, 400, '/variants/0/allocation_percent', 'allocation_sum'],
      ['a repeated key', { ...base, variants: variant(1, { key: 'a' }) }, 400, '/variants/1/key', 'unique'],
      ['the reserved key holdout', { ...base, variants: variant(0, { key: 'holdout' }) }, 400, '/variants/0/key', 'reserved'],
      ['a repeated subject', { ...base, variants: variant(1, { subject_id: ruleA }) }, 400, '/variants/1/subject_id', 'unique'],
      ['one variant', { ...base, variants: [{ ...base.variants[0], allocation_percent: 100 }] }, 400, '/variants', 'min_items'],
      ['six variants', { ...base, variants: Array.from({ length: 6 }, (_, i) => ({ ...base.variants[0], key: `k${i}` })) }, 400, '/variants', 'max_items'],
      ['a holdout over 50', { ...base, holdout_percent: 60 }, 400, '/holdout_percent', 'maximum'],
      ['a key with capitals', { ...base, variants: variant(0, { key: 'Control' }) }, 400, '/variants/0/key', 'pattern'],
      ['a goal without its event', { ...base, goal: { type: 'event_property_sum', event_name: 'val_evt' } }, 400, '/goal/property', 'required'],
      ['a goal with a stray field', { ...base, goal: { type: 'redemptions', event_name: 'x' } }, 400, '/goal/event_name', 'not_allowed'],
      ['a rule that does not exist', { ...base, variants: variant(1, { subject_id: 'rul_00000000000000000000000000000000' }) }, 422, '/variants/1/subject_id', 'not_found'],
      ['a subject of another type', { ...base, subject_type: 'multiplier' }, 422, '/variants/0/subject_id', 'not_found'],
      ['another tenant\'s rule', { ...base, variants: variant(1, { subject_id: 'rul_' + 'f'.repeat(32) }) }, 422, '/variants/1/subject_id', 'not_found'],
      ['a scheduled rule', { ...base, variants: variant(1, { subject_id: birthday.body.id }) }, 422, '/variants/1/subject_id', 'not_allowed'],
      ['an unknown segment', { ...base, segment_id: 'seg_' + '0'.repeat(32) }, 422, '/segment_id', ''],
    ];
    for (const [what, body, status, path, code] of cases) {
      const refused = await admin('POST', '', body);
      assert.equal(refused.status, status, `${what}: ${refused.text}`);
      assert.ok(refused.body.detail, what);
      const error = refused.body.errors?.find((e: { path: string }) => e.path === path);
      assert.ok(error, `${what}: errors name ${path}: ${refused.text}`);
      if (code) assert.equal(error.code, code, what);
    }
    const otherRule = await createRule(svc, other, 'theirs', 'val_evt', 1);
    const theirs = await admin('POST', '', { ...base, variants: variant(1, { subject_id: otherRule }) });
    assert.equal(theirs.status, 422, 'another tenant\'s rule is not found');
  });

  await t.test('variant A awards 10 and B 20 for the same event: each participant gets exactly their variant\'s points; the holdout gets none', async () => {
    const { id, ruleA, ruleB } = await ruleExperiment(svc, tenant, 'ab_evt', { holdout: 20, pointsA: 10, pointsB: 20 });
    // Before the start, the active control serves everyone and the draft nobody.
    const before = await sendSync(svc, tenant, { event_name: 'ab_evt', participant_id: 'before_start' });
    assert.equal(before.body.points_awarded, 10, before.text);
    await start(svc, tenant, id);
    const people = Array.from({ length: 60 }, (_, i) => `ab_${i}`);
    const outcomes = new Map<string, any>();
    for (const person of people) outcomes.set(person, (await sendSync(svc, tenant, { event_name: 'ab_evt', participant_id: person })).body);
    const assigned = await assignments(svc, tenant, id);
    assert.equal(assigned.size, people.length, 'each participant is recorded at first exposure');
    const points = await pointsByParticipant(svc, tenant, people);
    const expected: Record<string, number> = { a: 10, b: 20, holdout: 0 };
    for (const person of people) {
      const variant = assigned.get(person)!;
      assert.equal(variant, assignVariant(id, person, 20, [{ key: 'a', allocation_percent: 40 }, { key: 'b', allocation_percent: 40 }]), 'the recorded variant is the computed one');
      assert.equal(points.get(person) ?? 0, expected[variant], `${person} in ${variant}`);
      const verdicts = outcomes.get(person).rules as Array<{ rule_id: string; result: string; experiment?: { variant_key: string } }>;
      const other = verdicts.filter((v) => v.result === 'other_variant');
      assert.equal(other.length, variant === 'holdout' ? 2 : 1, 'the rules of the other variants say why they did not award');
      assert.ok(other.every((v) => v.experiment?.variant_key === variant));
      if (variant !== 'holdout') assert.equal(verdicts.find((v) => v.result === 'applied')?.rule_id, variant === 'a' ? ruleA : ruleB);
    }
    assert.deepEqual(new Set(assigned.values()), new Set(['a', 'b', 'holdout']), '60 people fall in every group');
    // A second event keeps everyone where they were.
    const again = await sendSync(svc, tenant, { event_name: 'ab_evt', participant_id: people[0] });
    assert.equal(again.body.points_awarded, expected[assigned.get(people[0])!]);
    // Stopped: the draft serves nobody again, the control everyone; a restart keeps the assignments.
    assert.equal((await admin('POST', `/${id}/stop`)).body.status, 'stopped');
    const holdoutPerson = people.find((p) => assigned.get(p) === 'holdout')!;
    assert.equal((await sendSync(svc, tenant, { event_name: 'ab_evt', participant_id: holdoutPerson })).body.points_awarded, 10);
    await start(svc, tenant, id);
    assert.equal((await sendSync(svc, tenant, { event_name: 'ab_evt', participant_id: holdoutPerson })).body.points_awarded, 0);
  });

  await t.test('one subject serves one running experiment; a started experiment changes only its allocation; only a draft is deleted', async () => {
    const first = await ruleExperiment(svc, tenant, 'busy_evt');
    await start(svc, tenant, first.id);
    const ruleC = await createRule(svc, tenant, 'busy C', 'busy_evt', 5, 'draft');
    const second = await admin('POST', '', {
      name: 'second',
      subject_type: 'rule',
      variants: [
        { key: 'a', name: 'A', subject_id: first.ruleA, allocation_percent: 50 },
        { key: 'c', name: 'C', subject_id: ruleC, allocation_percent: 50 },
      ],
      goal: { type: 'event_count', event_name: 'busy_evt' },
    });
    assert.equal(second.status, 201, 'a draft may share a subject');
    const busy = await admin('POST', `/${second.body.id}/start`);
    assert.equal(busy.status, 409, busy.text);
    assert.equal(busy.body.code, 'EXPERIMENT_SUBJECT_IN_USE');
    assert.equal(busy.body.errors[0].path, '/variants/0/subject_id');
    assert.match(busy.body.detail, new RegExp(first.id));
    const unchanged = await admin('PATCH', `/${first.id}`, { goal: { event_name: 'busy_evt', type: 'event_count' }, segment_id: null, name: 'busy' });
    assert.equal(unchanged.status, 200, `the goal and segment sent unchanged are no change: ${unchanged.text}`);
    const goal = await admin('PATCH', `/${first.id}`, { goal: { type: 'redemptions' } });
    assert.equal(goal.status, 409);
    assert.equal(goal.body.errors[0].path, '/goal');
    const swapped = await admin('PATCH', `/${first.id}`, { variants: [{ key: 'a', name: 'A', subject_id: ruleC, allocation_percent: 50 }, { key: 'b', name: 'B', subject_id: first.ruleB, allocation_percent: 50 }] });
    assert.equal(swapped.status, 409);
    assert.equal(swapped.body.errors[0].path, '/variants/0/subject_id');
    const deleted = await admin('DELETE', `/${first.id}`);
    assert.equal(deleted.status, 409);
    assert.equal(deleted.body.code, 'EXPERIMENT_NOT_DRAFT');
    // Its rules cannot be deleted while it runs (the experiment named); once stopped they can.
    const ruleGone = await svc.request('DELETE', `/api/v1/admin/rules/${first.ruleB}`, { key: tenant.apiKey });
    assert.equal(ruleGone.status, 409, ruleGone.text);
    assert.equal(ruleGone.body.code, 'SUBJECT_IN_EXPERIMENT');
    assert.equal(ruleGone.body.experiment_id, first.id);
    assert.equal((await admin('POST', `/${first.id}/stop`)).status, 200);
    assert.equal((await admin('POST', `/${second.body.id}/start`)).status, 200, 'once the first stops, the subject is free');
    assert.equal((await svc.request('DELETE', `/api/v1/admin/rules/${first.ruleB}`, { key: tenant.apiKey })).status, 204, 'a rule of no running experiment is deleted');
  });

  await t.test('roll-out publishes the winning draft, pauses the other rule, ends the experiment; audited', async () => {
    const { id, ruleA, ruleB } = await ruleExperiment(svc, tenant, 'roll_evt', { pointsA: 10, pointsB: 20 });
    const early = await admin('POST', `/${id}/rollout`, { variant: 'b' });
    assert.equal(early.status, 409, 'a draft experiment is not rolled out');
    await start(svc, tenant, id);
    const unknown = await admin('POST', `/${id}/rollout`, { variant: 'z' });
    assert.equal(unknown.status, 400);
    assert.deepEqual(unknown.body.errors[0].allowed, ['a', 'b']);
    const rolled = await admin('POST', `/${id}/rollout`, { variant: 'b' });
    assert.equal(rolled.status, 200, rolled.text);
    assert.equal(rolled.body.publication, 'published');
    assert.equal(rolled.body.experiment.status, 'ended');
    assert.equal(rolled.body.experiment.rolled_out_variant, 'b');
    assert.deepEqual(rolled.body.stopped, [{ variant: 'a', subject_id: ruleA, action: 'paused' }]);
    assert.equal((await svc.request('GET', `/api/v1/admin/rules/${ruleB}`, { key: tenant.apiKey })).body.status, 'active');
    assert.equal((await svc.request('GET', `/api/v1/admin/rules/${ruleA}`, { key: tenant.apiKey })).body.status, 'paused');
    // Everyone now gets B, exposed before or not.
    for (const person of ['roll_1', 'roll_2', 'roll_3']) assert.equal((await sendSync(svc, tenant, { event_name: 'roll_evt', participant_id: person })).body.points_awarded, 20);
    assert.equal((await admin('PATCH', `/${id}`, { name: 'late' })).status, 409);
    const audit = await svc.request('GET', `/api/v1/admin/audit-log?resource_type=experiments`, { key: tenant.apiKey });
    assert.equal(audit.status, 200, audit.text);
    const actions = audit.body.entries.filter((e: { resource_id: string }) => e.resource_id === id).map((e: { action: string }) => e.action);
    assert.ok(actions.includes('rollout') && actions.includes('start') && actions.includes('create'), actions.join(','));
  });
});
