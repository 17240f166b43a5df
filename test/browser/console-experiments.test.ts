import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { sendSync } from '../../src/modules/ingestion/testing.js';
import { assertAccessible, consoleUser, launchConsoleBrowser, screenshot } from './console-kit.js';

/** A Mantine select: open it by its label inside `scope`, pick the option by its name. */
async function choose(scope: Page | ReturnType<Page['locator']>, page: Page, label: string | RegExp, option: string | RegExp): Promise<void> {
  const input = scope.getByLabel(label, { exact: typeof label === 'string' }).first();
  const choice = page.getByRole('option', { name: option, exact: typeof option === 'string' });
  await input.click();
  // A field above that shows its error as focus leaves it moves the select while it opens: open it again.
  if (!(await choice.first().isVisible())) await input.click();
  await choice.first().click();
}

/** Runs `work` over `items`, `width` at a time (the service is shared with the browser: a few calls at once, not hundreds). */
async function inTurn<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: width }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
  }));
}

/**
 * Experiments in a real browser (issue 36): a marketer sets one up on two
 * draft earn rules (allocation and holdout summed before anything is sent),
 * starts it; purchases arrive (variant B's participants buy once more); an
 * analyst reads the results: per variant exposed, goal per participant,
 * cost, the difference with its 95% interval drawn and said in words, and
 * the service's sentence; the API refuses the analyst's writes. The marketer
 * then rolls variant B out, which goes to review.
 */
