import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService, type TestTenant } from '../../../test/helper.js';
import { key, sendSync, waitProcessed } from '../ingestion/testing.js';

/**
 * Issue 34, item 4: an event that earns nothing says why. Each event's
 * outcome lists every active rule listening to its name with a result, the
 * same in the synchronous answer and on the event's read route; an event no
 * rule listens to names the nearest event names that rules do listen to.
 */
async function createRule(svc: TestService, tenant: TestTenant, rule: Record<string, unknown>): Promise<string> {
  const response = await svc.request('POST', '/api/v1/admin/rules', { key: tenant.apiKey, body: rule });
  assert.equal(response.status, 201, response.text);
  return response.body.id;
}

async function readEvent(svc: TestService, tenant: TestTenant, eventId: string) {
  const read = await svc.request('GET', `/api/v1/admin/events/${eventId}`, { key: tenant.apiKey });
  assert.equal(read.status, 200, read.text);
  return read.body;
}

test('event outcomes: why each rule did or did not award', async (t) => {
  const svc = await startTestService(t, { jobs: true });
  const tenant = await svc.createTenant();
  const ruleId = await createRule(svc, tenant, {
    name: 'orders over 20',
    event_name: 'purchase',
    conditions: { all: [{ fact: 'properties.order_total', operator: 'gte', value: 20 }] },
    effects: [{ type: 'award_points', points: 10 }],
  });

  await t.test('a match: the rule applied, with its points, and the read route shows the same', async () => {
    const answer = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'match', properties: { order_total: 50 } });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.points_awarded, 10);
    assert.deepEqual(answer.body.rules, [
      { rule_id: ruleId, rule_name: 'orders over 20', result: 'applied', points: 10, points_wanted: 10, multiplier: null, badges_awarded: [], streaks_continued: [] },
    ]);
    assert.equal(answer.body.unmatched_event_name, undefined);
    assert.deepEqual(answer.body.rules_applied, [{ rule_id: ruleId, rule_name: 'orders over 20', points: 10, badges_awarded: [] }]);
    const stored = await readEvent(svc, tenant, answer.body.event_id);
    assert.deepEqual(stored.outcome.rules, answer.body.rules);
  });

  await t.test('"50" as a string fails the condition, named with the value and its type', async () => {
    const answer = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'string', properties: { order_total: '50' } });
    assert.equal(answer.body.points_awarded, 0);
    assert.deepEqual(answer.body.rules, [
      {
        rule_id: ruleId,
        rule_name: 'orders over 20',
        result: 'condition_failed',
        points: 0,
        condition: { group: 'all', index: 0, operator: 'gte', expected: 20, fact: 'properties.order_total', actual: '50', actual_type: 'string' },
      },
    ]);
    assert.deepEqual(answer.body.rules_applied, []);
    assert.deepEqual((await readEvent(svc, tenant, answer.body.event_id)).outcome.rules, answer.body.rules);
    const missing = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'string', properties: {} });
    assert.deepEqual(missing.body.rules[0].condition, { group: 'all', index: 0, operator: 'gte', expected: 20, fact: 'properties.order_total', actual_type: 'missing' });
  });

  await t.test('a typo in the event name answers the nearest names that rules listen to', async () => {
    await createRule(svc, tenant, { name: 'sign-up', event_name: 'signup_completed', effects: [{ type: 'award_points', points: 5 }] });
    const answer = await sendSync(svc, tenant, { event_name: 'purchse', participant_id: 'typo' });
    assert.equal(answer.body.points_awarded, 0);
    assert.deepEqual(answer.body.rules, []);
    assert.deepEqual(answer.body.unmatched_event_name, { nearest: ['purchase'] });
    assert.deepEqual((await readEvent(svc, tenant, answer.body.event_id)).outcome.unmatched_event_name, { nearest: ['purchase'] });
    const cased = await sendSync(svc, tenant, { event_name: 'Purchase', participant_id: 'typo' });
    assert.deepEqual(cased.body.unmatched_event_name, { nearest: ['purchase'] });
    const far = await sendSync(svc, tenant, { event_name: 'page_view', participant_id: 'typo' });
    assert.deepEqual(far.body.unmatched_event_name, { nearest: [] }, 'a name no rule listens to, close to none');
  });

  await t.test('a capped rule names its cap and the usage before the event', async () => {
    const capped = await createRule(svc, tenant, { name: 'once a day', event_name: 'checkin', caps: { per_day: { times: 1 } }, effects: [{ type: 'award_points', points: 3 }] });
    const first = await sendSync(svc, tenant, { event_name: 'checkin', participant_id: 'cap', timestamp: '2026-03-02T10:00:00Z' });
    assert.equal(first.body.rules[0].result, 'applied');
    const second = await sendSync(svc, tenant, { event_name: 'checkin', participant_id: 'cap', timestamp: '2026-03-02T11:00:00Z' });
    assert.deepEqual(second.body.rules, [
      { rule_id: capped, rule_name: 'once a day', result: 'capped', points: 0, cap: { period: 'per_day', limit: 'times', max: 1, used: 1 } },
    ]);
    assert.deepEqual((await readEvent(svc, tenant, second.body.event_id)).outcome.capped_rules, [capped]);
    // A points cap that leaves nothing: the rule ran (usage counted) but earned 0.
    await createRule(svc, tenant, { name: 'weekly 5', event_name: 'visit', caps: { per_week: { points: 5 } }, effects: [{ type: 'award_points', points: 5 }] });
    await sendSync(svc, tenant, { event_name: 'visit', participant_id: 'cap', timestamp: '2026-03-02T10:00:00Z' });
    const over = await sendSync(svc, tenant, { event_name: 'visit', participant_id: 'cap', timestamp: '2026-03-03T10:00:00Z' });
    assert.equal(over.body.rules[0].result, 'capped');
    assert.deepEqual(over.body.rules[0].cap, { period: 'per_week', limit: 'points', max: 5, used: 5 });
  });

  await t.test('a spent budget says so', async () => {
    const budgeted = await createRule(svc, tenant, { name: 'first ten points', event_name: 'review', budget_points: 10, effects: [{ type: 'award_points', points: 10 }] });
    assert.equal((await sendSync(svc, tenant, { event_name: 'review', participant_id: 'budget-a' })).body.points_awarded, 10);
    const spent = await sendSync(svc, tenant, { event_name: 'review', participant_id: 'budget-b' });
    assert.equal(spent.body.points_awarded, 0);
    assert.deepEqual(spent.body.rules, [
      {
        rule_id: budgeted,
        rule_name: 'first ten points',
        result: 'budget_spent',
        points: 0,
        points_wanted: 10,
        multiplier: null,
        badges_awarded: [],
        streaks_continued: [],
        budget: { budget_points: 10 },
      },
    ]);
  });

  await t.test('an event outside the window of its rule says which side', async () => {
    const windowed = await createRule(svc, tenant, { name: 'march only', event_name: 'share', starts_at: '2026-03-01T00:00:00Z', ends_at: '2026-04-01T00:00:00Z', effects: [{ type: 'award_points', points: 2 }] });
    const early = await sendSync(svc, tenant, { event_name: 'share', participant_id: 'win', timestamp: '2026-02-20T00:00:00Z' });
    assert.deepEqual(early.body.rules, [
      {
        rule_id: windowed,
        rule_name: 'march only',
        result: 'outside_window',
        points: 0,
        window: { starts_at: '2026-03-01T00:00:00.000Z', ends_at: '2026-04-01T00:00:00.000Z', event_is: 'before_start' },
      },
    ]);
    assert.equal(early.body.unmatched_event_name, undefined, 'a rule listens, outside its window');
    const late = await sendSync(svc, tenant, { event_name: 'share', participant_id: 'win', timestamp: '2026-04-01T00:00:00Z' });
    assert.equal(late.body.rules[0].window.event_is, 'after_end');
  });

  await t.test('a rate on a string earns 0 and says why; rules below a stopping rule say they were stopped', async () => {
    const stopper = await createRule(svc, tenant, { name: 'vip stop', event_name: 'order', priority: 10, stop_processing: true, conditions: { all: [{ fact: 'properties.vip', operator: 'equals', value: true }] }, effects: [{ type: 'award_points', points: 1 }] });
    await createRule(svc, tenant, { name: 'per euro', event_name: 'order', effects: [{ type: 'award_points', rate: { property: 'properties.amount', points_per_unit: 1 } }] });
    const text = await sendSync(svc, tenant, { event_name: 'order', participant_id: 'rate', properties: { amount: '12', vip: false } });
    assert.deepEqual(
      text.body.rules.map((r: { result: string }) => r.result),
      ['condition_failed', 'rate_unusable'],
    );
    assert.deepEqual(text.body.rules[1].rate, { fact: 'properties.amount', actual: '12', actual_type: 'string' });
    const vip = await sendSync(svc, tenant, { event_name: 'order', participant_id: 'rate', properties: { amount: 12, vip: true } });
    assert.deepEqual(vip.body.rules.map((r: { result: string; stopped_by?: string }) => [r.result, r.stopped_by]), [['applied', undefined], ['stopped', stopper]]);
  });

  await t.test('a condition on a personal property never echoes its value', async () => {
    await createRule(svc, tenant, { name: 'staff only', event_name: 'login', conditions: { all: [{ fact: 'properties.email', operator: 'equals', value: 'staff@example.com' }] }, effects: [{ type: 'award_points', points: 1 }] });
    const answer = await sendSync(svc, tenant, { event_name: 'login', participant_id: 'pii', properties: { email: 'ada@example.org' } });
    assert.deepEqual(answer.body.rules[0].condition, { group: 'all', index: 0, operator: 'equals', expected: 'staff@example.com', fact: 'properties.email', actual_type: 'string', actual_withheld: 'personal' });
    const [row] = await svc.sql('SELECT outcome::text AS outcome FROM ingested_events WHERE event_id = $1', [answer.body.event_id]);
    assert.ok(!row.outcome.includes('ada@example.org'), row.outcome);
  });

  await t.test('events processed in the background store the same reasons', async () => {
    const accepted = await svc.request('POST', '/api/v1/ingest/events', {
      key: tenant.apiKey,
      body: { event_name: 'purchase', participant_id: 'async', properties: { order_total: '50' }, idempotency_key: key('reasons') },
    });
    assert.equal(accepted.status, 202, accepted.text);
    await waitProcessed(svc, [accepted.body.message_id]);
    const stored = await readEvent(svc, tenant, accepted.body.message_id);
    assert.equal(stored.outcome.rules[0].result, 'condition_failed');
    assert.equal(stored.outcome.rules[0].condition.actual_type, 'string');
    const search = await svc.request('GET', '/api/v1/events/search?participant_id=async', { key: tenant.apiKey });
    assert.deepEqual(search.body.events[0].outcome.rules, stored.outcome.rules);
  });

  await t.test('an outcome stored before rules had results reads as applied rules', async () => {
    const answer = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'legacy', properties: { order_total: 30 } });
    await svc.sql(
      `UPDATE ingested_events SET outcome = jsonb_build_object('points_awarded', 10, 'rules', jsonb_build_array(jsonb_build_object('rule_id', $2::text, 'rule_name', 'orders over 20', 'points', 10, 'badges_awarded', '[]'::jsonb, 'streaks_continued', '[]'::jsonb, 'multiplier', null)), 'capped_rules', '[]'::jsonb, 'streaks_continued', '[]'::jsonb)
       WHERE event_id = $1`,
      [answer.body.event_id, ruleId],
    );
    const stored = await readEvent(svc, tenant, answer.body.event_id);
    assert.equal(stored.outcome.rules[0].result, 'applied');
    assert.equal(stored.outcome.rules[0].points, 10);
  });
});
