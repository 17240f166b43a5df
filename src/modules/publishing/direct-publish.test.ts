import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { asPerson, invitePerson, signInConsole } from '../../../test/console-people.js';

/**
 * Publishing, second round (issue 35): a direct publication closes the item's
 * pending review request; refusals name the item by kind and name; a rule's
 * request carries its author's backtest; the queue is for authors and
 * publishers only; the audit log names a backtest and its people.
 */
const BACKTEST = {
  from: '2026-10-01T00:00:00.000Z',
  to: '2026-11-01T00:00:00.000Z',
  events_scanned: 120,
  events_matched: 40,
  participants: 12,
  points: 1000,
  badges_awarded: 0,
  capped_events: 0,
  truncated: false,
  budget_exhausted_at: null,
};

test('publishing directly closes the pending review; names, backtests and who may read the queue', { timeout: 240_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const marketer = await invitePerson(svc, owner, `author@${tenant.slug}.example`, 'marketer');
  const reviewer = await invitePerson(svc, owner, `fraud@${tenant.slug}.example`, 'reviewer');
  const rule = { name: 'Double points', event_name: 'purchase', effects: [{ type: 'award_points', points: 10 }] };

  const draft = await svc.request('POST', '/api/v1/admin/rules', { ...asPerson(marketer), body: rule });
  assert.equal(draft.status, 201, draft.text);
  const ruleId = draft.body.id as string;

  await t.test('a rule is submitted with its backtest; another kind may not carry one', async () => {
    const simulate = await svc.request('POST', '/api/v1/admin/rules/simulate', { ...asPerson(marketer), body: { rule_id: ruleId, from: BACKTEST.from, to: BACKTEST.to } });
    assert.equal(simulate.status, 200, simulate.text);
    const submitted = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(marketer), body: { kind: 'rule', id: ruleId, backtest: BACKTEST } });
    assert.equal(submitted.status, 201, submitted.text);
    assert.deepEqual(submitted.body.backtest, BACKTEST);
    const again = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(marketer), body: { kind: 'rule', id: ruleId } });
    assert.equal(again.status, 409);
    assert.match(again.body.detail, /the earn rule “Double points” already has a pending review request/);
    assert.doesNotMatch(again.body.detail, /rul_/);
    const engagementId = await svc.createEngagement(tenant);
    const wrongKind = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(owner), body: { kind: 'engagement', id: engagementId, backtest: BACKTEST } });
    assert.equal(wrongKind.status, 400, wrongKind.text);
    assert.equal(wrongKind.body.errors[0].path, '/backtest');
  });

  await t.test('a fraud reviewer may not read the queue; the author may', async () => {
    assert.equal((await svc.request('GET', '/api/v1/admin/reviews', asPerson(reviewer))).status, 403);
    const mine = await svc.request('GET', '/api/v1/admin/reviews?status=pending', asPerson(marketer));
    assert.equal(mine.status, 200, mine.text);
    assert.equal(mine.body.reviews[0].backtest.points, 1000);
  });

  await t.test('the owner activates the rule from its page: the request is closed as published, and a later approve answers it', async () => {
    const [pending] = (await svc.request('GET', '/api/v1/admin/reviews?status=pending', asPerson(owner))).body.reviews;
    const activated = await svc.request('PATCH', `/api/v1/admin/rules/${ruleId}`, { ...asPerson(owner), body: { status: 'active' } });
    assert.equal(activated.status, 200, activated.text);
    const closed = await svc.request('GET', `/api/v1/admin/reviews/${pending.id}`, asPerson(owner));
    assert.equal(closed.body.status, 'published');
    assert.deepEqual(closed.body.decided_by, { type: 'user', id: owner.userId, email: tenant.adminEmail });
    assert.ok(closed.body.decided_at);
    const approve = await svc.request('POST', `/api/v1/admin/reviews/${pending.id}/approve`, asPerson(owner));
    assert.equal(approve.status, 200, approve.text);
    assert.equal(approve.body.status, 'published');
    const giveBack = await svc.request('POST', `/api/v1/admin/reviews/${pending.id}/return`, { ...asPerson(owner), body: { note: 'too late' } });
    assert.equal(giveBack.status, 409);
    assert.match(giveBack.body.detail, /the earn rule “Double points” was already closed: the item was published directly/);
  });

  await t.test('publishing an engagement by its own route closes its pending review too', async () => {
    const engagementId = await svc.createEngagement(tenant);
    const submitted = await svc.request('POST', '/api/v1/admin/reviews', { ...asPerson(marketer), body: { kind: 'engagement', id: engagementId } });
    assert.equal(submitted.status, 201, submitted.text);
    const published = await svc.request('POST', `/api/v1/admin/engagements/${engagementId}/publish`, asPerson(owner));
    assert.equal(published.status, 200, published.text);
    const closed = await svc.request('GET', `/api/v1/admin/reviews/${submitted.body.id}`, asPerson(owner));
    assert.equal(closed.body.status, 'published');
    assert.equal(closed.body.decided_by.id, owner.userId);
  });

  await t.test('the audit log names a backtest, its person and the resource; it filters by person and date', async () => {
    const log = await svc.request('GET', `/api/v1/admin/audit-log?resource_type=rules&actor_id=${marketer.userId}`, asPerson(owner));
    assert.equal(log.status, 200, log.text);
    const actions = log.body.entries.map((e: { action: string }) => e.action);
    assert.deepEqual(actions, ['simulate', 'create']);
    assert.equal(log.body.entries[0].resource_id, ruleId, 'a backtest is recorded against the rule it replayed');
    const created = log.body.entries[1];
    assert.equal(created.actor_name, 'marketer');
    assert.equal(created.resource_name, 'Double points');
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const none = await svc.request('GET', `/api/v1/admin/audit-log?from=${encodeURIComponent(future)}`, asPerson(owner));
    assert.deepEqual(none.body.entries, []);
    const backwards = await svc.request('GET', `/api/v1/admin/audit-log?from=${encodeURIComponent(future)}&to=${encodeURIComponent(BACKTEST.to)}`, asPerson(owner));
    assert.equal(backwards.status, 400);
    assert.equal(backwards.body.errors[0].path, '/to');
  });
});
