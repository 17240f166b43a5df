/**
 * The accept phase of bench/ingestion.bench.ts (issue 37): `POST /api/v1/ingest/events`
 * against the service as `npm start` runs it (one process, SERVICE_ROLE=all, compiled),
 * beside a bare Fastify POST in a process of its own, in the same run:
 *
 * 1. open loop at each of BENCH_INGESTION_RATES (default 500,1000) events/s for
 *    BENCH_INGESTION_SECONDS (default 10): request i leaves at start + i / rate
 *    whatever the answers; p50/p95/p99 from the scheduled departure, the bare
 *    POST first at the same rate;
 * 2. closed loop at 50 connections (autocannon, BENCH_DURATION_SECONDS): the
 *    service's rate as a fraction of the bare route's;
 * 3. the limit, after the service has stopped: the accept's writes alone, from
 *    this process, by 50 callers in a closed loop for as long, through the
 *    service's own group commit (`EventWriter`, the same statement, commit and
 *    quota row per write) with no HTTP, no authentication and no processing:
 *    the most accepts/s the database work allows on these cores, as a fraction
 *    of the bare route's rate, with machine, PostgreSQL and Node CPU per event.
 *
 * After each phase every accepted event must be stored exactly once (counted
 * by its idempotency key prefix) and, at the end, processed; otherwise it throws.
 * BENCH_INGESTION_PROFILE=<dir>: the service runs with --cpu-prof into <dir>.
 * BENCH_INGESTION_STATEMENTS=1: the top statements of each open-loop rate
 * (the database must have been started with STATEMENTS_SETTINGS).
 * BENCH_INGESTION_ROLE=api: the service without its processing (the accept path's
 * own ceiling; the events are then left unprocessed and only the stored-once check runs).
 * Prints the service's peak resident memory (VmHWM).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import pg from 'pg';
import { Pool as HttpPool } from 'undici';
import { cpuMs, cpuMsOfProcesses, freePort, offerOpenLoop, residentMb, openStatementsTable, percentile, startServiceProcess, stopServiceProcess, type OpenLoopResult } from './support.js';
import type { Database } from '../src/platform/db.js';
import { createLogger } from '../src/platform/logger.js';
import { EventWriter } from '../src/modules/ingestion/writer.js';
import { isRejection, normalize } from '../src/modules/ingestion/normalize.js';
import type { IngestEvent } from '../src/modules/ingestion/schemas.js';

const RATES = (process.env.BENCH_INGESTION_RATES ?? '500,1000').split(',').map((rate) => Number(rate.trim()));
const SECONDS = Number(process.env.BENCH_INGESTION_SECONDS ?? 10);
const CLOSED_SECONDS = Number(process.env.BENCH_DURATION_SECONDS ?? 8);
const PROFILE_DIR = process.env.BENCH_INGESTION_PROFILE ? path.resolve(process.env.BENCH_INGESTION_PROFILE) : null;
export const ACCEPT_STATEMENTS = process.env.BENCH_INGESTION_STATEMENTS === '1';
const ROLE = process.env.BENCH_INGESTION_ROLE === 'api' ? 'api' : 'all';
const CONNECTIONS = 50;
const HTTP_CONNECTIONS = 256;
const PARTICIPANTS = 1_000;
const DRAIN_TIMEOUT_MS = 120_000;
const root = path.resolve(import.meta.dirname, '..');

const BARE_FASTIFY = `
import Fastify from 'fastify';
const app = Fastify({ logger: false });
app.post('/bare', async (_request, reply) => reply.status(202).send({ accepted: true, message_id: 'ev_0' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
`;

function progress(message: string): void {
  process.stderr.write(`[ingestion accept] ${new Date().toISOString()} ${message}\n`);
}

const ms = (values: number[]) => [50, 95, 99].map((p) => percentile(values, p).toFixed(1)).join(' / ');

async function waitForHttp(url: string): Promise<void> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    try {
      await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      return;
    } catch {
      // Not listening yet.
    }
  }
  throw new Error(`${url} did not come up`);
}

interface WritesAlone {
  rate: number;
  accepted: number;
  latencies: number[];
  /** CPU ms per accepted event: the machine's, PostgreSQL's and this process's. */
  cpu: { machine: number; postgres: number; node: number };
  /** Cores busy on average, of the machine's. */
  cores: number;
}

