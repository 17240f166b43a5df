import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { assertAccessible, consoleUser, launchConsoleBrowser, screenshot } from './console-kit.js';

/**
 * Publishing in the console (issue 18): a marketer without can_publish saves a
 * draft rule and submits it for review; the owner approves it on the Reviews
 * screen and the rule is live; a second draft is returned with a note, which
 * the marketer then sees. The API refuses the marketer's direct activation.
 */
test('the console in Chromium: draft → review → published', { timeout: 300_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const marketerUser = await consoleUser(svc, tenant, 'marketer', { canPublish: false });
  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const marketer = await newPage();
  const owner = await newPage();
  let ruleId = '';

  await t.test('the marketer saves a draft rule and submits it for review', async () => {
    await signIn(marketer, marketerUser.email, marketerUser.password);
    await open(marketer, 'Earn rules', 'Earn rules');
    await marketer.getByRole('link', { name: 'New rule' }).click();
    await marketer.getByLabel(/^Name/).fill('Welcome bonus');
    await marketer.getByLabel('Event name').fill('signup');
    await marketer.getByLabel('Points per event').fill('30');
    await marketer.getByRole('button', { name: 'Save rule' }).click();
    await marketer.getByRole('heading', { level: 1, name: 'Rule: Welcome bonus' }).waitFor();
    ruleId = /\/programs\/rules\/(rul_[0-9a-f]{32})/.exec(marketer.url())![1];
    const controls = marketer.getByTestId('publication-controls');
    await controls.getByRole('button', { name: 'Submit for review' }).waitFor();
    assert.equal(await controls.getByRole('button', { name: 'Publish' }).count(), 0, 'no Publish button without the publishing permission');
    await assertAccessible(marketer, 'draft rule (marketer)');
    await screenshot(marketer, '16-rule-draft');

    await controls.getByRole('button', { name: 'Submit for review' }).click();
    const dialog = marketer.getByRole('dialog');
    await dialog.getByLabel('Note for the publisher (optional)').fill('For the spring sign-up campaign');
    await assertAccessible(marketer, 'submit dialog');
    await dialog.getByRole('button', { name: 'Submit for review' }).click();
    await controls.getByTestId('review-pending').waitFor();
    assert.equal(await controls.getByRole('button', { name: 'Submit for review' }).count(), 0);
    await assertAccessible(marketer, 'pending rule (marketer)');
    await screenshot(marketer, '17-rule-review-pending');
  });

  await t.test('the API refuses the marketer activating the rule directly (403, with the reason)', async () => {
    const session = await (await marketer.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const refused = await marketer.context().request.patch(`${svc.baseUrl}/api/v1/admin/rules/${ruleId}`, {
      headers: { 'x-csrf-token': session.csrf_token },
      data: { status: 'active' },
    });
    assert.equal(refused.status(), 403);
    const body = await refused.json();
    assert.equal(body.code, 'AUTH_FORBIDDEN');
    assert.match(body.detail, /publishing permission/);
    const approve = await marketer.context().request.get(`${svc.baseUrl}/api/v1/admin/reviews?status=pending`);
    const [review] = (await approve.json()).reviews;
    const selfApproval = await marketer.context().request.post(`${svc.baseUrl}/api/v1/admin/reviews/${review.id}/approve`, { headers: { 'x-csrf-token': session.csrf_token } });
    assert.equal(selfApproval.status(), 403);
  });

  await t.test('the owner approves on the Reviews screen; the rule is active and awards points', async () => {
    await signIn(owner, tenant.adminEmail, tenant.adminPassword);
    await open(owner, 'Reviews', 'Reviews');
    const table = owner.getByTestId('reviews');
    await table.getByText('Welcome bonus').waitFor();
    await table.getByText('For the spring sign-up campaign').waitFor();
    await assertAccessible(owner, 'reviews (pending)');
    await screenshot(owner, '18-reviews-pending');
    await table.getByRole('button', { name: 'Approve Welcome bonus' }).click();
    const dialog = owner.getByRole('dialog');
    await dialog.getByText('exactly as it was submitted').waitFor();
    await assertAccessible(owner, 'approve dialog');
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await owner.getByText('No review request here.').waitFor();

    await owner.getByRole('radiogroup', { name: 'Status' }).getByText('Approved', { exact: true }).click();
    await owner.getByTestId('reviews').getByText(`Approved by ${tenant.adminEmail}`).waitFor();
    await assertAccessible(owner, 'reviews (approved)');
    await screenshot(owner, '19-reviews-approved');

    const rule = await svc.request('GET', `/api/v1/admin/rules/${ruleId}`, { key: tenant.apiKey });
    assert.equal(rule.body.status, 'active');
    const event = await svc.request('POST', '/api/v1/ingest/events/sync', { key: tenant.apiKey, body: { event_name: 'signup', participant_id: 'p-new', idempotency_key: 'signup-1' } });
    assert.ok(event.status < 300, event.text);
    const state = await svc.request('GET', '/api/v1/gamify/state/p-new?include=points', { key: tenant.apiKey });
    assert.equal(state.body.points.available, 30);

    // The marketer's editor now shows a live rule they cannot change.
    await marketer.reload();
    await marketer.getByText('Only a publisher can change what is live.').waitFor();
    assert.equal(await marketer.getByRole('button', { name: 'Save rule' }).count(), 0);
  });

  await t.test('a returned request: the owner gives a note, the marketer reads it on the rule', async () => {
    const session = await (await marketer.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const headers = { 'x-csrf-token': session.csrf_token };
    const draft = await (await marketer.context().request.post(`${svc.baseUrl}/api/v1/admin/rules`, { headers, data: { name: 'Triple points weekend', event_name: 'purchase', effects: [{ type: 'award_points', points: 300 }] } })).json();
    assert.equal(draft.status, 'draft');
    const submitted = await marketer.context().request.post(`${svc.baseUrl}/api/v1/admin/reviews`, { headers, data: { kind: 'rule', id: draft.id } });
    assert.equal(submitted.status(), 201);

    // Submitted through the API, behind the owner's page: a reload shows it (the list opens on pending requests).
    await owner.reload();
    const table = owner.getByTestId('reviews');
    await table.getByRole('button', { name: 'Return Triple points weekend' }).click();
    const dialog = owner.getByRole('dialog');
    assert.equal(await dialog.getByRole('button', { name: 'Return' }).isDisabled(), true, 'a return needs a note');
    await dialog.getByLabel(/^Note for the author/).fill('300 points is over budget: make it 100.');
    await assertAccessible(owner, 'return dialog');
    await screenshot(owner, '20-review-return');
    await dialog.getByRole('button', { name: 'Return' }).click();
    await owner.getByText('No review request here.').waitFor();

    await marketer.goto(`${svc.baseUrl}/console/programs/rules/${draft.id}`);
    const returned = marketer.getByTestId('review-returned');
    await returned.waitFor();
    assert.match((await returned.textContent())!, /over budget: make it 100/);
    await marketer.getByRole('button', { name: 'Submit for review' }).waitFor();
    await assertAccessible(marketer, 'returned rule (marketer)');
  });

  assertClean();
});
