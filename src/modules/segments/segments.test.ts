import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { membershipsInTx } from './index.js';
import { BASE, ok, previewIds, seedSegmentFacts } from './testing.js';

/**
 * Each fact and operator of the filter language against participants built
 * through the API with known facts (testing.ts), through the preview route:
 * its size and sample name exactly the expected members, never the test
 * participant.
 */
test('segments: every fact and operator has its known answer', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  await seedSegmentFacts(svc, tenant);
  const key = tenant.apiKey;

  const cases: Array<[string, unknown, string[]]> = [
    ['everyone (empty filter), test participants left out', {}, ['ada', 'bob', 'cyd']],
    ['profile equals', { all: [{ fact: 'profile.country_code', operator: 'equals', value: 'DE' }] }, ['ada']],
    ['profile not_equals holds when absent', { all: [{ fact: 'profile.country_code', operator: 'not_equals', value: 'DE' }] }, ['bob', 'cyd']],
    ['profile in', { all: [{ fact: 'profile.city', operator: 'in', value: ['Berlin', 'Paris'] }] }, ['ada', 'bob']],
    ['profile not_in', { all: [{ fact: 'profile.city', operator: 'not_in', value: ['Berlin'] }] }, ['bob', 'cyd']],
    ['profile contains ignores case', { all: [{ fact: 'profile.email', operator: 'contains', value: 'EXAMPLE.ORG' }] }, ['ada']],
    ['profile not_contains', { all: [{ fact: 'profile.email', operator: 'not_contains', value: 'example.org' }] }, ['bob', 'cyd']],
    ['profile exists', { all: [{ fact: 'profile.email', operator: 'exists' }] }, ['ada', 'bob']],
    ['profile not_exists', { all: [{ fact: 'profile.email', operator: 'not_exists' }] }, ['cyd']],
    ['profile date lt', { all: [{ fact: 'profile.date_of_birth', operator: 'lt', value: '2000-01-01' }] }, ['ada']],
    ['custom boolean equals', { all: [{ fact: 'custom.newsletter', operator: 'equals', value: true }] }, ['ada']],
    ['custom boolean not_equals', { all: [{ fact: 'custom.newsletter', operator: 'not_equals', value: true }] }, ['bob', 'cyd']],
    ['custom number gte', { all: [{ fact: 'custom.visits', operator: 'gte', value: 5 }] }, ['ada']],
    ['custom number lt', { all: [{ fact: 'custom.visits', operator: 'lt', value: 5 }] }, ['bob']],
    ['custom number in', { all: [{ fact: 'custom.visits', operator: 'in', value: [2, 3] }] }, ['bob']],
    ['custom personal string equals', { all: [{ fact: 'custom.card', operator: 'equals', value: 'AB-1' }] }, ['ada']],
    ['tier equals', { all: [{ fact: 'tier', operator: 'equals', value: 'gold' }] }, ['ada']],
    ['tier in', { all: [{ fact: 'tier', operator: 'in', value: ['gold', 'silver'] }] }, ['ada', 'bob']],
    ['tier not_exists', { all: [{ fact: 'tier', operator: 'not_exists' }] }, ['cyd']],
    ['available_points gt', { all: [{ fact: 'available_points', operator: 'gt', value: 150 }] }, ['ada']],
    ['available_points equals 0 without a balance', { all: [{ fact: 'available_points', operator: 'equals', value: 0 }] }, ['cyd']],
    ['lifetime_points gte', { all: [{ fact: 'lifetime_points', operator: 'gte', value: 600 }] }, ['ada']],
    ['lifetime_points lte', { all: [{ fact: 'lifetime_points', operator: 'lte', value: 150 }] }, ['bob', 'cyd']],
    ['badges contains', { all: [{ fact: 'badges', operator: 'contains', value: 'vip' }] }, ['ada']],
    ['badges not_contains', { all: [{ fact: 'badges', operator: 'not_contains', value: 'vip' }] }, ['bob', 'cyd']],
    ['streak gte', { all: [{ fact: 'streak.login', operator: 'gte', value: 1 }] }, ['ada']],
    ['streak equals 0 without one', { all: [{ fact: 'streak.login', operator: 'equals', value: 0 }] }, ['bob', 'cyd']],
    ['days_since_last_activity lte', { all: [{ fact: 'days_since_last_activity', operator: 'lte', value: 2 }] }, ['ada']],
    ['days_since_last_activity gte', { all: [{ fact: 'days_since_last_activity', operator: 'gte', value: 4 }] }, ['bob']],
    ['days_since_last_activity lt', { all: [{ fact: 'days_since_last_activity', operator: 'lt', value: 1 }] }, ['ada']],
    ['days_since_last_activity gt', { all: [{ fact: 'days_since_last_activity', operator: 'gt', value: 4 }] }, ['bob']],
    ['days_since_last_activity equals', { all: [{ fact: 'days_since_last_activity', operator: 'equals', value: 5 }] }, ['bob']],
    ['days_since_last_activity gte 0: everyone active', { all: [{ fact: 'days_since_last_activity', operator: 'gte', value: 0 }] }, ['ada', 'bob']],
    ['days_since_last_activity in', { all: [{ fact: 'days_since_last_activity', operator: 'in', value: [0, 9] }] }, ['ada']],
    ['days_since_last_activity not_equals holds when absent', { all: [{ fact: 'days_since_last_activity', operator: 'not_equals', value: 0 }] }, ['bob', 'cyd']],
    ['days_since_last_activity not_exists', { all: [{ fact: 'days_since_last_activity', operator: 'not_exists' }] }, ['cyd']],
    ['days_since_joined lt', { all: [{ fact: 'days_since_joined', operator: 'lt', value: 1 }] }, ['ada', 'bob', 'cyd']],
    ['event_count in a 30-day window', { all: [{ fact: 'event_count', event_name: 'purchase', within_days: 30, operator: 'gte', value: 3 }] }, ['ada']],
    ['event_count in a 4-day window', { all: [{ fact: 'event_count', event_name: 'purchase', within_days: 4, operator: 'equals', value: 3 }] }, ['ada']],
    ['event_count in a 60-day window', { all: [{ fact: 'event_count', event_name: 'purchase', within_days: 60, operator: 'equals', value: 4 }] }, ['ada']],
    ['event_count at least one in 10 days', { all: [{ fact: 'event_count', event_name: 'purchase', within_days: 10, operator: 'gt', value: 0 }] }, ['ada', 'bob']],
    ['event_count lt holds at zero', { all: [{ fact: 'event_count', event_name: 'purchase', within_days: 10, operator: 'lt', value: 2 }] }, ['bob', 'cyd']],
    ['referrals_converted', { all: [{ fact: 'referrals_converted', operator: 'equals', value: 0 }] }, ['ada', 'bob', 'cyd']],
    ['contests_entered', { all: [{ fact: 'contests_entered', operator: 'gt', value: 0 }] }, []],
    [
      'all and any together',
      {
        all: [{ fact: 'lifetime_points', operator: 'gt', value: 0 }],
        any: [
          { fact: 'profile.country_code', operator: 'equals', value: 'FR' },
          { fact: 'badges', operator: 'contains', value: 'vip' },
        ],
      },
      ['ada', 'bob'],
    ],
    ['any alone', { any: [{ fact: 'profile.city', operator: 'equals', value: 'Paris' }, { fact: 'tier', operator: 'not_exists' }] }, ['bob', 'cyd']],
  ];
  for (const [name, filter, expected] of cases) {
    const answer = await ok(svc.request('POST', `${BASE}/preview`, { key, body: { filter } }));
    const ids = (answer.body.sample as Array<{ participant_id: string }>).map((p) => p.participant_id);
    assert.deepEqual(ids, expected, `${name}: ${JSON.stringify(filter)}`);
    assert.equal(answer.body.size, expected.length, name);
    assert.equal(typeof answer.body.took_ms, 'number');
  }

  await t.test("one participant's membership (membershipsInTx) agrees with every case", async () => {
    const ids: Array<[string, string[]]> = [];
    for (const [name, filter, expected] of cases) {
      const created = await ok(svc.request('POST', BASE, { key, body: { name: name.slice(0, 120), filter } }), 201);
      ids.push([created.body.id, expected]);
    }
    for (const participant of ['ada', 'bob', 'cyd', 'tess']) {
      const member = await svc.service.db.tenant(tenant.tenantId, (tx) => membershipsInTx(tx, tenant.tenantId, participant, ids.map(([id]) => id)));
      ids.forEach(([id, expected], index) => assert.equal(member.has(id), expected.includes(participant), `${participant} in "${cases[index][0]}"`));
    }
  });

  await t.test('a saved segment answers size and members from the same filter', async () => {
    const filter = { all: [{ fact: 'event_count', event_name: 'purchase', within_days: 10, operator: 'gte', value: 1 }] };
    const created = await ok(svc.request('POST', BASE, { key, body: { name: 'Recent buyers', filter } }), 201);
    assert.match(created.body.id, /^seg_[0-9a-f]{32}$/);
    assert.equal(created.body.materialized, false);
    assert.equal(created.body.size, null);
    assert.deepEqual(created.body.used_by, []);
    const size = await ok(svc.request('GET', `${BASE}/${created.body.id}/size`, { key }));
    assert.equal(size.body.size, 2);
    const members = await ok(svc.request('GET', `${BASE}/${created.body.id}/members`, { key }));
    assert.deepEqual(members.body.members.map((m: { participant_id: string }) => m.participant_id), ['ada', 'bob']);
    assert.deepEqual(await previewIds(svc, key, filter), ['ada', 'bob']);
  });
});
