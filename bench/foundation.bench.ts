/**
 * Foundation benchmark: `npm run bench -- foundation`
 *
 * What every authenticated request pays before a module does its work: the
 * API key look-up, the rate-limit counters, the tenant context (a transaction
 * with the tenant set for row-level security) and a trivial read
 * (`GET /api/v1/tenant`), measured against a bare Fastify route in the same
 * run. Both servers run in processes of their own, the service compiled as
 * `npm start` runs it; autocannon drives each with 50 connections for 10 s
 * after a short warm-up, bare and authenticated runs alternating for
 * BENCH_ROUNDS rounds (3) so that the machine's load hits both. The service's
 * resident memory is sampled while it is under load. Two more rows show where
 * the time goes: the service's `/healthz` (hooks without credential, rate
 * limit or database) and a state read of a different participant per request (a
 * database read that no two requests share).
 *
 * Starts its own embedded PostgreSQL in a temporary directory (or uses
 * BENCH_DATABASE_URL, an owner URL of an empty database), loopback only,
 * bounded in time; prints a markdown table and exits.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { freePort, openBenchDatabase, residentMb, runBench } from './support.js';
import { migrate } from '../src/platform/migrate.js';
import { Database } from '../src/platform/db.js';
import { createTenant } from '../src/modules/access/index.js';
import { grantInTx } from '../src/modules/points/index.js';

const CONNECTIONS = 50;
const DURATION_SECONDS = Number(process.env.BENCH_DURATION_SECONDS ?? 10);
const WARMUP_SECONDS = 2;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const STATE_PARTICIPANTS = 1_000;
// The flags of `npm start` (package.json), so that memory is measured as it runs in production.
const START_FLAGS = ['--max-semi-space-size=8'];
const loadBefore = os.loadavg()[0];
const RSS_SAMPLE_INTERVAL_MS = 250;
const READY_TIMEOUT_MS = 60_000;
const TARGET_RATIO = 0.6;
const TARGET_P99_MS = 20;
const TARGET_RSS_MB = 250;

const root = path.resolve(import.meta.dirname, '..');

function spawnNode(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  // node itself (not the tsx launcher), so that the pid is the server itself.
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr!.on('data', (chunk) => process.stderr.write(chunk));
  return child;
}

async function waitFor(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} was not ready within ${READY_TIMEOUT_MS} ms`);
}

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start at field 3; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

interface Measured {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  failures: number;
  /** CPU time the server process spent per answered request, in microseconds. */
  cpuMicroseconds: number;
}

