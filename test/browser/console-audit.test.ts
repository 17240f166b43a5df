import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { asPerson, CONSOLE_TEST_PASSWORD, invitePerson, signInConsole } from '../console-people.js';
import { assertAccessible, launchConsoleBrowser, PHONE, screenshot } from './console-kit.js';

/**
 * The audit log in the console (issue 35): an analyst finds what a marketer
 * changed by filtering on the person, the resource and the day, reads each
 * entry by names (the person, the rule) and opens it to its before → after; a
 * backtest reads "Backtest", not "CREATE simulate". A marketer, who may not
 * read the log, has no link to it and the API refuses them.
 */
test('the console in Chromium: an analyst reads the audit log', { timeout: 240_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const marketerEmail = `mira@${tenant.slug}.example`;
  const marketer = await invitePerson(svc, owner, marketerEmail, 'marketer', { can_publish: true });
  const named = await svc.request('PATCH', `/api/v1/admin/users/${marketer.userId}`, { ...asPerson(owner), body: { name: 'Mira Marketer' } });
  assert.equal(named.status, 200, named.text);
  const analystEmail = `ana@${tenant.slug}.example`;
  await invitePerson(svc, owner, analystEmail, 'analyst');

  // The marketer's day: a rule created, changed and backtested; the owner changes another one.
  const created = await svc.request('POST', '/api/v1/admin/rules', { ...asPerson(marketer), body: { name: 'Autumn points', event_name: 'purchase', effects: [{ type: 'award_points', points: 10 }] } });
  assert.equal(created.status, 201, created.text);
  const ruleId = created.body.id as string;
  const changed = await svc.request('PATCH', `/api/v1/admin/rules/${ruleId}`, { ...asPerson(marketer), body: { name: 'Autumn double points', effects: [{ type: 'award_points', points: 20 }] } });
  assert.equal(changed.status, 200, changed.text);
  const now = new Date();
  const simulated = await svc.request('POST', '/api/v1/admin/rules/simulate', {
    ...asPerson(marketer),
    body: { rule_id: ruleId, from: new Date(now.getTime() - 7 * 86_400_000).toISOString(), to: now.toISOString() },
  });
  assert.equal(simulated.status, 200, simulated.text);
  const other = await svc.request('POST', '/api/v1/admin/rules', { ...asPerson(owner), body: { name: 'Owner rule', event_name: 'signup', effects: [{ type: 'award_points', points: 1 }] } });
  assert.equal(other.status, 201, other.text);

  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const analyst = await newPage();
  await signIn(analyst, analystEmail, CONSOLE_TEST_PASSWORD);

  await t.test('the analyst opens the audit log: names, plain actions, the tenant zone', async () => {
    await open(analyst, 'Audit log', 'Audit log');
    const log = analyst.getByTestId('audit-log');
    await log.getByText('Owner rule').first().waitFor();
    await analyst.getByTestId('zone-note').waitFor();
    assert.ok((await log.getByText('Mira Marketer').count()) >= 3, 'the marketer by name');
    await log.getByText('Backtest', { exact: true }).waitFor();
    assert.equal(await log.getByText(/simulate/i).count(), 0, 'no "simulate" as an action');
    assert.match((await log.textContent())!, /\d{4}-\d{2}-\d{2} \d{2}:\d{2}/);
    await assertAccessible(analyst, 'audit log');
  });

  await t.test('filtered by person, resource type and day, the change reads before → after', async () => {
    await analyst.getByRole('combobox', { name: 'Person' }).click();
    await analyst.getByRole('option', { name: 'Mira Marketer' }).click();
    await analyst.getByRole('combobox', { name: 'Resource type' }).click();
    await analyst.getByRole('option', { name: 'Earn rules' }).click();
    const today = now.toISOString().slice(0, 10); // The tenant's zone is UTC.
    await analyst.getByLabel('From').fill(today);
    await analyst.getByLabel('To (inclusive)').fill(today);
    const log = analyst.getByTestId('audit-log');
    await log.getByText('Owner rule').waitFor({ state: 'detached' });
    const rows = log.getByRole('listitem');
    assert.equal(await rows.count(), 3, 'the marketer\'s create, change and backtest');

    await log.getByRole('button', { name: 'Before → after: Autumn double points' }).click();
    const diff = log.getByTestId('audit-diff');
    await diff.waitFor();
    const text = (await diff.textContent())!;
    assert.match(text, /nameAutumn pointsAutumn double points/);
    assert.match(text, /effects\.0\.points1020/);
    await assertAccessible(analyst, 'audit log (filtered, entry open)');
    await screenshot(analyst, '70-audit-log-before-after');

    // A day with nothing: the range is the tenant's days.
    await analyst.getByLabel('From').fill('2020-01-01');
    await analyst.getByLabel('To (inclusive)').fill('2020-01-02');
    await analyst.getByText('No change recorded.').waitFor();
    await analyst.getByRole('button', { name: 'Clear filters' }).click();
    await log.getByText('Owner rule').first().waitFor();
  });

  await t.test('on a phone, the log and its filters fit', async () => {
    const phone = await newPage(PHONE);
    await signIn(phone, analystEmail, CONSOLE_TEST_PASSWORD);
    await phone.goto(`${svc.baseUrl}/console/audit-log`);
    await phone.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    await phone.getByTestId('audit-log').waitFor();
    await assertAccessible(phone, 'audit log (phone)');
    await screenshot(phone, '70-audit-log-phone');
  });

  await t.test('a marketer has no audit log link and the API refuses them', async () => {
    const page = await newPage();
    await signIn(page, marketerEmail, CONSOLE_TEST_PASSWORD);
    const navigation = page.getByRole('navigation', { name: 'Console sections' });
    await navigation.getByRole('link').first().waitFor();
    assert.equal(await navigation.getByRole('link', { name: 'Audit log' }).count(), 0);
    const refused = await page.context().request.get(`${svc.baseUrl}/api/v1/admin/audit-log`);
    assert.equal(refused.status(), 403);
    await assertAccessible(page, 'overview (marketer)');
  });

  assertClean();
});
