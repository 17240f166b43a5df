import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { assertAccessible, launchConsoleBrowser, PHONE, screenshot } from './console-kit.js';

/**
 * The console (packages/console) in a real browser: the shell, sign-in,
 * overview, participants, rules, tiers, badges, webhooks, settings, audit log
 * and role limits. Other sections have their own files (console-*.test.ts);
 * console-kit.ts holds what they share.
 */
test('the console in Chromium: sign-in, every built screen accessible and within its CSP, grant with confirmation, backtest before activation', { timeout: 300_000 }, async (t) => {
  const svc: TestService = await startTestService(t, { config: { ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' } });
  const tenant: TestTenant = await svc.createTenant();
  const call = async (method: string, p: string, body?: unknown) => {
    const response = await svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.ok(response.status < 300, `${method} ${p}: ${response.status} ${response.text}`);
    return response.body;
  };

  // A small program: a participant with a profile and points, a rule, a tier, a badge, a destination.
  await call('PATCH', '/api/v1/gamify/admin/participants/p-ada/profile', { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', display_name: 'Ada L.', country_code: 'GB', external_id: 'crm-1815' });
  await call('PATCH', '/api/v1/gamify/admin/participants/p-bob/profile', { email: 'bob@example.com', display_name: 'Bob', country_code: 'FR', external_id: 'crm-2001' });
  await call('POST', '/api/v1/gamify/points/grant', { participant_id: 'p-ada', amount: 120, reason: 'welcome', idempotency_key: 'seed-ada' });
  await call('POST', '/api/v1/admin/points/tiers', { code: 'silver', name: 'Silver', min_lifetime_points: 100 });
  await call('POST', '/api/v1/admin/points/tiers', { code: 'gold', name: 'Gold', min_lifetime_points: 500 });
  await call('POST', '/api/v1/admin/badges', { code: 'first-order', name: 'First order', description: 'Placed a first order' });
  await call('POST', '/api/v1/admin/rules', { name: 'Points per order', trigger: 'event', event_name: 'order_placed', effects: [{ type: 'award_points', points: 25 }], status: 'active' });
  await call('POST', '/api/v1/ingest/events', { event_name: 'order_placed', participant_id: 'p-bob', properties: { total: 30 }, idempotency_key: 'seed-order-1' });
  await call('POST', '/api/v1/gamify/webhooks', { name: 'CRM', url: 'http://127.0.0.1:9/hooks/loyalty', events: ['points.awarded.v1'] });

  const { newPage, signIn, open, assertClean } = await launchConsoleBrowser(t, svc);
  await scenarios();

  async function scenarios(): Promise<void> {
    await t.test('the page is served with a strict policy and long-cached, hashed assets', async () => {
      const response = await fetch(`${svc.baseUrl}/console/participants/p-ada`);
      assert.equal(response.status, 200);
      const csp = response.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      const html = await response.text();
      assert.doesNotMatch(html, /<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
      const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      assert.ok(script);
      const asset = await fetch(`${svc.baseUrl}${script}`);
      assert.equal(asset.status, 200);
      assert.match(asset.headers.get('cache-control') ?? '', /immutable/);
      assert.equal((await fetch(`${svc.baseUrl}/console/assets/nothing-here.js`)).status, 404);
    });

    await t.test('sign-in page: a wrong password shows the API detail; the owner signs in', async () => {
      const page = await newPage();
      await page.goto(`${svc.baseUrl}/console/`);
      await page.getByRole('heading', { name: 'Sign in to the loyalty console' }).waitFor();
      await assertAccessible(page, 'sign-in');
      await screenshot(page, '01-sign-in');
      await page.getByLabel('Email').fill(tenant.adminEmail);
      await page.getByLabel(/^Password/).fill('not the password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const error = page.getByTestId('api-error');
      await error.waitFor();
      assert.match((await error.textContent())!, /\S/);
    });

    const page = await newPage();
    await signIn(page, tenant.adminEmail, tenant.adminPassword);

    await t.test('overview: charts per day and totals', async () => {
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.locator('figure .recharts-surface').first().waitFor();
      assert.equal(await page.locator('figure').count(), 6, 'six charts: liability, expiry forecast, points, active participants, events, webhooks');
      await assertAccessible(page, 'overview');
      await screenshot(page, '02-overview');
    });

    await t.test('participants: search by external id, the masked page, a grant confirmed in a dialog', async () => {
      await open(page, 'Participants', 'Participants');
      await page.getByTestId('participant-table').waitFor();
      await assertAccessible(page, 'participants');
      await screenshot(page, '03-participants');
      await page.getByLabel('Find a participant').fill('crm-1815');
      await page.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByTestId('search-count').filter({ hasText: '1 participant matches' }).waitFor();
      await page.getByTestId('search-results').getByRole('link', { name: 'p-ada' }).click();
      await page.getByRole('heading', { level: 1, name: 'Participant p-ada' }).waitFor();
      await page.locator('[data-testid="available"][data-value="120"]').waitFor();
      await page.getByRole('tab', { name: 'Profile' }).click();
      // The owner holds read:pii and sees the profile in full; a support user sees it masked and reveals one field with a reason.
      {
        // The profile loads after the balance: wait for it rather than read the page too early.
        await page.locator('main').getByText('ada@example.com').first().waitFor();
        assert.match((await page.textContent('main'))!, /ada@example\.com/, 'the owner sees the profile in full');
        const invited = await svc.request('POST', '/api/v1/admin/users', { key: tenant.apiKey, body: { email: `support@${tenant.slug}.example`, role: 'support' } });
        assert.equal(invited.status, 201, invited.text);
        const token = decodeURIComponent(/#token=(.+)$/.exec(invited.body.invite_url)![1]);
        const accepted = await svc.request('POST', '/api/v1/console/invitations/accept', { body: { token, password: 'support staff password' } });
        assert.equal(accepted.status, 200, accepted.text);
        const support = await newPage();
        await signIn(support, `support@${tenant.slug}.example`, 'support staff password');
        await support.goto(`${svc.baseUrl}/console/participants/p-ada`);
        await support.getByRole('heading', { level: 1, name: 'Participant p-ada' }).waitFor();
        await support.locator('[data-testid="available"][data-value="120"]').waitFor();
        await support.getByRole('tab', { name: 'Profile' }).click();
        await support.getByRole('button', { name: 'Reveal Email' }).waitFor();
        assert.doesNotMatch((await support.textContent('main'))!, /ada@example\.com/, 'the profile is masked for support');
        await support.getByRole('button', { name: 'Reveal Email' }).click();
        const reveal = support.getByRole('dialog', { name: 'Reveal Email' });
        await reveal.getByLabel(/^Reason/).fill('ticket 4711: customer asked');
        await reveal.getByRole('button', { name: 'Reveal' }).click();
        assert.equal(await reveal.getByTestId('revealed-value').textContent(), 'ada@example.com');
        await assertAccessible(support, 'reveal dialog');
        await reveal.getByRole('button', { name: 'Close' }).click();
        const log = await svc.request('GET', '/api/v1/admin/pii-access-log?participant_id=p-ada', { key: tenant.apiKey });
        assert.ok(log.body.entries.some((entry: { reason: string | null }) => entry.reason === 'ticket 4711: customer asked'), 'the reveal is in the access log');
      }

      await page.getByRole('tab', { name: 'Adjust' }).click();
      await page.getByLabel(/^Amount/).fill('50');
      await page.getByLabel(/^Reason/).fill('goodwill: late delivery');
      await page.getByRole('button', { name: 'Grant points' }).last().click();
      const dialog = page.getByRole('dialog', { name: 'Confirm the adjustment' });
      await dialog.waitFor();
      assert.match((await dialog.textContent())!, /Grant 50 points to p-ada/);
      await assertAccessible(page, 'grant confirmation');
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await page.locator('[data-testid="available"][data-value="170"]').waitFor();
      await page.getByRole('tab', { name: 'Ledger' }).click();
      await page.getByText('goodwill: late delivery').waitFor();
      await page.getByRole('tab', { name: 'Adjust' }).click();
      const stored = await svc.sql('SELECT available FROM points_balances WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, 'p-ada']);
      assert.equal(Number(stored[0].available), 170);

      // A deduction larger than the balance: the API's own detail, beside the form's button.
      await page.getByRole('radio', { name: 'Deduct points' }).check();
      await page.getByLabel(/^Amount/).fill('100000');
      await page.getByLabel(/^Reason/).fill('test an overdraft');
      await page.getByRole('button', { name: 'Deduct points' }).last().click();
      const deduct = page.getByRole('dialog', { name: 'Confirm the adjustment' });
      await deduct.getByRole('button', { name: 'Confirm' }).click();
      const refused = page.getByTestId('api-error');
      await refused.waitFor();
      assert.match((await refused.textContent())!, /has 170 points available/);
      await assertAccessible(page, 'participant page');
      await screenshot(page, '04-participant');
    });

    await t.test('earn rules: a new rule cannot be activated before its backtest', async () => {
      await open(page, 'Earn rules', 'Earn rules');
      await page.getByTestId('rules').waitFor();
      await assertAccessible(page, 'rules');
      await screenshot(page, '05-rules');
      await page.getByRole('link', { name: 'New rule' }).click();
      await page.getByLabel(/^Name/).fill('Double order points');
      await page.getByRole('combobox', { name: /^Event name/ }).fill('order_placed');
      await page.getByLabel('Points per event').fill('50');
      await page.getByLabel(/^Status/).first().click();
      await page.getByRole('option', { name: 'Active' }).click();
      assert.equal(await page.getByRole('button', { name: 'Save rule' }).isDisabled(), true, 'activation waits for the backtest');
      await page.getByRole('button', { name: 'Run the backtest' }).click();
      const result = page.getByTestId('backtest-result');
      await result.waitFor();
      assert.match((await result.textContent())!, /1 of 1 events matched/);
      assert.match((await result.textContent())!, /50 points would have been awarded/);
      await assertAccessible(page, 'rule editor');
      await screenshot(page, '06-rule-backtest');
      await page.getByRole('button', { name: 'Save rule' }).click();
      await page.getByRole('heading', { level: 1, name: 'Rule: Double order points' }).waitFor();
    });

    for (const [link, heading, shot] of [
      ['Tiers', 'Tiers', '07-tiers'],
      ['Badges', 'Badges', '08-badges'],
      ['Webhooks', 'Webhook destinations', '09-webhooks'],
      ['Event catalogue', 'Event catalogue', '11-event-catalogue'],
      ['Settings', 'Settings', '12-settings'],
    ] as const) {
      await t.test(`${heading}: accessible`, async () => {
        await open(page, link, heading);
        await page.waitForLoadState('networkidle');
        await assertAccessible(page, heading);
        await screenshot(page, shot);
        if (link === 'Webhooks') {
          await page.getByRole('link', { name: 'CRM' }).click();
          await page.getByRole('heading', { level: 1, name: 'CRM' }).waitFor();
          await page.getByRole('button', { name: 'Send test event' }).click();
          await page.getByTestId('test-result').waitFor();
          await page.getByTestId('deliveries').waitFor();
          await assertAccessible(page, 'webhook destination');
          await screenshot(page, '10-webhook-deliveries');
        }
      });
    }

    await t.test('on a phone: the overview and the participant page', async () => {
      const phone = await newPage(PHONE);
      await signIn(phone, tenant.adminEmail, tenant.adminPassword);
      await phone.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await phone.locator('figure .recharts-surface').first().waitFor();
      await assertAccessible(phone, 'overview on a phone');
      await screenshot(phone, '13-phone-overview');
      await phone.goto(`${svc.baseUrl}/console/participants/p-ada`);
      await phone.locator('[data-testid="available"]').waitFor();
      await assertAccessible(phone, 'participant on a phone');
      await screenshot(phone, '14-phone-participant');
      // The navigation is behind the menu button.
      await phone.getByRole('button', { name: 'Show or hide the navigation' }).click();
      await phone.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Settings' }).click();
      await phone.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
    });

    await t.test('audit log: the changes made above, newest first', async () => {
      await open(page, 'Audit log', 'Audit log');
      await page.getByTestId('audit-log').waitFor();
      await assertAccessible(page, 'audit log');
      await screenshot(page, '15-audit-log');
    });

    await t.test('a marketer: the page hides participant adjustments, and the API refuses them (403)', async () => {
      const owner = page.context().request;
      const session = await (await owner.get(`${svc.baseUrl}/api/v1/console/session`)).json();
      const invited = await owner.post(`${svc.baseUrl}/api/v1/admin/users`, { headers: { 'x-csrf-token': session.csrf_token }, data: { email: 'mara@example.com', role: 'marketer' } });
      assert.equal(invited.status(), 201, await invited.text());
      const token = new URLSearchParams(new URL((await invited.json()).invite_url).hash.slice(1)).get('token');
      const accepted = await svc.request('POST', '/api/v1/console/invitations/accept', { body: { token, password: 'a long marketer password 42' } });
      assert.equal(accepted.status, 200, accepted.text);

      const marketer = await newPage();
      await signIn(marketer, 'mara@example.com', 'a long marketer password 42');
      const links = await marketer.getByRole('navigation', { name: 'Console sections' }).getByRole('link').allTextContents();
      assert.ok(links.includes('Earn rules') && links.includes('Participants'), links.join());
      assert.ok(!links.includes('Webhooks') && !links.includes('Audit log'), `a marketer sees no developer or audit screens: ${links.join()}`);
      await marketer.goto(`${svc.baseUrl}/console/participants/p-ada`);
      await marketer.locator('[data-testid="available"]').waitFor();
      assert.equal(await marketer.getByRole('heading', { name: 'Adjust points' }).count(), 0, 'no adjustment form');
      assert.equal(await marketer.getByRole('button', { name: /^Reveal/ }).count(), 0, 'no reveal');

      const mine = await (await marketer.context().request.get(`${svc.baseUrl}/api/v1/console/session`)).json();
      const refused = await marketer.context().request.post(`${svc.baseUrl}/api/v1/gamify/points/grant`, {
        headers: { 'x-csrf-token': mine.csrf_token },
        data: { participant_id: 'p-ada', amount: 5, reason: 'not allowed', idempotency_key: 'marketer-try' },
      });
      assert.equal(refused.status(), 403);
      assert.equal((await refused.json()).code, 'AUTH_FORBIDDEN');
      const hooks = await marketer.context().request.get(`${svc.baseUrl}/api/v1/gamify/webhooks?limit=5`);
      assert.equal(hooks.status(), 403);
    });

    await t.test('the session ends: the next call brings back the sign-in page', async () => {
      await page.context().clearCookies();
      await open(page, 'Participants', 'Participants').catch(() => undefined);
      // The list may come from the page's cache (answers younger than 15 s are not asked for again):
      // a search the page has not made before is a call the server must answer.
      // (Opening the screen may already have been refused, the sign-in form replacing it: then there is no box to fill.)
      await page.getByLabel('Find a participant').fill('crm-never-searched', { timeout: 5_000 }).catch(() => undefined);
      await page.getByRole('button', { name: 'Search', exact: true }).click({ timeout: 5_000 }).catch(() => undefined);
      // The next call is refused (401) and the page goes back to the sign-in form, which says why.
      await page.getByRole('heading', { name: 'Sign in to the loyalty console' }).waitFor();
      await page.getByText('Your session ended. Please sign in again.').waitFor();
    });

    await t.test('sign out returns to the sign-in page', async () => {
      await signIn(page, tenant.adminEmail, tenant.adminPassword);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in to the loyalty console' }).waitFor();
      const after = await page.context().request.get(`${svc.baseUrl}/api/v1/console/session`);
      assert.equal(after.status(), 401);
    });

    assertClean();
  }
});
