import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { sendSync } from '../../src/modules/ingestion/testing.js';
import { complete, createEngagement, createReward, session, wheel } from '../../src/modules/engagements/testing.js';
import { assertAccessible, consoleUser, launchConsoleBrowser, PHONE, screenshot } from './console-kit.js';

const PERSON = 'cust-1042';

/** A request through the page's own console session (its cookie and CSRF token), as the page itself would send it. */
async function asPage(page: Page, svc: TestService, method: string, url: string, options: { data?: unknown; contentType?: string } = {}) {
  const request = page.context().request;
  const current = await (await request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
  const headers: Record<string, string> = { 'x-csrf-token': current.csrf_token, ...(options.contentType ? { 'content-type': options.contentType } : {}) };
  return request.fetch(`${svc.baseUrl}${url}`, { method, headers, data: options.data as string });
}

async function openTab(page: Page, name: string, screen: string) {
  await page.getByRole('tab', { name }).click();
  await page.getByRole('tabpanel', { name }).waitFor();
  await assertAccessible(page, screen);
}

/**
 * Participants as support and the owner work them, in Chromium: support finds
 * a person by email (hashed in the browser, the answer masked), reads their
 * ledger with who granted each entry, their events, rewards (code masked) and
 * challenge progress, on a desktop and on a phone, and adjusts points through
 * a form whose refusals sit on their fields; the owner imports participants
 * and grants points from CSV files after a dry run, and exports and downloads
 * the participants. The API refuses what the page does not offer.
 */
test('Participants in Chromium: support finds a person by email and reads their history; the owner imports, grants from a file and exports', { timeout: 240_000 }, async (t) => {
  const svc: TestService = await startTestService(t, { jobs: true });
  const tenant: TestTenant = await svc.createTenant();
  const call = async (method: string, p: string, body?: unknown) => {
    const response = await svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${p}: ${response.status} ${response.text}`);
    return response.body;
  };

  await call('PATCH', `/api/v1/gamify/admin/participants/${PERSON}/profile`, { email: 'Ann.Smith@example.com', display_name: 'Ann S.', first_name: 'Ann', country_code: 'DE' });
  await call('POST', '/api/v1/admin/rules', { name: 'Orders', event_name: 'purchase', conditions: { all: [] }, effects: [{ type: 'award_points', points: 10 }] });
  await call('POST', '/api/v1/gamify/points/grant', { participant_id: PERSON, amount: 25, reason: 'Welcome bonus', idempotency_key: 'welcome-1042' });
  await createReward(svc, tenant, { id: 'coupon', name: 'Coupon 5 EUR', type: 'voucher', code_source: 'pool', metadata: { value: 5, currency: 'EUR' } });
  await call('POST', '/api/v1/admin/rewards/coupon/codes', { codes: ['SECRET-CODE-1'] });
  const engagement = await createEngagement(svc, tenant, {
    activities: [wheel({ id: 'claim', segments: [{ label: 'a', prize_type: 'none', weight: 1 }, { label: 'b', prize_type: 'none', weight: 1 }], on_completion: [{ type: 'award_reward', reward_id: 'coupon' }] })],
  });
  const personSession = await session(svc, tenant, engagement.id, PERSON);
  assert.equal((await complete(svc, personSession, 'claim', 'spin_wheel')).status, 200);
  const challenge = await call('POST', '/api/v1/admin/challenges', {
    name: 'Spring shopper',
    starts_at: new Date(Date.now() - 3_600_000).toISOString(),
    ends_at: new Date(Date.now() + 86_400_000).toISOString(),
    status: 'active',
    objectives: [{ id: 'buy', name: 'Two purchases', evaluator: 'event_count', event_name: 'purchase', target: 2 }],
  });
  const enrolled = await svc.request('POST', `/api/v1/public/challenges/${challenge.id}/enroll`, { body: { session_id: personSession.sessionId, engagement_id: engagement.id } });
  assert.equal(enrolled.status, 201, enrolled.text);
  const purchase = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: PERSON, properties: { order_total: 80, email: 'ann.smith@example.com' } });
  assert.equal(purchase.status, 200, purchase.text);
  assert.equal(purchase.body.points_awarded, 10);

  const supportUser = await consoleUser(svc, tenant, 'support');
  const ownerUser = { email: tenant.adminEmail, password: tenant.adminPassword };
  const analystUser = await consoleUser(svc, tenant, 'analyst');
  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);

  await t.test('support finds the person by email (hashed in the browser) and sees the answer masked, the match on top with a count', async () => {
    const page = await newPage();
    await signIn(page, supportUser.email, supportUser.password);
    await open(page, 'Participants', 'Participants');
    const searches: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/participants/search')) searches.push(request.url());
    });
    await page.getByLabel('Find a participant').fill('  ann.smith@EXAMPLE.com ');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByTestId('search-count').filter({ hasText: '1 participant matches' }).waitFor();
    assert.equal(searches.length, 1);
    assert.match(searches[0], /email_hash=[0-9a-f]{64}/);
    assert.ok(!searches[0].toLowerCase().includes('example.com'), 'the plain email never leaves the browser');
    const results = page.getByTestId('search-results');
    assert.match(await results.innerText(), /a\*\*\*@example\.com/);
    assert.ok(!(await results.innerText()).includes('ann.smith@'), 'masked for support');
    await assertAccessible(page, 'participant search');
    await screenshot(page, '60-participants-search');

    // An id finds the person too, marked as the exact match.
    await page.getByLabel('Find a participant').fill(PERSON);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await results.getByText('Exact id').waitFor();

    await results.getByRole('link', { name: PERSON }).click();
    await page.getByRole('heading', { level: 1, name: `Participant ${PERSON}` }).waitFor();
    const ledger = page.getByTestId('ledger');
    await ledger.waitFor();
    const who = await page.getByTestId('ledger-who').allInnerTexts();
    assert.ok(who.some((text) => text.startsWith('Rule: Orders')), JSON.stringify(who));
    assert.ok(who.some((text) => text.startsWith('API key: ')), JSON.stringify(who));
    await assertAccessible(page, 'participant ledger');
    await screenshot(page, '60-participant-ledger');

    await openTab(page, 'Events', 'participant events');
    const events = await page.getByTestId('events').innerText();
    assert.match(events, /purchase/);
    assert.match(events, /processed/i);
    assert.match(events, /Orders/);
    await screenshot(page, '60-participant-events');

    await openTab(page, 'Rewards', 'participant rewards');
    const rewards = await page.getByTestId('claimed-rewards').innerText();
    assert.match(rewards, /Coupon 5 EUR/);
    assert.match(rewards, /\*\*\*/);
    assert.ok(!rewards.includes('SECRET-CODE-1'), 'the code is masked for support');
    await screenshot(page, '60-participant-rewards');

    await openTab(page, 'Challenges', 'participant challenges');
    assert.match(await page.getByTestId('challenge-progress').innerText(), /Spring shopper/);
    await screenshot(page, '60-participant-challenges');
  });

  await t.test('the adjustment form: a deduction chosen explicitly, −3 refused on its field (never made 1), the limits shown first; who deducted is in the ledger', async () => {
    const page = await newPage();
    await signIn(page, supportUser.email, supportUser.password);
    await page.goto(`${svc.baseUrl}/console/participants/${PERSON}`);
    await page.getByRole('tab', { name: 'Adjust' }).click();
    const amount = page.getByLabel(/^Amount/);
    const reason = page.getByLabel(/^Reason/);
    // The limits are the service's, shown before they are broken.
    await page.getByText('1 to 1,000,000,000').waitFor();
    await page.getByText('up to 500 characters').waitFor();
    await page.getByRole('radio', { name: 'Deduct points' }).check();
    await amount.fill('-3');
    await reason.fill('');
    await page.getByRole('button', { name: 'Deduct points…' }).click();
    await page.getByText('must be at least 1').waitFor();
    assert.equal(await amount.inputValue(), '-3', 'the amount is left as typed, not clamped');
    assert.equal(await amount.getAttribute('aria-invalid'), 'true');
    assert.equal(await reason.getAttribute('aria-invalid'), 'true');
    await assertAccessible(page, 'adjustment form with field errors');
    await screenshot(page, '60-participant-adjust-errors');

    await amount.fill('3');
    await reason.fill('Goodwill correction');
    await page.getByRole('button', { name: 'Deduct points…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Confirm the adjustment' });
    await dialog.getByText(/Deduct 3 points from cust-1042/).waitFor();
    await assertAccessible(page, 'adjustment confirmation');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('status').filter({ hasText: 'The balance is now 32' }).waitFor();
    await page.getByRole('tab', { name: 'Ledger' }).click();
    await page.getByTestId('ledger-who').first().filter({ hasText: `Console: ${supportUser.email}` }).waitFor();
  });

  await t.test('on a phone the balance and the ledger are on the first screen', async () => {
    const page = await newPage(PHONE);
    await signIn(page, supportUser.email, supportUser.password);
    await page.goto(`${svc.baseUrl}/console/participants/${PERSON}`);
    await page.getByTestId('ledger').waitFor();
    const balance = await page.getByTestId('balance').boundingBox();
    const ledgerTab = await page.getByRole('tab', { name: 'Ledger' }).boundingBox();
    const firstEntry = await page.getByTestId('ledger').locator('tbody tr').first().boundingBox();
    assert.ok(balance && balance.y < PHONE.height, `balance at ${balance?.y}`);
    assert.ok(ledgerTab && ledgerTab.y < PHONE.height, `ledger tab at ${ledgerTab?.y}`);
    assert.ok(firstEntry && firstEntry.y + firstEntry.height < PHONE.height + 400, `first ledger entry at ${firstEntry?.y}`);
    await assertAccessible(page, 'participant on a phone');
    await screenshot(page, '60-participant-phone');
  });

  await t.test('the owner imports participants after a dry run', async () => {
    const page = await newPage();
    await signIn(page, ownerUser.email, ownerUser.password);
    await open(page, 'Participants', 'Participants');
    await page.getByRole('link', { name: 'Import participants' }).click();
    await page.getByRole('heading', { level: 1, name: 'Import participants' }).waitFor();
    const csv = 'participant_id,email,country_code\nnew-1,bea@example.com,FR\nnew-2,not-an-email,DE\nnew-3,cem@example.com,TR\n';
    await page.locator('input[type=file]').setInputFiles({ name: 'people.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Check the file' }).click();
    await page.getByTestId('dry-run').waitFor();
    assert.equal(await page.getByTestId('dry-run-valid').innerText(), '2');
    assert.equal(await page.getByTestId('dry-run-refused').innerText(), '1');
    assert.match(await page.getByTestId('refused-rows').innerText(), /^2\s.*email must be an address/m);
    assert.equal((await svc.sql("SELECT count(*)::int AS n FROM participants WHERE tenant_id = $1 AND participant_id LIKE 'new-%'", [tenant.tenantId]))[0].n, 0, 'the dry run writes nothing');
    await assertAccessible(page, 'participant import dry run');
    await screenshot(page, '60-participants-import');
    await page.getByRole('button', { name: 'Import 2 rows' }).click();
    await page.getByRole('dialog', { name: 'Import the participants?' }).getByRole('button', { name: 'Confirm' }).click();
    await page.getByTestId('import-done').filter({ hasText: '2 rows applied, 1 refused' }).waitFor({ timeout: 30_000 });
    await assertAccessible(page, 'participant import done');
  });

  await t.test('the owner grants points from a file: the dry run shows the count, the points and the refused rows first', async () => {
    const page = await newPage();
    await signIn(page, ownerUser.email, ownerUser.password);
    await page.goto(`${svc.baseUrl}/console/participants/bulk-grant`);
    await page.getByRole('heading', { level: 1, name: 'Bulk grant from a file' }).waitFor();
    const csv = 'participant_id,amount,reason\nnew-1,100,Spring bonus\nnew-3,50,Spring bonus\nnew-4,-5,Spring bonus\n';
    await page.locator('input[type=file]').setInputFiles({ name: 'grants.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Check the file' }).click();
    await page.getByTestId('dry-run').waitFor();
    assert.equal(await page.getByTestId('dry-run-points').innerText(), '150');
    assert.equal(await page.getByTestId('dry-run-refused').innerText(), '1');
    await assertAccessible(page, 'bulk grant dry run');
    await screenshot(page, '60-participants-bulk-grant');
    await page.getByRole('button', { name: 'Grant 150 points' }).click();
    const dialog = page.getByRole('dialog', { name: 'Grant the points?' });
    await dialog.getByText(/150 points in all to 2 participants/).waitFor();
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await page.getByTestId('import-done').filter({ hasText: '2 rows applied, 1 refused' }).waitFor({ timeout: 30_000 });
    const [{ available }] = await svc.sql('SELECT available::int FROM points_balances WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, 'new-1']);
    assert.equal(available, 100);
  });

  await t.test('the owner exports the participants and downloads the file', async () => {
    const page = await newPage();
    await signIn(page, ownerUser.email, ownerUser.password);
    await page.goto(`${svc.baseUrl}/console/participants/export`);
    await page.getByRole('heading', { level: 1, name: 'Export' }).waitFor();
    await page.getByRole('button', { name: 'Export participants' }).click();
    const link = page.getByTestId('download-participants');
    await link.waitFor({ timeout: 30_000 });
    await page.getByText('This file holds personal data in clear').waitFor();
    const file = await page.context().request.get(new URL((await link.getAttribute('href'))!, svc.baseUrl).toString());
    assert.equal(file.status(), 200);
    const text = await file.text();
    assert.match(text, /^participant_id,/);
    assert.match(text, /ann\.smith@example\.com/i, 'unmasked for the owner (read:pii)');
    await assertAccessible(page, 'participant export');
    await screenshot(page, '60-participants-export');
  });

  await t.test('what the page does not offer, the API refuses through the page session', async () => {
    const support = await newPage();
    await signIn(support, supportUser.email, supportUser.password);
    const personal = await asPage(support, svc, 'POST', '/api/v1/admin/imports?kind=participants&format=csv', { data: 'participant_id,email\nx-1,x@example.com\n', contentType: 'text/csv' });
    assert.equal(personal.status(), 403, await personal.text());

    const analyst = await newPage();
    await signIn(analyst, analystUser.email, analystUser.password);
    await open(analyst, 'Participants', 'Participants');
    assert.equal(await analyst.getByRole('link', { name: 'Import participants' }).count(), 0);
    assert.equal(await analyst.getByRole('link', { name: 'Bulk grant from a file' }).count(), 0);
    const dryRun = await asPage(analyst, svc, 'POST', '/api/v1/admin/imports/dry-run?kind=point_grants&format=csv', { data: 'participant_id,amount,reason\nx,1,y\n', contentType: 'text/csv' });
    assert.equal(dryRun.status(), 403, await dryRun.text());
    const grant = await asPage(analyst, svc, 'POST', '/api/v1/gamify/points/grant', { data: { participant_id: PERSON, amount: 1, reason: 'no', idempotency_key: 'analyst-1' } });
    assert.equal(grant.status(), 403, await grant.text());
  });

  assertClean();
});
