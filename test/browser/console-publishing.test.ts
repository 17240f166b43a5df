import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { assertAccessible, consoleUser, launchConsoleBrowser, screenshot } from './console-kit.js';

/**
 * Publishing in the console (issues 18 and 35): a marketer without can_publish
 * saves a draft rule, backtests it and submits it with its backtest; the owner
 * sees the number of reviews waiting, reads the backtest on the review and
 * approves it, and the rule is live; a second draft is returned with a note,
 * which the marketer then sees; a third is published from its own page, which
 * closes its pending review. The owner grants can_publish to another person in
 * Settings. A fraud reviewer sees no Reviews, and the API refuses them. The
 * API refuses the marketer's direct activation.
 */
test('the console in Chromium: draft → review → published', { timeout: 300_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const marketerUser = await consoleUser(svc, tenant, 'marketer', { canPublish: false });
  const colleague = await consoleUser(svc, tenant, 'marketer', { canPublish: false, email: `colleague@${tenant.slug}.example` });
  const reviewerUser = await consoleUser(svc, tenant, 'reviewer');
  // Stored sign-ups for the backtest to replay.
  for (const n of [1, 2, 3]) {
    const event = await svc.request('POST', '/api/v1/ingest/events/sync', { key: tenant.apiKey, body: { event_name: 'signup', participant_id: `p-earlier-${n}`, idempotency_key: `earlier-${n}` } });
    assert.ok(event.status < 300, event.text);
  }
  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const marketer = await newPage();
  const owner = await newPage();
  let ruleId = '';

  await t.test('the marketer saves a draft rule, backtests it and submits it with its backtest', async () => {
    await signIn(marketer, marketerUser.email, marketerUser.password);
    // The draft is saved through the API as the marketer (the rule editor's own test fills its form); the review is the browser's.
    const session = await (await marketer.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const saved = await marketer.context().request.post(`${svc.baseUrl}/api/v1/admin/rules`, {
      headers: { 'x-csrf-token': session.csrf_token },
      data: { name: 'Welcome bonus', event_name: 'signup', effects: [{ type: 'award_points', points: 30 }] },
    });
    assert.equal(saved.status(), 201, await saved.text());
    ruleId = (await saved.json()).id;
    await marketer.goto(`${svc.baseUrl}/console/programs/rules/${ruleId}`);
    await marketer.getByRole('heading', { level: 1, name: 'Rule: Welcome bonus' }).waitFor();
    const controls = marketer.getByTestId('publication-controls');
    await controls.getByRole('button', { name: 'Submit for review' }).waitFor();
    assert.equal(await controls.getByRole('button', { name: 'Publish' }).count(), 0, 'no Publish button without the publishing permission');
    await assertAccessible(marketer, 'draft rule (marketer)');
    await screenshot(marketer, '16-rule-draft');

    await marketer.getByRole('button', { name: 'Run the backtest' }).click();
    await marketer.getByTestId('backtest-matched').waitFor();

    await controls.getByRole('button', { name: 'Submit for review' }).click();
    const dialog = marketer.getByRole('dialog');
    await dialog.getByText('Your latest backtest goes with the request').waitFor();
    assert.match((await dialog.getByTestId('review-backtest').textContent())!, /3 of 3 events matched, 3 participants, 90 points/);
    await dialog.getByLabel('Note for the publisher (optional)').fill('For the spring sign-up campaign');
    await assertAccessible(marketer, 'submit dialog');
    await screenshot(marketer, '70-submit-with-backtest');
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
    const reviewsLink = owner.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: /^Reviews/ });
    await reviewsLink.getByTestId('reviews-waiting').waitFor();
    assert.equal(await reviewsLink.getByTestId('reviews-waiting').textContent(), '1');
    assert.match((await reviewsLink.textContent())!, /1 review waiting for you/);
    await reviewsLink.click();
    await owner.getByRole('heading', { level: 1, name: 'Reviews' }).waitFor();
    const table = owner.getByTestId('reviews');
    await table.getByText('Welcome bonus').waitFor();
    await table.getByText('For the spring sign-up campaign').waitFor();
    const backtest = table.getByRole('group', { name: "The author's backtest" });
    assert.match((await backtest.textContent())!, /3 of 3 events matched, 3 participants, 90 points/);
    await owner.getByTestId('zone-note').waitFor();
    await assertAccessible(owner, 'reviews (pending)');
    await screenshot(owner, '18-reviews-pending');
    await screenshot(owner, '70-review-with-backtest');
    await table.getByRole('button', { name: 'Approve Welcome bonus' }).click();
    const dialog = owner.getByRole('dialog');
    await dialog.getByText('exactly as it was submitted').waitFor();
    await assertAccessible(owner, 'approve dialog');
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await owner.getByText('No review request here.').waitFor();
    await reviewsLink.getByTestId('reviews-waiting').waitFor({ state: 'detached' });

    await owner.getByRole('radiogroup', { name: 'Status' }).getByText('Approved', { exact: true }).click();
    await owner.getByTestId('reviews').getByText(new RegExp(`Approved by ${tenant.adminEmail}, \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}`)).waitFor();
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
    await dialog.getByText('It stays a draft.').waitFor();
    await dialog.getByRole('button', { name: 'Return' }).click();
    // A return needs a note: the form says so on the field, before anything is sent.
    await dialog.getByText('Required.').waitFor();
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
    await screenshot(marketer, '70-returned-rule');
    await assertAccessible(marketer, 'returned rule (marketer)');
  });

  await t.test('the owner publishes a rule from its page while its review waits: the review is closed as published directly', async () => {
    const session = await (await marketer.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const headers = { 'x-csrf-token': session.csrf_token };
    const draft = await (await marketer.context().request.post(`${svc.baseUrl}/api/v1/admin/rules`, { headers, data: { name: 'Referral thanks', event_name: 'signup', effects: [{ type: 'award_points', points: 5 }] } })).json();
    const submitted = await (await marketer.context().request.post(`${svc.baseUrl}/api/v1/admin/reviews`, { headers, data: { kind: 'rule', id: draft.id } })).json();

    await owner.goto(`${svc.baseUrl}/console/programs/rules/${draft.id}`);
    const controls = owner.getByTestId('publication-controls');
    await controls.getByTestId('review-pending').waitFor();
    await owner.getByRole('button', { name: 'Run the backtest' }).click();
    await owner.getByTestId('backtest-matched').waitFor();
    await controls.getByRole('button', { name: 'Publish' }).click();
    const dialog = owner.getByRole('dialog');
    await dialog.getByText(`The review request ${marketerUser.email} submitted is closed with it, as published directly.`).waitFor();
    await assertAccessible(owner, 'publish with a pending review');
    await screenshot(owner, '70-publish-closes-review');
    await dialog.getByRole('button', { name: 'Publish' }).click();
    await controls.getByTestId('review-pending').waitFor({ state: 'detached' });

    const review = await svc.request('GET', `/api/v1/admin/reviews/${submitted.id}`, { key: tenant.apiKey });
    assert.equal(review.body.status, 'published');
    assert.equal(review.body.decided_by.email, tenant.adminEmail);
    // A later approve does not fail: the request answers as it stands.
    const csrf = (await (await owner.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json()).csrf_token;
    const late = await owner.context().request.post(`${svc.baseUrl}/api/v1/admin/reviews/${submitted.id}/approve`, { headers: { 'x-csrf-token': csrf } });
    assert.equal(late.status(), 200);
    await owner.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: /^Reviews/ }).click();
    await owner.getByRole('heading', { level: 1, name: 'Reviews' }).waitFor();
    await owner.getByRole('radiogroup', { name: 'Status' }).getByText('Published directly', { exact: true }).click();
    await owner.getByTestId('reviews').getByText('Referral thanks').waitFor();
    await assertAccessible(owner, 'reviews (published directly)');
  });

  await t.test('the owner lets another person publish in Settings', async () => {
    await open(owner, 'Settings', 'Settings');
    const users = owner.getByTestId('console-users');
    const mayPublish = users.getByRole('switch', { name: `May publish: ${colleague.email}` });
    assert.equal(await mayPublish.isChecked(), false);
    const saved = owner.waitForResponse((response) => response.request().method() === 'PATCH' && response.url().includes('/api/v1/admin/users/'));
    await mayPublish.click({ force: true });
    assert.equal((await saved).status(), 200, await (await saved).text());
    await owner.waitForFunction((email) => (document.querySelector(`input[aria-label="May publish: ${email}"]`) as HTMLInputElement | null)?.checked === true, colleague.email);
    const list = await svc.request('GET', '/api/v1/admin/users', { key: tenant.apiKey });
    assert.equal(list.body.users.find((u: { email: string }) => u.email === colleague.email).can_publish, true);
    // A fraud reviewer edits no programs: publishing means nothing for them.
    assert.equal(await users.getByRole('switch', { name: `May publish: ${reviewerUser.email}` }).count(), 0);
    await assertAccessible(owner, 'settings (people)');
    await owner.evaluate(() => window.scrollTo(0, 0));
    await screenshot(owner, '70-users-can-publish');
    await users.getByRole('button', { name: `Edit ${colleague.email}` }).click();
    const dialog = owner.getByRole('dialog');
    await dialog.getByLabel('May publish').waitFor();
    assert.equal(await dialog.getByLabel('May publish').isChecked(), true);
    await assertAccessible(owner, 'edit person dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  await t.test('a fraud reviewer sees no Reviews, cannot open them, and the API refuses them', async () => {
    const reviewer = await newPage();
    await signIn(reviewer, reviewerUser.email, reviewerUser.password);
    const navigation = reviewer.getByRole('navigation', { name: 'Console sections' });
    await navigation.getByRole('link').first().waitFor();
    assert.equal(await navigation.getByRole('link', { name: /^Reviews/ }).count(), 0);
    await reviewer.goto(`${svc.baseUrl}/console/reviews`);
    await reviewer.getByRole('heading', { level: 1, name: 'Nothing here' }).waitFor();
    await assertAccessible(reviewer, 'reviews (fraud reviewer)');
    const refused = await reviewer.context().request.get(`${svc.baseUrl}/api/v1/admin/reviews`);
    assert.equal(refused.status(), 403);
  });

  assertClean();
});
