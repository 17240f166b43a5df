import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestService, waitFor, type TestService, type TestTenant } from '../helper.js';
import { sendSync } from '../../src/modules/ingestion/testing.js';
import { assertAccessible, consoleUser, launchConsoleBrowser, PHONE, screenshot } from './console-kit.js';

/** A Mantine select: open it by its label inside `scope`, pick the option by its name. */
async function choose(scope: Page | ReturnType<Page['locator']>, page: Page, label: string | RegExp, option: string): Promise<void> {
  const input = scope.getByLabel(label, { exact: typeof label === 'string' }).first();
  const choice = page.getByRole('option', { name: option, exact: true });
  await input.click();
  // A field above that shows its error as focus leaves it moves the select while it opens: open it again.
  if (!(await choice.isVisible())) await input.click();
  await choice.click();
}

/**
 * Segments in a real browser (issue 36): a marketer builds a segment from the
 * fact catalogue's pickers, sees the live size change as a condition is
 * added (with a masked sample and the time it took), saves it kept up to
 * date, refreshes it and reads its members. An analyst reads the list and the
 * segment but gets no builder, and the API refuses the analyst's writes
 * through the page's own session.
 */
test('Segments in Chromium: a marketer builds one with the live size, saves and refreshes it; an analyst reads only', { timeout: 180_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const call = async (method: string, p: string, body?: unknown) => {
    const response = await svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${p}: ${response.status} ${response.text}`);
    return response.body;
  };

  await call('POST', '/api/v1/admin/points/tiers', { code: 'silver', name: 'Silver', min_lifetime_points: 100 });
  await call('POST', '/api/v1/admin/badges', { code: 'vip', name: 'VIP', description: 'A valued customer' });
  // Six participants: p-1…p-4 buy (p-1 and p-2 three times, p-3 and p-4 once), p-5 and p-6 only log in.
  // p-1 and p-3 hold 150 lifetime points.
  const purchases: Record<string, number> = { 'p-1': 3, 'p-2': 3, 'p-3': 1, 'p-4': 1 };
  for (const [participant, count] of Object.entries(purchases)) {
    for (let i = 0; i < count; i++) {
      const sent = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: participant, properties: { amount: 20 } });
      assert.equal(sent.status, 200, sent.text);
    }
  }
  for (const participant of ['p-5', 'p-6']) assert.equal((await sendSync(svc, tenant, { event_name: 'login', participant_id: participant })).status, 200);
  for (const participant of ['p-1', 'p-3']) await call('POST', '/api/v1/gamify/points/grant', { participant_id: participant, amount: 150, reason: 'seed', idempotency_key: `seed-${participant}` });

  const marketer = await consoleUser(svc, tenant, 'marketer');
  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const page = await newPage();
  await signIn(page, marketer.email, marketer.password);

  let segmentId = '';
  await t.test('a marketer builds a segment: the live size follows each condition; saved kept up to date, refreshed, its members listed', async () => {
    await open(page, 'Segments', 'Segments');
    await assertAccessible(page, 'segment list, empty');
    await page.getByRole('link', { name: 'New segment' }).click();
    await page.getByRole('heading', { level: 1, name: 'New segment' }).waitFor();
    await page.getByLabel(/^Name/).fill('Frequent buyers');
    await page.getByLabel('Description').fill('Two purchases or more in the last 30 days');
    // No condition yet: every participant.
    const size = page.getByTestId('segment-size');
    await size.filter({ hasText: '6 participants' }).waitFor();

    await page.getByRole('button', { name: 'Add a condition' }).click();
    const first = page.getByRole('group', { name: 'Condition 1' });
    await choose(first, page, /^Fact/, 'Number of an event');
    await first.getByRole('combobox', { name: /^Event name/ }).fill('purchase');
    await page.keyboard.press('Escape');
    await first.getByLabel(/^Window \(days\)/).fill('30');
    await choose(first, page, 'Operator', 'is at least');
    await first.getByLabel(/^Value/).fill('2');
    await size.filter({ hasText: '2 participants' }).waitFor();
    assert.match((await page.getByTestId('segment-took').textContent())!, /^Counted in [\d.,]+ ms$/);
    assert.equal(await page.getByTestId('segment-sample').getByRole('row').count(), 3, 'a header and the two members');

    await page.getByRole('button', { name: 'Add a condition' }).click();
    const second = page.getByRole('group', { name: 'Condition 2' });
    await choose(second, page, /^Fact/, 'Lifetime points');
    await choose(second, page, 'Operator', 'is at least');
    await second.getByLabel(/^Value/).fill('100');
    await size.filter({ hasText: '1 participant' }).waitFor();
    await page.getByTestId('segment-sample').getByRole('link', { name: 'p-1' }).waitFor();

    // "any" instead of "all": p-1, p-2 (buyers) and p-3 (points).
    await page.getByRole('radio', { name: 'at least one condition' }).check();
    await size.filter({ hasText: '3 participants' }).waitFor();
    await page.getByRole('radio', { name: 'all conditions' }).check();
    await size.filter({ hasText: '1 participant' }).waitFor();

    await page.getByRole('switch', { name: 'Keep membership up to date' }).check();
    await assertAccessible(page, 'segment builder with the live size');
    await screenshot(page, '110-segment-builder');

    await page.getByRole('button', { name: 'Save segment' }).click();
    await page.getByRole('heading', { level: 1, name: 'Segment: Frequent buyers' }).waitFor();
    segmentId = new URL(page.url()).pathname.split('/').pop()!;
    const saved = await call('GET', `/api/v1/admin/segments/${segmentId}`);
    assert.equal(saved.materialized, true);
    assert.deepEqual(saved.filter, {
      all: [
        { fact: 'event_count', event_name: 'purchase', within_days: 30, operator: 'gte', value: 2 },
        { fact: 'lifetime_points', operator: 'gte', value: 100 },
      ],
    });

    await page.getByRole('button', { name: 'Refresh now' }).click();
    await page.getByText(/^Refreshed: \d+ entered, 0 left, 1 member now\.$/).waitFor();
    await page.getByTestId('segment-refreshed').filter({ hasText: /^1 member at the last refresh, \d{4}-\d\d-\d\d \d\d:\d\d$/ }).waitFor();
    await page.getByTestId('segment-members').getByRole('link', { name: 'p-1' }).waitFor();
    await page.getByTestId('zone-note').first().waitFor();
    await assertAccessible(page, 'segment page with members');
    await screenshot(page, '111-segment-page');

    await open(page, 'Segments', 'Segments');
    const row = page.getByTestId('segments').getByRole('row', { name: /Frequent buyers/ });
    await row.getByText('Kept up to date').waitFor();
    await row.getByText('Not used yet').waitFor();
    await assertAccessible(page, 'segment list');
    await screenshot(page, '112-segment-list');
  });

  await t.test('a refusal lands on its field: a personal fact, which a marketer may not filter on, is refused on "Fact"', async () => {
    await page.getByRole('link', { name: 'New segment' }).click();
    await page.getByLabel(/^Name/).fill('By email');
    await page.getByRole('button', { name: 'Add a condition' }).click();
    const row = page.getByRole('group', { name: 'Condition 1' });
    await choose(row, page, /^Fact/, 'Profile: email · personal');
    await choose(row, page, 'Operator', 'equals');
    await row.getByLabel(/^Value/).fill('someone@example.com');
    await page.getByRole('button', { name: 'Save segment' }).click();
    await row.getByText('profile.email is personal data: filtering on it needs read:pii').waitFor();
    assert.equal(await page.getByRole('heading', { level: 1, name: 'New segment' }).count(), 1, 'nothing saved');
    // The refused field has the focus, and its list opened with it.
    await page.keyboard.press('Escape');
    await assertAccessible(page, 'segment builder with a refusal on its field');
  });

  await t.test('a segment a live rule uses: the marketer\'s change waits as a draft, is submitted for review, and decides once approved', async () => {
    await call('POST', '/api/v1/admin/rules', { name: 'Buyers bonus', event_name: 'purchase', status: 'active', conditions: { all: [{ fact: 'participant.segment', operator: 'in', value: [segmentId] }] }, effects: [{ type: 'award_points', points: 5 }] });
    await page.goto(`${svc.baseUrl}/console/segments/${segmentId}`);
    const second = page.getByRole('group', { name: 'Condition 2' });
    // 150: p-1 (150 lifetime points) stays the one member, as the later steps expect.
    await second.getByLabel(/^Value/).fill('150');
    await page.getByRole('button', { name: 'Save segment' }).click();
    const pending = page.getByTestId('segment-draft-pending');
    await pending.getByText('your change waits for review', { exact: false }).waitFor();
    const live = await call('GET', `/api/v1/admin/segments/${segmentId}`);
    assert.equal(live.status, 'draft_pending');
    assert.equal(live.filter.all[1].value, 100, 'the live filter still decides');
    assert.equal(live.draft.filter.all[1].value, 150);
    assert.equal(await second.getByLabel(/^Value/).inputValue(), '150', 'the author goes on editing the draft');
    await pending.getByRole('button', { name: 'Submit for review' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Submit for review' }).click();
    await pending.getByTestId('review-pending').waitFor();
    await assertAccessible(page, 'segment page with a change waiting for review');
    await screenshot(page, '119-segment-draft-pending');
    const { reviews } = await call('GET', `/api/v1/admin/reviews?kind=segment&item_id=${segmentId}`);
    assert.equal(reviews.length, 1);
    assert.equal(reviews[0].status, 'pending');
    await call('POST', `/api/v1/admin/reviews/${reviews[0].id}/approve`, {});
    const approved = await call('GET', `/api/v1/admin/segments/${segmentId}`);
    assert.deepEqual([approved.status, approved.filter.all[1].value, approved.draft], ['live', 150, null]);
  });

  await t.test('a segment with both lists, saved through the API: the builder shows its all rows, says the any list is kept, and saving keeps it', async () => {
    const both = await call('POST', '/api/v1/admin/segments', {
      name: 'Buyers in silver or with VIP',
      filter: { all: [{ fact: 'event_count', event_name: 'purchase', within_days: 30, operator: 'gte', value: 1 }], any: [{ fact: 'tier', operator: 'equals', value: 'silver' }, { fact: 'badges', operator: 'contains', value: 'vip' }] },
    });
    await page.goto(`${svc.baseUrl}/console/segments/${both.id}`);
    await page.getByText('This segment also needs at least one of 2 more conditions, set through the API.', { exact: false }).waitFor();
    await page.getByLabel(/^Name/).fill('Buyers in silver or VIP');
    await page.getByRole('button', { name: 'Save segment' }).click();
    await waitFor('the rename saved', async () => ((await call('GET', `/api/v1/admin/segments/${both.id}`)).name === 'Buyers in silver or VIP' ? true : null));
    assert.deepEqual((await call('GET', `/api/v1/admin/segments/${both.id}`)).filter, both.filter, 'both lists as they were');
  });

  await t.test('in German the segment page reads Segment, Bedingungen, Zeitraum (Tage) and stays accessible', async () => {
    await page.goto(`${svc.baseUrl}/console/segments/${segmentId}`);
    await page.getByRole('heading', { level: 1, name: 'Segment: Frequent buyers' }).waitFor();
    await page.getByLabel('Language').selectOption('de');
    await page.getByRole('heading', { level: 2, name: 'Bedingungen' }).waitFor();
    await page.getByRole('group', { name: 'Bedingung 1' }).getByLabel(/^Zeitraum \(Tage\)/).waitFor();
    await page.getByTestId('segment-size').filter({ hasText: '1 Teilnehmer' }).waitFor();
    await assertAccessible(page, 'segment page (de)');
    await screenshot(page, '118-de-segment-page');
    await page.getByLabel('Sprache').selectOption('en');
  });

  await t.test('an analyst reads segments without a builder; the API refuses the writes the page hides (403)', async () => {
    const analyst = await consoleUser(svc, tenant, 'analyst');
    const analystPage = await newPage(PHONE);
    await signIn(analystPage, analyst.email, analyst.password);
    await analystPage.goto(`${svc.baseUrl}/console/segments`);
    await analystPage.getByRole('heading', { level: 1, name: 'Segments' }).waitFor();
    await analystPage.getByRole('link', { name: 'Frequent buyers' }).click();
    await analystPage.getByRole('heading', { level: 1, name: 'Segment: Frequent buyers' }).waitFor();
    await analystPage.getByTestId('segment-size').filter({ hasText: '1 participant' }).waitFor();
    assert.equal(await analystPage.getByRole('button', { name: 'Save segment' }).count(), 0, 'no save for an analyst');
    assert.equal(await analystPage.getByRole('button', { name: 'Add a condition' }).count(), 0, 'no new conditions for an analyst');
    assert.equal(await analystPage.getByRole('button', { name: 'Refresh now' }).count(), 0, 'no refresh for an analyst');
    await assertAccessible(analystPage, 'segment page, read-only, on a phone');
    await screenshot(analystPage, '113-segment-analyst-phone');

    const request = analystPage.context().request;
    const session = await (await request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const headers = { 'x-csrf-token': session.csrf_token };
    const created = await request.post(`${svc.baseUrl}/api/v1/admin/segments`, { headers, data: { name: 'Not allowed', filter: { all: [] } } });
    assert.equal(created.status(), 403, await created.text());
    assert.equal((await created.json()).code, 'AUTH_FORBIDDEN');
    const refreshed = await request.post(`${svc.baseUrl}/api/v1/admin/segments/${segmentId}/refresh`, { headers });
    assert.equal(refreshed.status(), 403);
    const deleted = await request.delete(`${svc.baseUrl}/api/v1/admin/segments/${segmentId}`, { headers });
    assert.equal(deleted.status(), 403);
  });

  assertClean();
});
