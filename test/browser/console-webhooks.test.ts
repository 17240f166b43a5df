import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { startReceiver, verifySignature } from '../../src/modules/webhooks/testing.js';
import { assertAccessible, consoleUser, launchConsoleBrowser, screenshot } from './console-kit.js';

/**
 * Webhook health and destinations in Chromium (issue 35, item 8), in a sandbox
 * tenant whose destinations may reach a receiver on this machine (the local
 * receiver switch, `allow_private_network`). The owner sees a destination that
 * fails every delivery marked failing with its last error, edits it (a refused
 * URL lands on the URL field), and sends a test of a chosen catalogue event to
 * the loopback receiver, whose answer the page shows. An analyst sees the
 * health but no edit, and the API refuses its PATCH. A live tenant's form
 * offers no local receiver, and the API refuses one.
 */
test('the console in Chromium: webhook health, editing a destination, a test of a chosen event', { timeout: 180_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const tenant: TestTenant = await svc.createTenant({ environment: 'sandbox' });
  const receiver = await startReceiver((request, res) => {
    const failing = request.path.startsWith('/failing');
    res.statusCode = failing ? 503 : 200;
    res.setHeader('content-type', 'application/json');
    res.end(failing ? '{"error":"orders database unavailable"}' : '{"received":true}');
  });
  t.after(() => receiver.close());
  const call = async (method: string, p: string, body?: unknown) => {
    const response = await svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${p}: ${response.status} ${response.text}`);
    return response.body;
  };

  // A destination whose receiver answers 503 to everything: three test deliveries fail in a row.
  const destination = await call('POST', '/api/v1/gamify/webhooks', {
    name: 'Orders receiver',
    url: `${receiver.url}/failing`,
    events: ['points.awarded.v1'],
    allow_private_network: true,
  });
  for (let i = 0; i < 3; i += 1) await call('POST', `/api/v1/gamify/webhooks/${destination.id}/test-events`, { event: 'points.awarded.v1' });
  assert.equal((await call('GET', `/api/v1/gamify/webhooks/${destination.id}`)).active, true, 'still active, as the API has it');

  // The service builds the console at its first request; on a loaded machine that can outlast a page load's timeout.
  assert.equal((await fetch(`${svc.baseUrl}/console/`)).status, 200);
  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const page = await newPage();
  await signIn(page, tenant.adminEmail, tenant.adminPassword);

  await t.test('the list marks the destination failing, with its last error, though it is active', async () => {
    await open(page, 'Webhooks', 'Webhook destinations');
    const row = page.getByRole('row', { name: /Orders receiver/ });
    await row.getByTestId('health-badge').getByText('Failing').waitFor();
    assert.match((await row.textContent())!, /Last error: the receiver answered HTTP 503/);
    await assertAccessible(page, 'webhook destinations with health');
    await screenshot(page, '56-webhook-health-list');
  });

  await t.test('the destination page says why it is failing, with the last error and the counts', async () => {
    await page.getByRole('link', { name: 'Orders receiver' }).click();
    await page.getByRole('heading', { level: 1, name: 'Orders receiver' }).waitFor();
    const health = page.getByTestId('destination-health');
    await health.getByText('The latest 3 attempts failed').waitFor();
    assert.equal((await page.getByTestId('health-last-error').textContent())!.trim(), 'the receiver answered HTTP 503');
    assert.match((await health.textContent())!, /3 of 3 attempts failed/);
    await page.getByTestId('zone-note').waitFor();
    await assertAccessible(page, 'failing destination');
    await screenshot(page, '57-webhook-failing');
  });

  await t.test('editing: a URL the forgery rules refuse is marked on the URL field; a good one, a description and a pattern are saved', async () => {
    await page.getByRole('button', { name: 'Edit destination' }).click();
    const url = page.getByRole('textbox', { name: /^URL/ });
    await url.fill('http://169.254.169.254/latest/meta-data');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForFunction(() => document.activeElement?.getAttribute('type') === 'url' && document.activeElement.getAttribute('aria-invalid') === 'true');
    const described = await url.getAttribute('aria-describedby');
    assert.ok(described, 'the URL field names its error');
    const words = await page.locator(described!.split(' ').map((id) => `#${id}`).join(', ')).allTextContents();
    assert.ok(words.some((text) => /is not allowed/.test(text)), `the refusal on the URL field: ${JSON.stringify(words)}`);
    await assertAccessible(page, 'destination edit, URL refused');
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, '58-webhook-edit-refused');

    await url.fill(`${receiver.url}/ok`);
    await page.getByRole('textbox', { name: 'Description' }).fill('The orders team\'s receiver; call Dana when it fails.');
    const events = page.getByRole('combobox', { name: /^Events/ });
    await events.click();
    await events.fill('badge');
    await page.getByRole('option', { name: /^badge\.\* / }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Destination saved.').waitFor();
    const saved = await call('GET', `/api/v1/gamify/webhooks/${destination.id}`);
    assert.equal(saved.url, `${receiver.url}/ok`);
    assert.equal(saved.description, "The orders team's receiver; call Dana when it fails.");
    assert.deepEqual(saved.events, ['points.awarded.v1', 'badge.*']);
    await page.getByTestId('destination-settings').getByText("The orders team's receiver; call Dana when it fails.").waitFor();
  });

  await t.test('a test of a chosen catalogue event reaches the loopback receiver, signed and marked as a test; the answer is shown', async () => {
    const before = receiver.received.length;
    const picker = page.getByRole('combobox', { name: /^Event type/ });
    await picker.click();
    await picker.fill('tier.changed');
    await page.getByRole('option', { name: 'tier.changed.v1' }).click();
    await page.getByRole('button', { name: 'Send test event' }).click();
    const result = page.getByTestId('test-result');
    await result.getByText('Delivered').waitFor();
    assert.match((await result.textContent())!, /HTTP status200/);
    assert.match((await result.textContent())!, /\d+ ms/);
    assert.equal((await page.getByTestId('test-response').textContent())!.trim(), '{"received":true}');
    const got = receiver.received.slice(before);
    assert.equal(got.length, 1);
    assert.equal(got[0].headers['x-service-event'], 'tier.changed.v1');
    assert.equal(got[0].body.test, true);
    assert.equal(got[0].body.livemode, false);
    assert.ok(verifySignature(destination.secret, String(got[0].headers['x-service-signature']), got[0].rawBody), 'signed with the destination\'s secret');
    // The success ends the run of failures; the hour's failures keep it degraded.
    await page.getByTestId('destination-health').getByText('Degraded').waitFor();
    await assertAccessible(page, 'test event result');
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, '59-webhook-test-event');
  });

  await t.test('creating: a reserved name is marked on the name field; with a local receiver allowed, the destination is added and its secret shown once', async () => {
    await open(page, 'Webhooks', 'Webhook destinations');
    const name = page.getByRole('textbox', { name: /^Name/ });
    await name.fill('[system] audit copy');
    await page.getByRole('textbox', { name: /^URL/ }).fill(`${receiver.url}/ok`);
    const events = page.getByRole('combobox', { name: /^Events/ });
    await events.click();
    await events.fill('points');
    await page.getByRole('option', { name: /^points\.\* / }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('switch', { name: 'Allow a local receiver' }).click({ force: true });
    await page.getByRole('button', { name: 'Add destination' }).click();
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-invalid') === 'true' && (document.activeElement as HTMLInputElement).value.startsWith('[system]'));
    assert.equal(await page.getByText('must not start with "[system]"').count(), 1, 'the refusal is on the name field');
    await name.fill('Audit copy');
    await page.getByRole('button', { name: 'Add destination' }).click();
    await page.getByText('Destination added').waitFor();
    assert.match((await page.getByRole('status').filter({ hasText: 'Destination added' }).textContent())!, /whsec_/);
    await page.getByRole('row', { name: /Audit copy/ }).getByText('No deliveries yet').waitFor();
    const list = await call('GET', '/api/v1/gamify/webhooks');
    const added = list.destinations.find((d: { name: string }) => d.name === 'Audit copy');
    assert.deepEqual([added.events, added.allow_private_network, added.url], [['points.*'], true, `${receiver.url}/ok`]);
    await assertAccessible(page, 'destination added');
  });

  await t.test('an analyst sees the health but no edit, and the API refuses its PATCH (403)', async () => {
    const analyst = await consoleUser(svc, tenant, 'analyst');
    const other = await newPage();
    await signIn(other, analyst.email, analyst.password);
    await other.goto(`${svc.baseUrl}/console/developers/webhooks/${destination.id}`);
    await other.getByTestId('destination-health').getByText('Degraded').waitFor();
    await other.getByTestId('destination-settings').waitFor();
    assert.equal(await other.getByRole('button', { name: 'Edit destination' }).count(), 0, 'no edit');
    assert.equal(await other.getByRole('button', { name: 'Send test event' }).count(), 0, 'no test event');
    await assertAccessible(other, 'destination, read-only');
    const session = await (await other.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const refused = await other.context().request.patch(`${svc.baseUrl}/api/v1/gamify/webhooks/${destination.id}`, {
      headers: { 'x-csrf-token': session.csrf_token },
      data: { description: 'not mine to change' },
    });
    assert.equal(refused.status(), 403);
    assert.equal((await call('GET', `/api/v1/gamify/webhooks/${destination.id}`)).description, "The orders team's receiver; call Dana when it fails.");
  });

  await t.test('a live tenant sees the local-receiver switch off and disabled, with the reason; the API refuses the flag (403 SANDBOX_ONLY)', async () => {
    const live = await svc.createTenant();
    const livePage = await newPage();
    await signIn(livePage, live.adminEmail, live.adminPassword);
    await open(livePage, 'Webhooks', 'Webhook destinations');
    const toggle = livePage.getByRole('switch', { name: 'Allow a local receiver' });
    assert.equal(await toggle.isDisabled(), true);
    assert.equal(await toggle.isChecked(), false);
    await livePage.getByText('Only a sandbox tenant may deliver to a local receiver').waitFor();
    const refused = await svc.request('POST', '/api/v1/gamify/webhooks', {
      key: live.apiKey,
      body: { name: 'laptop', url: `${receiver.url}/ok`, events: ['points.*'], allow_private_network: true },
    });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.code, 'SANDBOX_ONLY');
  });

  assertClean();
});