test('Experiments in Chromium: a marketer sets one up and starts it; an analyst reads the interval; the roll-out goes to review', { timeout: 180_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const call = async (method: string, p: string, body?: unknown) => {
    const response = await svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${p}: ${response.status} ${response.text}`);
    return response.body;
  };
  // A purchase seen before, so the goal picker offers it.
  assert.equal((await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'seed', properties: { amount: 10 } })).status, 200);
  await call('POST', '/api/v1/admin/rules', { name: '10 points per purchase', status: 'draft', event_name: 'purchase', effects: [{ type: 'award_points', points: 10 }] });
  await call('POST', '/api/v1/admin/rules', { name: '20 points per purchase', status: 'draft', event_name: 'purchase', effects: [{ type: 'award_points', points: 20 }] });

  // A segment of everyone (no condition): the experiment is for its members, so the segment's page names the experiment as its user.
  const everyone = await call('POST', '/api/v1/admin/segments', { name: 'All participants', filter: { all: [] } });
  const marketer = await consoleUser(svc, tenant, 'marketer', { canPublish: true });
  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const page = await newPage();
  await signIn(page, marketer.email, marketer.password);

  let experimentId = '';
  await t.test('a marketer sets an experiment up: the shares are summed as they are typed; created, then started', async () => {
    await open(page, 'Experiments', 'Experiments');
    await page.getByRole('link', { name: 'New experiment' }).click();
    await page.getByRole('heading', { level: 1, name: 'New experiment' }).waitFor();
    await page.getByLabel(/^Name/).first().fill('Double points');
    const control = page.getByRole('group', { name: 'Control (variant 1)' });
    const variant = page.getByRole('group', { name: 'Variant 2' });
    await choose(control, page, /^Subject/, /^10 points per purchase/);
    await variant.getByLabel(/^Key/).fill('double');
    await variant.getByLabel(/^Name/).fill('Double points');
    await choose(variant, page, /^Subject/, /^20 points per purchase/);

    await choose(page, page, 'Measured as', 'Number of an event');
    await page.getByRole('combobox', { name: /^Event/ }).fill('purchase');
    await page.keyboard.press('Escape');
    await choose(page, page, 'Segment', 'All participants');
    const total = page.getByTestId('allocation-total');
    await total.filter({ hasText: 'Variants and holdout make 100%.' }).waitFor();
    await page.getByLabel(/^Holdout/).fill('10');
    await total.filter({ hasText: 'Variants and holdout make 110%' }).waitFor();
    // Refused before anything is sent, said on the holdout.
    await page.getByRole('button', { name: 'Create experiment' }).click();
    await page.getByText('Variants and holdout make 110%; they must make 100%.').nth(1).waitFor();
    await page.getByLabel(/^Holdout/).fill('0');
    await total.filter({ hasText: 'Variants and holdout make 100%.' }).waitFor();

    await assertAccessible(page, 'experiment setup');
    await screenshot(page, '115-experiment-setup');

    await page.getByRole('button', { name: 'Create experiment' }).click();
    await page.getByRole('heading', { level: 1, name: 'Experiment: Double points' }).waitFor();
    experimentId = new URL(page.url()).pathname.split('/').pop()!;
    const created = await call('GET', `/api/v1/admin/experiments/${experimentId}`);
    assert.equal(created.status, 'draft');
    assert.deepEqual(created.goal, { type: 'event_count', event_name: 'purchase' });
    assert.equal(created.segment_id, everyone.id);
    assert.deepEqual(created.variants.map((v: { key: string; allocation_percent: number }) => [v.key, v.allocation_percent]), [['control', 50], ['double', 50]]);

    // A draft changes in everything but what it tests.
    await page.getByLabel('Description').fill('Do twice the points bring more purchases?');
    await page.getByRole('button', { name: 'Save experiment' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    assert.equal((await call('GET', `/api/v1/admin/experiments/${experimentId}`)).description, 'Do twice the points bring more purchases?');

    await page.goto(`${svc.baseUrl}/console/segments/${everyone.id}`);
    await page.getByRole('link', { name: 'Double points' }).waitFor();
    await page.getByText('Experiment:', { exact: false }).first().waitFor();
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Experiment: Double points' }).waitFor();

    await page.getByRole('button', { name: 'Start experiment' }).click();
    await page.getByTestId('experiment-status').filter({ hasText: 'Running' }).waitFor();
    await page.getByText(/^Started \d{4}-\d\d-\d\d \d\d:\d\d$/).waitFor();
    await page.getByText('Rolling out sends the variant to the review to publish', { exact: false }).waitFor();
    await assertAccessible(page, 'running experiment');
  });

  await t.test('purchases arrive: each participant is assigned at the first, variant B buys once more', async () => {
    // The tenant's ingestion burst is 100 requests a second: a refused one waits its second and is sent again.
    const purchase = async (participant: string) => {
      for (;;) {
        const sent = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: participant, properties: { amount: 10 } });
        if (sent.status !== 429) {
          assert.equal(sent.status, 200, sent.text);
          return sent.body as { points_awarded: number };
        }
        await new Promise((resolve) => setTimeout(resolve, 1_100));
      }
    };
    const participants = Array.from({ length: 90 }, (_, i) => `e-${i + 1}`);
    await inTurn(participants, 4, async (participant) => {
      const first = await purchase(participant);
      const more = (Number(participant.slice(2)) % 3) + (first.points_awarded === 20 ? 1 : 0);
      for (let i = 0; i < more; i++) await purchase(participant);
    });
  });

  await t.test('an analyst reads the results: exposed, goal per participant, cost, the 95% interval drawn with its words, the sentence', async () => {
    const analyst = await consoleUser(svc, tenant, 'analyst');
    const analystPage = await newPage();
    await signIn(analystPage, analyst.email, analyst.password);
    await open(analystPage, 'Experiments', 'Experiments');
    assert.equal(await analystPage.getByRole('link', { name: 'New experiment' }).count(), 0, 'no setup for an analyst');
    await analystPage.getByTestId('experiments').getByText('Running').waitFor();
    await assertAccessible(analystPage, 'experiment list');
    await screenshot(analystPage, '114-experiment-list');
    await analystPage.getByRole('link', { name: 'Results of Double points' }).click();
    await analystPage.getByRole('heading', { level: 1, name: 'Results: Double points' }).waitFor();
    const results = analystPage.getByTestId('results');
    const api = await call('GET', `/api/v1/admin/experiments/${experimentId}/results`);
    const [controlArm, doubleArm] = api.variants;
    assert.equal(controlArm.exposed + doubleArm.exposed, 90);
    assert.ok(doubleArm.difference, `an interval: ${JSON.stringify(doubleArm)}`);
    // The exposed count is the row's first cell (another cell, such as the rewards cost, may hold the same number).
    for (const [key, arm] of [['control', controlArm], ['double', doubleArm]] as const) {
      const exposed = results.getByTestId(`result-${key}`).getByRole('cell').first();
      await exposed.waitFor();
      assert.equal((await exposed.textContent())?.trim(), String(arm.exposed), `${key}: exposed`);
    }
    const chart = results.getByTestId('result-double').getByRole('img');
    const words = await chart.getAttribute('aria-label');
    assert.match(words!, /^Double points: \+[\d.]+ per participant against control, 95% interval [+−]?[\d.]+ to \+[\d.]+$/);
    assert.equal(await results.getByTestId('result-control').getByRole('img').count(), 0, 'the control has no interval of its own');
    await analystPage.getByTestId('results-sentences').getByText(doubleArm.sentence).waitFor();
    await analystPage.getByTestId('zone-note').waitFor();
    await assertAccessible(analystPage, 'experiment results');
    await screenshot(analystPage, '116-experiment-results');

    await analystPage.getByRole('link', { name: '← Double points' }).click();
    await analystPage.getByRole('heading', { level: 1, name: 'Experiment: Double points' }).waitFor();
    assert.equal(await analystPage.getByRole('button', { name: /^(Stop experiment|Roll out|Save experiment)$/ }).count(), 0, 'no actions for an analyst');
    const request = analystPage.context().request;
    const session = await (await request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const headers = { 'x-csrf-token': session.csrf_token };
    for (const [method, url, data] of [
      ['POST', `/api/v1/admin/experiments/${experimentId}/stop`, undefined],
      ['POST', `/api/v1/admin/experiments/${experimentId}/rollout`, { variant: 'double' }],
      ['POST', '/api/v1/admin/experiments', created()],
    ] as const) {
      const refused = await request.fetch(`${svc.baseUrl}${url}`, { method, headers, ...(data ? { data } : {}) });
      assert.equal(refused.status(), 403, `${method} ${url}: ${await refused.text()}`);
    }
  });

  await t.test('the marketer rolls variant B out: the page says it went to review', async () => {
    await call('PATCH', '/api/v1/tenant', { require_four_eyes: true });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Experiment: Double points' }).waitFor();
    await page.getByText('Rolling out sends the variant to the review to publish', { exact: false }).waitFor();
    await choose(page, page, 'Variant to roll out', 'Double points (double)');
    await page.getByRole('button', { name: 'Roll out' }).click();
    const dialog = page.getByRole('dialog', { name: 'Roll out this variant?' });
    await dialog.getByText(/goes to review/).waitFor();
    await dialog.getByRole('button', { name: 'Roll out' }).click();
    await page.getByTestId('rolled-out').filter({ hasText: 'Variant double was rolled out and sent to review' }).waitFor().catch(async (e) => { await page.screenshot({ path: '/tmp/dbg-exp.png', fullPage: true }); throw e; });
    await page.getByTestId('experiment-status').filter({ hasText: 'Ended' }).waitFor();
    await assertAccessible(page, 'experiment rolled out');
    await screenshot(page, '117-experiment-rolled-out');
    const ended = await call('GET', `/api/v1/admin/experiments/${experimentId}`);
    assert.equal(ended.rolled_out_variant, 'double');
  });

  assertClean();
});

/** A valid experiment body (the analyst's is refused for the role, not the body). */
function created() {
  return {
    name: 'Not allowed',
    subject_type: 'rule',
    variants: [
      { key: 'a', name: 'A', subject_id: 'rul_6f1d2c3b4a5e46f7890a1b2c3d4e5f60', allocation_percent: 50 },
      { key: 'b', name: 'B', subject_id: 'rul_7a2e3d4c5b6f47a8901b2c3d4e5f6071', allocation_percent: 50 },
    ],
    goal: { type: 'event_count', event_name: 'purchase' },
  };
}
