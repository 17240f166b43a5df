import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import type { Page } from 'playwright-core';
import { assertAccessible, consoleUser, launchConsoleBrowser, screenshot } from './console-kit.js';

/** A full-page screenshot from the top: taken scrolled down, the fixed header would be drawn across the middle. */
async function shot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, name);
}

/**
 * The Engagements section of the console in a real browser: a marketer builds
 * a spin wheel (odds shown as percentages, the probability check), publishes
 * it and spins it in the preview (the runtime page in an iframe), builds a
 * quiz with a pass mark, adds a reward and imports its codes from a CSV file
 * (one bad row reported with the server's words) and sees the low-stock
 * warning; a support user is refused engagement writes by the API.
 */
test('the console engagements section in Chromium: wheel, probability check, publish, preview spin, quiz, rewards with a CSV import, role limits', { timeout: 300_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const marketer = await consoleUser(svc, tenant, 'marketer', { canPublish: true });
  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const page = await newPage();
  await signIn(page, marketer.email, marketer.password);

  await t.test('a spin wheel with 3 segments: chances as percentages and the probability check, live', async () => {
    await open(page, 'Engagements', 'Engagements');
    await page.getByText('No engagements yet.').waitFor();
    await page.getByRole('link', { name: 'New engagement' }).click();
    await page.getByRole('heading', { level: 1, name: 'New engagement' }).waitFor();
    await page.getByLabel(/^Name/).fill('Summer wheel');
    await page.getByLabel(/^Site/).fill('summer-wheel');
    await page.getByRole('button', { name: 'Add a spin wheel' }).click();
    await page.getByRole('button', { name: 'Add a segment' }).click();
    const wheel = 'Spin the wheel';
    await page.getByLabel(`Weight of segment 1 of ${wheel}`).fill('2');
    await page.getByLabel(`Label of segment 3 of ${wheel}`).fill('10 points');
    await page.getByRole('combobox', { name: `Prize of segment 3 of ${wheel}` }).click();
    await page.getByRole('option', { name: 'Points' }).click();
    await page.getByLabel(`Points of segment 3 of ${wheel}`).fill('10');
    const chances = page.getByTestId('segment-chance');
    await page.waitForFunction(() => [...document.querySelectorAll('[data-testid="segment-chance"]')].map((c) => c.textContent).join() === '50.0%,25.0%,25.0%');
    assert.deepEqual(await chances.allTextContents(), ['50.0%', '25.0%', '25.0%']);
    const check = page.getByTestId('probability-check');
    assert.equal(await check.getAttribute('data-ok'), 'true');
    assert.match((await check.textContent())!, /add up to 4/);
    assert.match((await check.textContent())!, /Every segment can be drawn/);
    // 50% of 50 points and 25% of 10 points.
    assert.equal(await page.getByTestId('expected-points').textContent(), 'Expected points per spin: 27.5');

    // Two screens: the wheel, and a page locked until the wheel is spun (a gate).
    await page.getByRole('button', { name: 'Add a screen' }).click();
    await page.getByLabel('Screen name').first().fill('Play');
    await page.getByTestId('screen-screen').getByRole('checkbox', { name: `${wheel} (wheel)` }).check();
    await page.getByRole('button', { name: 'Add a screen' }).click();
    await page.getByLabel('Screen id').nth(1).fill('vip');
    await page.getByLabel('Screen name').nth(1).fill('VIP corner');
    await page.getByLabel(/^Gate/).nth(1).fill('activity_completed:wheel');
    await assertAccessible(page, 'engagement editor');
    await shot(page, '31-engagement-editor');

    await page.getByRole('button', { name: 'Create the engagement' }).click();
    await page.getByRole('heading', { level: 1, name: 'Engagement: Summer wheel' }).waitFor();
    const stored = await svc.request('GET', '/api/v1/admin/engagements?limit=5', { key: tenant.apiKey });
    const saved = stored.body.engagements[0];
    assert.deepEqual(saved.activities[0].segments.map((s: { weight: number }) => s.weight), [2, 1, 1]);
    assert.deepEqual(saved.screens[1].gate, { conditions: ['activity_completed:wheel'] });
  });

  await t.test('publish through a confirmation; the preview runs the runtime and the wheel spins', async () => {
    assert.equal(await page.getByTestId('engagement-status').textContent(), 'Draft');
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Publish the engagement' });
    await dialog.waitFor();
    await assertAccessible(page, 'publish dialog');
    await dialog.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.locator('[data-testid="engagement-status"]', { hasText: 'Published' }).waitFor();

    // The preview plays the saved version with a test participant (test/browser/console-preview.test.ts shows it leaves no trace).
    await page.getByRole('button', { name: 'Start the preview' }).click();
    const preview = page.frameLocator('[data-testid="live-preview"]');
    await preview.locator('.lr-tab[data-screen-id="vip"][data-locked="true"]').waitFor({ timeout: 30_000 });
    await preview.locator('[data-action="spin"]:not([disabled])').click();
    const prize = preview.locator('[data-role="prize"]');
    await prize.waitFor({ timeout: 30_000 });
    assert.match((await prize.textContent())!, /You won: (50 points|10 points)!|No prize this time: No prize\./);
    await preview.locator('.lr-tab[data-screen-id="vip"][data-locked="false"]').waitFor({ timeout: 30_000 });
    await assertAccessible(page, 'engagement with live preview');
    await shot(page, '32-live-preview');

    await open(page, 'Engagements', 'Engagements');
    await page.getByRole('combobox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'Published' }).click();
    await page.getByRole('link', { name: 'Summer wheel' }).waitFor();
    await assertAccessible(page, 'engagement list');
    await shot(page, '30-engagements');
  });

  await t.test('a quiz: questions, answers with the correct one, a pass mark', async () => {
    await page.getByRole('link', { name: 'New engagement' }).click();
    await page.getByRole('heading', { level: 1, name: 'New engagement' }).waitFor();
    await page.getByLabel(/^Name/).fill('Product quiz');
    await page.getByLabel(/^Site/).fill('product-quiz');
    await page.getByRole('button', { name: 'Add a quiz' }).click();
    await page.getByLabel('Pass mark').fill('50');
    await page.getByLabel('Text of question 1').fill('Which roast is the darkest?');
    await page.getByRole('textbox', { name: 'Answer 1 of question 1', exact: true }).fill('Cinnamon');
    await page.getByRole('textbox', { name: 'Answer 2 of question 1', exact: true }).fill('French');
    await page.getByRole('button', { name: 'Add an answer to question 1' }).click();
    await page.getByRole('textbox', { name: 'Answer 3 of question 1', exact: true }).fill('City');
    await page.getByRole('radio', { name: 'Answer 2 is the correct answer of question 1' }).check();
    await page.getByRole('button', { name: 'Add a question' }).click();
    await page.getByLabel('Text of question 2').fill('Where do coffee beans grow?');
    await page.getByRole('textbox', { name: 'Answer 1 of question 2', exact: true }).fill('On trees');
    await page.getByRole('textbox', { name: 'Answer 2 of question 2', exact: true }).fill('Underground');
    await assertAccessible(page, 'quiz editor');
    await shot(page, '33-quiz-editor');
    await page.getByRole('button', { name: 'Create the engagement' }).click();
    await page.getByRole('heading', { level: 1, name: 'Engagement: Product quiz' }).waitFor();
    const list = await svc.request('GET', '/api/v1/admin/engagements?limit=5', { key: tenant.apiKey });
    const quiz = list.body.engagements.find((e: { name: string }) => e.name === 'Product quiz').activities[0];
    assert.equal(quiz.type, 'quiz');
    assert.equal(quiz.pass_percent, 50);
    assert.deepEqual(quiz.questions.map((q: { correct_option: number }) => q.correct_option), [1, 0]);
    assert.deepEqual(quiz.questions[0].options, ['Cinnamon', 'French', 'City']);

    // The server's validation, in its own words: an empty answer.
    await page.getByRole('textbox', { name: 'Answer 2 of question 2', exact: true }).fill('');
    await page.getByRole('button', { name: 'Save the draft' }).click();
    const refused = page.getByTestId('api-error');
    await refused.waitFor();
    assert.match((await refused.textContent())!, /options/);
  });

  await t.test('a reward: 5 codes from a CSV file (one bad row reported), the low-stock warning', async () => {
    await open(page, 'Rewards catalogue', 'Rewards catalogue');
    await page.getByLabel(/^Name/).fill('Coffee coupon');
    await page.getByLabel(/^Id/).fill('coffee');
    await page.getByRole('button', { name: 'Add the reward' }).click();
    await page.getByRole('heading', { level: 1, name: 'Reward: Coffee coupon' }).waitFor();
    const csv = 'code\nCOF-0001\nCOF-0002\n"BAD CODE"\nCOF-0003\n\nCOF-0004\nCOF-0005\n';
    await page.locator('input[type="file"]').setInputFiles({ name: 'codes.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Import the codes' }).click();
    const result = page.getByTestId('import-result');
    await result.waitFor();
    assert.match((await result.textContent())!, /5 added, 0 already there, 1 refused/);
    const errors = await page.getByTestId('import-errors').locator('li').allTextContents();
    assert.equal(errors.length, 1);
    assert.match(errors[0], /^Line 4 \(BAD CODE\): body\.codes\.2 /);
    await page.locator('[data-testid="codes-available"]', { hasText: '5' }).waitFor();
    await page.getByTestId('low-stock-warning').waitFor();
    const stored = await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM reward_codes WHERE tenant_id = $1 AND reward_id = $2', [tenant.tenantId, 'coffee']);
    assert.equal(stored[0].n, 5);
    await assertAccessible(page, 'reward page');
    await shot(page, '34-reward-codes');

    await open(page, 'Rewards catalogue', 'Rewards catalogue');
    await page.getByTestId('low-stock').waitFor();
    await assertAccessible(page, 'rewards catalogue');
    await shot(page, '35-rewards');
  });

  await t.test('a support user reads engagements but the API refuses their writes (403)', async () => {
    const support = await consoleUser(svc, tenant, 'support');
    const supportPage = await newPage();
    await signIn(supportPage, support.email, support.password);
    await open(supportPage, 'Engagements', 'Engagements');
    await supportPage.getByRole('link', { name: 'Summer wheel' }).waitFor();
    assert.equal(await supportPage.getByRole('link', { name: 'New engagement' }).count(), 0, 'no create button for support');
    const request = supportPage.context().request;
    const session = await (await request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const created = await request.post(`${svc.baseUrl}/api/v1/admin/engagements`, { headers: { 'x-csrf-token': session.csrf_token }, data: { name: 'Not allowed', site_slug: 'not-allowed' } });
    assert.equal(created.status(), 403);
    assert.equal((await created.json()).code, 'AUTH_FORBIDDEN');
    const uploaded = await request.post(`${svc.baseUrl}/api/v1/admin/rewards/coffee/codes`, { headers: { 'x-csrf-token': session.csrf_token }, data: { codes: ['SNEAKY-1'] } });
    assert.equal(uploaded.status(), 403);
  });

  assertClean();
});
