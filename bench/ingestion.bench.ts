/**
 * Ingestion benchmark: `npx tsx bench/ingestion.bench.ts`
 *
 * Starts its own embedded PostgreSQL (or uses BENCH_DATABASE_URL, an owner
 * URL of an empty database), then, as separate processes on loopback:
 *
 * - a bare Fastify route (POST, JSON body, no database): the baseline;
 * - the service's API (SERVICE_ROLE=api), rate limits raised out of the way.
 *
 * and measures in one run, with autocannon in this process:
 *
 * 1. single-event accept: `POST /ingest/events` at 50 connections (req/s, p99)
 *    against the bare route at 50 connections;
 * 2. batches of 100: `POST /ingest/events/batch` (events/s, p99 per batch);
 * 3. processing: with one worker process (SERVICE_ROLE=worker) running,
 *    6,000 events stored in batches; events/s over the span of their
 *    processed_at, each with its points granted; again with two;
 * 4. end to end: single events sent at 70% of the two-worker processing
 *    rate while two workers run; p50/p95 of processed_at − received_at.
 *
 * Before these, the accept phase of issue 37 (bench/ingestion-accept.ts):
 * open loop at BENCH_INGESTION_RATES beside a bare POST, and the 50-connection
 * ratio, against the service as `npm start` runs it. BENCH_INGESTION_ACCEPT_ONLY=1
 * runs that phase only.
 *
 * Loopback only; bounded in time; prints a markdown table and exits.
 */
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';
import { withCredentials } from '../src/platform/database-server.js';
import { freePort, openBenchDatabase, runBench, STATEMENTS_SETTINGS } from './support.js';
import { ACCEPT_STATEMENTS, measureAccept } from './ingestion-accept.js';
import { APP_ROLE, migrate } from '../src/platform/migrate.js';
import { Database } from '../src/platform/db.js';
import { createTenant } from '../src/modules/access/index.js';

const DURATION_SECONDS = Number(process.env.BENCH_DURATION_SECONDS ?? 8);
const CONNECTIONS = 50;
const BATCH_CONNECTIONS = 10;
const BATCH_SIZE = 100;
const PROCESSING_EVENTS = Number(process.env.BENCH_PROCESSING_EVENTS ?? 6000);
const PROCESSING_PARTICIPANTS = 1000;
const END_TO_END_SECONDS = 10;
const PROCESSING_TIMEOUT_MS = 240_000;
const CHILD_STOP_GRACE_MS = 10_000;
const root = path.resolve(import.meta.dirname, '..');

