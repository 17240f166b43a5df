import type { TestContext } from 'node:test';
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { FastifyPluginAsync } from 'fastify';
import { loadConfig, type Config } from '../src/config.js';
import { deriveAppPassword, withCredentials } from '../src/platform/database-server.js';
import { APP_ROLE } from '../src/platform/migrate.js';
import { startService, type RunningService } from '../src/service.js';
import { createTenant } from '../src/modules/access/index.js';
import { createLogger } from '../src/platform/logger.js';
import { validateEventData } from '../src/modules/webhooks/index.js';
import type { Plan } from '../src/platform/plans.js';
import type { TenantEnvironment } from '../src/platform/environments.js';
import { ContractChecker, ContractDocument } from './contract.js';

/**
 * The test builder: a database of the test file's own (cloned from the
 * migrated template), the service listening on a loopback port, and helpers
 * to make tenants and send real HTTP requests. It closes everything itself
 * when the test ends.
 */
/** How long the teardown waits for the service's connections to close before dropping the database with FORCE. */
const DROP_WAIT_MS = 5_000;

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** A raw body sent as is (for malformed JSON tests). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  key?: string;
  bearer?: string;
}

export interface TestTenant {
  tenantId: string;
  slug: string;
  apiKey: string;
  adminEmail: string;
  adminPassword: string;
}

export interface TestSession {
  sessionId: string;
  participantId: string;
  engagementId: string;
}

export interface TestService {
  service: RunningService;
  baseUrl: string;
  ownerUrl: string;
  config: Config;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  createTenant(options?: { plan?: Plan; requestsPerMinute?: number | null; slug?: string; eventIngestionPerDay?: number | null; environment?: TenantEnvironment }): Promise<TestTenant>;
  login(tenant: TestTenant): Promise<string>;
  /**
   * A participant session issued through `POST /api/v1/sessions` with the
   * tenant's first key. Once a module owns engagements, pass an engagement
   * that exists (sessions for unknown engagements are refused).
   */
  createSession(tenant: TestTenant, options?: { participantId?: string; engagementId?: string; ttlSeconds?: number; displayName?: string }): Promise<TestSession>;
  /**
   * A draft engagement (no screens, no activities) of the tenant, with the given
   * id or a new one, for tests that only need an engagement to exist (sessions,
   * engagement-scoped events). Returns its id.
   */
  createEngagement(tenant: TestTenant, engagementId?: string): Promise<string>;
  /** A query as the schema owner (bypasses row-level security): for assertions only. */
  sql<T = any>(text: string, values?: unknown[]): Promise<T[]>;
}

/**
 * The suite's PostgreSQL cluster, prepared by `npm test`: the migrated template
 * database, the owner's URL of any database by name, and the application
 * role's password (one role for the whole cluster).
 */
export function testCluster(): { template: string; databaseUrl(name: string): string; appPassword: string } {
  const templateUrl = process.env.TEST_PG_URL;
  const template = process.env.TEST_PG_TEMPLATE;
  if (!templateUrl || !template) throw new Error('run the tests with `npm test` (it prepares the database)');
  const parsed = new URL(templateUrl);
  const user = decodeURIComponent(parsed.username);
  const password = decodeURIComponent(parsed.password);
  return { template, databaseUrl: (name) => withCredentials(templateUrl, user, password, name), appPassword: deriveAppPassword(templateUrl, null) };
}

/**
 * A database of the caller's own, cloned from the migrated template, with an
 * owner's connection to it (a connection to the template itself would stop
 * other files cloning it); both go when the test ends. `url` is the owner's URL.
 */
