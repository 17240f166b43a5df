/**
 * Points ledger benchmark: `npx tsx bench/points.bench.ts`
 *
 * Starts its own embedded PostgreSQL (or uses BENCH_DATABASE_URL, an owner
 * URL of an empty database) and the service in its own process on a loopback
 * port (built and started as `npm start` does, API role), and measures in one run:
 *
 * - HTTP grants over 10,000 participants, HTTP grants over 10 hot
 *   participants, HTTP deducts on the 10 hot participants, each with 64
 *   connections (autocannon, in this process), beside the same ledger
 *   transaction (the one-message direct grant or deduct: idempotency claim,
 *   ledger change, outbox row, stored response) run from Node by 64
 *   concurrent workers through the service function, without HTTP, on a
 *   pool of the same size; p50 and p99 of both; each after an unmeasured
 *   warm-up (BENCH_WARMUP_SECONDS, default 2);
 * - the expiry job expiring 1,000,000 due lots (100,000 participants × 10);
 * - a bulk grant to 100,000 participants, from the HTTP request to the job's end.
 *
 * Bounded (BENCH_SECONDS per load scenario, default 8), loopback only; prints
 * a markdown table and exits. BENCH_PARTS=load,expiry,bulk selects parts;
 * BENCH_POOL_SIZE sets the database pool of the service and the baseline
 * (default 64, one connection per load connection). BENCH_PROFILE_DIR=<dir> writes a
 * CPU profile of the service process (node --cpu-prof) into that directory.
 */
import os from 'node:os';
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { freePort, openBenchDatabase, openStatementsTable, percentile, runBench, STATEMENTS_SETTINGS, startServiceProcess, stopServiceProcess } from './support.js';
import { migrate } from '../src/platform/migrate.js';
import { loadModules } from '../src/platform/module.js';
import { Database } from '../src/platform/db.js';
import { createTenant } from '../src/modules/access/index.js';
import { clock } from '../src/platform/clock.js';
import { deductDirect, expireDuePoints, grantDirect, runBulkGrant } from '../src/modules/points/service.js';
import { findInvariantViolations } from '../src/modules/points/invariants.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/** Each load scenario first runs this long unmeasured (connections opened, code compiled, pages cached). */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const CONNECTIONS = 64;
/** BENCH_POINTS_STATEMENTS=1 prints each HTTP scenario's top statements by total time (pg_stat_statements), the outbox pump's included. */
const STATEMENTS = process.env.BENCH_POINTS_STATEMENTS === '1';
const STATEMENTS_TOP = 20;
const SPREAD_PARTICIPANTS = 10_000;
const HOT_PARTICIPANTS = 10;
const EXPIRY_PARTICIPANTS = 100_000;
const EXPIRY_LOTS_PER_PARTICIPANT = 10;
const BULK_PARTICIPANTS = 100_000;
/** The service's database pool (DB_POOL_SIZE); requests queue for it in Node when it is smaller than CONNECTIONS. */
const POOL_SIZE = Number(process.env.BENCH_POOL_SIZE ?? CONNECTIONS);
/** Which parts to run: any of load, expiry, bulk (comma-separated); all by default. */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'load,expiry,bulk').split(',').map((p) => p.trim()));

interface Row {
  scenario: string;
  figure: string;
  baseline: string;
  ratio: string;
  latency: string;
}

let keySeq = 0;
const nextKey = (prefix: string) => `${prefix}-${process.pid}-${++keySeq}`;

/** The same use-case without HTTP: 64 workers calling the service function for the same duration. */
async function direct(run: () => Promise<unknown>, seconds = SECONDS): Promise<{ rate: number; p50: number; p99: number; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          await run();
        } catch {
          errors += 1;
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { rate: latencies.length / ((performance.now() - started) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}

async function http(baseUrl: string, apiKey: string, pathName: string, body: () => unknown, seconds = SECONDS) {
  const result = await autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: pathName,
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        setupRequest: (request) => ({ ...request, body: JSON.stringify(body()) }),
      },
    ],
  });
  const total = result.requests.total;
  return { rate: total / (result.duration || seconds), p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors };
}