async function load(url: string, headers: Record<string, string>, seconds: number, serverPid: number, paths?: string[]): Promise<Measured> {
  let next = 0;
  const cpuBefore = cpuSeconds(serverPid);
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    headers,
    // Spread the requests over several paths (participants), so that no two concurrent requests read the same row.
    ...(paths ? { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, path: paths[next++ % paths.length] }) }] } : {}),
  });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    failures: result.non2xx + result.errors + result.timeouts,
    cpuMicroseconds: ((cpuSeconds(serverPid) - cpuBefore) / Math.max(1, result.requests.total)) * 1e6,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  const database = await openBenchDatabase('foundation');
  try {
    const { ownerUrl, appPassword, appUrl } = database;
    await migrate(ownerUrl, appPassword);
    const db = new Database(appUrl, ownerUrl, 2);
    const tenant = await createTenant(db, { name: 'Bench', slug: `bench-${process.pid}`, plan: 'enterprise', requestsPerMinute: 100_000_000 });
    // Participants with a balance each, for the row that reads a different participant per request.
    const participants = Array.from({ length: STATE_PARTICIPANTS }, (_, i) => `bench-p${i}`);
    await db.tenant(tenant.tenant_id, async (tx) => {
      for (const participantId of participants) {
        await grantInTx(tx, tenant.tenant_id, { participantId, amount: 10, reason: 'bench' });
      }
    });
    await db.close();

    // The service runs as `npm start` runs it: compiled JavaScript, not tsx.
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
    const barePort = await freePort();
    const bare = spawnNode(['--import', 'tsx', 'bench/bare-server.ts'], { PORT: String(barePort) });
    children.push(bare);
    const servicePort = await freePort();
    const service = spawnNode(
      [...(process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : []), ...START_FLAGS, 'dist/main.js'],
      {
        DATABASE_URL: ownerUrl,
        SERVICE_ROLE: 'api',
        PORT: String(servicePort),
        APP_ENV: 'development',
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
        RATE_LIMIT_KEY_PER_MINUTE: '10000000',
        RATE_LIMIT_IP_PER_MINUTE: '10000000',
      },
    );
    children.push(service);
    const base = `http://127.0.0.1:${servicePort}`;
    const bareUrl = `http://127.0.0.1:${barePort}/bare`;
    const serviceUrl = `${base}/api/v1/tenant`;
    const keyHeaders = { 'x-api-key': tenant.api_key };
    await waitFor(bareUrl, bare);
    await waitFor(`${base}/readyz`, service);
    const check = await fetch(serviceUrl, { headers: keyHeaders });
    if (check.status !== 200) throw new Error(`the authenticated route answers ${check.status}: ${await check.text()}`);
    const statePaths = participants.map((id) => `/api/v1/gamify/state/${id}?include=points`);
    const stateCheck = await fetch(`${base}${statePaths[0]}`, { headers: keyHeaders });
    if (stateCheck.status !== 200) throw new Error(`the state read answers ${stateCheck.status}: ${await stateCheck.text()}`);

    const idleRssMb = residentMb(service.pid!);
    await load(bareUrl, {}, WARMUP_SECONDS, bare.pid!);
    await load(serviceUrl, keyHeaders, WARMUP_SECONDS, service.pid!);
    let peakRssMb = residentMb(service.pid!);
    const sampler = setInterval(() => {
      peakRssMb = Math.max(peakRssMb, residentMb(service.pid!));
    }, RSS_SAMPLE_INTERVAL_MS);
    // Bare and authenticated runs alternate, so that a change in the machine's
    // load hits both; the ratio of each pair is kept and the median reported.
    const rounds: Array<{ bare: Measured; auth: Measured }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const bareRound = await load(bareUrl, {}, DURATION_SECONDS, bare.pid!);
      const authRound = await load(serviceUrl, keyHeaders, DURATION_SECONDS, service.pid!);
      rounds.push({ bare: bareRound, auth: authRound });
    }
    // Where the difference goes: the service's hooks and per-address limit
    // without credential or database; and a read that cannot be shared between requests.
    const hooksResult = await load(`${base}/healthz`, {}, DURATION_SECONDS, service.pid!);
    const stateResult = await load(base, keyHeaders, DURATION_SECONDS, service.pid!, statePaths);
    clearInterval(sampler);
    peakRssMb = Math.max(peakRssMb, residentMb(service.pid!));

    const ratios = rounds.map((r) => r.auth.requestsPerSecond / r.bare.requestsPerSecond);
    const ratio = median(ratios);
    const p99 = median(rounds.map((r) => r.auth.p99));
    const bareMedian = median(rounds.map((r) => r.bare.requestsPerSecond));
    // CPU per request does not depend on how much of the machine the process got, so it compares
    // the two servers' work even when other processes load the machine.
    const cpuRatio = median(rounds.map((r) => r.bare.cpuMicroseconds / r.auth.cpuMicroseconds));
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const row = (name: string, m: Measured, baseline: number) =>
      `| ${name} | ${Math.round(m.requestsPerSecond).toLocaleString('en')} | ${((m.requestsPerSecond / baseline) * 100).toFixed(0)}% | ${m.p50} | ${m.p99} | ${m.cpuMicroseconds.toFixed(0)} | ${m.total.toLocaleString('en')} | ${m.failures} |`;
    const lines = [
      `Service (pid ${service.pid}) started as \`npm start\` starts it: \`node ${START_FLAGS.join(' ')} dist/main.js\`, SERVICE_ROLE=api.`,
      '',
      `Foundation hot path, ${CONNECTIONS} connections × ${DURATION_SECONDS} s per run (autocannon), ${ROUNDS} alternating rounds, ${os.cpus().length} CPUs, load average before: ${loadBefore.toFixed(1)}`,
      '',
      '| route | req/s | of bare | p50 ms | p99 ms | server CPU µs/request | requests | non-2xx/errors |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...rounds.flatMap((r, i) => [
        row(`round ${i + 1}: bare Fastify \`GET /bare\` (baseline)`, r.bare, r.bare.requestsPerSecond),
        row(`round ${i + 1}: authenticated \`GET /api/v1/tenant\` (key + rate limits + tenant transaction + read)`, r.auth, r.bare.requestsPerSecond),
      ]),
      row('the service\'s `GET /healthz` (request id and metrics hooks; no credential, rate limit or database)', hooksResult, bareMedian),
      row(`authenticated \`GET /api/v1/gamify/state/{id}?include=points\`, ${STATE_PARTICIPANTS} participants in turn (a read no two requests share)`, stateResult, bareMedian),
      '',
      '| figure | value | target | |',
      '|---|---:|---:|---|',
      `| authenticated / bare throughput (median of ${ROUNDS} rounds: ${ratios.map((r) => `${(r * 100).toFixed(0)}%`).join(', ')}) | ${(ratio * 100).toFixed(0)}% | ≥ ${TARGET_RATIO * 100}% | ${verdict(ratio >= TARGET_RATIO)} |`,
      `| bare CPU per request / authenticated CPU per request (median of rounds; the service process only, PostgreSQL not counted) | ${(cpuRatio * 100).toFixed(0)}% | — | |`,
      `| authenticated p99 (median of rounds) | ${p99} ms | < ${TARGET_P99_MS} ms | ${verdict(p99 < TARGET_P99_MS)} |`,
      `| service RSS idle → peak under load | ${idleRssMb.toFixed(0)} → ${peakRssMb.toFixed(0)} MB | < ${TARGET_RSS_MB} MB | ${verdict(peakRssMb < TARGET_RSS_MB)} |`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    const failed = rounds.reduce((sum, r) => sum + r.auth.failures, 0) + stateResult.failures;
    if (failed > 0) throw new Error(`${failed} authenticated requests failed`);
  } finally {
    for (const child of children) {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.on('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    }
    await database.stop();
  }
}

runBench(main);