/**
 * The limit: `callers` closed loops for `seconds`, each submitting one event
 * at a time to the service's group commit and waiting for its commit, as the
 * route does once a request is authenticated and validated.
 */
async function writesAlone(db: Database, tenantId: string, event: (key: string) => IngestEvent, prefix: string, callers: number, seconds: number): Promise<WritesAlone> {
  const writer = new EventWriter(db, createLogger('warn'));
  const latencies: number[] = [];
  let key = 0;
  const cpu = () => ({ machine: cpuMs().machine, postgres: cpuMsOfProcesses('postgres'), node: (process.cpuUsage().user + process.cpuUsage().system) / 1000 });
  const before = cpu();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < deadline) {
        const sent = performance.now();
        const normalized = normalize(tenantId, event(`${prefix}${key++}`), undefined, true);
        if (isRejection(normalized)) throw new Error(`the limit's event was refused: ${normalized.detail}`);
        const [result] = await writer.submit(tenantId, [normalized]);
        if (result.status !== 'accepted') throw new Error(`the limit's event was not accepted: ${JSON.stringify(result)}`);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const after = cpu();
  const per = (field: keyof typeof before) => (after[field] - before[field]) / Math.max(1, latencies.length);
  const cores = (after.machine - before.machine) / (elapsed * 1000);
  return { rate: latencies.length / elapsed, accepted: latencies.length, latencies, cpu: { machine: per('machine'), postgres: per('postgres'), node: per('node') }, cores };
}

interface CpuUse {
  perRequest: number;
  /** Cores busy on average, of the machine's. */
  cores: number;
}

/** Starts a reading of the machine's CPU; the returned function ends it over `requests`. */
function machineCpu(): (requests: number) => CpuUse {
  const cpuBefore = cpuMs().machine;
  const started = performance.now();
  return (requests) => {
    const used = cpuMs().machine - cpuBefore;
    return { perRequest: used / Math.max(1, requests), cores: used / (performance.now() - started) };
  };
}

const cpuCell = (use: CpuUse) => `${use.perRequest.toFixed(3)} ms (${use.cores.toFixed(2)} of ${os.cpus().length})`;

