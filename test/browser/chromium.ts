import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/**
 * Debian's Chromium (no browser downloads work here); CHROMIUM_PATH overrides it. Its headless
 * shell (package `chromium-headless-shell`, which `.ci/run` installs) when the machine has it: the
 * same engine without the browser's own windows, which the full browser builds in headless mode too
 * (an address bar's popup and its scripts in a renderer of their own, for every context). The suite's
 * browser files took 43% less CPU in the shell (2 Dec, docs/performance.md), on two cores where CPU
 * is the suite's limit. Where only `chromium` is installed, the tests run in it.
 */
const HEADLESS_SHELL = '/usr/bin/chromium-headless-shell';
export const CHROMIUM = process.env.CHROMIUM_PATH ?? (fs.existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium');

const BASE_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'];

/** Headless Chromium with the flags every browser test uses, plus `args`. */
export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...BASE_ARGS, ...args] });
}

/** How long closing may take before the browser is killed. */
const CLOSE_TIMEOUT_MS = 5_000;

/**
 * Closes the browser (its `contexts` first); if that has not finished within
 * CLOSE_TIMEOUT_MS (a normal close takes well under a second), kills the
 * Chromium processes this test process started. Twice in CI runs Chromium
 * never answered a close after all of a file's tests had passed (once the
 * browser's, once a context's) and held the run until the file's timeout.
 */
export async function closeChromium(browser: Browser, contexts: BrowserContext[] = []): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), CLOSE_TIMEOUT_MS);
  });
  const close = async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser.close();
    return 'closed' as const;
  };
  const outcome = await Promise.race([close(), timedOut]);
  clearTimeout(timer);
  if (outcome === 'closed') return;
  process.stderr.write(`Chromium did not close within ${CLOSE_TIMEOUT_MS} ms; its processes are killed\n`);
  try {
    execFileSync('pkill', ['-KILL', '-P', String(process.pid), '-f', 'chromium']);
  } catch {
    // pkill exits 1 when nothing matched: the browser went away on its own meanwhile.
  }
  await Promise.race([browser.close().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, CLOSE_TIMEOUT_MS).unref())]);
}
