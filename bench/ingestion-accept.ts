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
 *    service's rate as a fraction of the bare route's.
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
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import pg from 'pg';
import { Pool as HttpPool } from 'undici';
import { freePort, offerOpenLoop, residentMb, openStatementsTable, percentile, startServiceProcess, stopServiceProcess, type OpenLoopResult } from './support.js';

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

/** Runs the accept phase; returns the markdown it prints. */
export async function measureAccept(ownerUrl: string, apiKey: string, tenantId: string, runId: string): Promise<string> {
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
  const body = (key: string) => JSON.stringify({ event_name: 'accept', participant_id: `a-${counter++ % PARTICIPANTS}`, properties: { amount: 25, currency: 'EUR' }, idempotency_key: key });
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
    const bareClosed = await autocannon({ url: `http://127.0.0.1:${barePort}/bare`, method: 'POST', headers, body: body('bare'), connections: CONNECTIONS, duration: CLOSED_SECONDS });
    const prefix = `${runId}-ac-`;
    let key = 0;
    const closed = await autocannon({
      url: `http://127.0.0.1:${port}/api/v1/ingest/events`,
      method: 'POST',
      headers,
      connections: CONNECTIONS,
      duration: CLOSED_SECONDS,
      requests: [{ setupRequest: (request) => ({ ...request, body: body(`${prefix}${key++}`) }) }],
    });
    const closedStored = await stored(prefix);
    const ratio = (100 * closed.requests.average) / bareClosed.requests.average;
    out.push(
      '',
      '| closed loop, 50 connections | rate | p50 / p99 | non-2xx or errors |',
      '|---|---:|---|---:|',
      `| bare Fastify POST | ${bareClosed.requests.average.toFixed(0)} req/s | ${bareClosed.latency.p50} / ${bareClosed.latency.p99} ms | ${bareClosed.non2xx + bareClosed.errors} |`,
      `| \`POST /ingest/events\` | ${closed.requests.average.toFixed(0)} req/s (**${ratio.toFixed(0)}%** of bare) | ${closed.latency.p50} / ${closed.latency.p99} ms | ${closed.non2xx + closed.errors} (stored ${closedStored}, 2xx ${closed['2xx']}) |`,
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
    out.push('', `Every accepted event stored once${ROLE === 'all' ? ' and processed' : ' (SERVICE_ROLE=api: not processed)'}. Service peak RSS (VmHWM): ${residentMb(service.pid, 'VmHWM').toFixed(0)} MB.`);
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