/** Runs the accept phase; returns the markdown it prints. */
export async function measureAccept(ownerUrl: string, apiKey: string, tenantId: string, runId: string, db: Database): Promise<string> {
  const owner = new pg.Pool({ connectionString: ownerUrl, max: 2 });
  owner.on('error', () => undefined);
  const statements = await openStatementsTable(owner, ACCEPT_STATEMENTS, 15);
  const barePort = await freePort();
  const bare: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', BARE_FASTIFY], { cwd: root, env: { ...process.env, PORT: String(barePort) }, stdio: ['ignore', 'ignore', 'inherit'] });
  const port = await freePort();
  let service: ChildProcess | null = null;
  const out: string[] = [];
  const headers = { 'content-type': 'application/json', 'x-api-key': apiKey };
  const servicePool = new HttpPool(`http://127.0.0.1:${port}`, { connections: HTTP_CONNECTIONS });
  const barePool = new HttpPool(`http://127.0.0.1:${barePort}`, { connections: HTTP_CONNECTIONS });
  let counter = 0;
  const event = (key: string): IngestEvent => ({ event_name: 'accept', participant_id: `a-${counter++ % PARTICIPANTS}`, properties: { amount: 25, currency: 'EUR' }, idempotency_key: key });
  const body = (key: string) => JSON.stringify(event(key));
  const send = (pool: HttpPool, pathName: string) => async (key: string) => {
    const response = await pool.request({ method: 'POST', path: pathName, headers, body: body(key) });
    const text = await response.body.text();
    if (response.statusCode !== 202) throw new Error(`${pathName} answered ${response.statusCode}: ${text.slice(0, 200)}`);
  };
  const stored = async (prefix: string) =>
    Number((await owner.query('SELECT count(*)::int AS n FROM ingested_events WHERE tenant_id = $1 AND idempotency_key LIKE $2', [tenantId, `${prefix}%`])).rows[0].n);
  try {
    progress(`starting the service (SERVICE_ROLE=${ROLE}${PROFILE_DIR ? `, CPU profile into ${PROFILE_DIR}` : ''})`);
    service = await startServiceProcess({ ownerUrl, port, role: ROLE, profileDir: PROFILE_DIR });
    await waitForHttp(`http://127.0.0.1:${barePort}/bare`);
    // Warm-up, unmeasured: connections, JIT, the participants' rows.
    const warm = await offerOpenLoop(200, 3, (i) => send(servicePool, '/api/v1/ingest/events')(`${runId}-aw-${i}`));
    await offerOpenLoop(200, 3, (i) => send(barePool, '/bare')(`w-${i}`));
    if (warm.failures > 0) throw new Error(`accept warm-up: ${warm.failures} failed: ${warm.firstFailure}`);

    out.push('| rate | bare POST p50 / p95 / p99 | `POST /ingest/events` p50 / p95 / p99 | accepted / offered | stored once | sender lag max |', '|---:|---|---|---|---|---:|');
    for (const rate of RATES) {
      progress(`${rate}/s open loop for ${SECONDS} s: bare, then the service`);
      const bareResult = await offerOpenLoop(rate, SECONDS, (i) => send(barePool, '/bare')(`b-${i}`));
      await statements.reset();
      const prefix = `${runId}-ao${rate}-`;
      const result: OpenLoopResult = await offerOpenLoop(rate, SECONDS, (i) => send(servicePool, '/api/v1/ingest/events')(`${prefix}${i}`));
      const count = await stored(prefix);
      const offered = Math.round(rate * SECONDS);
      out.push(
        `| ${rate}/s | ${ms(bareResult.latencies)} | ${ms(result.latencies)} | ${result.latencies.length} / ${offered}${result.failures ? ` (${result.failures} failed: ${result.firstFailure})` : ''} | ` +
          `${count === result.latencies.length ? '✓' : '✗'} ${count} | ${result.sendLagMaxMs.toFixed(0)} ms |`,
      );
      if (count !== result.latencies.length) throw new Error(`${rate}/s: ${result.latencies.length} accepted but ${count} stored`);
      await statements.print(`accept ${rate}/s open loop (the accepts and the processing they cause)`);
    }

    progress(`closed loop, ${CONNECTIONS} connections, ${CLOSED_SECONDS} s each`);
    const bareCpu = machineCpu();
    const bareClosed = await autocannon({ url: `http://127.0.0.1:${barePort}/bare`, method: 'POST', headers, body: body('bare'), connections: CONNECTIONS, duration: CLOSED_SECONDS });
    const bareUse = bareCpu(bareClosed.requests.total);
    const prefix = `${runId}-ac-`;
    let key = 0;
    const serviceCpu = machineCpu();
    const closed = await autocannon({
      url: `http://127.0.0.1:${port}/api/v1/ingest/events`,
      method: 'POST',
      headers,
      connections: CONNECTIONS,
      duration: CLOSED_SECONDS,
      requests: [{ setupRequest: (request) => ({ ...request, body: body(`${prefix}${key++}`) }) }],
    });
    const serviceUse = serviceCpu(closed.requests.total);
    const closedStored = await stored(prefix);
    const ratio = (100 * closed.requests.average) / bareClosed.requests.average;
    out.push(
      '',
      '| closed loop, 50 connections | rate | p50 / p99 | machine CPU per request (cores busy) | non-2xx or errors |',
      '|---|---:|---|---|---:|',
      `| bare Fastify POST | ${bareClosed.requests.average.toFixed(0)} req/s | ${bareClosed.latency.p50} / ${bareClosed.latency.p99} ms | ${cpuCell(bareUse)} | ${bareClosed.non2xx + bareClosed.errors} |`,
      `| \`POST /ingest/events\` | ${closed.requests.average.toFixed(0)} req/s (**${ratio.toFixed(0)}%** of bare) | ${closed.latency.p50} / ${closed.latency.p99} ms | ${cpuCell(serviceUse)} | ${closed.non2xx + closed.errors} (stored ${closedStored}, 2xx ${closed['2xx']}) |`,
    );
    // autocannon may count a request whose answer came after it stopped listening; stored must not be fewer than 202s.
    if (closedStored < closed['2xx']) throw new Error(`closed loop: ${closed['2xx']} answered 2xx but ${closedStored} stored`);

    progress(ROLE === 'all' ? 'waiting until every accepted event is processed' : 'no processing (SERVICE_ROLE=api)');
    for (const deadline = Date.now() + DRAIN_TIMEOUT_MS; ROLE === 'all'; await new Promise((r) => setTimeout(r, 200))) {
      const { rows } = await owner.query(`SELECT count(*)::int AS n FROM ingested_events WHERE tenant_id = $1 AND status <> 'processed'`, [tenantId]);
      if (rows[0].n === 0) break;
      if (Date.now() > deadline) throw new Error(`${rows[0].n} accepted events unprocessed after ${DRAIN_TIMEOUT_MS / 1000} s`);
    }
    const { rows: twice } = await owner.query('SELECT count(*)::int AS n FROM (SELECT idempotency_key FROM ingested_events WHERE tenant_id = $1 GROUP BY 1 HAVING count(*) > 1) d', [tenantId]);
    if (twice[0].n > 0) throw new Error(`${twice[0].n} idempotency keys stored twice`);
    const peak = residentMb(service.pid, 'VmHWM');
    await stopServiceProcess(service);
    service = null;

    progress(`the limit: the accept's writes alone from this process, ${CONNECTIONS} callers, ${CLOSED_SECONDS} s`);
    const limitPrefix = `${runId}-al-`;
    const limit = await writesAlone(db, tenantId, event, limitPrefix, CONNECTIONS, CLOSED_SECONDS);
    const limitStored = await stored(limitPrefix);
    if (limitStored !== limit.accepted) throw new Error(`the limit: ${limit.accepted} accepted but ${limitStored} stored`);
    const limitRatio = (100 * limit.rate) / bareClosed.requests.average;
    out.push(
      `| the limit: the accept's writes alone, 50 callers in this process (\`EventWriter\`, no HTTP) | ${limit.rate.toFixed(0)} events/s (**${limitRatio.toFixed(0)}%** of bare; the service ${((100 * closed.requests.average) / limit.rate).toFixed(0)}% of it) | ` +
        `${percentile(limit.latencies, 50).toFixed(1)} / ${percentile(limit.latencies, 99).toFixed(1)} ms | ${limit.cpu.machine.toFixed(3)} ms (${limit.cores.toFixed(2)} of ${os.cpus().length}; PostgreSQL ${limit.cpu.postgres.toFixed(3)}, Node ${limit.cpu.node.toFixed(3)}) | 0 (stored ${limitStored}) |`,
      '',
      // A durable accept does at least what the bare route does (the client's request, its parse, its answer) and the writes'
      // database work: when both fill the cores, its rate is at most this share of the bare route's.
      `The bound: a durable accept costs at least the bare POST's machine CPU plus the writes' (${bareUse.perRequest.toFixed(3)} + ${limit.cpu.machine.toFixed(3)} ms), ` +
        `so at most **${((100 * bareUse.perRequest) / (bareUse.perRequest + limit.cpu.machine)).toFixed(0)}%** of the bare route's rate on the same cores.`,
    );

    out.push('', `Every accepted event stored once${ROLE === 'all' ? ' and processed' : ' (SERVICE_ROLE=api: not processed)'}; the limit's events stored once, left unprocessed. Service peak RSS (VmHWM): ${peak.toFixed(0)} MB.`);
  } finally {
    await servicePool.close();
    await barePool.close();
    if (service) await stopServiceProcess(service);
    bare.kill('SIGTERM');
    await owner.end();
  }
  if (PROFILE_DIR) out.push(`\nCPU profile in ${PROFILE_DIR}: \`node scripts/cpu-profile-summary.mjs <file>\``);
  return `\n### Accept (SERVICE_ROLE=${ROLE}): open loop ${SECONDS} s per rate, closed loop ${CLOSED_SECONDS} s\n\n${out.join('\n')}\n`;
}