export async function migratedDatabase(t: { after(fn: () => Promise<void>): void }, prefix = 'test_db'): Promise<{ client: pg.Client; url: string }> {
  const cluster = testCluster();
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: cluster.databaseUrl('postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${cluster.template}`);
  const client = new pg.Client({ connectionString: cluster.databaseUrl(name) });
  await client.connect();
  t.after(async () => {
    await client.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });
  return { client, url: cluster.databaseUrl(name) };
}

/** How long a test's service may take to stop before the test goes on without it (a normal stop takes well under a second). */
const STOP_WAIT_MS = 60_000;

/**
 * Stops the service; if the stop has not finished within `ms`, says so on
 * stderr with what the process still holds open, and returns, so that one
 * stuck stop cannot hold a whole CI run until the file's timeout (the
 * database is dropped with FORCE next).
 */
async function stopWithin(service: { stop(): Promise<void> }, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  const outcome = await Promise.race([service.stop().then(() => 'stopped' as const), late]);
  clearTimeout(timer);
  if (outcome === 'late') {
    const open = (process as unknown as { getActiveResourcesInfo(): string[] }).getActiveResourcesInfo();
    process.stderr.write(`the test's service had not stopped after ${ms} ms; open resources: ${JSON.stringify(open)}\n`);
  }
}

/** The outbox events whose payload does not match the event catalog, described. */
async function eventsBreakingTheContract(pool: pg.Pool): Promise<string[]> {
  const rows = (await pool.query('SELECT event, data FROM outbox_events ORDER BY seq')).rows as Array<{ event: string; data: unknown }>;
  return rows.flatMap((row) => {
    const problems = validateEventData(row.event, row.data);
    return problems.length > 0 ? [`${row.event}: ${problems.join('; ')} in ${JSON.stringify(row.data).slice(0, 200)}`] : [];
  });
}

/**
 * The served documents of this test file's services, by the options that built them. Building one costs
 * about 0.4 s of CPU (the document, then its checks compiled as they are first needed), and a file may
 * start several services. The service is the same for the same configuration (its routes and their
 * schemas do not depend on the database); a service with a test's own routes builds its own.
 */
const servedDocuments = new Map<string, Promise<ContractDocument>>();

function servedDocument(service: RunningService, options: { config?: Record<string, string>; jobs?: boolean; routes?: unknown }): Promise<ContractDocument> {
  const build = () => Promise.resolve().then(() => new ContractDocument(JSON.parse(JSON.stringify((service.app as unknown as { swagger(): unknown }).swagger()))));
  if (options.routes) return build();
  const key = JSON.stringify([options.config ?? {}, options.jobs ?? false]);
  let document = servedDocuments.get(key);
  if (!document) {
    document = build();
    servedDocuments.set(key, document);
    document.catch(() => servedDocuments.delete(key));
  }
  return document;
}

/**
 * Starts the service on a database of its own for one test file. When the test
 * ends, every event the test's flows wrote to the outbox is checked against the
 * event catalog (the webhook payload contract), so each module's tests also
 * test its events; `eventContract: false` skips that for tests that write
 * deliberately incomplete events straight into the outbox.
 */
export async function startTestService(
  t: TestContext | { after(fn: () => Promise<void>): void },
  options: {
    config?: Record<string, string>;
    jobs?: boolean;
    routes?: FastifyPluginAsync;
    eventContract?: boolean;
    /** Where the service logs (at LOG_LEVEL, `info` unless the config says otherwise); by default nothing is logged. */
    logDestination?: { write(line: string): void };
    /**
     * Stands a second, empty database (the migrated template) in for a streaming replica
     * (DATABASE_REPLICA_URL): reads routed to the replica see none of the primary's rows.
     */
    replicaStandIn?: boolean;
  } = {},
): Promise<TestService> {
  const cluster = testCluster();
  const databaseName = `test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: cluster.databaseUrl('postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${databaseName} TEMPLATE ${cluster.template}`);
  const replicaName = options.replicaStandIn ? `${databaseName}_replica` : null;
  if (replicaName) await admin.query(`CREATE DATABASE ${replicaName} TEMPLATE ${cluster.template}`);
  await admin.end();
  const ownerUrl = cluster.databaseUrl(databaseName);
  const appUrl = withCredentials(ownerUrl, APP_ROLE, cluster.appPassword);
  const replicaAppUrl = replicaName ? withCredentials(cluster.databaseUrl(replicaName), APP_ROLE, cluster.appPassword) : null;

  const config = loadConfig({
    APP_ENV: 'test',
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: ownerUrl,
    DB_APP_PASSWORD: cluster.appPassword,
    RATE_LIMIT_IP_PER_MINUTE: '1000000',
    DB_POOL_SIZE: '20',
    // The suite starts hundreds of services; opening every pool's connections at start (the default) would cost each a
    // pool's worth of backends it mostly never uses. test/operations.test.ts checks the default's opening.
    DB_POOL_MIN: '1',
    SERVICE_ROLE: options.jobs ? 'all' : 'api',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? (options.logDestination ? 'info' : 'silent'),
    ...options.config,
  });
  const service = await startService({
    config,
    log: createLogger(config.logLevel, options.logDestination),
    server: { ownerUrl, appUrl, replicaAppUrl, stop: async () => undefined },
    extraRoutes: options.routes,
  });
  const address = service.app!.server.address() as { port: number };
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const ownerPool = new pg.Pool({ connectionString: ownerUrl, max: 4 });
  ownerPool.on('error', () => undefined);

  t.after(async () => {
    const broken = options.eventContract === false ? [] : await eventsBreakingTheContract(ownerPool);
    await stopWithin(service, STOP_WAIT_MS);
    await ownerPool.end();
    const cleanup = new pg.Client({ connectionString: cluster.databaseUrl('postgres') });
    await cleanup.connect();
    // Connections still closing (a pool ending, a listener going away) are given a moment to go,
    // so that FORCE does not terminate one that its owner has not finished with yet.
    const deadline = Date.now() + DROP_WAIT_MS;
    for (;;) {
      const left = await cleanup.query(`SELECT application_name FROM pg_stat_activity WHERE datname = $1`, [databaseName]);
      if (left.rows.length === 0) break;
      if (Date.now() > deadline) {
        process.stderr.write(`test database ${databaseName}: connections left open after the service stopped: ${JSON.stringify(left.rows)}\n`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await cleanup.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
    if (replicaName) await cleanup.query(`DROP DATABASE IF EXISTS ${replicaName} WITH (FORCE)`);
    await cleanup.end();
    (contract ? await contract.catch(() => null) : null)?.log(process.argv[1] ?? 'unknown');
    if (broken.length > 0) {
      throw new Error(`${broken.length} outbox event(s) do not match the event catalog:\n${broken.slice(0, 5).join('\n')}`);
    }
  });

  // The served reference (what GET /openapi.json answers, taken in-process so that no rate limit counts it),
  // against which every exchange is checked (test/contract.ts): built by the first service of the file
  // with these options and shared by the next ones, which serve the same document.
  let contract: Promise<ContractChecker> | null = null;
  const checker = () => (contract ??= servedDocument(service, options).then((document) => new ContractChecker(document)));

  async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.key) headers['x-api-key'] = opts.key;
    if (opts.bearer) headers.authorization = `Bearer ${opts.bearer}`;
    let body: string | Buffer | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body: body as BodyInit | undefined });
    const text = await response.text();
    let parsedBody: any = text;
    try {
      parsedBody = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON: keep the text.
    }
    // A mismatch fails the request that made it, there (an after hook that throws would skip the other services' teardown).
    const mismatches = (await checker()).check({
      method,
      path,
      requestBody: opts.raw !== undefined ? undefined : opts.body,
      requestContentType: headers['content-type'],
      status: response.status,
      contentType: response.headers.get('content-type'),
      body: parsedBody,
      text,
    });
    if (mismatches.length > 0) throw new Error(`the served /openapi.json misdescribes this exchange (test/contract.ts):\n${mismatches.join('\n')}`);
    return { status: response.status, headers: response.headers, body: parsedBody as T, text };
  }

  async function createEngagement(tenant: TestTenant, engagementId: string = randomUUID()): Promise<string> {
    const definition = { name: 'Test engagement', site_slug: `e-${engagementId.slice(0, 8)}`, screens: [], components: [], canvas: {}, activities: [], trigger_rules: {}, allow_anonymous_sessions: false };
    await ownerPool.query(
      `INSERT INTO engagements (tenant_id, id, site_slug, name, definition, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, now(), now()) ON CONFLICT DO NOTHING`,
      [tenant.tenantId, engagementId, definition.site_slug, definition.name, JSON.stringify(definition)],
    );
    return engagementId;
  }

  let tenantCounter = 0;
  return {
    service,
    baseUrl,
    ownerUrl,
    config,
    request,
    async createTenant(tenantOptions = {}) {
      tenantCounter += 1;
      const slug = tenantOptions.slug ?? `t${tenantCounter}-${randomBytes(4).toString('hex')}`;
      const created = await createTenant(service.db, {
        name: `Tenant ${slug}`,
        slug,
        plan: tenantOptions.plan ?? 'enterprise',
        adminEmail: `admin@${slug}.example`,
        requestsPerMinute: tenantOptions.requestsPerMinute === undefined ? 10_000_000 : tenantOptions.requestsPerMinute,
        eventIngestionPerDay: tenantOptions.eventIngestionPerDay ?? null,
        environment: tenantOptions.environment ?? 'live',
      });
      return { tenantId: created.tenant_id, slug, apiKey: created.api_key, adminEmail: created.admin_email, adminPassword: created.admin_password };
    },
    async login(tenant) {
      const response = await request<{ token: string }>('POST', '/api/v1/auth/login', { body: { email: tenant.adminEmail, password: tenant.adminPassword } });
      if (response.status !== 200) throw new Error(`login failed: ${response.status} ${response.text}`);
      return response.body.token;
    },
    async createSession(tenant, sessionOptions = {}) {
      const participantId = sessionOptions.participantId ?? `p-${randomBytes(4).toString('hex')}`;
      const engagementId = sessionOptions.engagementId ?? (await createEngagement(tenant));
      const response = await request<{ session_id: string }>('POST', '/api/v1/sessions', {
        key: tenant.apiKey,
        body: {
          participant_id: participantId,
          engagement_id: engagementId,
          ...(sessionOptions.ttlSeconds ? { ttl_seconds: sessionOptions.ttlSeconds } : {}),
          ...(sessionOptions.displayName ? { display_name: sessionOptions.displayName } : {}),
        },
      });
      if (response.status !== 201) throw new Error(`session creation failed: ${response.status} ${response.text}`);
      return { sessionId: response.body.session_id, participantId, engagementId };
    },
    createEngagement,
    async sql(text, values) {
      const result = await ownerPool.query(text, values);
      return result.rows;
    },
  };
}