async function main(): Promise<void> {
  const database = await openBenchDatabase('points', STATEMENTS ? { settings: STATEMENTS_SETTINGS } : {});
  const { ownerUrl, appPassword, appUrl } = database;
  await migrate(ownerUrl, appPassword);
  // The bench's own database layer, with the service's pool size: the baseline and the job bodies run on it.
  const db = new Database(appUrl, ownerUrl, POOL_SIZE);
  const owner = new pg.Pool({ connectionString: ownerUrl, max: 4 });
  // Connections cut when the database stops must not crash the run.
  owner.on('error', () => undefined);
  const port = await freePort();
  let service: ChildProcess | null = null;
  const rows: Row[] = [];
  try {
    // API role, no job runner: the bulk grant's job runs in this process, timed on its own.
    service = await startServiceProcess({ ownerUrl, port, role: 'api', profileDir: process.env.BENCH_PROFILE_DIR, env: { DB_POOL_SIZE: String(POOL_SIZE) } });
    const baseUrl = `http://127.0.0.1:${port}`;
    // The modules' outbox followers, as the service registers them: the baseline's grant writes what the service's does.
    await loadModules();
    const tenant = await createTenant(db, { name: 'Bench', slug: `bench-${process.pid}`, plan: 'enterprise', adminEmail: `bench-${process.pid}@example.com`, requestsPerMinute: 100_000_000 });
    const tenantId = tenant.tenant_id;
    const apiKey = tenant.api_key;
    const spread = () => `p-${Math.floor(Math.random() * SPREAD_PARTICIPANTS)}`;
    const hot = () => `hot-${Math.floor(Math.random() * HOT_PARTICIPANTS)}`;
    const grantBody = (participant: () => string) => () => ({ participant_id: participant(), amount: 5, reason: 'bench', idempotency_key: nextKey('g') });
    const deductBody = () => ({ participant_id: hot(), amount: 1, reason: 'bench', idempotency_key: nextKey('d') });

    for (let i = 0; i < HOT_PARTICIPANTS; i++) {
      for (let j = 0; j < 3; j++) await grantDirect(db, tenantId, { participant_id: `hot-${i}`, amount: 1_000_000_000, reason: 'fund', idempotency_key: nextKey('fund') });
    }
    // Every spread participant exists before the load: the first grant to a participant also creates its participant
    // and balance rows, and whichever path ran first (HTTP) would otherwise pay for most of those creations.
    let nextParticipant = 0;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        for (let i = nextParticipant++; i < SPREAD_PARTICIPANTS; i = nextParticipant++) {
          await grantDirect(db, tenantId, { participant_id: `p-${i}`, amount: 5, reason: 'seed', idempotency_key: nextKey('seed') });
        }
      }),
    );

    const statements = await openStatementsTable(owner, STATEMENTS, STATEMENTS_TOP);
    const scenarios: Array<{ name: string; path: string; body: () => Record<string, unknown>; call: (b: any) => Promise<unknown> }> = [
      { name: 'grant, 10,000 participants', path: '/api/v1/gamify/points/grant', body: grantBody(spread), call: (b) => grantDirect(db, tenantId, b) },
      { name: 'grant, 10 hot participants', path: '/api/v1/gamify/points/grant', body: grantBody(hot), call: (b) => grantDirect(db, tenantId, b) },
      { name: 'deduct, 10 hot participants', path: '/api/v1/gamify/points/deduct', body: deductBody, call: (b) => deductDirect(db, tenantId, b) },
    ];
    for (const scenario of PARTS.has('load') ? scenarios : []) {
      await http(baseUrl, apiKey, scenario.path, scenario.body, WARMUP_SECONDS);
      await statements.reset();
      const viaHttp = await http(baseUrl, apiKey, scenario.path, scenario.body);
      await statements.print(`${scenario.name}, HTTP (the service and its outbox pump)`);
      await direct(() => scenario.call(scenario.body()), WARMUP_SECONDS);
      const viaNode = await direct(() => scenario.call(scenario.body()));
      rows.push({
        scenario: `${scenario.name} (req/s; baseline: same transaction from Node)`,
        figure: `${viaHttp.rate.toFixed(0)}/s${viaHttp.non2xx || viaHttp.errors ? ` (${viaHttp.non2xx} non-2xx, ${viaHttp.errors} errors)` : ''}`,
        baseline: `${viaNode.rate.toFixed(0)}/s${viaNode.errors ? ` (${viaNode.errors} errors)` : ''}`,
        ratio: `${((viaHttp.rate / viaNode.rate) * 100).toFixed(0)}%`,
        latency: `${viaHttp.p50.toFixed(0)} / ${viaHttp.p99.toFixed(0)} ms (baseline ${viaNode.p50.toFixed(0)} / ${viaNode.p99.toFixed(0)} ms)`,
      });
      process.stderr.write(`${scenario.name}: http ${viaHttp.rate.toFixed(0)}/s p50 ${viaHttp.p50} p99 ${viaHttp.p99} ms; node ${viaNode.rate.toFixed(0)}/s p50 ${viaNode.p50.toFixed(1)} p99 ${viaNode.p99.toFixed(1)} ms\n`);
    }

    if (PARTS.has('expiry')) {
      // Expiry of 1,000,000 lots: written directly (consistent balances, lots and ledger), all due.
      const setupStarted = performance.now();
      const grantedAt = new Date(clock.nowMs() - 400 * 86_400_000);
      const expiresAt = new Date(clock.nowMs() - 35 * 86_400_000);
      await owner.query(
        `WITH people AS (
           INSERT INTO participants (tenant_id, participant_id) SELECT $1, 'e-' || g FROM generate_series(1, $2) g RETURNING participant_id
         ),
         balances AS (
           INSERT INTO points_balances (tenant_id, participant_id, available, lifetime, last_earned_at, updated_at)
           SELECT $1, participant_id, 10 * $3, 10 * $3, $4, $4 FROM people
         ),
         entries AS (
           INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, source_kind, available_after, lifetime_after, created_at)
           SELECT $1, p.participant_id, 'ple_e_' || p.participant_id || '_' || k, 'award', 10, 'bench', 'grant', 10 * k, 10 * k, $4
           FROM people p, generate_series(1, $3) k
         )
         INSERT INTO points_lots (tenant_id, participant_id, amount, remaining, ledger_entry_id, created_at, expires_at)
         SELECT $1, p.participant_id, 10, 10, 'ple_e_' || p.participant_id || '_' || k, $4, $5 FROM people p, generate_series(1, $3) k`,
        [tenantId, EXPIRY_PARTICIPANTS, EXPIRY_LOTS_PER_PARTICIPANT, grantedAt, expiresAt],
      );
      await owner.query('VACUUM ANALYZE points_lots, points_balances, points_ledger');
      process.stderr.write(`expiry setup: ${((performance.now() - setupStarted) / 1000).toFixed(1)} s\n`);
      const expiryStarted = performance.now();
      const expired = await expireDuePoints(db);
      const expirySeconds = (performance.now() - expiryStarted) / 1000;
      rows.push({
        scenario: `expiry job: ${expired.lots.toLocaleString('en')} lots of ${expired.participants.toLocaleString('en')} participants (target < 60 s)`,
        figure: `${expirySeconds.toFixed(1)} s (${(expired.lots / expirySeconds).toFixed(0)} lots/s)`,
        baseline: 'n/a',
        ratio: '',
        latency: '',
      });
      process.stderr.write(`expiry: ${expirySeconds.toFixed(1)} s for ${expired.lots} lots\n`);

    }

    if (PARTS.has('bulk')) {
      // Bulk grant to 100,000 participants: the HTTP request, then the job run to the end.
      const grants = Array.from({ length: BULK_PARTICIPANTS }, (_, i) => ({ participant_id: `b-${i}`, amount: 25 }));
      const bulkStarted = performance.now();
      const response = await fetch(`${baseUrl}/api/v1/admin/points/bulk-grant`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify({ idempotency_key: nextKey('bulk'), reason: 'bench bulk', grants }),
      });
      const job = (await response.json()) as { job_id: string };
      if (response.status !== 202) throw new Error(`bulk grant answered ${response.status}: ${JSON.stringify(job)}`);
      const accepted = (performance.now() - bulkStarted) / 1000;
      await runBulkGrant(db, tenantId, job.job_id);
      const bulkSeconds = (performance.now() - bulkStarted) / 1000;
      rows.push({
        scenario: `bulk grant to ${BULK_PARTICIPANTS.toLocaleString('en')} participants (target < 60 s)`,
        figure: `${bulkSeconds.toFixed(1)} s (request accepted in ${accepted.toFixed(1)} s; ${(BULK_PARTICIPANTS / bulkSeconds).toFixed(0)} grants/s)`,
        baseline: 'n/a',
        ratio: '',
        latency: '',
      });

    }

    const violations = await findInvariantViolations(owner, tenantId);
    process.stderr.write(`invariants: ${violations.length === 0 ? 'hold' : `${violations.length} violations`}\n`);

    const load = os.loadavg()[0].toFixed(1);
    process.stdout.write(`\nPoints benchmark (${os.cpus().length} cores, load average ${load} at the end, ${CONNECTIONS} connections, database pool ${POOL_SIZE}, ${SECONDS} s per load scenario)\n\n`);
    process.stdout.write('| scenario | figure | baseline | HTTP / baseline | p50 / p99 HTTP (baseline) |\n|---|---|---|---|---|\n');
    for (const r of rows) process.stdout.write(`| ${r.scenario} | ${r.figure} | ${r.baseline} | ${r.ratio} | ${r.latency} |\n`);
    process.stdout.write(`\nLedger invariants after the run: ${violations.length === 0 ? 'hold' : `${violations.length} violations`}\n`);
  } finally {
    if (service) await stopServiceProcess(service);
    await owner.end();
    await db.close();
    await database.stop();
  }
}

runBench(main);
