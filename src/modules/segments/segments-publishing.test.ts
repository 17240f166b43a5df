import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantPoints, startTestService } from '../../../test/helper.js';
import { asPerson, invitePerson, signInConsole } from '../../../test/console-people.js';
import { sendSync } from '../ingestion/testing.js';
import { BASE, ok } from './testing.js';

/**
 * A segment used by something live is live itself (issue 36): a change of its
 * filter or its materialization changes who a live program pays, so it goes
 * through publishing like the program would. Someone who may not publish
 * saves it as the segment's draft and submits it for review; the approval
 * applies it. Name and description are free; a segment nobody uses changes at
 * once; publishers change a live segment at once.
 */
const RICH = { all: [{ fact: 'lifetime_points', operator: 'gte', value: 100 }] };
const VERY_RICH = { all: [{ fact: 'lifetime_points', operator: 'gte', value: 1000 }] };
const REVIEWS = '/api/v1/admin/reviews';

test('segments in use by live programs go through publishing', { timeout: 240_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const marketer = await invitePerson(svc, owner, `author@${tenant.slug}.example`, 'marketer');
  const publisher = await invitePerson(svc, owner, `publisher@${tenant.slug}.example`, 'marketer', { can_publish: true });
  const key = tenant.apiKey;
  await ok(grantPoints(svc, tenant, 'rich', 150));
  await ok(grantPoints(svc, tenant, 'whale', 1500));
  const create = async (name: string, materialized = false) => (await ok(svc.request('POST', BASE, { key, body: { name, filter: RICH, materialized } }), 201)).body.id as string;
  const used = await create('Rich', true);
  const unused = await create('Rich too');
  const rule = await ok(
    svc.request('POST', '/api/v1/admin/rules', {
      key,
      body: { name: 'Members bonus', event_name: 'visit', conditions: { all: [{ fact: 'participant.segment', operator: 'in', value: [used] }] }, effects: [{ type: 'award_points', points: 5 }] },
    }),
    201,
  );
  assert.equal(rule.body.status, 'active');
  const paid = async (participant: string) => (await sendSync(svc, tenant, { event_name: 'visit', participant_id: participant })).body.points_awarded as number;
  const leftEvents = async () =>
    (await svc.sql<{ participant_id: string }>(`SELECT data->>'participant_id' AS participant_id FROM outbox_events WHERE tenant_id = $1 AND event = 'segment.left.v1' AND data->>'segment_id' = $2`, [tenant.tenantId, used])).map(
      (r) => r.participant_id,
    );

  await t.test('the segment names its live user and is live', async () => {
    const segment = await ok(svc.request('GET', `${BASE}/${used}`, { key }));
    assert.deepEqual(segment.body.used_by, [{ type: 'rule', id: rule.body.id, name: 'Members bonus', live: true }]);
    assert.equal(segment.body.status, 'live');
    assert.equal(segment.body.draft, null);
    assert.equal(segment.body.size, 2);
  });

  let reviewId = '';
  await t.test('a marketer without can_publish changes the filter: a draft; the live filter still decides', async () => {
    const drafted = await ok(svc.request('PATCH', `${BASE}/${used}`, { ...asPerson(marketer), body: { filter: VERY_RICH, description: 'Big spenders' } }));
    assert.equal(drafted.body.status, 'draft_pending');
    assert.deepEqual(drafted.body.draft, { filter: VERY_RICH, materialized: true });
    assert.deepEqual(drafted.body.filter, RICH, 'the live filter is unchanged');
    assert.equal(drafted.body.description, 'Big spenders', 'the description applies at once');
    assert.equal(drafted.body.size, 2);
    assert.equal(await paid('rich'), 5, 'the live filter decides membership');
    const submitted = await ok(svc.request('POST', REVIEWS, { ...asPerson(marketer), body: { kind: 'segment', id: used, note: 'Only the biggest spenders' } }), 201);
    assert.equal(submitted.body.item_name, 'Rich');
    reviewId = submitted.body.id;
    const bad = await svc.request('POST', REVIEWS, { ...asPerson(marketer), body: { kind: 'segment', id: 'rul_0f3c2a9e4b7d41c8a6e52d19b8f07c3a' } });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.errors[0].path, '/id');
    const nothing = await svc.request('POST', REVIEWS, { ...asPerson(marketer), body: { kind: 'segment', id: unused } });
    assert.equal(nothing.status, 409, nothing.text);
    assert.equal(nothing.body.code, 'REVIEW_ITEM_NOT_DRAFT');
    assert.match(nothing.body.detail, /the segment “Rich too” has nothing unpublished to review/);
    const denied = await svc.request('POST', `${REVIEWS}/${reviewId}/approve`, asPerson(marketer));
    assert.equal(denied.status, 403, denied.text);
  });

  await t.test('a publisher approves: the new filter decides, the materialized membership is refreshed', async () => {
    const approved = await ok(svc.request('POST', `${REVIEWS}/${reviewId}/approve`, asPerson(publisher)));
    assert.equal(approved.body.status, 'approved');
    const segment = await ok(svc.request('GET', `${BASE}/${used}`, { key }));
    assert.deepEqual(segment.body.filter, VERY_RICH);
    assert.equal(segment.body.draft, null);
    assert.equal(segment.body.status, 'live');
    assert.equal(segment.body.size, 1);
    assert.deepEqual(await leftEvents(), ['rich']);
    assert.equal(await paid('rich'), 0);
    assert.equal(await paid('whale'), 5);
    const approvals = await ok(svc.request('GET', `/api/v1/admin/audit-log?resource_type=reviews&actor_id=${publisher.userId}`, asPerson(owner)));
    assert.deepEqual(approvals.body.entries.map((e: { action: string; resource_id: string }) => [e.action, e.resource_id]), [['approve', reviewId]]);
    const drafts = await ok(svc.request('GET', `/api/v1/admin/audit-log?resource_type=segments&actor_id=${marketer.userId}`, asPerson(owner)));
    assert.deepEqual(drafts.body.entries.map((e: { action: string; resource_id: string }) => [e.action, e.resource_id]), [['update', used]]);
  });

  await t.test('a returned draft leaves the live filter; name changes and unused segments are free', async () => {
    await ok(svc.request('PATCH', `${BASE}/${used}`, { ...asPerson(marketer), body: { materialized: false } }));
    const submitted = await ok(svc.request('POST', REVIEWS, { ...asPerson(marketer), body: { kind: 'segment', id: used } }), 201);
    await ok(svc.request('POST', `${REVIEWS}/${submitted.body.id}/return`, { ...asPerson(publisher), body: { note: 'Keep it materialized' } }));
    const kept = await ok(svc.request('GET', `${BASE}/${used}`, { key }));
    assert.equal(kept.body.materialized, true);
    assert.deepEqual(kept.body.draft, { filter: VERY_RICH, materialized: false });
    // Asking for what is live clears the draft.
    const withdrawn = await ok(svc.request('PATCH', `${BASE}/${used}`, { ...asPerson(marketer), body: { materialized: true, name: 'Whales' } }));
    assert.equal(withdrawn.body.draft, null);
    assert.equal(withdrawn.body.name, 'Whales');
    const changed = await ok(svc.request('PATCH', `${BASE}/${unused}`, { ...asPerson(marketer), body: { filter: VERY_RICH } }));
    assert.deepEqual(changed.body.filter, VERY_RICH);
    assert.equal(changed.body.draft, null);
  });

  await t.test('a publisher changes a live segment at once: a pending draft is dropped and its request closed', async () => {
    await ok(svc.request('PATCH', `${BASE}/${used}`, { ...asPerson(marketer), body: { filter: { all: [{ fact: 'lifetime_points', operator: 'gte', value: 500 }] } } }));
    const pending = await ok(svc.request('POST', REVIEWS, { ...asPerson(marketer), body: { kind: 'segment', id: used } }), 201);
    const changed = await ok(svc.request('PATCH', `${BASE}/${used}`, { ...asPerson(publisher), body: { filter: RICH } }));
    assert.deepEqual(changed.body.filter, RICH);
    assert.equal(changed.body.draft, null);
    const closed = await ok(svc.request('GET', `${REVIEWS}/${pending.body.id}`, asPerson(owner)));
    assert.equal(closed.body.status, 'published');
    assert.equal(closed.body.decided_by.id, publisher.userId);
    assert.equal(changed.body.size, 2);
    assert.equal(await paid('rich'), 5);
  });

  await t.test('four-eyes: even the owner keeps a draft, and another person approves', async () => {
    await ok(svc.request('PATCH', '/api/v1/tenant', { ...asPerson(owner), body: { require_four_eyes: true } }));
    const drafted = await ok(svc.request('PATCH', `${BASE}/${used}`, { ...asPerson(owner), body: { filter: VERY_RICH } }));
    assert.equal(drafted.body.status, 'draft_pending');
    assert.deepEqual(drafted.body.filter, RICH);
    const byKey = await ok(svc.request('PATCH', `${BASE}/${used}`, { key, body: { name: 'Whales!' } }));
    assert.equal(byKey.body.name, 'Whales!', 'a name change is free under four-eyes too');
    const submitted = await ok(svc.request('POST', REVIEWS, { ...asPerson(owner), body: { kind: 'segment', id: used } }), 201);
    const self = await svc.request('POST', `${REVIEWS}/${submitted.body.id}/approve`, asPerson(owner));
    assert.equal(self.status, 403, self.text);
    assert.equal(self.body.code, 'FOUR_EYES_REQUIRED');
    await ok(svc.request('POST', `${REVIEWS}/${submitted.body.id}/approve`, asPerson(publisher)));
    assert.deepEqual((await ok(svc.request('GET', `${BASE}/${used}`, { key }))).body.filter, VERY_RICH);
  });
});