/** How long `waitFor` waits by default (a loaded CI machine), and how often it asks. */
const WAIT_TIMEOUT_MS = 30_000;
const WAIT_INTERVAL_MS = 50;

/**
 * Asks `check` every `intervalMs` until it answers something truthy, and
 * returns that; fails with "timed out waiting for <what>" after `timeoutMs`.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  timeoutMs = WAIT_TIMEOUT_MS,
  intervalMs = WAIT_INTERVAL_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A new API key of the tenant with these scopes, made with an admin login token. */
export async function keyWithScopes(svc: TestService, tenant: TestTenant, scopes: string[]): Promise<{ key: string; id: string }> {
  const jwt = await svc.login(tenant);
  const created = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: scopes.join(' '), scopes } });
  if (created.status !== 201) throw new Error(`key creation failed: ${created.status} ${created.text}`);
  return { key: created.body.key, id: created.body.id };
}

/** `POST /gamify/points/grant` or `/deduct` with the tenant's key and this body, as it is. */
export function pointsRequest(svc: TestService, tenant: TestTenant, operation: 'grant' | 'deduct', body: Record<string, unknown>): Promise<TestResponse> {
  return svc.request('POST', `/api/v1/gamify/points/${operation}`, { key: tenant.apiKey, body });
}

/** Grants `amount` points (reason `test`, a new idempotency key; `extra` adds or overrides fields). Returns the answer. */
export function grantPoints(svc: TestService, tenant: TestTenant, participantId: string, amount: number, extra: Record<string, unknown> = {}): Promise<TestResponse> {
  return pointsRequest(svc, tenant, 'grant', { participant_id: participantId, amount, reason: 'test', idempotency_key: randomUUID(), ...extra });
}

/** Deducts `amount` points (reason `spend`, a new idempotency key; `extra` adds or overrides fields). Returns the answer. */
export function deductPoints(svc: TestService, tenant: TestTenant, participantId: string, amount: number, extra: Record<string, unknown> = {}): Promise<TestResponse> {
  return pointsRequest(svc, tenant, 'deduct', { participant_id: participantId, amount, reason: 'spend', idempotency_key: randomUUID(), ...extra });
}

/** A session of the participant on the engagement, made to exist first (a draft), with an optional display name; returns the session id. */
export async function participantSession(svc: TestService, tenant: TestTenant, participantId: string, engagementId: string, displayName?: string): Promise<string> {
  await svc.createEngagement(tenant, engagementId);
  const session = await svc.createSession(tenant, { participantId, engagementId, ...(displayName ? { displayName } : {}) });
  return session.sessionId;
}
