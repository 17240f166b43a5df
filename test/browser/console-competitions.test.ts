import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { assertAccessible, consoleUser, launchConsoleBrowser, screenshot } from './console-kit.js';

const DAY_S = 24 * 60 * 60;

/**
 * The console's challenges, contests, leaderboards, referrals and fraud review
 * queue in Chromium, on a sandbox tenant whose test clock moves the contest
 * through its lifecycle: an owner creates and publishes a challenge and a
 * contest, a winner above the review threshold is held, a referral from the
 * referrer's own device is held, and a reviewer decides both in one queue.
 */
test('the console: challenges, contests, leaderboards, referrals and the fraud review queue', { timeout: 300_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant({ environment: 'sandbox' });
  const call = async (method: string, p: string, body?: unknown) => {
    const response = await svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${p}: ${response.status} ${response.text}`);
    return response.body;
  };
  const engagementId = await svc.createEngagement(tenant);
  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const page = await newPage();
  await signIn(page, tenant.adminEmail, tenant.adminPassword);

  await t.test('an owner creates a challenge with an objective and a milestone, and publishes it after a confirmation', async () => {
    await open(page, 'Challenges', 'Challenges');
    await page.getByText('No challenge yet.').waitFor();
    await assertAccessible(page, 'challenge list (empty)');
    await page.getByRole('link', { name: 'New challenge' }).click();
    await page.getByRole('heading', { level: 1, name: 'New challenge' }).waitFor();
    await page.getByLabel(/^Name/).fill('Spring sprint');
    await page.getByLabel(/^Objective 1/).fill('Place three orders');
    await page.getByLabel(/^Target/).fill('3');
    await page.getByLabel(/^Event name/).fill('order_placed');
    await page.getByRole('button', { name: 'Add a milestone' }).click();
    await page.getByLabel(/^Milestone 1/).fill('Halfway');
    await page.getByLabel('Points', { exact: true }).fill('150');
    await assertAccessible(page, 'challenge form');
    await page.getByRole('button', { name: 'Create the draft' }).click();
    await page.getByRole('heading', { level: 1, name: 'Spring sprint' }).waitFor();
    await page.getByText('Draft', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Publish' }).click();
    const dialog = page.getByRole('dialog', { name: 'Publish the challenge' });
    await dialog.getByRole('button', { name: 'Publish' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByText('Scheduled', { exact: true }).first().waitFor();
    await page.getByTestId('challenge-history').getByText(/draft → scheduled/).waitFor();
    const stored = (await call('GET', '/api/v1/admin/challenges')).challenges;
    assert.equal(stored.length, 1);
    assert.equal(stored[0].status, 'scheduled');
    assert.equal(stored[0].completion_points, 150);
    assert.deepEqual(stored[0].milestones, [{ name: 'Halfway', threshold: 0.5 }]);
    await screenshot(page, '40-challenge');
    await open(page, 'Challenges', 'Challenges');
    await page.getByTestId('challenges').getByRole('link', { name: 'Spring sprint' }).waitFor();
    await assertAccessible(page, 'challenge list');
  });

  await t.test('an owner creates a contest draft with prizes and fraud rules, and publishes it: the timeline shows it scheduled', async () => {
    await open(page, 'Contests', 'Contests');
    await page.getByRole('link', { name: 'New contest' }).click();
    await page.getByRole('heading', { level: 1, name: 'New contest' }).waitFor();
    await page.getByLabel(/^Contest id/).fill('spring-cup');
    await page.getByLabel(/^Title/).fill('Spring cup');
    await page.getByLabel(/^Event name/).fill('purchase');
    await page.getByLabel(/^Score property/).fill('amount');
    await page.getByLabel('Prize name').fill('50 EUR voucher');
    await page.getByRole('button', { name: 'Add a prize tier' }).click();
    await page.getByLabel('Review winners scoring above').fill('500');
    await page.getByLabel('Refuse disposable email addresses').check();
    await assertAccessible(page, 'contest form');
    await page.getByRole('button', { name: 'Create the draft' }).click();
    await page.getByRole('heading', { level: 1, name: 'Spring cup' }).waitFor();
    await page.getByTestId('contest-timeline').waitFor();
    await page.getByRole('button', { name: 'Publish' }).click();
    const dialog = page.getByRole('dialog', { name: 'Publish the contest' });
    await dialog.getByRole('button', { name: 'Publish' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByTestId('contest-timeline').locator('[aria-current="step"]').getByText('Scheduled').waitFor();
    const contest = await call('GET', '/api/v1/admin/contests/spring-cup');
    assert.equal(contest.status, 'scheduled');
    assert.equal(contest.fraud_rules.review_threshold_score, 500);
    assert.equal(contest.fraud_rules.block_disposable_emails, true);
    assert.equal(contest.prize_structure.length, 2);
    assert.deepEqual([contest.prize_structure[1].rank_from, contest.prize_structure[1].rank_to], [2, 2]);
    assert.equal(await page.getByRole('button', { name: 'Publish' }).count(), 0, 'a scheduled contest is not published again');
    await assertAccessible(page, 'contest detail (scheduled)');
  });

  // Two participants enter; the test clock opens the contest; ann scores above the review threshold.
  const sessions: Record<string, string> = {};
  for (const participant of ['ann', 'bob']) {
    sessions[participant] = (await call('POST', '/api/v1/sessions', { participant_id: participant, engagement_id: engagementId })).session_id;
    const entered = await svc.request('POST', '/api/v1/contests/spring-cup/enter', { body: { session_id: sessions[participant], display_name: participant === 'ann' ? 'Ann' : 'Bob', publish_consent: true } });
    assert.equal(entered.status, 201, entered.text);
  }
  const opened = await call('POST', '/api/v1/admin/test-clock/advance', { seconds: 2 * DAY_S });
  assert.equal(opened.ran.contests_started, 1);
  for (const [participant, amount] of [['ann', 900], ['bob', 120]] as const) {
    await call('POST', '/api/v1/ingest/events/sync', { event_name: 'purchase', participant_id: participant, properties: { amount }, idempotency_key: `buy-${participant}` });
  }

  await t.test('the running contest: the timeline marks it active and the live leaderboard ranks the entries', async () => {
    await page.reload();
    await page.getByTestId('contest-timeline').locator('[aria-current="step"]').getByText('Active').waitFor();
    const board = page.getByTestId('contest-leaderboard');
    await board.getByText('Ann').waitFor();
    const rows = await board.locator('tbody tr').allInnerTexts();
    assert.match(rows[0], /1\s+Ann[\s\S]*900/);
    assert.match(rows[1], /2\s+Bob[\s\S]*120/);
    await assertAccessible(page, 'contest detail (active)');
    await screenshot(page, '41-contest-active');
  });

  const closed = await call('POST', '/api/v1/admin/test-clock/advance', { seconds: 8 * DAY_S });
  assert.equal(closed.ran.contests_completed, 1);

  await t.test('the completed contest: final ranks and the prize fulfilment list (one held for review, one pending verification)', async () => {
    await page.reload();
    await page.getByTestId('contest-timeline').locator('[aria-current="step"]').getByText('Completed').waitFor();
    const fulfilment = page.getByTestId('prize-fulfilment');
    await fulfilment.waitFor();
    const rows = await fulfilment.locator('tbody tr').allInnerTexts();
    assert.equal(rows.length, 2, rows.join('|'));
    assert.match(rows[0], /Ann[\s\S]*50 EUR voucher[\s\S]*Held for fraud review/);
    assert.match(rows[1], /Bob[\s\S]*Pending verification/);
    await assertAccessible(page, 'contest detail (completed)');
    await screenshot(page, '42-contest-completed');
  });

  // A referral converted from the referrer's own device is held as suspicious.
  const campaignId = randomUUID();
  const code = (await call('POST', '/api/v1/referrals/generate', { participant_id: 'carol', campaign_id: campaignId, device_id: 'device-carol' })).code;
  const held = await svc.request('POST', '/api/v1/referrals/convert', { body: { code, referred_session_id: 'visitor-1', device_id: 'device-carol' } });
  assert.equal(held.body.status, 'pending_review', held.text);

  await t.test('leaderboards: an owner adds one, refreshes it and sees the standings', async () => {
    await call('POST', '/api/v1/gamify/points/grant', { participant_id: 'ann', amount: 300, reason: 'welcome', idempotency_key: 'grant-ann' });
    await call('POST', '/api/v1/gamify/points/grant', { participant_id: 'bob', amount: 80, reason: 'welcome', idempotency_key: 'grant-bob' });
    await open(page, 'Leaderboards', 'Leaderboards');
    await page.getByLabel(/^Code/).fill('all-time');
    await page.getByLabel(/^Name/).fill('All-time points');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByTestId('leaderboards').getByRole('link', { name: 'All-time points' }).click();
    await page.getByRole('heading', { level: 1, name: 'All-time points' }).waitFor();
    await page.getByRole('button', { name: 'Refresh now' }).click();
    const standings = page.getByTestId('standings');
    await standings.getByText('Ann').waitFor();
    const rows = await standings.locator('tbody tr').allInnerTexts();
    assert.match(rows[0], /1\s+Ann\s+300/);
    await assertAccessible(page, 'leaderboard');
    await screenshot(page, '43-leaderboard');
  });

  await t.test('referrals: the settings and the held conversion are on the owner\'s screen', async () => {
    await open(page, 'Referrals', 'Referrals');
    await page.getByLabel('Conversions per referrer per hour before review').waitFor();
    await page.getByTestId('conversions').getByText('carol').waitFor();
    await assertAccessible(page, 'referrals');
  });

  const reviewer = await consoleUser(svc, tenant, 'reviewer');

  await t.test('a reviewer decides both held items in one queue, and the trail shows who decided, when and why', async () => {
    const review = await newPage();
    await signIn(review, reviewer.email, reviewer.password);
    await open(review, 'Review queue', 'Fraud review queue');
    const queue = review.getByTestId('review-queue');
    await queue.getByTestId('queue-item').nth(1).waitFor();
    assert.equal(await queue.getByTestId('queue-item').count(), 2);
    await assertAccessible(review, 'fraud review queue');
    await screenshot(review, '44-fraud-queue');

    await queue.getByRole('button', { name: /^Disqualify ann/ }).click();
    const disqualify = review.getByRole('dialog', { name: 'Disqualify' });
    await assertAccessible(review, 'decision dialog');
    assert.ok(await disqualify.getByRole('button', { name: 'Disqualify' }).isDisabled(), 'a decision needs a reason');
    await disqualify.getByLabel(/^Reason/).fill('Bought with a stolen card');
    await disqualify.getByRole('button', { name: 'Disqualify' }).click();
    await disqualify.waitFor({ state: 'hidden' });

    await queue.getByRole('button', { name: /^Approve carol/ }).click();
    const approve = review.getByRole('dialog', { name: 'Approve' });
    await approve.getByLabel(/^Reason/).fill('Shared family tablet');
    await approve.getByRole('button', { name: 'Approve' }).click();
    await approve.waitFor({ state: 'hidden' });
    await review.getByText('Nothing to review.').waitFor();

    const reviews = (await call('GET', '/api/v1/admin/fraud/reviews?contest_id=spring-cup')).reviews;
    assert.deepEqual(reviews.map((r: { status: string; note: string }) => [r.status, r.note]), [['disqualified', 'Bought with a stolen card']]);
    const conversions = (await call('GET', '/api/v1/admin/referrals/conversions')).conversions;
    assert.deepEqual(conversions.map((c: { status: string; decision_note: string }) => [c.status, c.decision_note]), [['converted', 'Shared family tablet']]);

    // The decided items and their trails.
    await review.getByRole('combobox', { name: 'Status' }).click();
    await review.getByRole('option', { name: 'Disqualified' }).click();
    await queue.getByRole('button', { name: /^Decision trail of ann/ }).click();
    const trail = review.getByTestId('decision-trail');
    await trail.getByText(/Disqualified by you \(reviewer-.*\), .*: Bought with a stolen card/).waitFor();
    await trail.getByText(/under_review → disqualified/).waitFor();
    await assertAccessible(review, 'decision trail');
    await screenshot(review, '45-fraud-trail');
    await review.getByRole('combobox', { name: 'Status' }).click();
    await review.getByRole('option', { name: 'Approved' }).click();
    await queue.getByRole('button', { name: /^Decision trail of carol/ }).click();
    await review.getByTestId('decision-trail').getByText(/Approved by you .*: Shared family tablet/).waitFor();

    const links = await review.getByRole('navigation', { name: 'Console sections' }).getByRole('link').allTextContents();
    assert.ok(!links.includes('Webhooks'), links.join());
  });

  await t.test('a marketer does not see the queue, and the API refuses the marketer a fraud decision (403)', async () => {
    const credentials = await consoleUser(svc, tenant, 'marketer');
    const marketer = await newPage();
    await signIn(marketer, credentials.email, credentials.password);
    const links = await marketer.getByRole('navigation', { name: 'Console sections' }).getByRole('link').allTextContents();
    assert.ok(links.includes('Contests') && !links.includes('Review queue'), links.join());
    await marketer.goto(`${svc.baseUrl}/console/fraud/reviews`);
    await marketer.getByRole('heading', { name: 'Nothing here' }).waitFor();
    await marketer.goto(`${svc.baseUrl}/console/competitions/referrals`);
    await marketer.getByLabel('Conversions per referrer per hour before review').waitFor();
    assert.equal(await marketer.getByTestId('conversions').count(), 0, 'no conversions list without fraud:read');
    const session = await (await marketer.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const refused = await marketer.context().request.post(`${svc.baseUrl}/api/v1/admin/fraud/decisions`, {
      headers: { 'x-csrf-token': session.csrf_token },
      data: { contest_id: 'spring-cup', entry_id: 'any', decision: 'approve' },
    });
    assert.equal(refused.status(), 403);
    const list = await marketer.context().request.get(`${svc.baseUrl}/api/v1/admin/fraud/reviews`);
    assert.equal(list.status(), 403);
  });

  assertClean();
});
