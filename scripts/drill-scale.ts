/**
 * `npm run drill:scale`: the service as an operator scales it out, killed
 * mid-load, then checked.
 *
 * Starts Debian's PostgreSQL 15 as a primary and a streaming replica, Redis,
 * and the service's processes on loopback (`sh scripts/start.sh`, the command
 * of the container and of deploy/compose.yaml, with SERVICE_ROLE=api|worker).
 * Measures how fast a burst of events is processed with one and with two
 * processes per role, drives a mixed load (events that award points, direct
 * grants and deducts, webhook deliveries to a local receiver) through both
 * APIs while one API and one worker are killed with SIGKILL and restarted,
 * and checks: the ledger invariants (ledger = lots = balances) for every
 * participant, every accepted event processed exactly once, every webhook
 * delivered at least once (duplicates reported against the kills), rate-limit
 * counts exact across the two APIs, a revoked key refused by the other API
 * within 1 s, and the replica serving history that matches the primary.
 *
 * Bounded: about two minutes on a 2-core machine. Exit code 0 when every
 * check holds. `DRILL_EVENTS` (burst size, default 2000) and
 * `DRILL_LOAD_SECONDS` (mixed load, default 20) change the load.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startCommand } from './start-command.js';
import { DELIVERY_BATCH_MAX } from '../src/modules/webhooks/store.js';

const root = path.resolve(import.meta.dirname, '..');
const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const BURST_EVENTS = Number(process.env.DRILL_EVENTS ?? 2000);
const LOAD_SECONDS = Number(process.env.DRILL_LOAD_SECONDS ?? 20);
const JWT_SECRET = 'drill-secret-0123456789abcdef0123456789abcdef';
const POINTS_PER_EVENT = 5;
const REVOCATION_BOUND_MS = 1000;

const base = 40000 + Math.floor(Math.random() * 10000);
const ports = { primary: base, replica: base + 1, redis: base + 2, api: [base + 10, base + 11], metrics: [base + 20, base + 21] };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drill-'));
const children = new Set<ChildProcess>();
const checks: Array<{ name: string; ok: boolean; detail: string }> = [];

function log(message: string): void {
  process.stdout.write(`[drill] ${message}\n`);
}

function check(name: string, ok: boolean, detail: string): void {
  checks.push({ name, ok, detail });
  log(`${ok ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
}

const isRoot = process.getuid?.() === 0;
function asPostgres(command: string, args: string[]): string {
  return execFileSync(isRoot ? 'runuser' : command, isRoot ? ['-u', 'postgres', '--', command, ...args] : args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function pgStart(dataDir: string, port: number): void {
  asPostgres(`${PG_BIN}/pg_ctl`, [
    '-D', dataDir, '-l', `${dataDir}.log`, '-w', 'start', '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=400 -c shared_buffers=256MB -c wal_level=replica -c max_wal_senders=5 -c hot_standby=on -c synchronous_commit=off`,
  ]);
}

function stopDatabases(): void {
  for (const name of ['primary', 'replica']) {
    try {
      asPostgres(`${PG_BIN}/pg_ctl`, ['-D', path.join(dir, name), '-m', 'immediate', 'stop']);
    } catch {
      // Not started.
    }
  }
}

const dbUrl = (port: number, database = 'loyalty') => `postgres://postgres@127.0.0.1:${port}/${database}`;

async function setUpDatabases(): Promise<void> {
  if (isRoot) execFileSync('chown', ['postgres', dir]);
  asPostgres(`${PG_BIN}/initdb`, ['-D', path.join(dir, 'primary'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  pgStart(path.join(dir, 'primary'), ports.primary);
  execFileSync(`${PG_BIN}/psql`, [dbUrl(ports.primary, 'postgres'), '-qc', 'CREATE DATABASE loyalty']);
  asPostgres(`${PG_BIN}/pg_basebackup`, ['-h', '127.0.0.1', '-p', String(ports.primary), '-U', 'postgres', '-D', path.join(dir, 'replica'), '-R', '-X', 'stream']);
  pgStart(path.join(dir, 'replica'), ports.replica);
  const replica = new pg.Client({ connectionString: dbUrl(ports.replica) });
  await replica.connect();
  const recovery = (await replica.query('SELECT pg_is_in_recovery() AS standby')).rows[0].standby;
  await replica.end();
  if (!recovery) throw new Error('the replica is not in recovery');
  log(`PostgreSQL 15 primary on ${ports.primary}, streaming replica on ${ports.replica}`);
}

function startRedis(): void {
  const redis = spawn('redis-server', ['--port', String(ports.redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  children.add(redis);
  log(`Redis on ${ports.redis}`);
}

const processEnv = {
  ...process.env,
  APP_ENV: 'development',
  HOST: '127.0.0.1',
  DATABASE_URL: dbUrl(ports.primary),
  DATABASE_REPLICA_URL: dbUrl(ports.replica),
  REDIS_URL: `redis://127.0.0.1:${ports.redis}`,
  JWT_SECRET,
  LOG_LEVEL: 'warn',
  ALLOW_LOOPBACK_WEBHOOKS: 'true',
  ALLOW_HTTP_WEBHOOKS: 'true',
  RATE_LIMIT_IP_PER_MINUTE: '1000000',
  RATE_LIMIT_INGEST_BURST_PER_SECOND: '100000',
  // The load's key sends more than the default 1,000 requests a minute; the rate-limit check uses a key with its own limit.
  RATE_LIMIT_KEY_PER_MINUTE: '1000000',
  WORKER_STALE_AFTER_SECONDS: '5',
  DB_POOL_SIZE: '10',
};

interface ServiceProcess {
  role: 'api' | 'worker';
  index: number;
  child: ChildProcess;
}

async function waitFor(url: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not up yet.
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function startProcess(role: 'api' | 'worker', index: number): Promise<ServiceProcess> {
  const env = { ...processEnv, SERVICE_ROLE: role, PORT: String(ports.api[index]), METRICS_PORT: String(ports.metrics[index]) };
  const launch = startCommand(root);
  const child = spawn(launch.file, launch.args, { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (chunk: Buffer) => fs.appendFileSync(path.join(dir, `${role}-${index}.log`), chunk));
  children.add(child);
  child.on('exit', () => children.delete(child));
  await waitFor(role === 'api' ? `http://127.0.0.1:${ports.api[index]}/readyz` : `http://127.0.0.1:${ports.metrics[index]}/healthz`);
  return { role, index, child };
}

function kill(processToKill: ServiceProcess): void {
  processToKill.child.kill('SIGKILL');
}

async function stopProcess(processToStop: ServiceProcess): Promise<void> {
  if (processToStop.child.exitCode !== null || processToStop.child.signalCode !== null) return;
  const exited = new Promise((resolve) => processToStop.child.once('exit', resolve));
  processToStop.child.kill('SIGTERM');
  await exited;
}

/** A webhook receiver that counts what it received by event id. */
function startReceiver(): Promise<{ url: string; receipts: Map<string, number>; close(): void }> {
  const receipts = new Map<string, number>();
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const id = String(request.headers['x-service-delivery-id'] ?? '');
      receipts.set(id, (receipts.get(id) ?? 0) + 1);
      response.end('ok');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}/hooks`, receipts, close: () => server.close() });
    });
  });
}

/** Sends to the first API that answers: a killed API's requests go to the other, with the same idempotency key. */
async function send(apiOrder: number[], method: string, pathname: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
  let lastError: unknown = null;
  for (let round = 0; round < 20; round++) {
    for (const index of apiOrder) {
      try {
        const response = await fetch(`http://127.0.0.1:${ports.api[index]}${pathname}`, {
          method,
          headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await response.text();
        if (response.status >= 500) {
          lastError = new Error(`${method} ${pathname}: ${response.status} ${text}`);
          continue;
        }
        return { status: response.status, body: text ? JSON.parse(text) : null };
      } catch (error) {
        lastError = error;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw lastError;
}

