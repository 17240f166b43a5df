import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { sendSync } from '../../src/modules/ingestion/testing.js';
import { assertAccessible, consoleUser, launchConsoleBrowser, PHONE, screenshot } from './console-kit.js';

const DAY_MS = 86_400_000;

/** A Mantine select: open it by its label, pick the option by its name. */
async function choose(scope: Page | ReturnType<Page['locator']>, page: Page, label: string | RegExp, option: string): Promise<void> {
  await scope.getByLabel(label, { exact: typeof label === 'string' }).first().click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

/** `datetime-local` text for an instant in the tenant's zone (UTC here). */
function zonedInput(at: Date): string {
  return at.toISOString().slice(0, 16);
}

/**
 * The console's Programs section in a real browser: an owner builds an earn
 * rule with a condition, a cap and a budget, backtests it over stored events
 * (the figures shown are the expected ones), activates it and a new event
 * earns its points; creates a streak and a multiplier, changes the expiry
 * settings, a tier and a badge. An analyst sees the same screens read-only,
 * and the API refuses the analyst's writes.
 */
test('the Programs section in Chromium: a rule built, backtested and activated; streaks, multipliers, expiry, tiers, badges; an analyst reads only', { timeout: 300_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const call = async (method: string, p: string, body?: unknown) => {
    const response = await svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${p}: ${response.status} ${response.text}`);
    return response.body;
  };

  await call('POST', '/api/v1/admin/points/tiers', { code: 'silver', name: 'Silver', min_lifetime_points: 100 });
  await call('POST', '/api/v1/admin/badges', { code: 'vip', name: 'VIP', description: 'A valued customer' });
  // Stored purchases of the last days, processed while no rule existed (nothing was awarded):
  // p-1 buys for 100 and 80 on the same day, p-2 for 30 then 60, p-3 for 70.
  const dayAt = (daysAgo: number, hour: number) => {
    const day = new Date(Date.now() - daysAgo * DAY_MS);
    day.setUTCHours(hour, 0, 0, 0);
    return day;
  };
  const purchases = [
    { participant_id: 'p-1', amount: 100, at: dayAt(5, 10) },
    { participant_id: 'p-1', amount: 80, at: dayAt(5, 11) },
    { participant_id: 'p-2', amount: 30, at: dayAt(4, 10) },
    { participant_id: 'p-2', amount: 60, at: dayAt(3, 10) },
    { participant_id: 'p-3', amount: 70, at: dayAt(2, 10) },
  ];
  for (const purchase of purchases) {
    const sent = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: purchase.participant_id, properties: { amount: purchase.amount }, timestamp: purchase.at.toISOString() });
    assert.equal(sent.status, 200, sent.text);
    assert.equal(sent.body.points_awarded, 0);
  }

  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const page = await newPage();
  await signIn(page, tenant.adminEmail, tenant.adminPassword);

  await t.test('an owner builds a rule with a condition, a cap and a budget; the backtest shows what it would have done; once active, an event earns its points', async () => {
    await open(page, 'Earn rules', 'Earn rules');
    await page.getByRole('link', { name: 'New rule' }).click();
    await page.getByRole('heading', { level: 1, name: 'New rule' }).waitFor();
    await page.getByLabel(/^Name/).fill('Big purchases');
    await page.getByLabel('Description').fill('One point per unit on purchases of 50 or more, once a day.');
    await page.getByRole('combobox', { name: /^Event name/ }).fill('purchase');
    await page.keyboard.press('Escape');

    await page.getByRole('button', { name: 'Add a condition (all)' }).click();
    const condition = page.getByRole('group', { name: 'Condition 1 (all)' });
    await condition.getByRole('combobox', { name: /^Fact/ }).fill('properties.amount');
    await page.keyboard.press('Escape');
    await choose(condition, page, 'Operator', 'is at least');
    await condition.getByLabel(/^Value/).fill('50');

    const effect = page.getByRole('group', { name: 'Effect 1' });
    await choose(effect, page, 'How points are counted', 'Per unit of a property');
    await effect.getByRole('combobox', { name: /^Numeric property/ }).fill('properties.amount');
    await page.keyboard.press('Escape');
    await effect.getByLabel(/^Points per unit/).fill('1');

    await page.getByLabel('Per day: times').fill('1');
    await page.getByLabel(/^Budget/).fill('150');
    await choose(page, page, /^Status/, 'Active');
    assert.equal(await page.getByRole('button', { name: 'Save rule' }).isDisabled(), true, 'activation waits for the backtest');

    // A 7-day backtest, then the 30-day one the figures are checked on.
    await page.getByText('7 days', { exact: true }).click();
    await page.getByRole('button', { name: 'Run the backtest' }).click();
    await page.getByTestId('backtest-result').waitFor();
    await page.getByText('30 days', { exact: true }).click();
    await page.getByRole('button', { name: 'Run the backtest' }).click();
    // p-1's 100 earns 100 (budget left 50), p-1's 80 is capped (once a day), p-2's 30 fails the condition,
    // p-2's 60 is cut to the 50 left (the budget runs out there) and p-3's 70 gets nothing.
    await page.getByTestId('backtest-matched').filter({ hasText: '3 of 5 events matched' }).waitFor();
    assert.equal(await page.getByTestId('backtest-participants').textContent(), '3 participants would have earned points');
    assert.equal(await page.getByTestId('backtest-points').textContent(), '150 points would have been awarded');
    assert.equal(await page.getByTestId('backtest-capped').textContent(), '3 events capped or cut by a cap or the budget');
    const exhausted = await page.getByTestId('backtest-budget').textContent();
    assert.match(exhausted!, /^The budget would have run out on /);
    const shownAt = purchases[3].at.toISOString().slice(0, 16).replace('T', ' ');
    assert.equal(exhausted, `The budget would have run out on ${shownAt}`, 'at the purchase that spent the last point, in the tenant zone');
    await assertAccessible(page, 'rule editor with a backtest');
    await screenshot(page, '20-rule-editor-backtest');

    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('heading', { level: 1, name: 'Rule: Big purchases' }).waitFor();
    const { rules } = await call('GET', '/api/v1/admin/rules?event_name=purchase');
    assert.equal(rules.length, 1);
    const [rule] = rules;
    assert.equal(rule.status, 'active');
    assert.deepEqual(rule.conditions, { all: [{ fact: 'properties.amount', operator: 'gte', value: 50 }] });
    assert.deepEqual(rule.caps, { per_day: { times: 1 } });
    assert.equal(rule.budget_points, 150);
    assert.deepEqual(rule.effects, [{ type: 'award_points', rate: { property: 'properties.amount', points_per_unit: 1, rounding: 'floor' } }]);

    const earned = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'p-4', properties: { amount: 90 } });
    assert.equal(earned.status, 200, earned.text);
    assert.equal(earned.body.points_awarded, 90);
    const state = await call('GET', '/api/v1/gamify/state/p-4?include=points');
    assert.equal(state.points.available, 90);

    // The stored rule reads back into the editor; the list shows the budget spent.
    await page.reload();
    await page.getByRole('group', { name: 'Condition 1 (all)' }).getByLabel(/^Value/).waitFor();
    assert.equal(await page.getByRole('group', { name: 'Condition 1 (all)' }).getByLabel(/^Value/).inputValue(), '50');
    await page.getByTestId('rule-budget').filter({ hasText: 'Budget spent: 90 of 150 points' }).waitFor();
    await open(page, 'Earn rules', 'Earn rules');
    await page.getByTestId('rules').getByText('90 of 150 points').waitFor();
    await choose(page, page, 'Trigger', 'Recurring');
    await page.getByText('No rule matches.').waitFor();
    await assertAccessible(page, 'rule list');
    await choose(page, page, 'Trigger', 'Event');
    await page.getByTestId('rules').getByText('Big purchases').waitFor();
    await screenshot(page, '21-rule-list');
  });

  await t.test('an owner creates and edits a streak', async () => {
    await open(page, 'Streaks', 'Streaks');
    await page.getByText('No streak yet.').waitFor();
    await page.getByLabel(/^Code/).fill('daily-visit');
    await page.getByLabel(/^Name/).fill('Daily visit');
    await page.getByRole('combobox', { name: /^Counted event/ }).fill('app_opened');
    await page.keyboard.press('Escape');
    await page.getByLabel('Grace periods').fill('1');
    await page.getByRole('button', { name: 'Add streak' }).click();
    await page.getByTestId('streaks').getByText('Daily visit').waitFor();
    await page.getByRole('button', { name: 'Edit streak Daily visit' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit streak Daily visit' });
    await dialog.getByLabel(/^Grace periods/).fill('2');
    await assertAccessible(page, 'streak edit dialog');
    await dialog.getByRole('button', { name: 'Save streak' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const streak = await call('GET', '/api/v1/admin/streaks/daily-visit');
    assert.deepEqual({ period: streak.period, event_name: streak.event_name, grace_periods: streak.grace_periods }, { period: 'daily', event_name: 'app_opened', grace_periods: 2 });
    await assertAccessible(page, 'streaks');
    await screenshot(page, '22-streaks');
  });

  await t.test('an owner creates a multiplier; a factor out of bounds is refused on its field', async () => {
    await open(page, 'Multipliers', 'Multipliers');
    await page.getByText('No multiplier matches.').waitFor();
    await page.getByRole('combobox', { name: /^Event name/ }).fill('review_posted');
    await page.keyboard.press('Escape');
    await page.getByLabel('Matching properties').fill('channel=app');
    // A factor of 0 is refused on its field, the bound named.
    await page.getByLabel(/^Multiplier/).fill('0');
    await page.getByLabel(/^Starts at/).fill(zonedInput(new Date(Date.now() - DAY_MS)));
    await page.getByLabel(/^Ends at/).fill(zonedInput(new Date(Date.now() + 7 * DAY_MS)));
    await page.getByRole('button', { name: 'Add multiplier' }).click();
    await page.getByText('Must be more than 0.').waitFor();
    await page.getByLabel(/^Multiplier/).fill('3');
    await page.getByRole('button', { name: 'Add multiplier' }).click();
    await page.getByTestId('multipliers').getByText('review_posted').waitFor();
    const { multipliers } = await call('GET', '/api/v1/admin/points/multipliers?limit=10');
    assert.equal(multipliers.length, 1);
    assert.deepEqual({ multiplier: multipliers[0].multiplier, match: multipliers[0].match }, { multiplier: 3, match: { event_type: 'review_posted', attributes: { channel: 'app' } } });
    await page.getByLabel('Active now only').check();
    await page.getByTestId('multipliers').getByText('review_posted').waitFor();
    await assertAccessible(page, 'multipliers');
    await screenshot(page, '23-multipliers');
  });

  await t.test('an owner changes the expiry policy, lifetime and reminders', async () => {
    await open(page, 'Points expiry', 'Points expiry');
    await page.getByLabel('Reminder days, comma-separated').waitFor();
    assert.equal(await page.getByLabel('Reminder days, comma-separated').inputValue(), '60, 30, 7, 1');
    await page.getByLabel('Newest points used first (LIFO)').check();
    await page.getByLabel('Days before points expire').fill('180');
    await page.getByLabel('Reminder days, comma-separated').fill('30, 7');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const settings = await call('GET', '/api/v1/admin/points/settings');
    assert.deepEqual({ policy: settings.expiry_policy, ttl: settings.default_ttl_days, reminders: settings.reminder_days }, { policy: 'lifo', ttl: 180, reminders: [30, 7] });
    await page.getByLabel('Reminder days, comma-separated').fill('30, soon');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByTestId('api-error').waitFor();
    await page.getByLabel('Reminder days, comma-separated').fill('30, 7');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await assertAccessible(page, 'points expiry');
    await screenshot(page, '24-points-expiry');
  });

  await t.test('an owner edits a tier', async () => {
    await open(page, 'Tiers', 'Tiers');
    await page.getByRole('button', { name: 'Edit tier Silver' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit tier Silver' });
    await dialog.getByLabel(/^Name/).fill('Silver plus');
    await dialog.getByLabel(/^Lifetime points needed/).fill('200');
    await assertAccessible(page, 'tier edit dialog');
    await screenshot(page, '25-tier-edit');
    await dialog.getByRole('button', { name: 'Save tier' }).click();
    await page.getByTestId('tiers').getByText('Silver plus').waitFor();
    const tier = await call('GET', '/api/v1/admin/points/tiers/silver');
    assert.deepEqual({ name: tier.name, min: tier.min_lifetime_points }, { name: 'Silver plus', min: 200 });
    await assertAccessible(page, 'tiers');
  });

  await t.test('an owner edits a badge, awards it to a participant, and deletes another', async () => {
    await call('POST', '/api/v1/admin/badges', { code: 'old', name: 'Old badge' });
    await open(page, 'Badges', 'Badges');
    await page.getByRole('button', { name: 'Edit badge VIP' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit badge VIP' });
    await dialog.getByLabel('Description').fill('Spent over 500');
    await dialog.getByLabel('Image URL').fill('https://cdn.example.com/badges/vip.png');
    await dialog.getByRole('button', { name: 'Save badge' }).click();
    await page.getByTestId('badges').getByText('Spent over 500').waitFor();
    const badge = await call('GET', '/api/v1/admin/badges/vip');
    assert.deepEqual({ description: badge.description, image_url: badge.image_url }, { description: 'Spent over 500', image_url: 'https://cdn.example.com/badges/vip.png' });

    await page.getByRole('button', { name: 'Award badge VIP' }).click();
    const award = page.getByRole('dialog', { name: 'Award VIP to a participant' });
    await award.getByLabel(/^Participant id/).fill('p-1');
    await award.getByRole('button', { name: 'Award' }).click();
    await page.getByText('Awarded to p-1.').waitFor();
    const state = await call('GET', '/api/v1/gamify/state/p-1?include=badges');
    assert.ok(state.badges.some((b: { code: string; earned: boolean }) => b.code === 'vip' && b.earned), JSON.stringify(state.badges));

    await page.getByRole('button', { name: 'Delete badge Old badge' }).click();
    await page.getByRole('dialog', { name: 'Delete the badge?' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByTestId('badges').getByText('Old badge').waitFor({ state: 'detached' });
    assert.equal((await svc.request('GET', '/api/v1/admin/badges/old', { key: tenant.apiKey })).status, 404);
    await assertAccessible(page, 'badges');
    await screenshot(page, '26-badges');
  });

  await t.test('on a phone: the stored rule in the editor, one column', async () => {
    const phone = await newPage(PHONE);
    await signIn(phone, tenant.adminEmail, tenant.adminPassword);
    const { rules } = await call('GET', '/api/v1/admin/rules?event_name=purchase');
    await phone.goto(`${svc.baseUrl}/console/programs/rules/${rules[0].id}`);
    await phone.getByRole('heading', { level: 1, name: 'Rule: Big purchases' }).waitFor();
    await phone.getByRole('group', { name: 'Condition 1 (all)' }).getByLabel(/^Value/).waitFor();
    await assertAccessible(phone, 'rule editor on a phone');
    await screenshot(phone, '28-phone-rule-editor');
  });

  await t.test('an analyst sees every Programs screen read-only, and the API refuses the analyst’s writes (403)', async () => {
    const { email, password } = await consoleUser(svc, tenant, 'analyst');
    const analyst = await newPage();
    await signIn(analyst, email, password);

    await open(analyst, 'Earn rules', 'Earn rules');
    await analyst.getByTestId('rules').getByText('Big purchases').waitFor();
    assert.equal(await analyst.getByRole('link', { name: 'New rule' }).count(), 0);
    await analyst.getByRole('link', { name: 'Big purchases' }).click();
    await analyst.getByRole('heading', { level: 1, name: 'Rule: Big purchases' }).waitFor();
    assert.equal(await analyst.getByLabel(/^Name/).isEditable(), false, 'the rule is shown read-only');
    assert.equal(await analyst.getByRole('button', { name: 'Run the backtest' }).count(), 0, 'no backtest: the API would refuse it');
    assert.equal(await analyst.getByRole('button', { name: 'Save rule' }).count(), 0);
    assert.equal(await analyst.getByRole('button', { name: 'Delete rule' }).count(), 0);
    await assertAccessible(analyst, 'rule editor, read-only');
    await screenshot(analyst, '27-rule-read-only');

    for (const [link, heading, control] of [
      ['Multipliers', 'Multipliers', 'Add multiplier'],
      ['Tiers', 'Tiers', 'Add tier'],
      ['Badges', 'Badges', 'Add badge'],
      ['Streaks', 'Streaks', 'Add streak'],
      ['Points expiry', 'Points expiry', 'Save settings'],
    ] as const) {
      await open(analyst, link, heading);
      await analyst.waitForLoadState('networkidle');
      assert.equal(await analyst.getByRole('button', { name: control }).count(), 0, `${heading}: no "${control}" for an analyst`);
      assert.equal(await analyst.getByRole('button', { name: /^(Edit|Delete|Award) / }).count(), 0, `${heading}: no row actions for an analyst`);
      await assertAccessible(analyst, `${heading}, read-only`);
    }

    const session = await (await analyst.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const headers = { 'x-csrf-token': session.csrf_token };
    const writes: Array<[string, string, unknown]> = [
      ['POST', '/api/v1/admin/rules', { name: 'x', event_name: 'purchase', effects: [{ type: 'award_points', points: 1 }] }],
      ['POST', '/api/v1/admin/streaks', { code: 'x', name: 'x', period: 'daily' }],
      ['POST', '/api/v1/admin/points/multipliers', { multiplier: 2, starts_at: new Date().toISOString(), ends_at: new Date(Date.now() + DAY_MS).toISOString(), match: { event_type: 'x' } }],
      ['PATCH', '/api/v1/admin/points/settings', { expiry_policy: 'none' }],
      ['PATCH', '/api/v1/admin/points/tiers/silver', { name: 'x' }],
      ['PATCH', '/api/v1/admin/badges/vip', { name: 'x' }],
    ];
    for (const [method, url, data] of writes) {
      const refused = await analyst.context().request.fetch(`${svc.baseUrl}${url}`, { method, headers, data });
      assert.equal(refused.status(), 403, `${method} ${url}: ${await refused.text()}`);
    }
  });

  assertClean();
});
