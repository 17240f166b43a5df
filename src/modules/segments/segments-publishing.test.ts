import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantPoints, startTestService } from '../../../test/helper.js';
import { asPerson, invitePerson, signInConsole } from '../../../test/console-people.js';
import { BASE, ok } from './testing.js';

/**
 * A segment used by something live is live itself (issue 36): changing its
 * filter or its materialization changes who a live program pays, so it goes
 * through publishing like the program would. Name and description are free.
 */
const RICH = { all: [{ fact: 'lifetime_points', operator: 'gte', value: 100 }] };
const VERY_RICH = { all: [{ fact: 'lifetime_points', operator: 'gte', value: 1000 }] };

test('segments in use by live programs go through publishing', { timeout: 240_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const marketer = await invitePerson(svc, owner, `author@${tenant.slug}.example`, 'marketer');
  const key = tenant.apiKey;
  await ok(grantPoints(svc, tenant, 'rich', 150));
  await ok(grantPoints(svc, tenant, 'poor', 10));
  const create = async (name: string) => (await ok(svc.request('POST', BASE, { key, body: { name, filter: RICH } }), 201)).body.id as string;
  const used = await create('Rich');
  const unused = await create('Rich too');
  const rule = await ok(
    svc.request('POST', '/api/v1/admin/rules', {
      key,
      body: { name: 'Members bonus', event_name: 'visit', conditions: { all: [{ fact: 'participant.segment', operator: 'in', value: [used] }] }, effects: [{ type: 'award_points', points: 5 }] },
    }),
    201,
  );
  assert.equal(rule.body.status, 'active');

  await t.test('the segment names its live user', async () => {
    const segment = await ok(svc.request('GET', `${BASE}/${used}`, { key }));
    assert.deepEqual(segment.body.used_by, [{ type: 'rule', id: rule.body.id, name: 'Members bonus', live: true }]);
  });

  await t.test('a marketer without can_publish may not change the filter of a live segment', async () => {
    const refused = await svc.request('PATCH', `${BASE}/${used}`, { ...asPerson(marketer), body: { filter: VERY_RICH } });
    assert.equal(refused.status, 403, refused.text);
    assert.match(refused.body.detail, /segment "Rich" \(live: used by rule "Members bonus"/);
    assert.match(refused.body.detail, /submit it for review/);
    const materialize = await svc.request('PATCH', `${BASE}/${used}`, { ...asPerson(marketer), body: { materialized: true } });
    assert.equal(materialize.status, 403, materialize.text);
  });

  await t.test('name and description are free; an unused segment changes at once', async () => {
    const renamed = await ok(svc.request('PATCH', `${BASE}/${used}`, { ...asPerson(marketer), body: { name: 'Rich people', description: 'At least 100 points', filter: RICH } }));
    assert.equal(renamed.body.name, 'Rich people');
    const changed = await ok(svc.request('PATCH', `${BASE}/${unused}`, { ...asPerson(marketer), body: { filter: VERY_RICH } }));
    assert.deepEqual(changed.body.filter, VERY_RICH);
  });

  await t.test('a publisher changes a live segment at once', async () => {
    const changed = await ok(svc.request('PATCH', `${BASE}/${used}`, { ...asPerson(owner), body: { filter: VERY_RICH } }));
    assert.deepEqual(changed.body.filter, VERY_RICH);
  });
});