function createTenant(slug: string, extra: string[] = []): { tenantId: string; apiKey: string; adminEmail: string; adminPassword: string } {
  const out = execFileSync(process.execPath, ['dist/cli/tenant-create.js', '--name', slug, '--slug', slug, '--plan', 'enterprise', '--json', ...extra], {
    cwd: root,
    env: processEnv,
    encoding: 'utf8',
  });
  const created = JSON.parse(out);
  return { tenantId: created.tenant_id, apiKey: created.api_key, adminEmail: created.admin_email, adminPassword: created.admin_password };
}

async function quiescent(primary: pg.Pool, tenantId: string, timeoutMs = 180_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const { rows } = await primary.query(
      `SELECT (SELECT count(*) FROM ingested_events WHERE tenant_id = $1 AND status <> 'processed')::int AS events,
              (SELECT count(*) FROM outbox_pending WHERE tenant_id = $1)::int AS outbox,
              (SELECT count(*) FROM webhook_deliveries WHERE tenant_id = $1 AND status IN ('PENDING', 'DELIVERING', 'RETRYING'))::int AS deliveries`,
      [tenantId],
    );
    const { events, outbox, deliveries } = rows[0];
    if (events === 0 && outbox === 0 && deliveries === 0) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`not quiescent after ${timeoutMs} ms: ${JSON.stringify(rows[0])}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * A burst of events in batches of 20, as fast as 16 connections send them (single events would
 * meet the key's own rate limit of the enterprise plan first); the rate is events / (last
 * processed − first accepted).
 */
async function burstRate(primary: pg.Pool, apiKey: string, tenantId: string, apis: number[], label: string): Promise<number> {
  const started = Date.now();
  const perRequest = 20;
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async (_, lane) => {
      for (;;) {
        const first = next;
        next += perRequest;
        if (first >= BURST_EVENTS) return;
        const order = apis.length === 2 && (first / perRequest) % 2 === 1 ? [apis[1], apis[0]] : apis;
        const events = Array.from({ length: Math.min(perRequest, BURST_EVENTS - first) }, (_, j) => {
          const i = first + j;
          return { event_name: 'order', participant_id: `burst-${label}-${(i * 7 + lane) % 200}`, properties: {}, idempotency_key: `burst-${label}-${i}` };
        });
        const response = await send(order, 'POST', '/api/v1/ingest/events/batch', apiKey, { events });
        const body = response.body as { accepted?: number };
        if (response.status !== 200 || body.accepted !== events.length) throw new Error(`burst batch refused: ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`);
      }
    }),
  );
  const acceptedMs = Date.now() - started;
  await quiescent(primary, tenantId);
  const { rows } = await primary.query(`SELECT extract(epoch FROM max(processed_at) - min(received_at)) * 1000 AS ms FROM ingested_events WHERE tenant_id = $1 AND idempotency_key LIKE $2`, [tenantId, `burst-${label}-%`]);
  const ms = Number(rows[0].ms);
  const rate = Math.round((BURST_EVENTS / ms) * 1000);
  log(`${label}: ${BURST_EVENTS} events accepted in ${acceptedMs} ms, all processed ${Math.round(ms)} ms after the first was received: ${rate} events/s`);
  return rate;
}

async function main(): Promise<void> {
  log(`working in ${dir}`);
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
  await setUpDatabases();
  startRedis();
  const primary = new pg.Pool({ connectionString: dbUrl(ports.primary), max: 4 });

  // ---- throughput: one process per role, then two
  let api0 = await startProcess('api', 0);
  let worker0 = await startProcess('worker', 0);
  const burstTenant = createTenant('drill-burst');
  await send([0], 'POST', '/api/v1/admin/rules', burstTenant.apiKey, { name: 'Per order', trigger: 'event', event_name: 'order', effects: [{ type: 'award_points', points: POINTS_PER_EVENT }], status: 'active' });
  const oneEach = await burstRate(primary, burstTenant.apiKey, burstTenant.tenantId, [0], 'one-process-per-role');
  let api1 = await startProcess('api', 1);
  let worker1 = await startProcess('worker', 1);
  const twoEach = await burstRate(primary, burstTenant.apiKey, burstTenant.tenantId, [0, 1], 'two-processes-per-role');

  // ---- mixed load through both APIs, with one API and one worker killed and restarted
  const tenant = createTenant('drill-load');
  const receiver = await startReceiver();
  await send([0], 'POST', '/api/v1/admin/rules', tenant.apiKey, { name: 'Per order', trigger: 'event', event_name: 'order', effects: [{ type: 'award_points', points: POINTS_PER_EVENT }], status: 'active' });
  const destination = await send([0], 'POST', '/api/v1/gamify/webhooks', tenant.apiKey, { name: 'Drill', url: receiver.url, events: ['points.awarded.v1', 'points.deducted.v1'] });
  if (destination.status !== 201) throw new Error(`destination: ${JSON.stringify(destination.body)}`);
  const participants = Array.from({ length: 100 }, (_, i) => `load-${i}`);
  const accepted = { events: 0, grants: 0, grantPoints: 0, deducts: 0, deductPoints: 0, refusedDeducts: 0 };
  let stop = false;
  let kills = 0;
  const lane = async (kind: 'event' | 'grant' | 'deduct', perSecond: number) => {
    let i = 0;
    const interval = 1000 / perSecond;
    const startedAt = Date.now();
    const pending: Array<Promise<void>> = [];
    while (!stop) {
      const n = i++;
      const participantId = participants[n % participants.length];
      const apis = n % 2 === 0 ? [0, 1] : [1, 0];
      pending.push(
        (async () => {
          if (kind === 'event') {
            const response = await send(apis, 'POST', '/api/v1/ingest/events', tenant.apiKey, { event_name: 'order', participant_id: participantId, properties: {}, idempotency_key: `load-event-${n}` });
            // 200 (a duplicate) when an earlier attempt reached a process that was killed before it answered: stored once either way.
            if (response.status === 202 || response.status === 200) accepted.events += 1;
            else throw new Error(`event refused: ${response.status} ${JSON.stringify(response.body)}`);
          } else if (kind === 'grant') {
            const response = await send(apis, 'POST', '/api/v1/gamify/points/grant', tenant.apiKey, { participant_id: participantId, amount: 3, reason: 'drill', idempotency_key: `load-grant-${n}` });
            if (response.status !== 200) throw new Error(`grant refused: ${response.status} ${JSON.stringify(response.body)}`);
            accepted.grants++;
            accepted.grantPoints += 3;
          } else {
            const response = await send(apis, 'POST', '/api/v1/gamify/points/deduct', tenant.apiKey, { participant_id: participantId, amount: 1, reason: 'drill', idempotency_key: `load-deduct-${n}` });
            if (response.status === 200) {
              accepted.deducts++;
              accepted.deductPoints += 1;
            } else if (response.status === 422) accepted.refusedDeducts++;
            else if (response.status !== 200) throw new Error(`deduct: ${response.status} ${JSON.stringify(response.body)}`);
          }
        })(),
      );
      const due = startedAt + (n + 1) * interval;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
    }
    await Promise.all(pending);
  };
  const loadStarted = Date.now();
  const lanes = [lane('event', 60), lane('grant', 20), lane('deduct', 10)];
  await new Promise((resolve) => setTimeout(resolve, (LOAD_SECONDS * 1000) / 3));
  log('SIGKILL api-0 and worker-0 mid-load');
  kill(api0);
  kill(worker0);
  kills += 1;
  await new Promise((resolve) => setTimeout(resolve, 2000));
  api0 = await startProcess('api', 0);
  worker0 = await startProcess('worker', 0);
  log('api-0 and worker-0 restarted');
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, loadStarted + LOAD_SECONDS * 1000 - Date.now())));
  stop = true;
  await Promise.all(lanes);
  log(`load: ${accepted.events} events, ${accepted.grants} grants, ${accepted.deducts} deducts (${accepted.refusedDeducts} refused for lack of points) in ${LOAD_SECONDS} s`);
  const settleMs = await quiescent(primary, tenant.tenantId);
  log(`quiescent ${settleMs} ms after the load stopped`);

  // ---- checks
  const pointsCheck = (() => {
    try {
      return { ok: true, out: execFileSync(process.execPath, ['dist/cli/points-check.js'], { cwd: root, env: processEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim() };
    } catch (error) {
      return { ok: false, out: String((error as { stdout?: string }).stdout ?? error) };
    }
  })();
  check('ledger = lots = balances for every participant (points:check)', pointsCheck.ok, pointsCheck.out.split('\n').slice(-1)[0] ?? '');

  const events = (await primary.query(
    `SELECT count(*)::int AS stored, count(*) FILTER (WHERE status = 'processed')::int AS processed FROM ingested_events WHERE tenant_id = $1`,
    [tenant.tenantId],
  )).rows[0];
  const ruleAwards = (await primary.query(`SELECT count(*)::int AS n, coalesce(sum(delta), 0)::int AS points FROM points_ledger WHERE tenant_id = $1 AND source_kind = 'rule'`, [tenant.tenantId])).rows[0];
  check(
    'every accepted event processed exactly once',
    events.stored === accepted.events && events.processed === accepted.events && ruleAwards.n === accepted.events && ruleAwards.points === accepted.events * POINTS_PER_EVENT,
    `${accepted.events} accepted, ${events.stored} stored, ${events.processed} processed, ${ruleAwards.n} rule awards worth ${ruleAwards.points} points (expected ${accepted.events * POINTS_PER_EVENT})`,
  );
  const direct = (await primary.query(
    `SELECT count(*) FILTER (WHERE source_kind = 'grant' AND delta > 0)::int AS grants, count(*) FILTER (WHERE delta < 0)::int AS deducts FROM points_ledger WHERE tenant_id = $1`,
    [tenant.tenantId],
  )).rows[0];
  check('every acknowledged grant and deduct written once', direct.grants === accepted.grants && direct.deducts === accepted.deducts, `grants ${direct.grants}/${accepted.grants}, deducts ${direct.deducts}/${accepted.deducts}`);

  const expected = (await primary.query(`SELECT id FROM outbox_events WHERE tenant_id = $1 AND event IN ('points.awarded.v1', 'points.deducted.v1')`, [tenant.tenantId])).rows.map((row) => row.id as string);
  const missing = expected.filter((id) => !receiver.receipts.has(id));
  const duplicates = [...receiver.receipts.values()].reduce((sum, n) => sum + n - 1, 0);
  // A killed worker repeats what its running delivery jobs had sent but not yet recorded: each job records its
  // batch's outcomes in one statement, so up to DELIVERY_BATCH_MAX per job, JOB_CONCURRENCY jobs per worker.
  const concurrency = 8;
  check('every webhook delivered at least once', missing.length === 0, `${expected.length} events, ${missing.length} never received`);
  check(
    `duplicate webhook receipts within kills × JOB_CONCURRENCY × DELIVERY_BATCH_MAX (${kills} × ${concurrency} × ${DELIVERY_BATCH_MAX})`,
    duplicates <= kills * concurrency * DELIVERY_BATCH_MAX,
    `${duplicates} duplicate receipts after ${kills} worker kill(s)`,
  );

  // Rate limits counted once across both APIs: a tenant allowed 60 requests a minute.
  const limited = createTenant('drill-limited', ['--requests-per-minute', '60']);
  const statuses: number[] = [];
  for (let i = 0; i < 80; i++) statuses.push((await send([i % 2], 'GET', '/api/v1/tenant', limited.apiKey)).status);
  const allowed = statuses.filter((status) => status === 200).length;
  check('rate-limit counts exact across the two APIs', allowed === 60 && statuses.filter((s) => s === 429).length === 20, `${allowed} allowed, ${statuses.filter((s) => s === 429).length} refused of 80 (limit 60/min)`);

  // A key revoked through one API is refused by the other within the bound. Keys are managed with an
  // admin login token (or a console session), never with an API key.
  const login = await fetch(`http://127.0.0.1:${ports.api[0]}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: tenant.adminEmail, password: tenant.adminPassword }),
  });
  const token = ((await login.json()) as { token: string }).token;
  const admin = (method: string, pathname: string, body?: unknown) =>
    fetch(`http://127.0.0.1:${ports.api[0]}${pathname}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const made = { body: (await (await admin('POST', '/api/v1/events/api-keys', { name: 'to revoke', scopes: ['ingest'] })).json()) as { id: string; key: string } };
  const revocable = made.body.key as string;
  for (const index of [0, 1]) await send([index], 'POST', '/api/v1/ingest/events', revocable, { event_name: 'warm', participant_id: 'warm', properties: {}, idempotency_key: `warm-${index}-${randomUUID()}` });
  const revoked = await admin('DELETE', `/api/v1/events/api-keys/${made.body.id}`);
  if (revoked.status >= 300) throw new Error(`revoking the key: ${revoked.status} ${await revoked.text()}`);
  const revokedAt = Date.now();
  let refusedAfter = -1;
  while (Date.now() - revokedAt < 5000) {
    const response = await fetch(`http://127.0.0.1:${ports.api[1]}/api/v1/tenant`, { headers: { 'x-api-key': revocable } });
    if (response.status === 401) {
      refusedAfter = Date.now() - revokedAt;
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  check(`a revoked key refused by the other API within ${REVOCATION_BOUND_MS} ms`, refusedAfter >= 0 && refusedAfter <= REVOCATION_BOUND_MS, refusedAfter >= 0 ? `refused after ${refusedAfter} ms` : 'still accepted after 5 s');
  await quiescent(primary, tenant.tenantId);

  // The replica serves history equal to the primary's once it has replayed.
  const lsn = (await primary.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0].lsn;
  const replica = new pg.Client({ connectionString: dbUrl(ports.replica) });
  await replica.connect();
  const replayDeadline = Date.now() + 10_000;
  while ((await replica.query('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught', [lsn])).rows[0].caught !== true && Date.now() < replayDeadline) await new Promise((resolve) => setTimeout(resolve, 50));
  await replica.end();
  const history = await send([1], 'GET', '/api/v1/points/history?participant_id=load-1&limit=100', tenant.apiKey);
  const primaryRows = (await primary.query(`SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1 AND participant_id = 'load-1'`, [tenant.tenantId])).rows[0].n;
  const served = history.body.entries.length as number;
  check('the replica serves history equal to the primary', served === Math.min(primaryRows, 100), `${served} entries from the replica, ${primaryRows} rows on the primary`);

  log(`throughput: one process per role ${oneEach} events/s, two per role ${twoEach} events/s (${BURST_EVENTS} events, rule awarding ${POINTS_PER_EVENT} points)`);
  receiver.close();
  await primary.end();
  for (const running of [api0, api1, worker0, worker1]) await stopProcess(running);
}

async function cleanUp(): Promise<void> {
  for (const child of children) child.kill('SIGKILL');
  stopDatabases();
  if (process.env.DRILL_KEEP !== '1') fs.rmSync(dir, { recursive: true, force: true });
}

main()
  .then(async () => {
    await cleanUp();
    const failed = checks.filter((c) => !c.ok);
    log(failed.length === 0 ? `all ${checks.length} checks hold` : `${failed.length} of ${checks.length} checks failed`);
    process.exit(failed.length === 0 ? 0 : 1);
  })
  .catch(async (error) => {
    process.stderr.write(`[drill] failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    log(`process logs kept in ${dir}`);
    process.env.DRILL_KEEP = '1';
    await cleanUp();
    process.exit(2);
  });
