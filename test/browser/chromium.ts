import { execFileSync } from 'node:child_process';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (no browser downloads work here); CHROMIUM_PATH overrides it. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const BASE_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'];

/** Headless Chromium with the flags every browser test uses, plus `args`. */
export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...BASE_ARGS, ...args] });
}

/** How long closing may take before the browser is killed. */
const CLOSE_TIMEOUT_MS = 5_000;

/**
 * Closes the browser; if it has not closed within CLOSE_TIMEOUT_MS (a normal
 * close takes well under a second), kills the Chromium processes this test
 * process started. Once in a CI run, Chromium never answered the close of a
 * finished test (all its tests had passed) and held the run for ten minutes.
 */
export async function closeChromium(browser: Browser): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), CLOSE_TIMEOUT_MS);
  });
  const outcome = await Promise.race([browser.close().then(() => 'closed' as const), timedOut]);
  clearTimeout(timer);
  if (outcome === 'closed') return;
  try {
    execFileSync('pkill', ['-KILL', '-P', String(process.pid), '-f', 'chromium']);
  } catch {
    // pkill exits 1 when nothing matched: the browser went away on its own meanwhile.
  }
  await browser.close().catch(() => undefined);
}
