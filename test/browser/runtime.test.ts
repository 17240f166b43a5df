import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { closeChromium, launchChromium } from './chromium.js';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { seedDemo, demoEngagement, DEMO_QUIZ_ANSWERS, DEMO_QUIZ_POINTS, type ApiCall } from '../../scripts/demo-seed.js';

/**
 * The runtime in a real browser (Debian's Chromium driven by playwright-core),
 * against the running service on loopback. The host page is served from
 * `localhost` and embeds the runtime from `127.0.0.1`, so the iframe is
 * cross-origin exactly as on a tenant's site. UPDATE_SCREENSHOTS=1 rewrites
 * docs/screenshots/*.png from these steps.
 */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/screenshots') : null;
const STEP_TIMEOUT_MS = 20_000;

interface HostMessage {
  source: string;
  version: number;
  type: string;
  [field: string]: any;
}

async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

async function hostMessages(page: Page): Promise<HostMessage[]> {
  return page.evaluate(() => (window as unknown as { loyaltyMessages: HostMessage[] }).loyaltyMessages ?? []);
}

async function waitForMessage(page: Page, predicate: (m: HostMessage) => boolean, what: string): Promise<HostMessage> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const found = (await hostMessages(page)).find(predicate);
    if (found) return found;
    await page.waitForTimeout(50);
  }
  throw new Error(`the host page received no ${what} message; it has ${JSON.stringify(await hostMessages(page))}`);
}

async function runtimeFrame(page: Page): Promise<Frame> {
  const handle = await page.waitForSelector('#engagement', { timeout: STEP_TIMEOUT_MS });
  const frame = await handle.contentFrame();
  assert.ok(frame, 'the host page has the runtime iframe');
  return frame;
}

