import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestTenant } from './helper.js';
import { asPerson, invitePerson, signInConsole } from './console-people.js';
import { sendSync } from '../src/modules/ingestion/testing.js';
import { contestDefinition } from '../src/modules/contests/testing.js';
import { clock } from '../src/platform/clock.js';

/**
 * Publishing is a permission of its own (issue 18): a marketer without
 * can_publish keeps rules, engagements, challenges and contests as drafts and
 * asks for a review; an owner approves (the item is published) or returns it.
 * Everything through HTTP, against the real database.
 */
function assertNeedsPublishing(response: { status: number; body: any; text: string }, what: string): void {
  assert.equal(response.status, 403, `${what}: ${response.status} ${response.text}`);
  assert.equal(response.body.code, 'AUTH_FORBIDDEN', what);
  assert.equal(response.body.error_version, 1, what);
  assert.match(response.body.detail, /publishing permission/, what);
}

const HOUR = 3_600_000;

function challengeBody(overrides: Record<string, unknown> = {}) {
  const now = clock.nowMs();
  return {
    name: 'Spring shopper',
    starts_at: new Date(now - HOUR).toISOString(),
    ends_at: new Date(now + 24 * HOUR).toISOString(),
    objectives: [{ id: 'buy', name: 'Two purchases', evaluator: 'event_count', event_name: 'purchase', target: 2 }],
    ...overrides,
  };
}

