import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { TestContext } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { closeChromium, launchChromium } from './chromium.js';
import type { TestService, TestTenant } from '../helper.js';

/**
 * What every console browser test needs: Debian's Chromium driven by
 * playwright-core against the running service on loopback, pages that record
 * Content-Security-Policy violations and uncaught errors, sign-in, navigation,
 * axe-core (no serious or critical violation) and screenshots
 * (UPDATE_SCREENSHOTS=1 rewrites docs/console/*.png).
 */
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/console') : null;
const STEP_TIMEOUT_MS = 20_000;
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  if (!SCREENSHOTS) return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  // A full-page shot of a scrolled page draws the sticky header where the view was: start from the top.
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** axe-core, evaluated through the DevTools protocol (the page's CSP allows no inline script, rightly). */
export async function assertAccessible(page: Page, screen: string): Promise<void> {
  // A dialog fading in has its text at part opacity: axe would measure the contrast of a frame of the transition.
  // A transition may start a frame or two after the dialog mounts, so the page must stay still for 300 ms first.
  // (No named function inside: the test runner's transform would give it a helper the page does not have.)
  await page.evaluate(async () => {
    const deadline = performance.now() + 5_000;
    let stillSince = performance.now();
    while (performance.now() < deadline) {
      const running = document.getAnimations();
      if (running.length > 0) {
        await Promise.all(running.map((animation) => animation.finished.catch(() => undefined)));
        stillSince = performance.now();
      } else if (performance.now() - stillSince >= 300) {
        break;
      }
      await new Promise((resolve) => requestAnimationFrame(() => resolve(undefined)));
    }
  });
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> } }).axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target })) }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `${screen}: axe found ${JSON.stringify(serious, null, 1)}`);
}

export interface ConsoleBrowser {
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  signIn(page: Page, email: string, password: string): Promise<void>;
  /** Follows a link of the navigation and waits for the screen's heading. */
  open(page: Page, linkName: string, heading: string | RegExp): Promise<void>;
  /** Fails when any page reported a CSP violation or an uncaught error. */
  assertClean(): void;
  cspViolations: string[];
  pageErrors: string[];
}

/** Launches Chromium for one test; it is closed when the test ends. */
export async function launchConsoleBrowser(t: TestContext, svc: TestService): Promise<ConsoleBrowser> {
  const browser: Browser = await launchChromium(['--disable-background-networking', '--disable-component-update', '--disable-sync']);
  const contexts: BrowserContext[] = [];
  t.after(async () => {
    await closeChromium(browser, contexts);
  });
  const cspViolations: string[] = [];
  const pageErrors: string[] = [];
  const newPage = async (viewport = DESKTOP) => {
    const context = await browser.newContext({ viewport, reducedMotion: 'reduce' });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) cspViolations.push(`${page.url()}: ${message.text()} at ${JSON.stringify(message.location())}`);
    });
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    page.setDefaultTimeout(STEP_TIMEOUT_MS);
    return page;
  };
  const signIn = async (page: Page, email: string, password: string) => {
    await page.goto(`${svc.baseUrl}/console/`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel(/^Password/).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('button', { name: 'Sign out' })
      .waitFor()
      .catch(async (error: unknown) => {
        throw new Error(`not signed in: ${String(error)}; page errors ${JSON.stringify(pageErrors)}; page text: ${(await page.innerText('body')).slice(0, 800)}`);
      });
  };
  const open = async (page: Page, linkName: string, heading: string | RegExp) => {
    await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: linkName, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };
  const assertClean = () => {
    assert.deepEqual(cspViolations, [], 'no Content-Security-Policy violation on any screen');
    assert.deepEqual(pageErrors, [], 'no uncaught error in the page');
  };
  return { newPage, signIn, open, assertClean, cspViolations, pageErrors };
}

/** A console user of the tenant with the given role, invited by its API key and signed up through the invitation. */
export async function consoleUser(svc: TestService, tenant: TestTenant, role: 'owner' | 'marketer' | 'support' | 'reviewer' | 'analyst', options: { email?: string; canPublish?: boolean } = {}): Promise<{ email: string; password: string }> {
  const email = options.email ?? `${role}-${Math.random().toString(36).slice(2, 8)}@${tenant.slug}.example`;
  const password = `a long ${role} password 42`;
  const invited = await svc.request('POST', '/api/v1/admin/users', { key: tenant.apiKey, body: { email, role, ...(options.canPublish === undefined ? {} : { can_publish: options.canPublish }) } });
  assert.equal(invited.status, 201, invited.text);
  const token = new URLSearchParams(new URL(invited.body.invite_url).hash.slice(1)).get('token');
  const accepted = await svc.request('POST', '/api/v1/console/invitations/accept', { body: { token, password } });
  assert.equal(accepted.status, 200, accepted.text);
  return { email, password };
}