test('the runtime in Chromium: embedded spin, quiz, gate and host messages; clear messages for every failure', { timeout: 180_000 }, async (t) => {
  // With the job runner: the live stream hears of events from the outbox dispatcher.
  const svc: TestService = await startTestService(t, { jobs: true });
  const port = new URL(svc.baseUrl).port;
  const embedBase = `http://127.0.0.1:${port}`;
  const hostBase = `http://localhost:${port}`;
  const tenant: TestTenant = await svc.createTenant();
  const call: ApiCall = (method, p, body) => svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
  const seed = await seedDemo(call);

  async function engagement(options: Parameters<typeof demoEngagement>[0]): Promise<string> {
    const created = await call('POST', '/api/v1/admin/engagements', demoEngagement(options));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await call('POST', `/api/v1/admin/engagements/${created.body.id}/publish`)).status, 200);
    return created.body.id;
  }

  const browser: Browser = await launchChromium();
  const contexts: BrowserContext[] = [];
  const newPage = async (options: { reducedMotion?: 'reduce' | 'no-preference' } = {}) => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, reducedMotion: options.reducedMotion ?? 'reduce' });
    contexts.push(context);
    return context.newPage();
  };
  // The browser closes before the service stops (t.after hooks would run after it), so no connection holds the service open.
  try {
    await scenarios();
  } finally {
    for (const context of contexts) await context.close().catch(() => undefined);
    await closeChromium(browser);
  }

  async function scenarios(): Promise<void> {

  await t.test('embedded on a host page of another origin: spin lands on the server draw, the quiz awards points, the gate unlocks, the host hears activity:completed only', async () => {
    const page = await newPage({ reducedMotion: 'no-preference' });
    const hostUrl = `${hostBase}/embed-demo/${tenant.slug}/${seed.siteSlug}?engagement_id=${seed.engagementId}&embed_base=${encodeURIComponent(embedBase)}`;
    const response = await page.goto(hostUrl);
    assert.equal(response?.status(), 200);
    const frame = await runtimeFrame(page);
    const ready = await waitForMessage(page, (m) => m.type === 'runtime:ready', 'runtime:ready');
    assert.equal(ready.engagement_id, seed.engagementId);
    assert.match(ready.participant_id, /^anon_/);
    await frame.waitForSelector('[data-role="points"][data-available="0"]', { timeout: STEP_TIMEOUT_MS });
    await frame.waitForSelector('.lr-tab[data-screen-id="vip"][data-locked="true"]');
    await screenshot(page, '01-host-page');

    // Spin: the wheel turns to the segment the server drew and names its prize.
    await frame.click('[data-action="spin"]');
    const prize = await frame.waitForSelector('[data-role="prize"]', { timeout: STEP_TIMEOUT_MS });
    const spun = await waitForMessage(page, (m) => m.type === 'activity:completed' && m.activity_type === 'spin_wheel', 'activity:completed (spin)');
    assert.equal(spun.source, 'loyalty-runtime');
    assert.equal(spun.version, 1);
    assert.equal(spun.engagement_id, seed.engagementId);
    assert.equal(spun.activity_id, 'wheel');
    assert.match(spun.fact_id, /\S/);
    assert.ok((await prize.textContent())!.includes(spun.result.prize_label), 'the page shows the prize the server drew');
    assert.equal(Number(await prize.getAttribute('data-segment-index')), spun.result.segment_index);
    const rotation = await frame.$eval('.lr-wheel-rotor', (el) => Number(/rotate\((-?[\d.]+)deg\)/.exec((el as SVGGElement).style.transform)?.[1]));
    const segmentCount = 5;
    const underPointer = Math.floor((((360 - (rotation % 360)) % 360) / 360) * segmentCount);
    assert.equal(underPointer, spun.result.segment_index, 'the wheel stopped on the segment the server drew');
    await screenshot(page, '02-spin-result');

    // The gated screen is locked and says how to unlock it.
    await frame.click('.lr-tab[data-screen-id="vip"]');
    const locked = await frame.waitForSelector('[data-role="locked"]');
    assert.match((await locked.textContent())!, /Complete the quiz and hold 50 points/);
    await screenshot(page, '03-gate-locked');

    // Quiz (reached with the keyboard: arrows move between tabs): the server scores the answers and awards the points.
    const pointsBefore = Number(await frame.getAttribute('[data-role="points"]', 'data-available'));
    await frame.focus('.lr-tab[data-screen-id="vip"]');
    await page.keyboard.press('ArrowLeft');
    await frame.waitForSelector('.lr-tab[data-screen-id="quiz"][aria-selected="true"]');
    assert.equal(await frame.getAttribute('.lr-tab[data-screen-id="quiz"]', 'tabindex'), '0');
    await frame.click('[data-action="submit-quiz"]');
    assert.match((await frame.textContent('.lr-quiz [data-role="error"]'))!, /answer every question/);
    for (const [question, option] of Object.entries(DEMO_QUIZ_ANSWERS)) await frame.check(`input[name="q-${question}"][value="${option}"]`);
    await frame.click('[data-action="submit-quiz"]');
    const score = await frame.waitForSelector('[data-role="score"][data-passed="true"]', { timeout: STEP_TIMEOUT_MS });
    assert.match((await score.textContent())!, /3 of 3 correct \(100%\)/);
    const quizzed = await waitForMessage(page, (m) => m.type === 'activity:completed' && m.activity_type === 'quiz', 'activity:completed (quiz)');
    assert.equal(quizzed.points_awarded, DEMO_QUIZ_POINTS);
    assert.equal(quizzed.result.passed, true);
    await frame.waitForSelector(`[data-role="points"][data-available="${pointsBefore + DEMO_QUIZ_POINTS}"]`, { timeout: STEP_TIMEOUT_MS });
    const stored = await svc.sql('SELECT available FROM points_balances WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, ready.participant_id]);
    assert.equal(Number(stored[0].available), pointsBefore + DEMO_QUIZ_POINTS, 'the page shows the balance the server holds');

    // The gate unlocks: announced, and the screen opens.
    await frame.waitForSelector('.lr-tab[data-screen-id="vip"][data-locked="false"]', { timeout: STEP_TIMEOUT_MS });
    assert.match((await frame.textContent('[data-role="notice"]'))!, /Unlocked: VIP lounge/);
    await screenshot(page, '04-quiz-passed-gate-unlocked');
    await frame.click('.lr-tab[data-screen-id="vip"]');
    await frame.waitForSelector('text=Welcome to the VIP lounge');
    await frame.waitForSelector('[data-role="badges"] [data-badge-code="quiz-master"][data-earned="true"]', { timeout: STEP_TIMEOUT_MS });
    await frame.waitForSelector('[data-role="rewards"] li:not(.lr-loading)', { timeout: STEP_TIMEOUT_MS });
    if (spun.result.prize_type === 'reward') assert.ok(await frame.$('[data-role="rewards"] [data-reward-id="spring-coupon"]'), 'the coupon won on the wheel is listed');
    else assert.match((await frame.textContent('[data-role="rewards"]'))!, /No rewards yet/);

    await screenshot(page, '05-vip-screen');

    // Points granted by the tenant's server show without any action on the page: it follows the live stream.
    const shown = Number(await frame.getAttribute('[data-role="points"]', 'data-available'));
    const granted = await call('POST', '/api/v1/gamify/points/grant', { participant_id: ready.participant_id, amount: 25, reason: 'live stream check', idempotency_key: `live-${Date.now()}` });
    assert.equal(granted.status, 200, JSON.stringify(granted.body));
    await frame.waitForSelector(`[data-role="points"][data-available="${shown + 25}"]`, { timeout: STEP_TIMEOUT_MS });

    const messages = await hostMessages(page);
    assert.equal(messages.filter((m) => m.type === 'activity:completed').length, 2);
    assert.equal(messages.filter((m) => m.type === 'engagement:completed').length, 0, 'engagement:completed is never sent');
    assert.ok(messages.every((m) => m.source === 'loyalty-runtime' && m.version === 1));
    assert.equal((await page.$$('#messages li[data-type="activity:completed"]')).length, 2, 'the host page listed both messages');
  });

  await t.test('the runtime page carries a CSP for embedding: frame-ancestors * by default, the engagement\'s embed_origins (and the service\'s own origin, for the console preview) when set', async () => {
    const open = await svc.request('GET', `/embed/${tenant.slug}/${seed.siteSlug}`);
    assert.equal(open.status, 200);
    assert.match(open.headers.get('content-type') ?? '', /^text\/html/);
    const csp = open.headers.get('content-security-policy') ?? '';
    assert.match(csp, /frame-ancestors \*/);
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /default-src 'none'/);
    assert.equal(open.headers.get('x-frame-options'), null);
    await engagement({ siteSlug: 'shop-only', embedOrigins: ['https://shop.example.com', 'https://*.example.org'] });
    const restricted = await svc.request('GET', `/embed/${tenant.slug}/shop-only`);
    assert.match(restricted.headers.get('content-security-policy') ?? '', /frame-ancestors 'self' https:\/\/shop\.example\.com https:\/\/\*\.example\.org(;|$)/);
    const bad = await call('POST', '/api/v1/admin/engagements', { ...demoEngagement({ siteSlug: 'bad-origins' }), embed_origins: ['javascript:alert(1)'] });
    assert.equal(bad.status, 400);
    const script = await svc.request('GET', '/embed/assets/runtime.js');
    assert.equal(script.status, 200);
    assert.match(script.headers.get('content-type') ?? '', /javascript/);
    assert.ok(!script.text.includes("'engagement:completed'") && !script.text.includes('"engagement:completed"'), 'the bundle never names engagement:completed as a message type');
  });

  await t.test('an unknown site, tenant or unpublished engagement shows "not available", never a server error page', async () => {
    const page = await newPage();
    for (const address of [`/embed/${tenant.slug}/no-such-site`, '/embed/no-such-tenant/spring']) {
      const response = await page.goto(`${embedBase}${address}`);
      assert.equal(response?.status(), 404);
      const box = await page.waitForSelector('[role="alert"][data-code="SITE_NOT_FOUND"]');
      assert.match((await box.textContent())!, /not available/);
    }
    const invalid = await page.goto(`${embedBase}/embed/${tenant.slug}/Not_A_Slug`);
    assert.equal(invalid?.status(), 400);
    assert.match((await page.textContent('[role="alert"]'))!, /address is not valid/);

    // Published when the page loaded, taken off its site before the visitor spins.
    const id = await engagement({ siteSlug: 'short-lived' });
    await page.goto(`${embedBase}/embed/${tenant.slug}/short-lived?engagement_id=${id}`);
    await page.waitForSelector('[data-action="spin"]:not([disabled])', { timeout: STEP_TIMEOUT_MS });
    assert.equal((await call('POST', `/api/v1/admin/engagements/${id}/unpublish`)).status, 200);
    await page.click('[data-action="spin"]');
    const error = await page.waitForSelector('.lr-spin-wheel [data-role="error"][data-code="ENGAGEMENT_NOT_PUBLISHED"]', { timeout: STEP_TIMEOUT_MS });
    assert.match((await error.textContent())!, /not running any more/);
    const reloaded = await page.goto(`${embedBase}/embed/${tenant.slug}/short-lived?engagement_id=${id}`);
    assert.equal(reloaded?.status(), 404);
    await page.waitForSelector('[data-code="SITE_NOT_FOUND"]');
    await screenshot(page, '06-not-available');
  });

  await t.test('exhausted attempts: the wheel says so and cannot be spun', async () => {
    const id = await engagement({ siteSlug: 'one-spin', wheelMaxAttempts: 1 });
    const session = await svc.createSession(tenant, { engagementId: id, participantId: 'visitor-1' });
    const page = await newPage();
    await page.goto(`${embedBase}/embed/${tenant.slug}/one-spin?engagement_id=${id}#session=${encodeURIComponent(session.sessionId)}`);
    assert.ok(!page.url().includes('#session'), 'the session fragment is removed from the address at once');
    await page.click('[data-action="spin"]:not([disabled])', { timeout: STEP_TIMEOUT_MS });
    await page.waitForSelector('[data-role="prize"]', { timeout: STEP_TIMEOUT_MS });
    await page.waitForSelector('.lr-spin-wheel [data-role="attempts"]:has-text("You have used all 1 of your attempts.")', { timeout: STEP_TIMEOUT_MS });
    assert.equal(await page.isDisabled('[data-action="spin"]'), true);
    // A second tab of the same participant: the server refuses, the page explains.
    const again = await newPage();
    await again.goto(`${embedBase}/embed/${tenant.slug}/one-spin?engagement_id=${id}#session=${encodeURIComponent(session.sessionId)}`);
    await again.waitForSelector('.lr-spin-wheel [data-role="attempts"]:has-text("You have used all 1 of your attempts.")', { timeout: STEP_TIMEOUT_MS });
    assert.equal(await again.isDisabled('[data-action="spin"]'), true);
    await again.$eval('[data-action="spin"]', (button) => ((button as HTMLButtonElement).disabled = false));
    await again.click('[data-action="spin"]');
    const error = await again.waitForSelector('.lr-spin-wheel [data-role="error"][data-code="ATTEMPTS_EXHAUSTED"]', { timeout: STEP_TIMEOUT_MS });
    assert.match((await error.textContent())!, /No attempts left\. You have used all 1 of your attempts\./);
    await screenshot(again, '07-attempts-exhausted');
  });

  await t.test('anonymous sessions disabled: a clear sign-in message; a server-issued session in the fragment works', async () => {
    const id = await engagement({ siteSlug: 'members', allowAnonymousSessions: false });
    const page = await newPage();
    await page.goto(`${embedBase}/embed/${tenant.slug}/members?engagement_id=${id}`);
    const box = await page.waitForSelector('[role="alert"][data-code="ANONYMOUS_SESSIONS_DISABLED"]', { timeout: STEP_TIMEOUT_MS });
    assert.match((await box.textContent())!, /please sign in/i);
    await screenshot(page, '08-sign-in-needed');

    const session = await svc.createSession(tenant, { engagementId: id, participantId: 'member-7' });
    const host = await newPage();
    await host.goto(`${hostBase}/embed-demo/${tenant.slug}/members?engagement_id=${id}&embed_base=${encodeURIComponent(embedBase)}#session=${encodeURIComponent(session.sessionId)}`);
    await waitForMessage(host, (m) => m.type === 'runtime:ready', 'runtime:ready');
    const frame = await runtimeFrame(host);
    await frame.click('[data-action="spin"]:not([disabled])', { timeout: STEP_TIMEOUT_MS });
    await frame.waitForSelector('[data-role="prize"]', { timeout: STEP_TIMEOUT_MS });
    const completions = await svc.sql("SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = $1 AND participant_id = 'member-7' AND event = 'activity.completed'", [tenant.tenantId]);
    assert.equal(completions[0].n, 1, 'the spin was made as the participant of the server-issued session');
    assert.ok(!frame.url().includes('#session'), 'the runtime removed the session from its address');
    assert.ok(!host.url().includes('#session'), 'the host page removed the session from its address');
  });

  await t.test('network failure and server errors: a message with a retry, never a raw answer', async () => {
    const page = await newPage();
    await page.route('**/api/v1/sites/**', (route) => route.abort('connectionrefused'));
    await page.goto(`${embedBase}/embed/${tenant.slug}/${seed.siteSlug}`);
    const offline = await page.waitForSelector('[role="alert"][data-code="NETWORK_ERROR"]', { timeout: STEP_TIMEOUT_MS });
    assert.match((await offline.textContent())!, /cannot be reached/);
    await screenshot(page, '09-network-failure');
    await page.unroute('**/api/v1/sites/**');
    await page.click('[data-action="retry"]');
    await page.waitForSelector('[data-action="spin"]', { timeout: STEP_TIMEOUT_MS });

    await page.route('**/validate', (route) => route.fulfill({ status: 500, contentType: 'text/html', body: '<html><body><h1>Internal Server Error</h1><pre>stack trace</pre></body></html>' }));
    await page.click('[data-action="spin"]:not([disabled])');
    const failed = await page.waitForSelector('.lr-spin-wheel [data-role="error"]', { timeout: STEP_TIMEOUT_MS });
    assert.match((await failed.textContent())!, /had a problem/);
    assert.equal(await page.$('text=stack trace'), null);
    assert.equal(await page.$('text=Internal Server Error'), null);
  });
}
});