test('publishing: drafts, review requests, approval and return', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const other: TestTenant = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const otherOwner = await signInConsole(svc, other.adminEmail, other.adminPassword);
  const marketer = await invitePerson(svc, owner, `marketer@${tenant.slug}.example`, 'marketer');
  const support = await invitePerson(svc, owner, `support@${tenant.slug}.example`, 'support');
  const analyst = await invitePerson(svc, owner, `analyst@${tenant.slug}.example`, 'analyst');
  const rule = { name: 'Welcome points', event_name: 'signup', effects: [{ type: 'award_points', points: 25 }] };

  let draftRuleId = '';
  let reviewId = '';

  await t.test('a marketer without can_publish creates a draft rule; live statuses and live rules are refused', async () => {
    const created = await svc.request('POST', '/api/v1/admin/rules', { ...asPerson(marketer), body: rule });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.status, 'draft', 'without a status, a drafts-only person gets a draft');
    draftRuleId = created.body.id;

    assertNeedsPublishing(await svc.request('POST', '/api/v1/admin/rules', { ...asPerson(marketer), body: { ...rule, status: 'active' } }), 'create active');
    assertNeedsPublishing(await svc.request('POST', '/api/v1/admin/rules', { ...asPerson(marketer), body: { ...rule, status: 'paused' } }), 'create paused');
    assertNeedsPublishing(await svc.request('PATCH', `/api/v1/admin/rules/${draftRuleId}`, { ...asPerson(marketer), body: { status: 'active' } }), 'activate a draft');

    const edited = await svc.request('PATCH', `/api/v1/admin/rules/${draftRuleId}`, { ...asPerson(marketer), body: { name: 'Welcome bonus' } });
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.body.status, 'draft');

    // A rule the owner made live is out of the marketer's reach.
    const live = await svc.request('POST', '/api/v1/admin/rules', { ...asPerson(owner), body: { ...rule, name: 'Live rule', event_name: 'purchase' } });
    assert.equal(live.body.status, 'active', 'a publisher still gets an active rule by default');
    assertNeedsPublishing(await svc.request('PATCH', `/api/v1/admin/rules/${live.body.id}`, { ...asPerson(marketer), body: { name: 'Changed' } }), 'edit a live rule');
    assertNeedsPublishing(await svc.request('DELETE', `/api/v1/admin/rules/${live.body.id}`, asPerson(marketer)), 'delete a live rule');
    const unchanged = await svc.request('GET', `/api/v1/admin/rules/${live.body.id}`, asPerson(owner));
    assert.equal(unchanged.body.name, 'Live rule');

    // A draft applies to nothing.
    const event = await sendSync(svc, tenant, { event_name: 'signup', participant_id: 'p-draft' });
    assert.ok(event.status < 300, event.text);
    const rows = await svc.sql('SELECT count(*)::int AS n FROM earn_rule_usage WHERE tenant_id = $1 AND rule_id = $2', [tenant.tenantId, draftRuleId]).catch(() => [{ n: 0 }]);
    assert.equal(rows[0].n, 0);
  });

  await t.test('API keys keep their scopes: they create active rules and activate drafts', async () => {
    const created = await svc.request('POST', '/api/v1/admin/rules', { key: tenant.apiKey, body: { ...rule, name: 'by key' } });
    assert.equal(created.body.status, 'active');
    const draft = await svc.request('POST', '/api/v1/admin/rules', { key: tenant.apiKey, body: { ...rule, name: 'key draft', status: 'draft' } });
    assert.equal(draft.body.status, 'draft');
    const activated = await svc.request('PATCH', `/api/v1/admin/rules/${draft.body.id}`, { key: tenant.apiKey, body: { status: 'active' } });
    assert.equal(activated.status, 200, activated.text);
    assert.equal(activated.body.status, 'active');
    assert.equal((await svc.request('DELETE', `/api/v1/admin/rules/${created.body.id}`, { key: tenant.apiKey })).status, 204);
    assert.equal((await svc.request('DELETE', `/api/v1/admin/rules/${draft.body.id}`, { key: tenant.apiKey })).status, 204);
  });

  await t.test('the marketer submits the draft for review; a second request for it is 409; bad input is 4xx with detail', async () => {
    const submitted = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(marketer), body: { kind: 'rule', id: draftRuleId, note: 'Ready for the spring launch' } });
    assert.equal(submitted.status, 201, submitted.text);
    assert.match(submitted.body.id, /^rev_[0-9a-f]{32}$/);
    assert.equal(submitted.body.status, 'pending');
    assert.equal(submitted.body.item_name, 'Welcome bonus');
    assert.deepEqual(submitted.body.submitted_by, { type: 'user', id: marketer.userId, email: marketer.email });
    assert.equal(submitted.body.decided_by, null);
    reviewId = submitted.body.id;

    const again = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(marketer), body: { kind: 'rule', id: draftRuleId } });
    assert.equal(again.status, 409);
    assert.equal(again.body.code, 'REVIEW_ALREADY_PENDING');

    const cases: Array<[unknown, number, RegExp]> = [
      [{ kind: 'badge', id: draftRuleId }, 400, /kind/],
      [{ kind: 'rule' }, 400, /id/],
      [{ kind: 'rule', id: 'not-a-rule' }, 400, /not the id of a earn rule|not the id/],
      [{ kind: 'rule', id: `rul_${'0'.repeat(32)}` }, 404, /not found/],
      [{ kind: 'rule', id: draftRuleId, note: '' }, 400, /note/],
      [{ kind: 'rule', id: draftRuleId, extra: 1 }, 400, /extra/],
    ];
    for (const [body, status, detail] of cases) {
      const response = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(marketer), body });
      assert.equal(response.status, status, `${JSON.stringify(body)}: ${response.text}`);
      assert.match(response.body.detail, detail);
    }
    const listBad = await svc.request('GET', '/api/v1/admin/reviews?status=maybe', asPerson(owner));
    assert.equal(listBad.status, 400);
  });

  await t.test('support and analysts may not submit, approve or return; the marketer may not approve', async () => {
    for (const [name, person] of [['support', support], ['analyst', analyst]] as const) {
      const submit = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(person), body: { kind: 'rule', id: draftRuleId } });
      assert.equal(submit.status, 403, `${name} submits: ${submit.text}`);
      const approve = await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, asPerson(person));
      assert.equal(approve.status, 403, `${name} approves: ${approve.text}`);
      const back = await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/return`, { ...asPerson(person), body: { note: 'no' } });
      assert.equal(back.status, 403, `${name} returns: ${back.text}`);
      // The queue is for those who author drafts or publish them (issue 35): support and analysts have nothing to act on there.
      assert.equal((await svc.request('GET', '/api/v1/admin/reviews', asPerson(person))).status, 403);
    }
    const selfApproval = await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, asPerson(marketer));
    assertNeedsPublishing(selfApproval, 'marketer approves');
  });

  await t.test('review ids of another tenant are 404', async () => {
    assert.equal((await svc.request('GET', `/api/v1/admin/reviews/${reviewId}`, asPerson(otherOwner))).status, 404);
    assert.equal((await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, asPerson(otherOwner))).status, 404);
    assert.equal((await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/return`, { ...asPerson(otherOwner), body: { note: 'not yours' } })).status, 404);
    const foreignItem = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(otherOwner), body: { kind: 'rule', id: draftRuleId } });
    assert.equal(foreignItem.status, 404);
    const list = await svc.request('GET', '/api/v1/admin/reviews', asPerson(otherOwner));
    assert.deepEqual(list.body.reviews, []);
  });

  await t.test('the owner approves: the rule is active, processes events, and the decision is recorded and audited', async () => {
    const pending = await svc.request('GET', '/api/v1/admin/reviews?status=pending&kind=rule', asPerson(owner));
    assert.deepEqual(pending.body.reviews.map((r: { id: string }) => r.id), [reviewId]);
    const approved = await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, asPerson(owner));
    assert.equal(approved.status, 200, approved.text);
    assert.equal(approved.body.status, 'approved');
    assert.deepEqual(approved.body.decided_by, { type: 'user', id: owner.userId, email: tenant.adminEmail });
    assert.ok(approved.body.decided_at);
    const read = await svc.request('GET', `/api/v1/admin/rules/${draftRuleId}`, asPerson(owner));
    assert.equal(read.body.status, 'active');

    const event = await sendSync(svc, tenant, { event_name: 'signup', participant_id: 'p-approved' });
    assert.ok(event.status < 300, event.text);
    const state = await svc.request('GET', '/api/v1/gamify/state/p-approved?include=points', { key: tenant.apiKey });
    assert.equal(state.body.points.available, 25, JSON.stringify(state.body));

    const twice = await svc.request('POST', `/api/v1/admin/reviews/${reviewId}/approve`, asPerson(owner));
    assert.equal(twice.status, 409);
    assert.equal(twice.body.code, 'REVIEW_ALREADY_DECIDED');
    // Now live, the rule is no longer the marketer's to change.
    assertNeedsPublishing(await svc.request('PATCH', `/api/v1/admin/rules/${draftRuleId}`, { ...asPerson(marketer), body: { name: 'x' } }), 'edit the approved rule');

    const log = await svc.request('GET', `/api/v1/admin/audit-log?resource_type=reviews&resource_id=${reviewId}`, asPerson(owner));
    assert.equal(log.status, 200, log.text);
    assert.deepEqual(log.body.entries.map((e: { action: string }) => e.action), ['approve', 'create']);
    const [approval, request] = log.body.entries;
    assert.equal(approval.actor_id, owner.userId);
    assert.equal(approval.before.status, 'pending');
    assert.equal(approval.after.status, 'approved');
    assert.equal(request.actor_id, marketer.userId);
  });

  await t.test('a returned request carries the note back; the draft stays a draft and can be submitted again', async () => {
    const draft = await svc.request('POST', '/api/v1/admin/rules', { ...asPerson(marketer), body: { ...rule, name: 'Too generous' } });
    const submitted = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(marketer), body: { kind: 'rule', id: draft.body.id } });
    const noNote = await svc.request('POST', `/api/v1/admin/reviews/${submitted.body.id}/return`, { ...asPerson(owner), body: {} });
    assert.equal(noNote.status, 400);
    assert.match(noNote.body.detail, /note/);
    const returned = await svc.request('POST', `/api/v1/admin/reviews/${submitted.body.id}/return`, { ...asPerson(owner), body: { note: 'Lower it to 10 points' } });
    assert.equal(returned.status, 200, returned.text);
    assert.equal(returned.body.status, 'returned');
    assert.equal(returned.body.decision_note, 'Lower it to 10 points');
    assert.equal((await svc.request('GET', `/api/v1/admin/rules/${draft.body.id}`, asPerson(owner))).body.status, 'draft');
    const filtered = await svc.request('GET', '/api/v1/admin/reviews?status=returned', asPerson(marketer));
    assert.deepEqual(filtered.body.reviews.map((r: { id: string }) => r.id), [submitted.body.id]);

    // Changed after submission: the approval refuses to publish what nobody reviewed.
    const again = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(marketer), body: { kind: 'rule', id: draft.body.id } });
    assert.equal(again.status, 201, again.text);
    await svc.request('PATCH', `/api/v1/admin/rules/${draft.body.id}`, { ...asPerson(marketer), body: { effects: [{ type: 'award_points', points: 10 }] } });
    const stale = await svc.request('POST', `/api/v1/admin/reviews/${again.body.id}/approve`, asPerson(owner));
    assert.equal(stale.status, 409);
    assert.equal(stale.body.code, 'REVIEW_ITEM_CHANGED');
    assert.equal((await svc.request('GET', `/api/v1/admin/rules/${draft.body.id}`, asPerson(owner))).body.status, 'draft');
  });

  await t.test('lists page with a cursor', async () => {
    const first = await svc.request('GET', '/api/v1/admin/reviews?limit=2', asPerson(owner));
    assert.equal(first.status, 200);
    assert.equal(first.body.reviews.length, 2);
    assert.ok(first.body.next_cursor);
    const second = await svc.request('GET', `/api/v1/admin/reviews?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`, asPerson(owner));
    assert.equal(second.body.reviews.length, 1);
    assert.equal(second.body.next_cursor, null);
    const ids = [...first.body.reviews, ...second.body.reviews].map((r: { id: string }) => r.id);
    assert.equal(new Set(ids).size, 3);
  });

  await t.test('engagements, challenges and contests: drafts only for the marketer, published through a review', async () => {
    // Challenges.
    assertNeedsPublishing(await svc.request('POST', '/api/v1/admin/challenges', { ...asPerson(marketer), body: challengeBody({ status: 'active' }) }), 'create an active challenge');
    const challenge = await svc.request('POST', '/api/v1/admin/challenges', { ...asPerson(marketer), body: challengeBody() });
    assert.equal(challenge.status, 201, challenge.text);
    assert.equal(challenge.body.status, 'draft');
    assertNeedsPublishing(await svc.request('POST', `/api/v1/admin/challenges/${challenge.body.id}/publish`, asPerson(marketer)), 'publish a challenge');
    const challengeReview = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(marketer), body: { kind: 'challenge', id: challenge.body.id } });
    assert.equal(challengeReview.status, 201, challengeReview.text);
    const challengeApproved = await svc.request('POST', `/api/v1/admin/reviews/${challengeReview.body.id}/approve`, asPerson(owner));
    assert.equal(challengeApproved.status, 200, challengeApproved.text);
    assert.equal((await svc.request('GET', `/api/v1/admin/challenges/${challenge.body.id}`, asPerson(owner))).body.status, 'active');
    assertNeedsPublishing(await svc.request('PATCH', `/api/v1/admin/challenges/${challenge.body.id}`, { ...asPerson(marketer), body: { name: 'Renamed' } }), 'edit a live challenge');
    assertNeedsPublishing(await svc.request('DELETE', `/api/v1/admin/challenges/${challenge.body.id}`, asPerson(marketer)), 'archive a live challenge');

    // Contests.
    const contest = await svc.request('POST', '/api/v1/admin/contests', { ...asPerson(marketer), body: contestDefinition('spring-cup') });
    assert.equal(contest.status, 201, contest.text);
    assertNeedsPublishing(await svc.request('POST', '/api/v1/admin/contests/spring-cup/publish', asPerson(marketer)), 'publish a contest');
    const contestReview = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(marketer), body: { kind: 'contest', id: 'spring-cup', note: 'prizes checked' } });
    assert.equal(contestReview.status, 201, contestReview.text);
    assert.equal(contestReview.body.item_name, 'Contest spring-cup');
    const contestApproved = await svc.request('POST', `/api/v1/admin/reviews/${contestReview.body.id}/approve`, asPerson(owner));
    assert.equal(contestApproved.status, 200, contestApproved.text);
    assert.equal((await svc.request('GET', '/api/v1/admin/contests/spring-cup', asPerson(owner))).body.status, 'scheduled');
    assertNeedsPublishing(await svc.request('PATCH', '/api/v1/admin/contests/spring-cup', { ...asPerson(marketer), body: { title: 'Renamed' } }), 'edit a live contest');
    const notDraft = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(marketer), body: { kind: 'contest', id: 'spring-cup' } });
    assert.equal(notDraft.status, 409);
    assert.equal(notDraft.body.code, 'REVIEW_ITEM_NOT_DRAFT');

    // Engagements: created as drafts by anyone; publishing goes through a review.
    const engagementId = await svc.createEngagement(tenant);
    assertNeedsPublishing(await svc.request('POST', `/api/v1/admin/engagements/${engagementId}/publish`, asPerson(marketer)), 'publish an engagement');
    const engagementReview = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(marketer), body: { kind: 'engagement', id: engagementId } });
    assert.equal(engagementReview.status, 201, engagementReview.text);
    const engagementApproved = await svc.request('POST', `/api/v1/admin/reviews/${engagementReview.body.id}/approve`, asPerson(owner));
    assert.equal(engagementApproved.status, 200, engagementApproved.text);
    const engagement = await svc.request('GET', `/api/v1/admin/engagements/${engagementId}`, asPerson(owner));
    assert.equal(engagement.body.status, 'published');
    assert.equal(engagement.body.has_unpublished_changes, false);
  });

  await t.test('an API key submits and approves, recorded by its id', async () => {
    const draft = await svc.request('POST', '/api/v1/admin/rules', { key: tenant.apiKey, body: { ...rule, name: 'key draft', status: 'draft' } });
    const submitted = await svc.request('POST', '/api/v1/admin/reviews', { key: tenant.apiKey, body: { kind: 'rule', id: draft.body.id } });
    assert.equal(submitted.status, 201, submitted.text);
    assert.equal(submitted.body.submitted_by.type, 'api_key');
    assert.equal(submitted.body.submitted_by.email, null);
    const approved = await svc.request('POST', `/api/v1/admin/reviews/${submitted.body.id}/approve`, { key: tenant.apiKey });
    assert.equal(approved.status, 200, approved.text);
    assert.equal(approved.body.decided_by.type, 'api_key');
  });
});
