import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { sendSync } from '../../src/modules/ingestion/testing.js';
import { assertAccessible, consoleUser, launchConsoleBrowser, screenshot } from './console-kit.js';

/** Opens a picker by its label and takes the option whose name starts with `option`. */
async function pick(scope: Page | Locator, page: Page, label: RegExp, option: string | RegExp): Promise<void> {
  await scope.getByLabel(label).first().click();
  await page.getByRole('option', { name: typeof option === 'string' ? new RegExp(`^${option.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) : option }).first().click();
}

/**
 * Programs without free text where pickers belong, as a marketer: the rule's
 * event name is picked from the names the tenant has sent (a name never sent
 * is allowed, with a warning), a condition's fact from the properties seen on
 * that event with their types (the operators fit the type), a badge by its
 * name. A bad value is said on its field in plain words, whether the console
 * or the service finds it; times are shown and entered in the tenant's zone
 * (Europe/Berlin), which the screen names.
 */
test('Programs pickers in Chromium: a marketer builds a rule from seen event names, typed properties and a badge by name; errors on their fields; times in the tenant zone', { timeout: 180_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const call = async (method: string, p: string, body?: unknown) => {
    const response = await svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${p}: ${response.status} ${response.text}`);
    return response.body;
  };
  await call('PATCH', '/api/v1/tenant', { timezone: 'Europe/Berlin' });
  await call('POST', '/api/v1/admin/badges', { code: 'big_spender', name: 'Big spender' });
  await call('POST', '/api/v1/admin/badges', { code: 'early_bird', name: 'Early bird' });
  for (const [i, total] of [42.5, 120, 18].entries()) {
    const sent = await sendSync(svc, tenant, { event_name: 'purchase_completed', participant_id: `p-${i}`, properties: { order_total: total, channel: i === 1 ? 'app' : 'web', first_order: i === 0 } });
    assert.equal(sent.status, 200, sent.text);
  }
  assert.equal((await sendSync(svc, tenant, { event_name: 'app_opened', participant_id: 'p-0' })).status, 200);

  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const marketer = await consoleUser(svc, tenant, 'marketer');
  const page = await newPage();
  await signIn(page, marketer.email, marketer.password);

  await t.test('the event name, the fact with its type, the operator, the value and the badge come from pickers; a free event name is warned about', async () => {
    await open(page, 'Earn rules', 'Earn rules');
    await page.getByRole('link', { name: 'New rule' }).click();
    await page.getByRole('heading', { level: 1, name: 'New rule' }).waitFor();
    await page.getByLabel(/^Name/).fill('Big baskets');

    // A name never received is allowed (a rule for an event not sent yet), with a warning.
    const eventName = page.getByRole('combobox', { name: /^Event name/ });
    await eventName.fill('purchase_complete');
    await page.getByText(/No event of this name has been received yet/).waitFor();
    // The names received are offered with their count; picking one clears the warning.
    await eventName.fill('');
    await page.getByRole('option', { name: /^app_opened/ }).waitFor();
    await page.getByRole('option', { name: /^purchase_completed\s*3 events, last/ }).click();
    assert.equal(await eventName.inputValue(), 'purchase_completed');
    await page.getByText(/No event of this name has been received yet/).waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Add a condition (all)' }).click();
    const condition = page.getByRole('group', { name: 'Condition 1 (all)' });
    await condition.getByRole('combobox', { name: /^Fact/ }).click();
    // The properties seen on that event, each with its type, then the participant's attributes.
    await page.getByRole('option', { name: /^properties\.channel\s*Text/ }).waitFor();
    await page.getByRole('option', { name: /^properties\.first_order\s*Yes or no/ }).waitFor();
    await page.getByRole('option', { name: /^participant\.lifetime_points\s*Number/ }).waitFor();
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, '80-rule-fact-picker');
    await page.getByRole('option', { name: /^properties\.order_total/ }).click();
    await condition.getByText('Number, in 3 of the latest 3 events').waitFor();
    // Number operators for a number: no "contains".
    await condition.getByLabel('Operator').click();
    await page.getByRole('option', { name: 'is at least', exact: true }).waitFor();
    assert.equal(await page.getByRole('option', { name: 'contains', exact: true }).count(), 0, 'no text operator for a number');
    await page.getByRole('option', { name: 'is at least', exact: true }).click();

    // A word where a number belongs is said on the field, in plain words, before anything is sent.
    await condition.getByLabel(/^Value/).fill('fifty');
    const effect = page.getByRole('group', { name: 'Effect 1' });
    await pick(effect, page, /^Kind/, 'Award a badge');
    await pick(effect, page, /^Badge/, 'Big spender (big_spender)');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await condition.getByText('Enter a number.').waitFor();
    assert.equal(await condition.getByLabel(/^Value/).evaluate((el) => el === document.activeElement), true, 'the field with the error is focused');
    await condition.getByLabel(/^Value/).fill('50');

    // A second condition on a boolean property: yes or no, and only the operators that fit.
    await page.getByRole('button', { name: 'Add a condition (all)' }).click();
    const second = page.getByRole('group', { name: 'Condition 2 (all)' });
    await pick(second, page, /^Fact/, 'properties.first_order');
    await pick(second, page, /^Value/, 'Yes (true)');

    // Points below the schema's minimum are refused on the field, with the limit named; nothing is clamped.
    await page.getByRole('button', { name: 'Add an effect' }).click();
    const points = page.getByRole('group', { name: 'Effect 2' }).getByLabel(/^Points/);
    await points.fill('-3');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('group', { name: 'Effect 2' }).getByText('Must be at least 1.').waitFor();
    assert.equal(await points.inputValue(), '-3', 'the value typed stays as typed');
    await page.getByRole('group', { name: 'Effect 2' }).getByText('From 1 to 1,000,000,000').waitFor();
    await points.fill('25');

    // Times entered in the tenant's zone, which the editor names.
    await page.getByTestId('zone-note').filter({ hasText: /^Times in Europe\/Berlin \(UTC\+0[12]:00\)$/ }).waitFor();
    await page.getByLabel(/^Starts at/).fill('2026-12-01T09:00');
    await assertAccessible(page, 'rule editor with pickers');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('heading', { level: 1, name: 'Rule: Big baskets' }).waitFor();

    const { rules } = await call('GET', '/api/v1/admin/rules?event_name=purchase_completed');
    assert.equal(rules.length, 1);
    assert.deepEqual(rules[0].conditions, {
      all: [
        { fact: 'properties.order_total', operator: 'gte', value: 50 },
        { fact: 'properties.first_order', operator: 'equals', value: true },
      ],
    });
    assert.deepEqual(rules[0].effects, [{ type: 'award_badge', badge_code: 'big_spender' }, { type: 'award_points', points: 25 }]);
    assert.equal(rules[0].starts_at, '2026-12-01T08:00:00.000Z', '09:00 in Berlin');
    assert.equal(await page.getByLabel(/^Starts at/).inputValue(), '2026-12-01T09:00');
    await screenshot(page, '81-rule-pickers-saved');
  });

  await t.test("a refusal only the service can make lands on its field: a comparison with a word on a property never seen", async () => {
    await page.getByRole('button', { name: 'Add a condition (any)' }).click();
    const condition = page.getByRole('group', { name: 'Condition 1 (any)' });
    await condition.getByRole('combobox', { name: /^Fact/ }).fill('properties.basket_size');
    await page.keyboard.press('Escape');
    await pick(condition, page, /^Operator/, 'is greater than');
    await condition.getByLabel(/^Value/).fill('many');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await condition.getByText('Enter a number.').waitFor();
    await page.getByTestId('api-error').filter({ hasText: 'Please correct the marked fields.' }).waitFor();
    assert.equal(await condition.getByLabel(/^Value/).evaluate((el) => el === document.activeElement), true, 'the field the service named is focused');
    await assertAccessible(page, 'rule editor with a refusal on a field');
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, '82-rule-field-error');
  });

  await t.test('a multiplier for a seen event, its window entered and listed in the tenant zone', async () => {
    await open(page, 'Multipliers', 'Multipliers');
    await page.getByTestId('zone-note').filter({ hasText: 'Europe/Berlin' }).waitFor();
    await pick(page, page, /^Event name/, 'app_opened');
    await page.getByLabel(/^Starts at/).fill('2026-12-24T18:00');
    await page.getByLabel(/^Ends at/).fill('2026-12-26T23:59');
    // The factor's bounds are shown before they are broken, and a factor of 0 is refused on its field.
    await page.getByLabel(/^Multiplier/).fill('0');
    await page.getByRole('button', { name: 'Add multiplier' }).click();
    await page.getByText('Must be more than 0.').waitFor();
    await page.getByLabel(/^Multiplier/).fill('2');
    await page.getByRole('button', { name: 'Add multiplier' }).click();
    await page.getByTestId('multipliers').getByText('2026-12-24 18:00 – 2026-12-26 23:59').waitFor();
    const { multipliers } = await call('GET', '/api/v1/admin/points/multipliers?limit=10');
    assert.deepEqual([multipliers[0].starts_at, multipliers[0].ends_at, multipliers[0].match.event_type], ['2026-12-24T17:00:00.000Z', '2026-12-26T22:59:00.000Z', 'app_opened']);
    await assertAccessible(page, 'multipliers in the tenant zone');
    await screenshot(page, '83-multipliers-tenant-zone');
  });

  await t.test('the pickers read what every Programs reader may read; an analyst may not write the rule the page hides from it', async () => {
    const analyst = await consoleUser(svc, tenant, 'analyst');
    const reader = await newPage();
    await signIn(reader, analyst.email, analyst.password);
    const names = await reader.context().request.get(`${svc.baseUrl}/api/v1/admin/events/names`);
    assert.equal(names.status(), 200);
    assert.deepEqual((await names.json()).names.map((n: { event_name: string }) => n.event_name), ['app_opened', 'purchase_completed']);
    const session = await (await reader.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const refused = await reader.context().request.post(`${svc.baseUrl}/api/v1/admin/rules`, {
      headers: { 'x-csrf-token': session.csrf_token },
      data: { name: 'x', event_name: 'app_opened', effects: [{ type: 'award_points', points: 1 }] },
    });
    assert.equal(refused.status(), 403);
    await open(reader, 'Earn rules', 'Earn rules');
    assert.equal(await reader.getByRole('link', { name: 'New rule' }).count(), 0);
  });

  assertClean();
});
