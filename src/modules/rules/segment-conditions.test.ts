import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantPoints, startTestService, type TestService, type TestTenant } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { sendSync } from '../ingestion/testing.js';
import { runOccurrence, startDueOccurrences } from './index.js';

/**
 * Issue 36: a rule condition on segment membership (`participant.segment`
 * in / not_in), validated at create and update, evaluated per event, in the
 * simulation and in scheduled rules, and reported in the event's outcome.
 */
async function createSegment(svc: TestService, tenant: TestTenant, name: string, filter: Record<string, unknown>, materialized = false): Promise<string> {
  const response = await svc.request('POST', '/api/v1/admin/segments', { key: tenant.apiKey, body: { name, filter, materialized } });
  assert.equal(response.status, 201, response.text);
  return response.body.id;
}

const segmentCondition = (operator: string, value: unknown) => ({ all: [{ fact: 'participant.segment', operator, value }] });

test('rules: participant.segment conditions', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const db = svc.service.db;
  t.after(() => clock.reset());
  const post = (path: string, body: unknown, apiKey = tenant.apiKey) => svc.request('POST', `/api/v1${path}`, { key: apiKey, body });

  // Members: at least 100 lifetime points.
  assert.equal((await grantPoints(svc, tenant, 'rich', 150)).status, 200);
  assert.equal((await grantPoints(svc, tenant, 'poor', 10)).status, 200);
  const bigSpenders = await createSegment(svc, tenant, 'Big spenders', { all: [{ fact: 'lifetime_points', operator: 'gte', value: 100 }] });
  const nobody = await createSegment(svc, tenant, 'Nobody', { all: [{ fact: 'lifetime_points', operator: 'gte', value: 1_000_000 }] });

  await t.test('in: members earn; a non-member is told which segments and that they are in none', async () => {
    const created = await post('/admin/rules', { name: 'members bonus', event_name: 'visit', conditions: segmentCondition('in', [nobody, bigSpenders]), effects: [{ type: 'award_points', points: 5 }] });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.conditions, segmentCondition('in', [nobody, bigSpenders]));
    const member = await sendSync(svc, tenant, { event_name: 'visit', participant_id: 'rich' });
    assert.equal(member.status, 200, member.text);
    assert.equal(member.body.points_awarded, 5);
    const outsider = await sendSync(svc, tenant, { event_name: 'visit', participant_id: 'poor' });
    assert.equal(outsider.body.points_awarded, 0);
    assert.deepEqual(outsider.body.rules, [
      {
        rule_id: created.body.id,
        rule_name: 'members bonus',
        result: 'condition_failed',
        points: 0,
        condition: { group: 'all', index: 0, operator: 'in', expected: [nobody, bigSpenders], fact: 'participant.segment', actual: [], actual_type: 'array' },
      },
    ]);
    // A participant no one has seen before is in no segment.
    assert.equal((await sendSync(svc, tenant, { event_name: 'visit', participant_id: 'newcomer' })).body.points_awarded, 0);
  });

  await t.test('not_in: non-members earn; a member is told which listed segment they are in', async () => {
    const created = await post('/admin/rules', {
      name: 'win back',
      event_name: 'login',
      conditions: { all: [{ fact: 'properties.channel', operator: 'equals', value: 'app' }, { fact: 'participant.segment', operator: 'not_in', value: [bigSpenders, nobody] }] },
      effects: [{ type: 'award_points', points: 3 }],
    });
    assert.equal(created.status, 201, created.text);
    assert.equal((await sendSync(svc, tenant, { event_name: 'login', participant_id: 'poor', properties: { channel: 'app' } })).body.points_awarded, 3);
    const member = await sendSync(svc, tenant, { event_name: 'login', participant_id: 'rich', properties: { channel: 'app' } });
    assert.equal(member.body.points_awarded, 0);
    assert.deepEqual(member.body.rules[0].condition, {
      group: 'all',
      index: 1,
      operator: 'not_in',
      expected: [bigSpenders, nobody],
      fact: 'participant.segment',
      actual: [bigSpenders],
      actual_type: 'array',
    });
    const stored = await svc.request('GET', `/api/v1/admin/events/${member.body.event_id}`, { key: tenant.apiKey });
    assert.deepEqual(stored.body.outcome.rules, member.body.rules, 'the stored outcome says the same');
  });

  await t.test('membership follows the facts: crossing 100 lifetime points makes a member', async () => {
    assert.equal((await sendSync(svc, tenant, { event_name: 'visit', participant_id: 'climber' })).body.points_awarded, 0);
    await grantPoints(svc, tenant, 'climber', 120);
    assert.equal((await sendSync(svc, tenant, { event_name: 'visit', participant_id: 'climber' })).body.points_awarded, 5);
  });

  await t.test('a materialized segment: membership as of its last refresh', async () => {
    const kept = await createSegment(svc, tenant, 'Kept big spenders', { all: [{ fact: 'lifetime_points', operator: 'gte', value: 100 }] }, true);
    const refreshed = await post(`/admin/segments/${kept}/refresh`, {});
    assert.equal(refreshed.status, 200, refreshed.text);
    const rule = await post('/admin/rules', { name: 'kept members', event_name: 'share', conditions: segmentCondition('in', [kept]), effects: [{ type: 'award_points', points: 2 }] });
    assert.equal(rule.status, 201, rule.text);
    assert.equal((await sendSync(svc, tenant, { event_name: 'share', participant_id: 'rich' })).body.points_awarded, 2);
    assert.equal((await sendSync(svc, tenant, { event_name: 'share', participant_id: 'poor' })).body.points_awarded, 0);
  });

  await t.test('refused at create and update with the field named', async () => {
    const base = { name: 'bad', event_name: 'visit', effects: [{ type: 'award_points', points: 1 }] };
    const cases: Array<[unknown, number, string, string]> = [
      [segmentCondition('equals', bigSpenders), 400, '/conditions/all/0/operator', 'RULE_INVALID'],
      [segmentCondition('in', bigSpenders), 400, '/conditions/all/0/value', 'RULE_INVALID'],
      [segmentCondition('in', []), 400, '/conditions/all/0/value', 'RULE_INVALID'],
      [segmentCondition('in', ['vip']), 400, '/conditions/all/0/value', 'RULE_INVALID'],
      [segmentCondition('in', Array.from({ length: 21 }, () => bigSpenders)), 400, '/conditions/all/0/value', 'RULE_INVALID'],
      [segmentCondition('exists', undefined), 400, '/conditions/all/0/operator', 'RULE_INVALID'],
      [segmentCondition('in', [bigSpenders, 'seg_00000000000000000000000000000000']), 422, '/conditions/all/0/value', 'SEGMENT_NOT_FOUND'],
    ];
    for (const [conditions, status, path, code] of cases) {
      const response = await post('/admin/rules', { ...base, conditions });
      assert.equal(response.status, status, `${JSON.stringify(conditions)}: ${response.text}`);
      assert.equal(response.body.code, code, response.text);
      assert.ok(
        response.body.errors?.some((e: { path: string }) => e.path === path || e.path.startsWith(`${path}/`)),
        `${path}: ${response.text}`,
      );
    }
    const operator = await post('/admin/rules', { ...base, conditions: segmentCondition('gte', [bigSpenders]) });
    assert.deepEqual(operator.body.errors[0].allowed, ['in', 'not_in']);
    assert.match(operator.body.detail, /participant\.segment/);
    // The `any` group too, and an update.
    const inAny = await post('/admin/rules', { ...base, conditions: { any: [{ fact: 'properties.x', operator: 'exists' }, { fact: 'participant.segment', operator: 'in', value: ['seg_11111111111111111111111111111111'] }] } });
    assert.equal(inAny.status, 422, inAny.text);
    assert.ok(inAny.body.errors.some((e: { path: string }) => e.path.startsWith('/conditions/any/1/value')), inAny.text);
    const rule = await post('/admin/rules', { ...base, name: 'plain' });
    assert.equal(rule.status, 201, rule.text);
    const patched = await svc.request('PATCH', `/api/v1/admin/rules/${rule.body.id}`, { key: tenant.apiKey, body: { conditions: segmentCondition('in', ['seg_22222222222222222222222222222222']) } });
    assert.equal(patched.status, 422, patched.text);
    assert.equal(patched.body.code, 'SEGMENT_NOT_FOUND');
    const good = await svc.request('PATCH', `/api/v1/admin/rules/${rule.body.id}`, { key: tenant.apiKey, body: { conditions: segmentCondition('not_in', [bigSpenders]) } });
    assert.equal(good.status, 200, good.text);
    await svc.request('DELETE', `/api/v1/admin/rules/${rule.body.id}`, { key: tenant.apiKey });
  });

  await t.test("another tenant's segment is not found", async () => {
    const response = await post('/admin/rules', { name: 'borrowed', event_name: 'visit', conditions: segmentCondition('in', [bigSpenders]), effects: [{ type: 'award_points', points: 1 }] }, other.apiKey);
    assert.equal(response.status, 422, response.text);
    assert.equal(response.body.code, 'SEGMENT_NOT_FOUND');
    assert.ok(response.body.errors.some((e: { path: string }) => e.path.startsWith('/conditions/all/0/value')), response.text);
    assert.equal((await svc.sql('SELECT count(*)::int AS n FROM earn_rules WHERE tenant_id = $1', [other.tenantId]))[0].n, 0);
  });

  await t.test('the simulation reads membership as it is now', async () => {
    for (const participant of ['rich', 'poor', 'rich']) {
      const sent = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: participant, timestamp: '2026-05-10T12:00:00Z', properties: { amount: 10 } });
      assert.equal(sent.status, 200, sent.text);
    }
    const simulated = await post('/admin/rules/simulate', {
      rule: { name: 'members only', event_name: 'purchase', conditions: segmentCondition('in', [bigSpenders]), effects: [{ type: 'award_points', points: 4 }] },
      from: '2026-05-01T00:00:00Z',
      to: '2026-06-01T00:00:00Z',
    });
    assert.equal(simulated.status, 200, simulated.text);
    assert.equal(simulated.body.events_scanned, 3);
    assert.equal(simulated.body.events_matched, 2);
    assert.equal(simulated.body.participants, 1);
    assert.equal(simulated.body.points, 8);
    const refused = await post('/admin/rules/simulate', {
      rule: { name: 'unknown', event_name: 'purchase', conditions: segmentCondition('in', ['seg_33333333333333333333333333333333']), effects: [{ type: 'award_points', points: 4 }] },
      from: '2026-05-01T00:00:00Z',
      to: '2026-06-01T00:00:00Z',
    });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.body.code, 'SEGMENT_NOT_FOUND');
  });

  await t.test('a recurring rule applies to the members only', async () => {
    const rule = await post('/admin/rules', { name: 'monthly for members', trigger: 'recurring', schedule: 'daily', conditions: segmentCondition('in', [bigSpenders]), effects: [{ type: 'award_points', points: 25 }] });
    assert.equal(rule.status, 201, rule.text);
    clock.freeze(new Date('2026-09-01T00:20:00Z'));
    assert.ok((await startDueOccurrences(db)) >= 1);
    const [occurrence] = await svc.sql('SELECT occurrence::text AS occurrence FROM earn_rule_occurrences WHERE tenant_id = $1 AND rule_id = $2', [tenant.tenantId, rule.body.id]);
    await runOccurrence(db, svc.service.log, tenant.tenantId, rule.body.id, occurrence.occurrence);
    clock.reset();
    const ledger = await svc.sql(`SELECT participant_id FROM points_ledger WHERE tenant_id = $1 AND memo LIKE 'recurring%' ORDER BY participant_id`, [tenant.tenantId]);
    assert.deepEqual(ledger.map((l) => l.participant_id), ['climber', 'rich']);
  });
});
