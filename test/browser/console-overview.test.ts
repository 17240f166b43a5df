import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { clock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/logger.js';
import pointsModule from '../../src/modules/points/index.js';
import { assertAccessible, consoleUser, launchConsoleBrowser, PHONE, screenshot } from './console-kit.js';

const DAY_MS = 86_400_000;

/** A full-page picture from the top: the sticky header stays where it belongs. */
async function picture(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, name);
}

/**
 * The overview's money and the campaign calendar in a real browser. A tenant
 * in Berlin keeping its books in euros has issued 1,600 points in the last
 * 20 days (1,000 of them expired unspent, 400 expire in about three weeks, 200
 * in about half a year). A marketer sets a point value of 0.01 EUR (a bad one
 * refused on its field) and reads the liability in money, the expiry forecast
 * and breakage on the overview, then the calendar with a rule and a
 * multiplier of one event overlapping, in month and week views, and follows
 * the rule through. An analyst reads both; support sees no point value and
 * the API refuses its change.
 */
test('the overview in money and the campaign calendar in Chromium: a marketer sets a point value, reads liability, forecast, breakage and overlapping campaigns; an analyst reads; support may not set the value', { timeout: 240_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const call = async (method: string, p: string, body?: unknown) => {
    const response = await svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${p}: ${response.status} ${response.text}`);
    return response.body;
  };
  const grant = (participantId: string, amount: number) => call('POST', '/api/v1/gamify/points/grant', { participant_id: participantId, amount, reason: 'seed', idempotency_key: randomUUID() });

  await call('PATCH', '/api/v1/tenant', { timezone: 'Europe/Berlin', currency: 'EUR' });
  // Points placed in the past with the service clock: granted 20 days ago, 1,000 of them expired 10 days ago.
  const now = Date.now();
  t.after(() => clock.reset());
  clock.freeze(new Date(now - 20 * DAY_MS));
  await call('PATCH', '/api/v1/admin/points/settings', { default_ttl_days: 10 });
  await grant('p-alice', 1000);
  await call('PATCH', '/api/v1/admin/points/settings', { default_ttl_days: 41 });
  await grant('p-bob', 400);
  await call('PATCH', '/api/v1/admin/points/settings', { default_ttl_days: 200 });
  await grant('p-carol', 200);
  await call('PATCH', '/api/v1/admin/points/settings', { default_ttl_days: 365 });
  clock.freeze(new Date(now - 5 * DAY_MS));
  await pointsModule.tasks!['points:expire'](null, { db: svc.service.db, config: svc.config, log: createLogger('silent') });
  clock.reset();

  // Two campaigns of one event that run at the same time, one that does not touch it, and a contest.
  const iso = (offsetDays: number) => new Date(now + offsetDays * DAY_MS).toISOString();
  const rule = await call('POST', '/api/v1/admin/rules', { name: 'Double points week', trigger: 'event', event_name: 'order_placed', effects: [{ type: 'award_points', points: 20 }], status: 'active', starts_at: iso(-2), ends_at: iso(5) });
  await call('POST', '/api/v1/admin/points/multipliers', { multiplier: 3, match: { event_type: 'order_placed' }, starts_at: iso(-1), ends_at: iso(2) });
  await call('POST', '/api/v1/admin/rules', { name: 'Welcome bonus', trigger: 'event', event_name: 'signed_up', effects: [{ type: 'award_points', points: 50 }], status: 'active' });

  const marketer = await consoleUser(svc, tenant, 'marketer');
  const analyst = await consoleUser(svc, tenant, 'analyst');
  const support = await consoleUser(svc, tenant, 'support');
  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);

  const readOverview = async (page: Page) => {
    await page.getByTestId('liability-value').filter({ hasText: '€6.00' }).waitFor();
    assert.equal(await page.getByTestId('stat-outstanding').innerText(), '600');
    assert.equal(await page.getByTestId('stat-points-issued').innerText(), '1,600');
    assert.equal(await page.getByTestId('breakage-rate').innerText(), '62.5%');
    assert.equal(await page.getByTestId('breakage-value').innerText(), '€10.00');
    assert.equal(await page.getByTestId('point-value').innerText(), '1 point = €0.01');
    await page.getByText('1,000 points expired out of 1,600 issued in this period.').waitFor();
    await page.getByTestId('zone-note').first().waitFor();
    assert.match(await page.getByTestId('zone-note').first().innerText(), /Times in Europe\/Berlin \(UTC\+0[12]:00\)/);
    // The forecast's figures, in points and money, in its table.
    const forecast = page.getByRole('figure', { name: 'Points expiring per month' });
    await forecast.getByText('Show the figures as a table').click();
    const rows = forecast.getByRole('row');
    assert.equal(await rows.count(), 13, 'a header and twelve months');
    const cells = (await rows.allInnerTexts()).slice(1).map((row) => row.split('\t').map((cell) => cell.trim()));
    assert.deepEqual(cells.filter(([, points]) => points !== '0').map(([, points, value]) => [points, value]), [['400', '€4.00'], ['200', '€2.00']]);
    await forecast.getByText('Show the figures as a table').click();
    // Nothing was redeemed: that series is named, not drawn as a flat line over the others.
    await page.getByRole('figure', { name: 'Points per day' }).getByText('Not drawn, nothing in this period: Points redeemed').waitFor();
  };

  const readCalendar = async (page: Page, name: string) => {
    await open(page, 'Campaign calendar', 'Campaign calendar');
    const items = page.getByTestId('calendar-item');
    const row = (title: string) => items.filter({ has: page.getByRole('link', { name: title, exact: true }) });
    await row('Double points week').waitFor();
    await page.getByTestId('overlap-count').filter({ hasText: '1 overlap' }).waitFor();
    assert.match(await row('Double points week').getByTestId('overlap-marker').innerText(), /Overlaps with ×3 on order_placed/);
    assert.match(await row('×3 on order_placed').getByTestId('overlap-marker').innerText(), /Overlaps with Double points week/);
    assert.equal(await row('Welcome bonus').getByTestId('overlap-marker').count(), 0, 'another event: no overlap');
    assert.match(await row('Welcome bonus').innerText(), /no start → open-ended/);
    await assertAccessible(page, `${name}: calendar, month`);
    await picture(page, name === 'marketer' ? '92-calendar-month' : '92b-analyst-calendar-month');
  };

  await t.test('a marketer sets a point value: a bad one is refused on its field, 0.01 EUR is kept', async () => {
    const page = await newPage();
    await signIn(page, marketer.email, marketer.password);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    // No point value yet: the overview says so and leads to where it is set.
    await page.getByText('No point value is set, so figures are in points only.').waitFor();
    await page.getByRole('link', { name: 'Set a point value' }).click();
    await page.getByRole('heading', { level: 1, name: 'Points expiry' }).waitFor();
    const value = page.getByLabel('Money per point (EUR)');
    await value.fill('-3');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Must be more than 0.').waitFor();
    assert.equal(await value.getAttribute('aria-invalid'), 'true');
    assert.equal(await value.inputValue(), '-3', 'never clamped');
    await value.fill('0.0000001');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('must have at most 6 decimal places').waitFor();
    assert.equal(await value.evaluate((element) => element === document.activeElement), true, 'the refused field has the focus');
    await value.fill('0.01');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await page.getByTestId('point-value-now').filter({ hasText: '1 point = €0.01; 1,000 points = €10.00' }).waitFor();
    assert.equal((await call('GET', '/api/v1/admin/points/settings')).point_value, 0.01);
    await assertAccessible(page, 'points settings with the point value');
    await picture(page, '90-point-value');

    await open(page, 'Overview', 'Overview');
    await readOverview(page);
    await assertAccessible(page, 'overview in money');
    await picture(page, '02-overview');
    await picture(page, '91-overview-money');

    await readCalendar(page, 'marketer');
    // Filtering out multipliers leaves the rule without a partner to overlap with.
    // A chip is a checkbox drawn as its label: the label takes the click.
    const multipliers = page.getByRole('checkbox', { name: 'Multipliers' });
    await page.locator('label', { hasText: 'Multipliers' }).click();
    assert.equal(await multipliers.isChecked(), false);
    await page.getByRole('link', { name: '×3 on order_placed' }).waitFor({ state: 'detached' });
    assert.equal(await page.getByTestId('overlap-count').count(), 0);
    await page.locator('label', { hasText: 'Multipliers' }).click();
    assert.equal(await multipliers.isChecked(), true);
    // The week view holds both, and each item leads to its own screen.
    await page.locator('label', { hasText: /^Week$/ }).click();
    await page.getByTestId('calendar-period').filter({ hasText: / to / }).waitFor();
    await page.getByTestId('overlap-count').filter({ hasText: '1 overlap' }).waitFor();
    await assertAccessible(page, 'calendar, week');
    await picture(page, '93-calendar-week');
    await page.getByRole('link', { name: 'Double points week' }).click();
    await page.waitForURL(new RegExp(`/console/programs/rules/${rule.id}$`));
  });

  await t.test('an analyst reads the overview in money and the calendar', async () => {
    const page = await newPage();
    await signIn(page, analyst.email, analyst.password);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await readOverview(page);
    await assertAccessible(page, 'analyst: overview');
    await readCalendar(page, 'analyst');
    const phone = await newPage(PHONE);
    await signIn(phone, analyst.email, analyst.password);
    await phone.getByTestId('liability-value').filter({ hasText: '€6.00' }).waitFor();
    await assertAccessible(phone, 'overview on a phone');
    await picture(phone, '13-phone-overview');
  });

  await t.test('support sees no point-value setting and the API refuses its change', async () => {
    const page = await newPage();
    await signIn(page, support.email, support.password);
    await open(page, 'Points expiry', 'Points expiry');
    await page.getByLabel('Reminder days, comma-separated').waitFor();
    assert.equal(await page.getByLabel(/Money per point/).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Save settings' }).count(), 0);
    await assertAccessible(page, 'support: points settings');
    await picture(page, '94-support-points-settings');
    const session = await (await page.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const refused = await page.context().request.patch(`${svc.baseUrl}/api/v1/admin/points/settings`, { headers: { 'x-csrf-token': session.csrf_token }, data: { point_value: 1 } });
    assert.equal(refused.status(), 403);
    assert.equal((await call('GET', '/api/v1/admin/points/settings')).point_value, 0.01, 'unchanged');
  });

  assertClean();
});
