import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestService, waitFor, type TestService, type TestTenant } from '../helper.js';
import { assertAccessible, consoleUser, launchConsoleBrowser, screenshot } from './console-kit.js';

/**
 * The console's developer screens and the tenant settings in Chromium: API
 * keys (created with scopes, the secret shown once, used, rotated, revoked),
 * the ingested-events browser with a failed event's reason, a bulk replay of
 * exhausted webhook deliveries with its progress, the tenant's time zone, and
 * an analyst who sees the developer screens read-only.
 */
test('the console in Chromium: API keys, ingested events, bulk replay, settings', { timeout: 300_000 }, async (t) => {
  // Jobs run: events are processed and webhooks delivered (and, to a receiver that is not there, exhausted).
  const svc: TestService = await startTestService(t, { jobs: true });
  const tenant: TestTenant = await svc.createTenant({ environment: 'sandbox' });
  const call = async (method: string, p: string, body?: unknown) => {
    const response = await svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${p}: ${response.status} ${response.text}`);
    return response.body;
  };

  // A rule whose badge is gone fails in processing: the events browser has a failure to show.
  await call('POST', '/api/v1/admin/badges', { code: 'doomed', name: 'Doomed' });
  await call('POST', '/api/v1/admin/rules', { name: 'Doomed badge', trigger: 'event', event_name: 'review_posted', effects: [{ type: 'award_badge', badge_code: 'doomed' }], status: 'active' });
  await call('DELETE', '/api/v1/admin/badges/doomed');
  await call('POST', '/api/v1/admin/rules', { name: 'Points per order', trigger: 'event', event_name: 'order_placed', effects: [{ type: 'award_points', points: 10 }], status: 'active' });
  // Deliveries to a receiver that is not there, retried a thousand times faster than live: they end EXHAUSTED.
  await call('PATCH', '/api/v1/gamify/webhooks/settings', { webhook_backoff_scale: 0.001 });
  const destination = await call('POST', '/api/v1/gamify/webhooks', { name: 'Receiver', url: 'http://127.0.0.1:9/hooks', events: ['points.awarded.v1'], allow_private_network: true, retry_count: 1 });
  await call('POST', '/api/v1/ingest/events/batch', {
    events: [
      { event_name: 'order_placed', participant_id: 'p-ada', properties: { total: 30 }, idempotency_key: 'order-1' },
      { event_name: 'order_placed', participant_id: 'p-bob', properties: { total: 50 }, idempotency_key: 'order-2' },
      { event_name: 'review_posted', participant_id: 'p-bob', properties: { stars: 5 }, idempotency_key: 'review-1' },
    ],
  });
  await waitFor('the failed event', async () => (await svc.sql(`SELECT 1 FROM ingested_events WHERE tenant_id = $1 AND status = 'failed'`, [tenant.tenantId])).length === 1, 60_000);
  await waitFor(
    'two exhausted deliveries',
    async () => (await svc.sql(`SELECT 1 FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'EXHAUSTED'`, [tenant.tenantId])).length === 2,
    90_000,
  );

  // The service builds the console at its first request; on a loaded machine that can outlast a page load's timeout.
  const html = await (await fetch(`${svc.baseUrl}/console/`)).text();
  const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  assert.ok(script, 'the console page names its script');
  assert.equal((await fetch(`${svc.baseUrl}${script}`)).status, 200);

  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  const page = await newPage();
  await signIn(page, tenant.adminEmail, tenant.adminPassword);

  const secretShown = (p: Page) => p.getByTestId('api-key-secret').textContent().then((text) => text!.trim());
  const tenantStatus = (key: string) => svc.request('GET', '/api/v1/tenant', { key }).then((r) => r.status);

  await t.test('API keys: created with its scopes, the secret shown once, used through the API, rotated, revoked', async () => {
    await open(page, 'API keys', 'API keys');
    await page.getByTestId('api-keys').waitFor();
    await page.getByLabel(/^Name/).fill('Integration');
    await page.getByRole('checkbox', { name: /^admin / }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const first = await secretShown(page);
    // A sandbox tenant's form proposes a test key.
    assert.match(first, /^lk_test_[0-9a-f]{32}$/);
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await assertAccessible(page, 'API keys');
    await screenshot(page, '50-api-keys');
    assert.equal(await tenantStatus(first), 200, 'the new key works');

    await page.reload();
    await page.getByRole('cell', { name: 'Integration', exact: true }).waitFor();
    assert.equal(await page.getByTestId('api-key-secret').count(), 0, 'after a reload the secret is gone');
    assert.equal(await page.getByText(first).count(), 0);

    await page.getByRole('button', { name: 'Rotate Integration' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
    await page.getByText('Key "Integration" rotated').waitFor();
    const second = await secretShown(page);
    assert.notEqual(second, first);
    assert.equal(await tenantStatus(first), 401, 'the old secret is refused at once');
    assert.equal(await tenantStatus(second), 200);

    await page.getByRole('button', { name: 'Revoke Integration' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('cell', { name: 'Integration', exact: true }).waitFor({ state: 'detached' }).catch(async (error: Error) => {
      // It timed out once in CI (PostgreSQL 18) with nothing kept to say why: name what the page and the API show.
      const dialogs = await page.getByRole('dialog').allInnerTexts();
      throw new Error(`${error.message}\nopen dialogs: ${JSON.stringify(dialogs)}\nthe revoked secret answers ${await tenantStatus(second)}`);
    });
    assert.equal(await tenantStatus(second), 401, 'a revoked key is refused');
  });

  await t.test('ingested events: filtered to the failed one, whose page shows why and offers a retry', async () => {
    await open(page, 'Ingested events', 'Ingested events');
    await page.getByTestId('ingested-events').waitFor();
    assert.equal(await page.getByTestId('ingested-events').locator('tbody tr').count(), 3);
    await page.getByRole('combobox', { name: 'Status' }).click();
    await page.getByRole('option', { name: 'Failed' }).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="ingested-events"] tbody tr').length === 1);
    await assertAccessible(page, 'ingested events');
    await screenshot(page, '51-ingested-events');
    await page.getByTestId('ingested-events').getByRole('link').click();
    await page.getByRole('heading', { level: 1, name: 'Event review_posted' }).waitFor();
    assert.match((await page.getByTestId('event-failure').textContent())!, /doomed/);
    await page.getByRole('button', { name: 'Retry processing' }).waitFor();
    await assertAccessible(page, 'ingested event');
    await screenshot(page, '52-ingested-event-failed');
  });

  await t.test('ingested events: each says in plain words why it earned or did not', async () => {
    // A typo in the event name: no rule listens, and the page names the nearest name one listens to.
    const typo = await call('POST', '/api/v1/ingest/events/sync', { event_name: 'order_placd', participant_id: 'p-ada', idempotency_key: 'typo-1' });
    await page.goto(`${svc.baseUrl}/console/developers/ingested-events/${typo.event_id}`);
    await page.getByRole('heading', { level: 1, name: 'Event order_placd' }).waitFor();
    assert.equal((await page.getByTestId('event-reasons').textContent())!.trim(), 'Why it earned what it didNo active rule listens to "order_placd". Did you mean "order_placed"?');
    // A number sent as text: the condition that failed, with the value and its type.
    await call('POST', '/api/v1/admin/rules', { name: 'Big baskets', event_name: 'basket_checked', conditions: { all: [{ fact: 'properties.total', operator: 'gte', value: 20 }] }, effects: [{ type: 'award_points', points: 5 }] });
    const text = await call('POST', '/api/v1/ingest/events/sync', { event_name: 'basket_checked', participant_id: 'p-ada', properties: { total: '50' }, idempotency_key: 'basket-1' });
    await page.goto(`${svc.baseUrl}/console/developers/ingested-events/${text.event_id}`);
    await page.getByRole('heading', { level: 1, name: 'Event basket_checked' }).waitFor();
    assert.match(
      (await page.getByTestId('event-reasons').textContent())!,
      /Big baskets — Did not apply: properties\.total is "50" \(text\), and the condition needs a number of at least 20\./,
    );
    const [order] = await svc.sql(`SELECT event_id FROM ingested_events WHERE tenant_id = $1 AND idempotency_key = 'order-1'`, [tenant.tenantId]);
    await page.goto(`${svc.baseUrl}/console/developers/ingested-events/${order.event_id}`);
    await page.getByRole('heading', { level: 1, name: 'Event order_placed' }).waitFor();
    assert.match((await page.getByTestId('event-reasons').textContent())!, /Points per order — Applied: 10 points\./);
    await assertAccessible(page, 'ingested event, with its reasons');
    await screenshot(page, '52b-ingested-event-reasons');
    await open(page, 'Ingested events', 'Ingested events');
    await page.getByRole('cell', { name: '0: no rule listens to this event name' }).waitFor();
    await page.getByRole('cell', { name: '0: a condition failed' }).waitFor();
    assert.equal(await page.getByRole('cell', { name: '10 points', exact: true }).count(), 2);
  });

  await t.test('webhooks: a bulk replay of the exhausted deliveries, followed to its end', async () => {
    await open(page, 'Webhooks', 'Webhook destinations');
    await page.getByRole('link', { name: 'Receiver' }).click();
    await page.getByRole('heading', { level: 1, name: 'Receiver' }).waitFor();
    await page.getByRole('button', { name: 'Replay matching deliveries' }).click();
    const progress = page.getByTestId('replay-progress');
    await progress.getByText('Completed').waitFor({ timeout: 30_000 });
    assert.match((await progress.textContent())!, /2 of 2 replayed/);
    const replays = await svc.sql(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND destination_id = $2 AND replay_job_id IS NOT NULL`, [tenant.tenantId, destination.id]);
    assert.equal(replays[0].n, 2);
    await page.getByTestId('deliveries').waitFor();
    await assertAccessible(page, 'bulk replay');
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, '53-webhook-bulk-replay');
  });

  await t.test('settings: the time zone changed in the form is the one the API answers', async () => {
    await open(page, 'Settings', 'Settings');
    const zone = page.getByRole('combobox', { name: 'Time zone' });
    await zone.click();
    await zone.fill('Asia/Tokyo');
    await page.getByRole('option', { name: 'Asia/Tokyo' }).click();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const tenantNow = await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey });
    assert.equal(tenantNow.body.timezone, 'Asia/Tokyo');
    await assertAccessible(page, 'settings');
    await screenshot(page, '54-settings');
  });

  await t.test('settings: the four-eyes switch turns the tenant setting on and off, as the API then answers', async () => {
    const fourEyes = page.getByRole('switch', { name: 'Require a second person to publish' });
    assert.equal(await fourEyes.isChecked(), false);
    await fourEyes.click({ force: true });
    await page.waitForFunction(() => (document.querySelector('input[role="switch"]') as HTMLInputElement | null)?.checked === true);
    // The switch may show its new state before the service has answered: wait for the API to say so.
    await waitFor('require_four_eyes true', async () => (await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey })).body.require_four_eyes === true, 10_000);
    await assertAccessible(page, 'settings with four-eyes on');
    await fourEyes.click({ force: true });
    await page.waitForFunction(() => (document.querySelector('input[role="switch"]') as HTMLInputElement | null)?.checked === false);
    // The switch may show its new state before the service has answered: wait for the API to say so.
    await waitFor('require_four_eyes false', async () => (await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey })).body.require_four_eyes === false, 10_000);
  });

  await t.test('an analyst sees the developer screens read-only, and the API refuses key creation (403)', async () => {
    const analyst = await consoleUser(svc, tenant, 'analyst');
    const other = await newPage();
    await signIn(other, analyst.email, analyst.password);
    const links = await other.getByRole('navigation', { name: 'Console sections' }).getByRole('link').allTextContents();
    assert.ok(links.includes('Ingested events') && links.includes('Webhooks'), links.join());
    assert.ok(!links.includes('API keys'), `no API keys for an analyst: ${links.join()}`);
    await other.goto(`${svc.baseUrl}/console/developers/api-keys`);
    await other.getByText('Nothing here').first().waitFor();

    await other.goto(`${svc.baseUrl}/console/developers/webhooks/${destination.id}`);
    await other.getByTestId('deliveries').waitFor();
    assert.equal(await other.getByRole('button', { name: 'Replay matching deliveries' }).count(), 0, 'no bulk replay');
    assert.equal(await other.getByRole('button', { name: 'Send test event' }).count(), 0, 'no test event');
    await other.getByTestId('destination-health').waitFor();
    assert.equal(await other.getByRole('button', { name: 'Edit destination' }).count(), 0, 'no edit');
    await assertAccessible(other, 'webhook destination, read-only');

    await open(other, 'Ingested events', 'Ingested events');
    await other.getByTestId('ingested-events').getByRole('link').first().waitFor();
    const failed = await svc.sql(`SELECT event_id FROM ingested_events WHERE tenant_id = $1 AND event_name = 'review_posted'`, [tenant.tenantId]);
    await other.goto(`${svc.baseUrl}/console/developers/ingested-events/${failed[0].event_id}`);
    await other.getByTestId('event-failure').waitFor();
    assert.equal(await other.getByRole('button', { name: 'Retry processing' }).count(), 0, 'no retry');
    await assertAccessible(other, 'ingested event, read-only');
    await screenshot(other, '55-analyst-ingested-event');

    const session = await (await other.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
    const refused = await other.context().request.post(`${svc.baseUrl}/api/v1/events/api-keys`, { headers: { 'x-csrf-token': session.csrf_token }, data: { name: 'nope', scopes: ['ingest'] } });
    assert.equal(refused.status(), 403);
  });

  assertClean();
});
