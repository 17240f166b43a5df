import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { closeChromium, launchChromium } from './chromium.js';
import { startTestService, type TestService } from '../helper.js';

/**
 * The API reference page (`/docs`, Swagger UI) works under its own
 * Content-Security-Policy (platform/docs.ts) in Chromium: it renders the
 * operations and opens one by its deep link with no violation of the policy
 * reported; and a page of another origin cannot frame it.
 */
/** Swagger UI parses and renders a document of some 190 operations: on a loaded two-core CI machine that took over 20 s once. */
const STEP_TIMEOUT_MS = 90_000;

test('/docs renders under its Content-Security-Policy and refuses to be framed', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t);
  const browser = await launchChromium();
  // The browser closes before the service stops (t.after hooks would run after it), so no connection holds the service open.
  try {
    await scenario(svc, browser);
  } finally {
    await closeChromium(browser);
  }
});

async function scenario(svc: TestService, browser: Browser): Promise<void> {
  const page = await browser.newPage();
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  await page.exposeFunction('reportViolation', (text: string) => violations.push(text));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { reportViolation(text: string): void }).reportViolation(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });

  // A deep link to one operation (uiConfig deepLinking): the page renders and opens it.
  const response = await page.goto(`${svc.baseUrl}/docs#/files/downloadExport`);
  assert.equal(response?.status(), 200);
  assert.match((await response!.allHeaders())['content-security-policy'] ?? '', /frame-ancestors 'none'/);
  await page.locator('.opblock-summary', { hasText: '/api/v1/admin/exports/{export_id}/file' }).first().waitFor({ timeout: STEP_TIMEOUT_MS });
  await page.locator('.opblock-description-wrapper', { hasText: 'personal-data access log' }).first().waitFor({ timeout: STEP_TIMEOUT_MS });
  assert.ok((await page.locator('.opblock-summary').count()) > 0);
  assert.deepEqual(violations, [], 'the page runs without a violation of its policy');
  await page.close();

  // A page of another origin (about:blank with content) frames it: Chromium refuses, citing frame-ancestors.
  const framer = await browser.newPage();
  const refusals: string[] = [];
  framer.on('console', (message) => refusals.push(message.text()));
  await framer.setContent(`<iframe id="docs" src="${svc.baseUrl}/docs"></iframe>`);
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  while (!refusals.some((text) => /frame-ancestors/.test(text)) && Date.now() < deadline) await framer.waitForTimeout(100);
  assert.ok(refusals.some((text) => /(Refused to frame|Framing .* blocked)/s.test(text) && /frame-ancestors 'none'/.test(text)), `the browser refuses to frame /docs: ${refusals.join(' | ')}`);
  const framed = framer.frames().find((frame) => frame.url().startsWith(svc.baseUrl));
  assert.equal(framed ? await framed.locator('#swagger-ui').count() : 0, 0, 'nothing of the page renders in the frame');
  await framer.close();
}
