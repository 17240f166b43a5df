/**
 * Foundation benchmark: `npm run bench -- foundation`
 *
 * What every authenticated request pays before a module does its work: the
 * API key look-up, the rate-limit counters, the tenant context (a transaction
 * with the tenant set for row-level security) and a trivial read
 * (`GET /api/v1/tenant`), measured against a bare Fastify route in the same
 * run. Both servers run in processes of their own; autocannon drives each with
 * 50 connections for 10 s after a short warm-up. The service's resident memory
 * is sampled while it is under load.
 *
 * Starts its own embedded PostgreSQL in a temporary directory (or uses
 * BENCH_DATABASE_URL, an owner URL of an empty database), loopback only,
 * bounded in time; prints a markdown table and exits.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { startEmbeddedPostgres, deriveAppPassword, withCredentials } from '../src/platform/database-server.js';
import { migrate, APP_ROLE } from '../src/platform/migrate.js';
import { Database } from '../src/platform/db.js';
import { createTenant } from '../src/modules/access/index.js';

const CONNECTIONS = 50;
const DURATION_SECONDS = Number(process.env.BENCH_DURATION_SECONDS ?? 10);
const WARMUP_SECONDS = 2;
const RSS_SAMPLE_INTERVAL_MS = 250;
const READY_TIMEOUT_MS = 60_000;
const TARGET_RATIO = 0.6;
const TARGET_P99_MS = 20;
const TARGET_RSS_MB = 250;

const root = path.resolve(import.meta.dirname, '..');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function spawnNode(script: string, env: NodeJS.ProcessEnv): ChildProcess {
  // node --import tsx (not the tsx launcher), so that the pid is the server itself.
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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

function residentMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

interface Measured {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  failures: number;
}

async function load(url: string, headers: Record<string, string>, seconds: number): Promise<Measured> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

async function main(): Promise<void> {
  const temporary = fs.mkdtempSync(path.join(os.tmpdir(), 'foundation-bench-'));
  const children: ChildProcess[] = [];
  let stopDatabase = async () => undefined as void;
  try {
    let ownerUrl = process.env.BENCH_DATABASE_URL ?? null;
    if (!ownerUrl) {
      const server = await startEmbeddedPostgres({ dataDir: temporary, port: await freePort() });
      ownerUrl = server.ownerUrl;
      stopDatabase = server.stop;
    }
    const appPassword = deriveAppPassword(ownerUrl, null);
    await migrate(ownerUrl, appPassword);
    const db = new Database(withCredentials(ownerUrl, APP_ROLE, appPassword), ownerUrl, 2);
    const tenant = await createTenant(db, { name: 'Bench', slug: `bench-${process.pid}`, plan: 'enterprise', requestsPerMinute: 100_000_000 });
    await db.close();

    const barePort = await freePort();
    const bare = spawnNode('bench/bare-server.ts', { PORT: String(barePort) });
    children.push(bare);
    const servicePort = await freePort();
    const service = spawnNode('src/main.ts', {
      DATABASE_URL: ownerUrl,
      SERVICE_ROLE: 'api',
      PORT: String(servicePort),
      APP_ENV: 'development',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      RATE_LIMIT_KEY_PER_MINUTE: '10000000',
      RATE_LIMIT_IP_PER_MINUTE: '10000000',
    });
    children.push(service);
    const bareUrl = `http://127.0.0.1:${barePort}/bare`;
    const serviceUrl = `http://127.0.0.1:${servicePort}/api/v1/tenant`;
    const keyHeaders = { 'x-api-key': tenant.api_key };
    await waitFor(bareUrl, bare);
    await waitFor(`http://127.0.0.1:${servicePort}/readyz`, service);
    const check = await fetch(serviceUrl, { headers: keyHeaders });
    if (check.status !== 200) throw new Error(`the authenticated route answers ${check.status}: ${await check.text()}`);

    const idleRssMb = residentMb(service.pid!);
    await load(bareUrl, {}, WARMUP_SECONDS);
    await load(serviceUrl, keyHeaders, WARMUP_SECONDS);
    const bareResult = await load(bareUrl, {}, DURATION_SECONDS);
    let peakRssMb = residentMb(service.pid!);
    const sampler = setInterval(() => {
      peakRssMb = Math.max(peakRssMb, residentMb(service.pid!));
    }, RSS_SAMPLE_INTERVAL_MS);
    const authResult = await load(serviceUrl, keyHeaders, DURATION_SECONDS);
    clearInterval(sampler);
    // Where the difference goes: the service's hooks and per-address limit without credential or database.
    const hooksResult = await load(`http://127.0.0.1:${servicePort}/healthz`, {}, DURATION_SECONDS);
    peakRssMb = Math.max(peakRssMb, residentMb(service.pid!));

    const ratio = authResult.requestsPerSecond / bareResult.requestsPerSecond;
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    const row = (name: string, m: Measured) =>
      `| ${name} | ${Math.round(m.requestsPerSecond).toLocaleString('en')} | ${m.p50} | ${m.p99} | ${m.total.toLocaleString('en')} | ${m.failures} |`;
    const lines = [
      `Service RSS measured on the service process (${service.pid}); the bare server has no database.`,
      '',
      `Foundation hot path, ${CONNECTIONS} connections × ${DURATION_SECONDS} s each (autocannon), ${os.cpus().length} CPUs, load average before: ${os.loadavg()[0].toFixed(1)}`,
      '',
      '| route | req/s | p50 ms | p99 ms | requests | non-2xx/errors |',
      '|---|---:|---:|---:|---:|---:|',
      row('bare Fastify `GET /bare` (baseline)', bareResult),
      row('authenticated `GET /api/v1/tenant` (key + rate limit + tenant transaction + read)', authResult),
      row('the service\'s `GET /healthz` (hooks + per-IP limit, no credential, no database)', hooksResult),
      '',
      '| figure | value | target | |',
      '|---|---:|---:|---|',
      `| authenticated / bare throughput | ${(ratio * 100).toFixed(0)}% | ≥ ${TARGET_RATIO * 100}% | ${verdict(ratio >= TARGET_RATIO)} |`,
      `| authenticated p99 | ${authResult.p99} ms | < ${TARGET_P99_MS} ms | ${verdict(authResult.p99 < TARGET_P99_MS)} |`,
      `| service RSS idle → peak under load | ${idleRssMb.toFixed(0)} → ${peakRssMb.toFixed(0)} MB | < ${TARGET_RSS_MB} MB | ${verdict(peakRssMb < TARGET_RSS_MB)} |`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    if (authResult.failures > 0) throw new Error(`${authResult.failures} authenticated requests failed`);
  } finally {
    for (const child of children) {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.on('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    }
    await stopDatabase();
    fs.rmSync(temporary, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
