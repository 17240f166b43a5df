import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { assertAccessible, consoleUser, launchConsoleBrowser, screenshot } from './console-kit.js';

const DAY_S = 24 * 60 * 60;
/** The tenant's zone: every time on these screens is shown and entered in it, whatever the browser's zone. */
const ZONE = 'Europe/Berlin';
const ZONE_NOTE = /^Times in Europe\/Berlin \(UTC\+0[12]:00\)$/;

/** An instant as the tenant's wall clock, `2026-11-27T14:05` (a `datetime-local` value) or `2026-11-27 14:05` (as shown). */
function inZone(iso: string, separator: 'T' | ' ' = ' '): string {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })
      .formatToParts(new Date(iso))
      .map((part) => [part.type, part.value]),
  );
  return `${p.year}-${p.month}-${p.day}${separator}${p.hour}:${p.minute}`;
}

/** A field marked invalid by a refusal, with its message in plain words under it. */
async function assertFieldError(page: Page, label: RegExp, message: RegExp): Promise<void> {
  const field = page.getByLabel(label);
  await page.waitForFunction((el) => el?.getAttribute('aria-invalid') === 'true', await field.elementHandle());
  const described = (await field.getAttribute('aria-describedby')) ?? '';
  const texts = await Promise.all(described.split(/\s+/).filter(Boolean).map((id) => page.locator(`[id="${id}"]`).innerText()));
  assert.ok(texts.some((text) => message.test(text)), `${label}: ${JSON.stringify(texts)}`);
}

/**
 * The console's challenges, contests, leaderboards, referrals and fraud review
 * queue in Chromium, on a sandbox tenant in Europe/Berlin whose test clock
 * moves the contest through its lifecycle: a marketer builds a challenge and
 * a contest (times in the tenant's zone, refusals on their fields, a badge
 * picked by name) and exports the completed contest's results as CSV; an
 * analyst sees the queue with its decision controls disabled; a reviewer
 * decides both held items, each with a reason of the service's length.
 */
