import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { closeChromium, launchChromium } from './chromium.js';
// The console's axe check waits for transitions to settle first: a button fading back from disabled measured mid-fade fails contrast.
import { assertAccessible } from './console-kit.js';
import { startTestService, type TestService, type TestTenant } from '../helper.js';
import { CATALOGUES } from '../../packages/runtime/src/i18n.js';
import { PAGE_TEXTS } from '../../src/modules/runtime/page-texts.js';
import { repositoryRoot } from '../repository.js';

/**
 * The runtime fitted to a brand, in Chromium: a theme from the engagement
 * (`canvas.theme`) and from the embed URL (`lk-*`), German chosen by the
 * browser's language, by the participant's locale (the service tells it) and
 * overridden by `locale`, badges and rewards by name and image, reduced motion (emulated through the DevTools protocol) with no
 * animation, and axe-core clean. UPDATE_SCREENSHOTS=1 writes
 * docs/screenshots/runtime-*.png.
 */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/screenshots') : null;
const STEP_TIMEOUT_MS = 20_000;
const BADGE_IMAGE = 'https://images.example.com/badges/quiz-master.svg';
const REWARD_IMAGE = 'https://images.example.com/rewards/summer-coupon.svg';
const BADGE_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="15" fill="#f59e0b"/><path d="M16 6l3 7h7l-6 4 2 8-6-5-6 5 2-8-6-4h7z" fill="#fff"/></svg>';
const QUIZ_ANSWERS = { q1: 1, q2: 0 };
const run = promisify(execFile);
const RUNTIME_PACKAGE = path.join(repositoryRoot, 'packages/runtime');

async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `runtime-${name}.png`), fullPage: true });
}

/** One screen with everything a brand shows: a wheel whose every prize is the coupon, a quiz that grants a badge with an image, the badge and reward lists. */
function brandedEngagement(siteSlug: string, theme: Record<string, string>) {
  return {
    name: 'Sommeraktion',
    site_slug: siteSlug,
    allow_anonymous_sessions: true,
    canvas: { theme },
    screens: [
      {
        id: 'main',
        name: 'Main',
        components: [
          { type: 'activity', activity_id: 'wheel' },
          { type: 'activity', activity_id: 'quiz' },
          { type: 'badges' },
          { type: 'rewards' },
        ],
      },
    ],
    activities: [
      {
        id: 'wheel',
        type: 'spin_wheel',
        name: 'Glücksrad',
        max_attempts: 3,
        segments: [
          { label: 'Gutschein', prize_type: 'reward', reward_id: 'summer-coupon', weight: 1, color: '#0f766e' },
          { label: 'Gutschein!', prize_type: 'reward', reward_id: 'summer-coupon', weight: 1, color: '#7c2d12' },
        ],
      },
      {
        id: 'quiz',
        type: 'quiz',
        name: 'Sommerquiz',
        max_attempts: 2,
        pass_percent: 50,
        questions: [
          { id: 'q1', text: 'Welche Jahreszeit folgt auf den Frühling?', options: ['Winter', 'Sommer'], correct_option: QUIZ_ANSWERS.q1 },
          { id: 'q2', text: 'Wie viele Tage hat eine Woche?', options: ['7', '8'], correct_option: QUIZ_ANSWERS.q2 },
        ],
        on_completion: [
          { type: 'award_points', amount: 1500, reason: 'quiz_passed', when: 'passed' },
          { type: 'grant_badge', badge_code: 'quiz-master', when: 'passed' },
        ],
      },
    ],
  };
}