async function waitForHttp(url: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${url} did not come up`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const children: ChildProcess[] = [];

function startChild(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    // A process still booting may not act on SIGTERM; it gets SIGKILL after a grace period.
    const force = setTimeout(() => child.kill('SIGKILL'), CHILD_STOP_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

const BARE_FASTIFY = `
import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.post('/bare', async (_request, reply) => reply.status(202).send({ accepted: true, message_id: 'ev_0' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
`;

interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
}

function progress(message: string): void {
  process.stderr.write(`[bench] ${new Date().toISOString()} ${message}\n`);
}

async function load(options: autocannon.Options): Promise<LoadResult> {
  progress(`load ${String(options.url)}`);
  const result = await autocannon({ duration: DURATION_SECONDS, ...options });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    total: result.requests.total,
  };
}

let keyCounter = 0;
const runId = randomBytes(4).toString('hex');
function event(participant: string, name = 'purchase'): Record<string, unknown> {
  keyCounter += 1;
  return { event_name: name, participant_id: participant, properties: { amount: 25, currency: 'EUR' }, idempotency_key: `${runId}-${keyCounter}` };
}

async function main(): Promise<void> {
  const database = await openBenchDatabase('ingestion', ACCEPT_STATEMENTS ? { settings: STATEMENTS_SETTINGS } : {});
  const { ownerUrl, appPassword } = database;
  await migrate(ownerUrl, appPassword);
  const db = new Database(withCredentials(ownerUrl, APP_ROLE, appPassword), ownerUrl, 4);
  const owner = new pg.Pool({ connectionString: ownerUrl, max: 2 });
  const tenant = await createTenant(db, { name: 'Bench', slug: `bench-${runId}`, plan: 'enterprise', requestsPerMinute: 100_000_000 });
  const serviceEnv = {
    APP_ENV: 'development',
    DATABASE_URL: ownerUrl,
    DB_APP_PASSWORD: appPassword,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_IP_PER_MINUTE: '10000000',
    RATE_LIMIT_KEY_PER_MINUTE: '10000000',
    RATE_LIMIT_INGEST_BURST_PER_SECOND: '10000000',
  };

  const rows: string[][] = [];
  process.stdout.write(await measureAccept(ownerUrl, tenant.api_key, tenant.tenant_id, runId, db));
  if (process.env.BENCH_INGESTION_ACCEPT_ONLY === '1') {
    await db.close();
    await owner.end();
    await database.stop();
    return;
  }
  try {
    // Baseline and API, each in a process of its own.
    const barePort = await freePort();
    startChild(['--input-type=module', '-e', BARE_FASTIFY], { PORT: String(barePort) });
    const apiPort = await freePort();
    startChild(['--import', 'tsx', 'src/main.ts'], { ...serviceEnv, SERVICE_ROLE: 'api', PORT: String(apiPort) });
    await waitForHttp(`http://127.0.0.1:${apiPort}/healthz`);
    const headers = { 'content-type': 'application/json', 'x-api-key': tenant.api_key };

    // Warm both up briefly so that the JIT and the pools are ready.
    await autocannon({ url: `http://127.0.0.1:${barePort}/bare`, method: 'POST', headers, body: JSON.stringify(event('warm')), connections: 10, duration: 2 });
    await autocannon({
      url: `http://127.0.0.1:${apiPort}/api/v1/ingest/events`,
      method: 'POST',
      headers,
      connections: 10,
      duration: 2,
      requests: [{ setupRequest: (request) => ({ ...request, body: JSON.stringify(event(`warm-${keyCounter % 100}`, 'warmup')) }) }],
    });

    const bare = await load({ url: `http://127.0.0.1:${barePort}/bare`, method: 'POST', headers, body: JSON.stringify(event('bare')), connections: CONNECTIONS });
    const single = await load({
      url: `http://127.0.0.1:${apiPort}/api/v1/ingest/events`,
      method: 'POST',
      headers,
      connections: CONNECTIONS,
      requests: [{ setupRequest: (request) => ({ ...request, body: JSON.stringify(event(`p-${keyCounter % 5000}`, 'accept')) }) }],
    });
    const batch = await load({
      url: `http://127.0.0.1:${apiPort}/api/v1/ingest/events/batch`,
      method: 'POST',
      headers,
      connections: BATCH_CONNECTIONS,
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({ events: Array.from({ length: BATCH_SIZE }, () => event(`p-${keyCounter % 5000}`, 'accept_batch')) }),
          }),
        },
      ],
    });
    rows.push(['bare Fastify POST (baseline), 50 connections', `${bare.requestsPerSecond.toFixed(0)} req/s`, `p50 ${bare.p50} ms, p99 ${bare.p99} ms`, `${bare.non2xx + bare.errors}`]);
    rows.push([
      '`POST /ingest/events`, 50 connections',
      `${single.requestsPerSecond.toFixed(0)} req/s (${((100 * single.requestsPerSecond) / bare.requestsPerSecond).toFixed(0)}% of baseline)`,
      `p50 ${single.p50} ms, p99 ${single.p99} ms`,
      `${single.non2xx + single.errors}`,
    ]);
    rows.push([
      '`POST /ingest/events/batch` (100 events), 10 connections',
      `${(batch.requestsPerSecond * BATCH_SIZE).toFixed(0)} events/s (${batch.requestsPerSecond.toFixed(0)} batches/s)`,
      `p50 ${batch.p50} ms, p99 ${batch.p99} ms per batch`,
      `${batch.non2xx + batch.errors}`,
    ]);

    // The accept runs left a backlog of jobs; processing is measured on fresh events only.
    await owner.query('DELETE FROM graphile_worker._private_jobs');
    await fetch(`http://127.0.0.1:${apiPort}/api/v1/admin/rules`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'bench points', event_name: 'purchase', effects: [{ type: 'award_points', rate: { property: 'properties.amount', points_per_unit: 1 } }] }),
    }).then(async (r) => {
      if (r.status !== 201) throw new Error(`rule creation failed: ${r.status} ${await r.text()}`);
    });

    async function ingestBacklog(): Promise<number> {
      const since = (await owner.query('SELECT coalesce(max(seq), 0)::bigint AS seq FROM ingested_events')).rows[0].seq as number;
      for (let sent = 0; sent < PROCESSING_EVENTS; sent += 500) {
        const events = Array.from({ length: Math.min(500, PROCESSING_EVENTS - sent) }, () => event(`proc-${keyCounter % PROCESSING_PARTICIPANTS}`));
        const response = await fetch(`http://127.0.0.1:${apiPort}/api/v1/ingest/events/batch`, { method: 'POST', headers, body: JSON.stringify({ events }) });
        if (response.status !== 200) throw new Error(`backlog batch failed: ${response.status}`);
      }
      return since;
    }

    // Worker processes start one after another (concurrent starts would race on migrations) and are
    // ready once their job queue workers check in.
    async function startWorker(): Promise<ChildProcess> {
      progress('starting a worker process');
      const { rows: before } = await owner.query('SELECT count(*)::int AS n FROM worker_heartbeats');
      const child = startChild(['--import', 'tsx', 'src/main.ts'], { ...serviceEnv, SERVICE_ROLE: 'worker' });
      const deadline = Date.now() + 180_000;
      for (;;) {
        const { rows: now } = await owner.query('SELECT count(*)::int AS n FROM worker_heartbeats');
        if (now[0].n > before[0].n) return child;
        if (Date.now() > deadline) throw new Error('a worker process did not start');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    /** Stores the backlog while the workers run; the rate is events over the span of their processed_at. */
    async function measureProcessing(): Promise<number> {
      progress('storing the processing backlog');
      const since = await ingestBacklog();
      progress('waiting for processing');
      const started = Date.now();
      for (;;) {
        const { rows: left } = await owner.query(`SELECT count(*)::int AS n FROM ingested_events WHERE seq > $1 AND status <> 'processed'`, [since]);
        if (left[0].n === 0) break;
        if (Date.now() - started > PROCESSING_TIMEOUT_MS) throw new Error('processing did not finish');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const { rows: span } = await owner.query(
        `SELECT extract(epoch FROM max(processed_at) - min(processed_at))::float AS seconds FROM ingested_events WHERE seq > $1`,
        [since],
      );
      const { rows: granted } = await owner.query(
        `SELECT count(*)::int AS n FROM points_ledger l JOIN ingested_events e ON l.memo = 'event ' || e.event_id WHERE e.seq > $1`,
        [since],
      );
      if (granted[0].n !== PROCESSING_EVENTS) throw new Error(`expected ${PROCESSING_EVENTS} grants, found ${granted[0].n}`);
      return PROCESSING_EVENTS / Math.max(span[0].seconds, 0.001);
    }

    await startWorker();
    const oneWorker = await measureProcessing();
    rows.push([`processing, 1 worker process (${PROCESSING_EVENTS} events, ${PROCESSING_PARTICIPANTS} participants)`, `${oneWorker.toFixed(0)} events/s`, 'stored → points granted', '0']);
    await startWorker();
    const twoWorkers = await measureProcessing();
    rows.push([`processing, 2 worker processes (${PROCESSING_EVENTS} events)`, `${twoWorkers.toFixed(0)} events/s`, 'stored → points granted', '0']);

    // End to end at 70% of the two-worker processing rate, with the same two workers.
    const rate = Math.max(1, Math.floor(0.7 * twoWorkers));
    const since = (await owner.query('SELECT coalesce(max(seq), 0)::bigint AS seq FROM ingested_events')).rows[0].seq as number;
    const paced = await load({
      url: `http://127.0.0.1:${apiPort}/api/v1/ingest/events`,
      method: 'POST',
      headers,
      connections: 20,
      overallRate: rate,
      duration: END_TO_END_SECONDS,
      requests: [{ setupRequest: (request) => ({ ...request, body: JSON.stringify(event(`e2e-${keyCounter % PROCESSING_PARTICIPANTS}`)) }) }],
    });
    const deadline = Date.now() + PROCESSING_TIMEOUT_MS;
    for (;;) {
      const { rows: left } = await owner.query(`SELECT count(*)::int AS n FROM ingested_events WHERE seq > $1 AND status <> 'processed'`, [since]);
      if (left[0].n === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const { rows: latency } = await owner.query(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) AS p95, count(*)::int AS n
       FROM (SELECT extract(epoch FROM processed_at - received_at) * 1000 AS ms FROM ingested_events WHERE seq > $1 AND status = 'processed') s`,
      [since],
    );
    rows.push([
      `end to end at 70% of the 2-worker rate (${rate} events/s for ${END_TO_END_SECONDS} s, ${latency[0].n} events)`,
      `${paced.requestsPerSecond.toFixed(0)} req/s sent`,
      `accept p99 ${paced.p99} ms; stored → processed p50 ${Number(latency[0].p50).toFixed(0)} ms, p95 ${Number(latency[0].p95).toFixed(0)} ms`,
      `${paced.non2xx + paced.errors}`,
    ]);
  } finally {
    await Promise.all(children.map(stopChild));
    await owner.end();
    await db.close();
    await database.stop();
  }

  process.stdout.write(`\n| measurement | rate | latency | non-2xx or errors |\n|---|---|---|---|\n`);
  for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`);
  process.stdout.write(`\n${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ${DURATION_SECONDS} s per load run.\n`);
}

runBench(main, () => Promise.all(children.map(stopChild)));