test('the console: challenges, contests, leaderboards, referrals and the fraud review queue', { timeout: 300_000 }, async (t) => {
  const svc: TestService = await startTestService(t, { jobs: true });
  const tenant: TestTenant = await svc.createTenant({ environment: 'sandbox' });
  const call = async (method: string, p: string, body?: unknown) => {
    const response = await svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${p}: ${response.status} ${response.text}`);
    return response.body;
  };
  await call('PATCH', '/api/v1/tenant', { timezone: ZONE });
  await call('POST', '/api/v1/admin/badges', { code: 'sprinter', name: 'Spring sprinter' });
  await call('POST', '/api/v1/ingest/events/sync', { event_name: 'order_placed', participant_id: 'zed', properties: {}, idempotency_key: 'seen-order' });
  const engagementId = await svc.createEngagement(tenant);
  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const marketerCredentials = await consoleUser(svc, tenant, 'marketer', { canPublish: true });
  const page = await newPage();
  await signIn(page, marketerCredentials.email, marketerCredentials.password);

  await t.test('a marketer creates a challenge with times in the tenant\'s zone; an end before the start is refused on the end field', async () => {
    await open(page, 'Challenges', 'Challenges');
    await page.getByText('No challenge yet.').waitFor();
    await assertAccessible(page, 'challenge list (empty)');
    await page.getByRole('link', { name: 'New challenge' }).click();
    await page.getByRole('heading', { level: 1, name: 'New challenge' }).waitFor();
    assert.match(await page.getByTestId('zone-note').innerText(), ZONE_NOTE);
    await page.getByLabel(/^Name/).fill('Spring sprint');
    await page.getByLabel(/^Starts/).fill('2027-03-01T09:30');
    await page.getByLabel(/^Ends/).fill('2027-02-20T18:00');
    await page.getByLabel(/^Objective 1/).fill('Place three orders');
    await page.getByLabel(/^Target/).fill('3');
    // The event name is picked from the names the tenant has sent.
    await page.getByRole('combobox', { name: /^Event name/ }).click();
    await page.getByRole('option', { name: 'order_placed' }).click();
    await page.getByRole('button', { name: 'Add a milestone' }).click();
    await page.getByLabel(/^Milestone 1/).fill('Halfway');
    await page.getByLabel(/^Points/).fill('150');
    await page.getByRole('combobox', { name: /^Badge code/ }).click();
    await page.getByRole('option', { name: 'Spring sprinter (sprinter)' }).click();
    await assertAccessible(page, 'challenge form');
    await page.getByRole('button', { name: 'Create the draft' }).click();
    await assertFieldError(page, /^Ends/, /must be after the start/);
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('type')), 'datetime-local', 'the refused field has the focus');
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, '46-challenge-field-error');
    await page.getByLabel(/^Ends/).fill('2027-03-15T18:00');
    await page.getByRole('button', { name: 'Create the draft' }).click();
    await page.getByRole('heading', { level: 1, name: 'Spring sprint' }).waitFor();
    const stored = (await call('GET', '/api/v1/admin/challenges')).challenges;
    assert.equal(stored.length, 1);
    assert.equal(stored[0].starts_at, '2027-03-01T08:30:00.000Z', '09:30 in Berlin (CET) is 08:30 UTC');
    assert.equal(stored[0].ends_at, '2027-03-15T17:00:00.000Z');
    assert.equal(stored[0].completion_points, 150);
    assert.equal(stored[0].completion_badge_code, 'sprinter', 'the badge picked by its name is sent by its code');
    assert.deepEqual(stored[0].milestones, [{ name: 'Halfway', threshold: 0.5 }]);
    assert.equal(await page.getByLabel(/^Starts/).inputValue(), '2027-03-01T09:30', 'the start reads back in the tenant\'s zone');
    await page.getByText('Draft', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Publish' }).click();
    const dialog = page.getByRole('dialog', { name: 'Publish the challenge' });
    await dialog.getByRole('button', { name: 'Publish' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByTestId('challenge-history').getByText(/draft → scheduled/).waitFor();
    await screenshot(page, '40-challenge');
    await open(page, 'Challenges', 'Challenges');
    await page.getByTestId('challenges').getByRole('cell', { name: '2027-03-01 09:30' }).waitFor();
    await assertAccessible(page, 'challenge list');
  });

  await t.test('a marketer creates a contest: overlapping prize ranks are refused on the tier\'s field; the window round-trips in the tenant\'s zone', async () => {
    await open(page, 'Contests', 'Contests');
    await page.getByRole('link', { name: 'New contest' }).click();
    await page.getByRole('heading', { level: 1, name: 'New contest' }).waitFor();
    const startsInput = await page.getByLabel(/^Starts/).inputValue();
    await page.getByLabel(/^Contest id/).fill('spring cup');
    await page.getByLabel(/^Title/).fill('Spring cup');
    await assertFieldError(page, /^Contest id/, /characters this field does not allow/);
    await page.getByLabel(/^Contest id/).fill('spring-cup');
    await page.getByRole('combobox', { name: /^Event name/ }).fill('purchase');
    await page.getByLabel(/^Score property/).fill('amount');
    await page.getByLabel('Prize name').fill('50 EUR voucher');
    await page.getByRole('button', { name: 'Add a prize tier' }).click();
    await page.getByLabel(/^From rank/).nth(1).fill('1');
    await page.getByLabel('Review winners scoring above').fill('500');
    await page.getByLabel('Refuse disposable email addresses').check();
    await assertAccessible(page, 'contest form');
    await page.getByRole('button', { name: 'Create the draft' }).click();
    const secondFrom = page.getByLabel(/^From rank/).nth(1);
    await page.waitForFunction((el) => el?.getAttribute('aria-invalid') === 'true', await secondFrom.elementHandle());
    await page.getByText('overlaps ranks 1–1 of another tier').waitFor();
    await secondFrom.fill('2');
    await page.getByLabel(/^To rank/).nth(1).fill('2');
    await page.getByRole('button', { name: 'Create the draft' }).click();
    await page.getByRole('heading', { level: 1, name: 'Spring cup' }).waitFor();
    const created = await call('GET', '/api/v1/admin/contests/spring-cup');
    assert.equal(inZone(created.starts_at, 'T'), startsInput, 'the start entered in Berlin is stored as that instant');
    await page.getByText(`Open ${inZone(created.starts_at)} to ${inZone(created.ends_at)}`).waitFor();
    assert.match(await page.getByTestId('zone-note').innerText(), ZONE_NOTE);
    await page.getByRole('button', { name: 'Publish' }).click();
    const dialog = page.getByRole('dialog', { name: 'Publish the contest' });
    await dialog.getByRole('button', { name: 'Publish' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByTestId('contest-timeline').locator('[aria-current="step"]').getByText('Scheduled').waitFor();
    const contest = await call('GET', '/api/v1/admin/contests/spring-cup');
    assert.equal(contest.status, 'scheduled');
    assert.equal(contest.fraud_rules.review_threshold_score, 500);
    assert.equal(contest.fraud_rules.block_disposable_emails, true);
    assert.deepEqual(contest.prize_structure.map((p: { rank_from: number; rank_to: number }) => [p.rank_from, p.rank_to]), [[1, 1], [2, 2]]);
    await assertAccessible(page, 'contest detail (scheduled)');
  });

  // Two participants enter; the test clock opens the contest; ann scores above the review threshold.
  for (const participant of ['ann', 'bob']) {
    const session = (await call('POST', '/api/v1/sessions', { participant_id: participant, engagement_id: engagementId })).session_id;
    const entered = await svc.request('POST', '/api/v1/contests/spring-cup/enter', { body: { session_id: session, display_name: participant === 'ann' ? 'Ann' : 'Bob', publish_consent: true } });
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
    // The current step is drawn apart from the steps reached before it, not only named for a screen reader.
    const timeline = page.getByTestId('contest-timeline');
    assert.equal(await timeline.getByTestId('timeline-current').count(), 1, 'one step is marked as the current one');
    assert.equal(await timeline.locator('[aria-current="step"]').getByTestId('timeline-current').count(), 1, 'the marked step is the current one');
    const weight = async (name: string) => Number(await timeline.getByText(name, { exact: true }).evaluate((element) => getComputedStyle(element).fontWeight));
    assert.ok((await weight('Active')) > (await weight('Scheduled')), 'the current step\'s title is bolder than a reached one');
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

  await t.test('the completed contest: the prize fulfilment list, and its results exported as CSV and read from the downloaded file', async () => {
    await page.reload();
    await page.getByTestId('contest-timeline').locator('[aria-current="step"]').getByText('Completed').waitFor();
    // The list is drawn from the final leaderboard, read after the contest: wait for its rows, not for the timeline.
    const fulfilment = page.getByTestId('prize-fulfilment').locator('tbody tr');
    await fulfilment.nth(1).waitFor();
    const rows = await fulfilment.allInnerTexts();
    assert.equal(rows.length, 2, rows.join('|'));
    assert.match(rows[0], /Ann[\s\S]*50 EUR voucher[\s\S]*Held for fraud review/);
    assert.match(rows[1], /Bob[\s\S]*Pending verification/);
    await page.getByRole('button', { name: 'Export results as CSV' }).click();
    const link = page.getByTestId('results-download');
    await link.waitFor();
    assert.match(await link.innerText(), /CSV, 2 rows/);
    await assertAccessible(page, 'contest detail (completed, results file)');
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, '42-contest-completed');
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const csv = (await fs.readFile(await download.path())).toString('utf8').trim().split(/\r?\n/);
    assert.equal(csv[0], 'rank,final_rank,participant_id,entry_id,display_name,score,status,entered_at,reached_at,last_scored_at');
    assert.equal(csv.length, 3, csv.join('\n'));
    assert.match(csv[1], /^1,1,ann,[^,]+,Ann,900,under_review,/);
    assert.match(csv[2], /^2,2,bob,[^,]+,Bob,120,winner,/);
  });

  await t.test('leaderboards: a code with characters the service refuses is marked on its field; the marketer adds one and sees the standings', async () => {
    await call('POST', '/api/v1/gamify/points/grant', { participant_id: 'ann', amount: 300, reason: 'welcome', idempotency_key: 'grant-ann' });
    await call('POST', '/api/v1/gamify/points/grant', { participant_id: 'bob', amount: 80, reason: 'welcome', idempotency_key: 'grant-bob' });
    await open(page, 'Leaderboards', 'Leaderboards');
    await page.getByLabel(/^Code/).fill('All time');
    await page.getByLabel(/^Name/).fill('All-time points');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await assertFieldError(page, /^Code/, /characters this field does not allow/);
    await page.getByLabel(/^Code/).fill('all-time');
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

  await t.test('referral settings: a milestone with a badge picked by its name; a threshold below the service\'s minimum is refused on its field', async () => {
    await open(page, 'Referrals', 'Referrals');
    await page.getByRole('button', { name: 'Add a milestone' }).click();
    await page.getByRole('combobox', { name: /^Badge code/ }).click();
    await page.getByRole('option', { name: 'Spring sprinter (sprinter)' }).click();
    await page.getByLabel(/^Conversions per referrer per hour/).fill('0');
    // Enter submits the form (a click on Save would race the error line that the blur adds above it).
    await page.getByLabel(/^Conversions per referrer per hour/).press('Enter');
    await assertFieldError(page, /^Conversions per referrer per hour/, /at least 1/);
    await page.getByLabel(/^Conversions per referrer per hour/).fill('5');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    const settings = await call('GET', '/api/v1/admin/referrals/settings');
    assert.equal(settings.velocity_per_hour, 5);
    assert.deepEqual(settings.milestones, [{ conversions: 1, points: 100, badge_code: 'sprinter' }]);
    assert.equal(await page.getByTestId('conversions').count(), 0, 'no conversions list without fraud:read');
    await assertAccessible(page, 'referrals');
  });

  // A referral converted from the referrer's own device is held as suspicious.
  const code = (await call('POST', '/api/v1/referrals/generate', { participant_id: 'carol', campaign_id: randomUUID(), device_id: 'device-carol' })).code;
  const held = await svc.request('POST', '/api/v1/referrals/convert', { body: { code, referred_session_id: 'visitor-1', device_id: 'device-carol' } });
  assert.equal(held.body.status, 'pending_review', held.text);

  await t.test('an analyst sees the queue, the decision controls disabled with the reason, and the API refuses the analyst a decision', async () => {
    const credentials = await consoleUser(svc, tenant, 'analyst');
    const analyst = await newPage();
    await signIn(analyst, credentials.email, credentials.password);
    await open(analyst, 'Review queue', 'Fraud review queue');
    const queue = analyst.getByTestId('review-queue');
    await queue.getByTestId('queue-item').nth(1).waitFor();
    const disqualify = queue.getByRole('button', { name: /^Disqualify ann/ });
    assert.ok(await disqualify.isDisabled(), 'the analyst may not decide');
    const note = analyst.getByTestId('read-only-note');
    assert.equal(await disqualify.getAttribute('aria-describedby'), await note.getAttribute('id'), 'the disabled control is described by why');
    assert.match(await note.innerText(), /As Analyst you see the queue[\s\S]*fraud:decide/);
    await assertAccessible(analyst, 'fraud review queue (analyst)');
    await screenshot(analyst, '47-fraud-queue-analyst');
    const session = await (await analyst.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const reviewId = (await call('GET', '/api/v1/admin/fraud/reviews?contest_id=spring-cup')).reviews[0].review_id;
    const refused = await analyst.context().request.post(`${svc.baseUrl}/api/v1/admin/fraud/decisions`, {
      headers: { 'x-csrf-token': session.csrf_token },
      data: { review_id: reviewId, decision: 'approve', reason: 'looks fine to me' },
    });
    assert.equal(refused.status(), 403);
  });

  await t.test('a reviewer decides both held items, a reason shorter than the service\'s minimum refused on its field; the trail shows who, when and why', async () => {
    const credentials = await consoleUser(svc, tenant, 'reviewer');
    const review = await newPage();
    await signIn(review, credentials.email, credentials.password);
    await open(review, 'Review queue', 'Fraud review queue');
    const queue = review.getByTestId('review-queue');
    await queue.getByTestId('queue-item').nth(1).waitFor();
    assert.equal(await queue.getByTestId('queue-item').count(), 2);
    assert.equal(await review.getByTestId('read-only-note').count(), 0);
    await assertAccessible(review, 'fraud review queue');
    await screenshot(review, '44-fraud-queue');

    await queue.getByRole('button', { name: /^Disqualify ann/ }).click();
    const disqualify = review.getByRole('dialog', { name: 'Disqualify' });
    await disqualify.getByText('10 to 500 characters').waitFor();
    await disqualify.getByLabel(/^Reason/).fill('Stolen');
    await disqualify.getByRole('button', { name: 'Disqualify' }).click();
    await assertFieldError(review, /^Reason/, /at least 10 characters/);
    await assertAccessible(review, 'decision dialog (reason refused)');
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

    await review.getByRole('combobox', { name: 'Status' }).click();
    await review.getByRole('option', { name: 'Disqualified' }).click();
    await queue.getByRole('button', { name: /^Decision trail of ann/ }).click();
    const trail = review.getByTestId('decision-trail');
    await trail.getByText(/Disqualified by you \(reviewer-.*\), \d{4}-\d{2}-\d{2} \d{2}:\d{2}: Bought with a stolen card/).waitFor();
    await trail.getByText(/under_review → disqualified/).waitFor();
    await assertAccessible(review, 'decision trail');
    await screenshot(review, '45-fraud-trail');
  });

  await t.test('a marketer does not see the queue, and the API refuses the marketer a fraud decision (403)', async () => {
    const links = await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link').allTextContents();
    assert.ok(links.includes('Contests') && !links.includes('Review queue'), links.join());
    await page.goto(`${svc.baseUrl}/console/fraud/reviews`);
    await page.getByRole('heading', { name: 'Nothing here' }).waitFor();
    const session = await (await page.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const refused = await page.context().request.post(`${svc.baseUrl}/api/v1/admin/fraud/decisions`, {
      headers: { 'x-csrf-token': session.csrf_token },
      data: { contest_id: 'spring-cup', entry_id: 'any', decision: 'approve' },
    });
    assert.equal(refused.status(), 403);
  });

  assertClean();
});