test('the runtime fitted to a brand: theme, German, names and images, reduced motion, accessible', { timeout: 120_000 }, async (t) => {
  const svc: TestService = await startTestService(t);
  const port = new URL(svc.baseUrl).port;
  const base = `http://127.0.0.1:${port}`;
  const tenant: TestTenant = await svc.createTenant();
  const call = (method: string, p: string, body?: unknown) => svc.request(method, p, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
  assert.equal((await call('POST', '/api/v1/admin/badges', { code: 'quiz-master', name: 'Quizmeister', description: 'Sommerquiz bestanden.', image_url: BADGE_IMAGE })).status, 201);
  assert.equal((await call('POST', '/api/v1/admin/badges', { code: 'early-bird', name: 'Frühaufsteher' })).status, 201);
  const reward = await call('POST', '/api/v1/admin/rewards', { id: 'summer-coupon', type: 'coupon', name: '10 % Rabatt', code_source: 'generated', code_prefix: 'SUMMER', metadata: { discount_percent: 10, min_order_value: 20, currency: 'EUR' }, valid_for_days: 30, image_url: REWARD_IMAGE });
  assert.equal(reward.status, 201, reward.text);
  const created = await call('POST', '/api/v1/admin/engagements', brandedEngagement('sommer', { 'color-background': '#fffbeb', radius: '2px', 'color-accent': 'url(https://evil.example/x.png)' }));
  assert.equal(created.status, 201, created.text);
  assert.equal((await call('POST', `/api/v1/admin/engagements/${created.body.id}/publish`)).status, 200);
  const embed = `${base}/embed/${tenant.slug}/sommer`;

  const browser: Browser = await launchChromium();
  const contexts: BrowserContext[] = [];
  const newPage = async (locale: string) => {
    const context = await browser.newContext({ viewport: { width: 900, height: 900 }, locale, reducedMotion: 'no-preference' });
    contexts.push(context);
    const page = await context.newPage();
    // The images' host is not reachable from the test: the browser gets them from here.
    await page.route(`${new URL(BADGE_IMAGE).origin}/**`, (route) => route.fulfill({ status: 200, contentType: 'image/svg+xml', body: BADGE_SVG }));
    return page;
  };
  try {
    await t.test('the runtime and the service\'s own pages offer the same languages', () => {
      assert.deepEqual(Object.keys(CATALOGUES).sort(), Object.keys(PAGE_TEXTS).sort());
      assert.deepEqual(Object.keys(CATALOGUES).sort(), ['de', 'en']);
      assert.deepEqual(Object.keys(CATALOGUES.de).sort(), Object.keys(CATALOGUES.en).sort());
    });

    await t.test('a German browser gets German; the theme of the engagement and of the embed URL shows in the computed styles', async () => {
      const page = await newPage('de-DE');
      await page.goto(`${embed}?lk-color-accent=%230f766e&lk-font-family=Georgia,serif&lk-radius=4px&lk-spacing=20px&lk-color-text=javascript:x`);
      const spin = await page.waitForSelector('[data-action="spin"]:not([disabled])', { timeout: STEP_TIMEOUT_MS });
      assert.equal(await spin.textContent(), 'Glücksrad drehen');
      assert.equal(await page.getAttribute('html', 'lang'), 'de');
      await page.waitForSelector('.lr-spin-wheel [data-role="attempts"]:has-text("Noch 3 Drehungen.")', { timeout: STEP_TIMEOUT_MS });
      assert.equal(await page.textContent('[data-role="points"]'), '0 Punkte');
      assert.equal(await page.textContent('[data-action="submit-quiz"]'), 'Antworten absenden');
      await page.waitForSelector('[data-role="badges"] [data-badge-code="early-bird"]', { timeout: STEP_TIMEOUT_MS });
      assert.match((await page.textContent('[data-role="badges"] [data-badge-code="early-bird"]'))!, /Frühaufsteher \(noch nicht erhalten\)/);
      assert.match((await page.textContent('[data-role="rewards"]'))!, /Noch keine Prämien/);

      const styles = await page.evaluate(() => {
        const button = getComputedStyle(document.querySelector('[data-action="spin"]')!);
        const root = getComputedStyle(document.documentElement);
        const activity = getComputedStyle(document.querySelector('.lr-activity')!);
        return {
          accentVariable: root.getPropertyValue('--lk-color-accent').trim(),
          buttonBackground: button.backgroundColor,
          buttonRadius: button.borderTopLeftRadius,
          buttonFont: button.fontFamily,
          pageBackground: getComputedStyle(document.body).backgroundColor,
          text: getComputedStyle(document.body).color,
          activityPadding: activity.paddingTop,
        };
      });
      assert.equal(styles.accentVariable, '#0f766e', 'the embed URL\'s lk-color-accent is set');
      assert.equal(styles.buttonBackground, 'rgb(15, 118, 110)', 'the primary button has the accent colour');
      assert.equal(styles.buttonRadius, '4px', 'the embed URL\'s radius wins over the engagement\'s');
      assert.match(styles.buttonFont, /^Georgia, serif$/);
      assert.equal(styles.pageBackground, 'rgb(255, 251, 235)', 'the engagement\'s canvas.theme sets the background');
      assert.equal(styles.text, 'rgb(17, 24, 39)', 'an unusable value (javascript:x) is ignored, the default stays');
      assert.equal(styles.activityPadding, '20px', 'the spacing variable drives the padding');
      await assertAccessible(page, 'the themed German page');
      await screenshot(page, 'themed-de');

      // The quiz, in German: the page names the badge and shows its image, never its code.
      await page.click('[data-action="submit-quiz"]');
      assert.equal(await page.textContent('.lr-quiz [data-role="error"]'), 'Bitte beantworten Sie jede Frage.');
      for (const [question, option] of Object.entries(QUIZ_ANSWERS)) await page.check(`input[name="q-${question}"][value="${option}"]`);
      await page.click('[data-action="submit-quiz"]');
      const score = await page.waitForSelector('[data-role="score"][data-passed="true"]', { timeout: STEP_TIMEOUT_MS });
      assert.match((await score.textContent())!, /^Bestanden: 2 von 2 richtig \(100\s%\)\.$/, 'the percentage in the German format');
      const badgePrize = await page.waitForSelector('.lr-quiz [data-prize="badge"]');
      assert.equal(await badgePrize.textContent(), 'Abzeichen erhalten: Quizmeister');
      assert.equal(await badgePrize.$eval('img', (img) => (img as HTMLImageElement).src), BADGE_IMAGE);
      assert.equal(await page.textContent('.lr-quiz [data-prize="points"]'), '+1.500 Punkte', 'numbers in the German format');
      await page.waitForSelector('[data-role="points"][data-available="1500"]', { timeout: STEP_TIMEOUT_MS });
      assert.equal(await page.textContent('[data-role="points"]'), '1.500 Punkte');
      const earned = await page.waitForSelector('[data-role="badges"] [data-badge-code="quiz-master"][data-earned="true"]', { timeout: STEP_TIMEOUT_MS });
      assert.match((await earned.textContent())!, /^Quizmeister \(erhalten\)/);
      await page.waitForFunction(() => {
        const image = document.querySelector<HTMLImageElement>('[data-role="badges"] [data-badge-code="quiz-master"] img');
        return image !== null && image.complete && image.naturalWidth > 0;
      }, undefined, { timeout: STEP_TIMEOUT_MS });
      const shown = (await page.textContent('#loyalty-runtime'))!;
      assert.ok(!shown.includes('quiz-master') && !shown.includes('early-bird'), 'no badge code is shown');
      await assertAccessible(page, 'the German page after the quiz');
      await screenshot(page, 'badges-de');
    });

    await t.test('an explicit locale wins over the browser\'s language; a language without a catalogue falls back to English', async () => {
      const page = await newPage('de-DE');
      await page.goto(`${embed}?locale=en-GB`);
      await page.waitForSelector('[data-action="spin"]:has-text("Spin the wheel")', { timeout: STEP_TIMEOUT_MS });
      assert.equal(await page.getAttribute('html', 'lang'), 'en');
      const japanese = await newPage('ja-JP');
      await japanese.goto(embed);
      await japanese.waitForSelector('[data-action="spin"]:has-text("Spin the wheel")', { timeout: STEP_TIMEOUT_MS });
      // A participant whose locale is German, in an English browser, gets German from the service's word alone;
      // the page's explicit locale still wins over it.
      assert.equal((await svc.request('PATCH', '/api/v1/gamify/admin/participants/member-de/profile', { key: tenant.apiKey, body: { locale: 'de-CH' } })).status, 200);
      const session = await svc.createSession(tenant, { engagementId: created.body.id, participantId: 'member-de' });
      const member = await newPage('en-US');
      await member.goto(`${embed}?engagement_id=${created.body.id}#session=${encodeURIComponent(session.sessionId)}`);
      await member.waitForSelector('[data-action="spin"]:has-text("Glücksrad drehen")', { timeout: STEP_TIMEOUT_MS });
      assert.equal(await member.getAttribute('html', 'lang'), 'de');
      await member.goto(`${embed}?engagement_id=${created.body.id}&locale=en#session=${encodeURIComponent(session.sessionId)}`);
      await member.waitForSelector('[data-action="spin"]:has-text("Spin the wheel")', { timeout: STEP_TIMEOUT_MS });
      assert.equal(await member.getAttribute('html', 'lang'), 'en');
      // The service's own pages follow the same choice.
      await japanese.goto(`${base}/embed/${tenant.slug}/no-such-site?locale=de`);
      assert.match((await japanese.textContent('[role="alert"]'))!, /Diese Aktion ist nicht verfügbar/);
      assert.equal(await japanese.getAttribute('html', 'lang'), 'de');
      const german = await svc.request('GET', `/embed/${tenant.slug}/Not_A_Slug`, { headers: { 'accept-language': 'fr;q=0.9, de-AT;q=0.8, en;q=0.5' } });
      assert.equal(german.status, 400);
      assert.match(german.text, /Ungültige Adresse/);
    });

    await t.test('reduced motion (emulated through the DevTools protocol): the wheel jumps to its result with no animation, and the result is announced', async () => {
      const page = await newPage('de-DE');
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-reduced-motion', value: 'reduce' }] });
      await page.goto(embed);
      assert.equal(await page.evaluate(() => matchMedia('(prefers-reduced-motion: reduce)').matches), true);
      await page.click('[data-action="spin"]:not([disabled])', { timeout: STEP_TIMEOUT_MS });
      const prize = await page.waitForSelector('[data-role="prize"]', { timeout: STEP_TIMEOUT_MS });
      const motion = await page.evaluate(() => ({
        rotorTransition: (document.querySelector('.lr-wheel-rotor') as SVGGElement).style.transition,
        buttonTransition: getComputedStyle(document.querySelector('[data-action="spin"]')!).transitionDuration,
        animations: document.getAnimations().length,
        live: document.querySelector('.lr-spin-wheel [data-role="result"]')!.getAttribute('aria-live'),
      }));
      assert.equal(motion.rotorTransition, 'none', 'the wheel does not turn');
      assert.equal(motion.buttonTransition, '0s', 'no transition anywhere');
      assert.equal(motion.animations, 0);
      assert.equal(motion.live, 'polite', 'the result line is a live region');
      assert.match((await prize.textContent())!, /^Gewonnen: Gutschein!?!$/);
      // The reward by its name, with its code and its image (decoration beside the name: empty alt, like a badge's).
      const rewardPrize = await page.waitForSelector('.lr-spin-wheel [data-prize="reward"]');
      assert.match((await rewardPrize.textContent())!, /^Prämie: 10 % Rabatt \(Code SUMMER/);
      assert.deepEqual(await rewardPrize.$eval('img', (img) => ({ src: (img as HTMLImageElement).src, alt: img.getAttribute('alt') })), { src: REWARD_IMAGE, alt: '' });
      const listed = await page.waitForSelector('[data-role="rewards"] [data-reward-id="summer-coupon"]', { timeout: STEP_TIMEOUT_MS });
      assert.match((await listed.textContent())!, /^10 % Rabatt Code SUMMER\S+ \(gültig bis \d{2}\.\d{2}\.\d{4}\)$/, 'the date in the German format');
      await page.waitForFunction(() => {
        const image = document.querySelector<HTMLImageElement>('[data-role="rewards"] [data-reward-id="summer-coupon"] img');
        return image !== null && image.alt === '' && image.complete && image.naturalWidth > 0;
      }, undefined, { timeout: STEP_TIMEOUT_MS });
      await assertAccessible(page, 'the page after a spin under reduced motion');
      await screenshot(page, 'reduced-motion-spin-de');
    });

    await t.test('the packed package (npm pack) installs in an empty project, imports in Node, type-checks, and mounts into a host page whose CSS themes it', async () => {
      const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'runtime-pack-'));
      t.after(() => fs.rmSync(workDir, { recursive: true, force: true }));
      const dist = path.join(workDir, 'dist');
      await run(process.execPath, [path.join(RUNTIME_PACKAGE, 'scripts/build.mjs'), dist]);
      await run('npm', ['pack', dist, '--pack-destination', workDir]);
      const tarballs = fs.readdirSync(workDir).filter((name) => name.endsWith('.tgz'));
      assert.deepEqual(tarballs, [`loyalty-runtime-${JSON.parse(fs.readFileSync(path.join(RUNTIME_PACKAGE, 'package.json'), 'utf8')).version}.tgz`]);
      const tarball = path.join(workDir, tarballs[0]);
      const app = path.join(workDir, 'app');
      fs.mkdirSync(app);
      fs.writeFileSync(path.join(app, 'package.json'), '{ "name": "app", "private": true, "type": "module" }\n');
      await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], { cwd: app });
      const installed = path.join(app, 'node_modules/@loyalty/runtime');
      const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
      assert.equal(manifest.dependencies, undefined, 'the SDK is bundled: the package installs with nothing else');
      const imported = await run(process.execPath, ['--input-type=module', '-e', "import * as r from '@loyalty/runtime'; console.log(JSON.stringify({ mount: typeof r.mount, themes: Object.keys(r.THEME_VARIABLES).length, languages: Object.keys(r.CATALOGUES).sort(), de: r.chooseLocale(null, null, ['de-AT']) }))"], { cwd: app, env: { ...process.env, NODE_OPTIONS: '' } });
      assert.deepEqual(JSON.parse(imported.stdout), { mount: 'function', themes: 14, languages: ['de', 'en'], de: 'de-AT' });
      fs.writeFileSync(
        path.join(app, 'consumer.ts'),
        "import { mount, type Theme } from '@loyalty/runtime';\nconst theme: Theme = { 'color-accent': '#0f766e' };\nvoid mount(document.body, { baseUrl: '/', tenantSlug: 't', siteSlug: 's', theme, onMessage: (m) => console.log(m.type) });\n",
      );
      const tsc = path.join(repositoryRoot, 'node_modules/typescript/bin/tsc');
      await run(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022,dom', 'consumer.ts'], { cwd: app });
      assert.deepEqual(Object.keys(manifest.exports).sort(), ['.', './loyalty-runtime.js', './package.json', './runtime.css']);

      // A shop page on the service's origin (the service sends no CORS headers) that holds the runtime itself.
      const page = await newPage('en-GB');
      const host = `${base}/shop-page`;
      const files: Record<string, { type: string; body: string }> = {
        '/shop-page/': {
          type: 'text/html',
          body: `<!doctype html><html lang="en"><head><title>Shop</title><link rel="stylesheet" href="/shop-page/runtime.css"><style>.shop { --lk-color-accent: #be123c; --lk-font-family: Georgia, serif; }</style></head>
<body><main class="shop"><h1>Our shop</h1><div id="engagement"></div></main><script src="/shop-page/loyalty-runtime.js"></script>
<script>window.received = []; LoyaltyRuntime.mount(document.getElementById('engagement'), { baseUrl: location.origin, tenantSlug: ${JSON.stringify(tenant.slug)}, siteSlug: 'sommer', onMessage: (m) => window.received.push(m) });</script></body></html>`,
        },
        '/shop-page/runtime.css': { type: 'text/css', body: fs.readFileSync(path.join(installed, 'runtime.css'), 'utf8') },
        '/shop-page/loyalty-runtime.js': { type: 'text/javascript', body: fs.readFileSync(path.join(installed, 'loyalty-runtime.js'), 'utf8') },
      };
      await page.route(`${host}/**`, (route) => {
        const file = files[new URL(route.request().url()).pathname];
        return file ? route.fulfill({ status: 200, contentType: file.type, body: file.body }) : route.fulfill({ status: 404, body: '' });
      });
      await page.goto(`${host}/`);
      const spin = await page.waitForSelector('#engagement [data-action="spin"]:not([disabled])', { timeout: STEP_TIMEOUT_MS });
      assert.equal(await spin.textContent(), 'Spin the wheel');
      const styles = await page.evaluate(() => ({
        button: getComputedStyle(document.querySelector('#engagement [data-action="spin"]')!).backgroundColor,
        font: getComputedStyle(document.querySelector('#engagement')!).fontFamily,
        background: getComputedStyle(document.querySelector('#engagement')!).backgroundColor,
        hostMargin: getComputedStyle(document.body).marginTop,
        ready: (window as unknown as { received: Array<{ type: string }> }).received.some((m) => m.type === 'runtime:ready'),
      }));
      assert.equal(styles.button, 'rgb(190, 18, 60)', 'the host page\'s CSS sets the accent');
      assert.match(styles.font, /^Georgia, serif$/);
      assert.equal(styles.background, 'rgb(255, 251, 235)', 'the engagement\'s canvas.theme applies too');
      assert.equal(styles.hostMargin, '8px', 'the runtime\'s stylesheet leaves the host page\'s own elements alone');
      assert.ok(styles.ready, 'onMessage heard runtime:ready');
      await assertAccessible(page, 'the runtime mounted into a host page');
      await screenshot(page, 'mounted-in-host-page');
    });
  } finally {
    for (const context of contexts) await context.close().catch(() => undefined);
    await closeChromium(browser);
  }
});
