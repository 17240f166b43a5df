import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { asPerson, invitePerson, signInConsole } from '../../../test/console-people.js';
import { key, sendSync, waitProcessed } from '../ingestion/testing.js';
import { compareToControl, costPerExtraGoal, summarize, totalsOf, variantSentence } from './statistics.js';
import { createRule, start } from './testing.js';

const PARTICIPANTS = 120;
const near = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${actual}, expected ${expected}`);

test('experiment results through HTTP: exposed participants, goal, points cost and the difference to control, exactly', { timeout: 600_000 }, async (t) => {
  const svc = await startTestService(t, { jobs: true, config: { RATE_LIMIT_INGEST_BURST_PER_SECOND: '10000' } });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();

  const rule = async (name: string, points: number) => {
    const created = await svc.request('POST', '/api/v1/admin/rules', { key: tenant.apiKey, body: { name, event_name: 'purchase', effects: [{ type: 'award_points', points }] } });
    assert.equal(created.status, 201, created.text);
    return created.body.id as string;
  };
  const ruleA = await rule('10 points per purchase', 10);
  const ruleB = await rule('20 points per purchase', 20);
  const created = await svc.request('POST', '/api/v1/admin/experiments', {
    key: tenant.apiKey,
    body: {
      name: 'Double points on purchases',
      subject_type: 'rule',
      holdout_percent: 10,
      variants: [
        { key: 'a', name: 'variant A', subject_id: ruleA, allocation_percent: 45 },
        { key: 'b', name: 'variant B', subject_id: ruleB, allocation_percent: 45 },
      ],
      goal: { type: 'event_count', event_name: 'purchase' },
    },
  });
  assert.equal(created.status, 201, created.text);
  const experimentId = created.body.id as string;
  const results = (as: { key?: string; headers?: Record<string, string> } = { key: tenant.apiKey }) => svc.request('GET', `/api/v1/admin/experiments/${experimentId}/results`, as);

  await t.test('a draft answers with nobody exposed and says there is too little to compare', async () => {
    const draft = await results();
    assert.equal(draft.status, 200, draft.text);
    assert.equal(draft.body.status, 'draft');
    assert.equal(draft.body.method, 'welch');
    assert.deepEqual(draft.body.variants.map((v: { key: string; exposed: number }) => [v.key, v.exposed]), [['a', 0], ['b', 0]]);
    assert.equal(draft.body.variants[0].difference, null);
    assert.deepEqual(draft.body.variants[1].warnings, ['too_few_participants']);
    assert.equal(draft.body.variants[1].sentence, 'variant B: too few participants to compare yet (0 here, 0 in control; at least 30 each)');
    assert.equal(draft.body.holdout.exposed, 0);
  });

  const started = await svc.request('POST', `/api/v1/admin/experiments/${experimentId}/start`, { key: tenant.apiKey });
  assert.equal(started.status, 200, started.text);

  // Each participant's first purchase exposes them (it happened a minute ago, before the exposure, so it is not part of the goal);
  // the points it earned say which variant they are in: 10 (A), 20 (B) or none (the holdout).
  const arms: Record<'a' | 'b' | 'holdout', string[]> = { a: [], b: [], holdout: [] };
  const aMinuteAgo = new Date(Date.now() - 60_000).toISOString();
  for (let i = 0; i < PARTICIPANTS; i++) {
    const participant = `exp-p${String(i).padStart(3, '0')}`;
    const first = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: participant, timestamp: aMinuteAgo });
    assert.equal(first.status, 200, first.text);
    const points = first.body.points_awarded as number;
    assert.ok([0, 10, 20].includes(points), `participant ${participant} got ${points} points`);
    arms[points === 10 ? 'a' : points === 20 ? 'b' : 'holdout'].push(participant);
  }
  t.diagnostic(`split: A ${arms.a.length}, B ${arms.b.length}, holdout ${arms.holdout.length}`);
  assert.ok(arms.a.length >= 30 && arms.b.length >= 30, 'both variants have at least 30 participants (120 participants at 45/45/10)');

  // After exposure, the j-th participant of each arm makes j mod 3 purchases; each of variant B's makes one more.
  const goals = { a: arms.a.map((_, j) => j % 3), b: arms.b.map((_, j) => (j % 3) + 1), holdout: arms.holdout.map((_, j) => j % 3) };
  const events = (Object.keys(arms) as Array<keyof typeof arms>).flatMap((arm) =>
    arms[arm].flatMap((participant, j) => Array.from({ length: goals[arm][j] }, () => ({ event_name: 'purchase', participant_id: participant, idempotency_key: key('goal') }))),
  );
  const batch = await svc.request('POST', '/api/v1/ingest/events/batch', { key: tenant.apiKey, body: { events } });
  assert.equal(batch.status, 200, batch.text);
  assert.equal(batch.body.accepted, events.length, batch.text);
  const ids = batch.body.results.map((r: { message_id: string }) => r.message_id);
  await waitProcessed(svc, ids, 60_000).catch(async (error) => {
    t.diagnostic(JSON.stringify(await svc.sql(`SELECT status, attempts, last_error, count(*)::int FROM ingested_events WHERE event_id = ANY($1::text[]) GROUP BY 1, 2, 3`, [ids])));
    throw error;
  });
  // An event of another name counts for nothing.
  await sendSync(svc, tenant, { event_name: 'page_view', participant_id: arms.a[0] });

  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  let answered: Record<string, any>;

  await t.test('exposed counts, goal per participant and points cost are exact', async () => {
    const response = await results();
    assert.equal(response.status, 200, response.text);
    answered = response.body;
    assert.equal(answered.experiment_id, experimentId);
    assert.equal(answered.status, 'running');
    assert.deepEqual(answered.goal, { type: 'event_count', event_name: 'purchase' });
    const [a, b] = answered.variants;
    assert.equal(a.control, true);
    assert.equal(b.control, false);
    for (const [arm, answer, pointsPerPurchase] of [['a', a, 10], ['b', b, 20]] as const) {
      assert.equal(answer.exposed, arms[arm].length, `${arm} exposed`);
      assert.equal(answer.goal_total, sum(goals[arm]), `${arm} goal total`);
      near(answer.goal_per_participant, sum(goals[arm]) / arms[arm].length, `${arm} goal per participant`);
      // Every purchase after exposure earned the variant's points, and so did the exposing purchase itself.
      assert.equal(answer.points_cost, pointsPerPurchase * (sum(goals[arm]) + arms[arm].length), `${arm} points cost`);
      near(answer.points_per_participant, answer.points_cost / arms[arm].length, `${arm} points per participant`);
      assert.equal(answer.rewards_cost, 0);
    }
    assert.equal(a.difference, null);
    assert.equal(a.sentence, 'variant A: the control');

    const expected = compareToControl(summarize(totalsOf(goals.b)), summarize(totalsOf(goals.a)));
    const comparison = expected.comparison!;
    // B made exactly one purchase more per participant, up to the arms' different mixes of 0, 1 and 2.
    near(b.difference.absolute, sum(goals.b) / arms.b.length - sum(goals.a) / arms.a.length, 'absolute difference');
    near(b.difference.absolute_ci95[0], comparison.absolute_ci95[0], 'absolute interval, low');
    near(b.difference.absolute_ci95[1], comparison.absolute_ci95[1], 'absolute interval, high');
    near(b.difference.relative, comparison.relative!, 'relative difference');
    near(b.difference.relative_ci95[0], comparison.relative_ci95![0], 'relative interval, low');
    near(b.difference.relative_ci95[1], comparison.relative_ci95![1], 'relative interval, high');
    assert.ok(b.difference.absolute_ci95[0] > 0, 'a measurable effect');
    const extraPoints = b.points_per_participant - a.points_per_participant;
    near(b.cost_per_extra_goal, extraPoints / b.difference.absolute, 'points per extra purchase');
    near(b.cost_per_extra_goal, costPerExtraGoal(comparison, extraPoints)!, 'points per extra purchase, as statistics.ts says');
    assert.deepEqual(b.warnings, []);
    assert.equal(
      b.sentence,
      variantSentence({ name: 'variant B', exposed: arms.b.length, controlExposed: arms.a.length, result: expected, label: { singular: 'purchase', plural: 'purchases' }, extraPointsPerParticipant: extraPoints, costPerExtraGoal: b.cost_per_extra_goal }),
    );
    assert.match(b.sentence, /^variant B: \+\d+% purchases per participant, 95% CI \+\d+% to \+\d+%, costs \d+ points per extra purchase$/);
    t.diagnostic(b.sentence);

    // The holdout got no points from either rule; its line compares the control against it.
    assert.equal(answered.holdout.key, 'holdout');
    assert.equal(answered.holdout.exposed, arms.holdout.length);
    assert.equal(answered.holdout.goal_total, sum(goals.holdout));
    assert.equal(answered.holdout.points_cost, 0);
    if (arms.holdout.length < 30) assert.deepEqual(answered.holdout.warnings, ['too_few_participants']);
  });

  await t.test('once stopped, the window ends: later purchases count for nothing', async () => {
    const stopped = await svc.request('POST', `/api/v1/admin/experiments/${experimentId}/stop`, { key: tenant.apiKey });
    assert.equal(stopped.status, 200, stopped.text);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await sendSync(svc, tenant, { event_name: 'purchase', participant_id: arms.b[0] });
    const after = await results();
    assert.equal(after.status, 200, after.text);
    assert.equal(after.body.status, 'stopped');
    assert.equal(after.body.window_end, stopped.body.ended_at);
    assert.equal(after.body.variants[1].goal_total, answered.variants[1].goal_total);
    assert.equal(after.body.variants[1].points_cost, answered.variants[1].points_cost);
  });

  await t.test('another tenant gets 404; an unknown id 404; a malformed id 400', async () => {
    const foreign = await results({ key: other.apiKey });
    assert.equal(foreign.status, 404, foreign.text);
    assert.equal(foreign.body.code, 'EXPERIMENT_NOT_FOUND');
    const unknown = await svc.request('GET', `/api/v1/admin/experiments/exp_${'0'.repeat(32)}/results`, { key: tenant.apiKey });
    assert.equal(unknown.status, 404, unknown.text);
    const malformed = await svc.request('GET', '/api/v1/admin/experiments/nope/results', { key: tenant.apiKey });
    assert.equal(malformed.status, 400, malformed.text);
  });

  await t.test('an analyst reads the results; a fraud reviewer (no analytics:read) is refused', async () => {
    const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
    const analyst = await invitePerson(svc, owner, `analyst@${tenant.slug}.example`, 'analyst');
    const reviewer = await invitePerson(svc, owner, `reviewer@${tenant.slug}.example`, 'reviewer');
    const read = await results(asPerson(analyst, false));
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.variants[1].sentence, answered.variants[1].sentence);
    const refused = await results(asPerson(reviewer, false));
    assert.equal(refused.status, 403, refused.text);
  });
});

test('experiment results: a multiplier\'s cost is the points it added; a property-sum goal sums the JSON numbers at its path; an engagement experiment with a redemptions goal answers', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant({ requestsPerMinute: null });
  const admin = (method: string, path: string, body?: unknown) => svc.request(method, `/api/v1/admin${path}`, { key: tenant.apiKey, ...(body !== undefined && { body }) });

  await createRule(svc, tenant, 'ten per order', 'order', 10);
  const window = { starts_at: new Date(Date.now() - 3_600_000).toISOString(), ends_at: new Date(Date.now() + 86_400_000).toISOString() };
  const double = await admin('POST', '/points/multipliers', { multiplier: 2, ...window, match: { event_type: 'order' } });
  const triple = await admin('POST', '/points/multipliers', { multiplier: 3, ...window, match: { event_type: 'order' } });
  assert.equal(triple.status, 201, triple.text);
  const created = await admin('POST', '/experiments', {
    name: 'double or triple',
    subject_type: 'multiplier',
    variants: [
      { key: 'double', name: '×2', subject_id: double.body.id, allocation_percent: 50 },
      { key: 'triple', name: '×3', subject_id: triple.body.id, allocation_percent: 50 },
    ],
    goal: { type: 'event_property_sum', event_name: 'order', property: 'properties.basket.total' },
  });
  assert.equal(created.status, 201, created.text);
  await start(svc, tenant, created.body.id);

  const arms: Record<'double' | 'triple', string[]> = { double: [], triple: [] };
  const aMinuteAgo = new Date(Date.now() - 60_000).toISOString();
  for (let i = 0; i < 12; i++) {
    const participant = `basket-${i}`;
    const first = await sendSync(svc, tenant, { event_name: 'order', participant_id: participant, timestamp: aMinuteAgo, properties: { basket: { total: 1000 } } });
    assert.equal(first.status, 200, first.text);
    arms[first.body.points_awarded === 20 ? 'double' : 'triple'].push(participant);
  }
  // After exposure: 12.5 and 2 count, the string "7" and a total elsewhere do not; each ×3 participant orders 10 more.
  for (const [arm, people] of Object.entries(arms)) {
    for (const participant of people) {
      const baskets: unknown[] = [{ basket: { total: 12.5 } }, { basket: { total: '7' } }, { basket: { total: 2 } }, { total: 50 }];
      if (arm === 'triple') baskets.push({ basket: { total: 10 } });
      for (const properties of baskets) assert.equal((await sendSync(svc, tenant, { event_name: 'order', participant_id: participant, properties })).status, 200);
    }
  }
  const response = await admin('GET', `/experiments/${created.body.id}/results`);
  assert.equal(response.status, 200, response.text);
  const [d, tr] = response.body.variants;
  assert.equal(d.exposed, arms.double.length);
  assert.equal(tr.exposed, arms.triple.length);
  near(d.goal_total, 14.5 * arms.double.length, 'double: goal total');
  near(tr.goal_total, 24.5 * arms.triple.length, 'triple: goal total');
  // Every order after exposure, the exposing one included, earned 10 points raised by the multiplier: ×2 added 10, ×3 added 20.
  near(d.points_cost, 10 * 5 * arms.double.length, 'double: points the multiplier added');
  near(tr.points_cost, 20 * 6 * arms.triple.length, 'triple: points the multiplier added');
  assert.equal(tr.difference, null);
  assert.deepEqual(tr.warnings, ['too_few_participants']);
  assert.equal(response.body.holdout, null);

  const engagements = [await svc.createEngagement(tenant), await svc.createEngagement(tenant)];
  const wheel = await admin('POST', '/experiments', {
    name: 'which wheel',
    subject_type: 'engagement',
    variants: engagements.map((id, i) => ({ key: `w${i}`, name: `wheel ${i}`, subject_id: id, allocation_percent: 50 })),
    goal: { type: 'redemptions' },
  });
  assert.equal(wheel.status, 201, wheel.text);
  const wheelResults = await admin('GET', `/experiments/${wheel.body.id}/results`);
  assert.equal(wheelResults.status, 200, wheelResults.text);
  assert.deepEqual(wheelResults.body.variants.map((v: { exposed: number; rewards_cost: number }) => [v.exposed, v.rewards_cost]), [[0, 0], [0, 0]]);
  assert.equal(wheelResults.body.variants[1].sentence, 'wheel 1: too few participants to compare yet (0 here, 0 in control; at least 30 each)');
});
