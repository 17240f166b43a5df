/**
 * What every benchmark needs: a free loopback port, a database of its own,
 * percentiles of its latencies, an open-loop sender, and the service in a
 * process of its own.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { startEmbeddedPostgres, deriveAppPassword, withCredentials } from '../src/platform/database-server.js';
import pg from 'pg';
import type { Pool as HttpPool } from 'undici';
import { APP_ROLE } from '../src/platform/migrate.js';
import { startCommand } from '../scripts/start-command.js';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface OpenLoopResult {
  /** Milliseconds from each request's scheduled departure to its answer, successful requests only. */
  latencies: number[];
  /** For each latency, its request's scheduled departure in ms from the start of the run (to split a run by time). */
  departures: number[];
  failures: number;
  firstFailure: string | null;
  /** The largest delay between a request's scheduled departure and its actual one: the sender's own lag. */
  sendLagMaxMs: number;
  /** When the run started (epoch ms): its departures' origin, to line them up with what another process saw. */
  startedAt: number;
  /**
   * The sender's own event loop, per second of the run: how late a timer due every 5 ms ran (p99 and the longest)
   * and V8's collections' pauses. A latency includes the time its answer waited for the sender to read it.
   */
  senderSeconds: Array<{ loopP99Ms: number; loopMaxMs: number; gcMs: number }>;
}

/** Watches this process's event loop (a 5 ms timer's lateness) and GC pauses, per second until stopped. */
function watchOwnLoop(): () => OpenLoopResult['senderSeconds'] {
  const TICK_MS = 5;
  const seconds: OpenLoopResult['senderSeconds'] = [];
  let lateness: number[] = [];
  let gcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration;
  });
  gc.observe({ entryTypes: ['gc'] });
  let due = performance.now() + TICK_MS;
  const ticker = setInterval(() => {
    const now = performance.now();
    lateness.push(Math.max(0, now - due));
    due = now + TICK_MS;
  }, TICK_MS);
  const close = () => {
    seconds.push({ loopP99Ms: percentile(lateness, 99) || 0, loopMaxMs: Math.max(0, ...lateness), gcMs });
    lateness = [];
    gcMs = 0;
  };
  const perSecond = setInterval(close, 1000);
  return () => {
    clearInterval(ticker);
    clearInterval(perSecond);
    gc.disconnect();
    return seconds;
  };
}

/**
 * Offers `rate × seconds` requests open loop: request i is sent at
 * start + i / rate, whether or not earlier ones were answered.
 */
export async function offerOpenLoop(rate: number, seconds: number, send: (index: number) => Promise<void>): Promise<OpenLoopResult> {
  const total = Math.round(rate * seconds);
  const result: OpenLoopResult = { latencies: [], departures: [], failures: 0, firstFailure: null, sendLagMaxMs: 0, startedAt: Date.now(), senderSeconds: [] };
  const stopWatching = watchOwnLoop();
  const inFlight: Array<Promise<void>> = [];
  const started = performance.now();
  const scheduledAt = (index: number) => started + (index * 1000) / rate;
  let next = 0;
  while (next < total) {
    const now = performance.now();
    for (; next < total && scheduledAt(next) <= now; next++) {
      const departure = scheduledAt(next);
      result.sendLagMaxMs = Math.max(result.sendLagMaxMs, now - departure);
      inFlight.push(
        send(next).then(
          () => {
            result.latencies.push(performance.now() - departure);
            result.departures.push(departure - started);
          },
          (error: unknown) => {
            result.failures += 1;
            result.firstFailure ??= error instanceof Error ? error.message : String(error);
          },
        ),
      );
    }
    if (next < total) await new Promise((resolve) => setTimeout(resolve, Math.max(0, scheduledAt(next) - performance.now())));
  }
  await Promise.all(inFlight);
  result.senderSeconds = stopWatching();
  return result;
}

/**
 * A service's warm-up: every kind of request the run will measure (`sends`,
 * by name), each offered open loop at `rate` for `seconds`, all at once, as a
 * running service serves them mixed. Warmed with one kind only, V8 optimises
 * the code the kinds share (Node's HTTP server, Fastify's reply, the
 * platform's hooks) for that kind's objects, and the first phase of another
 * kind deoptimises it, so whatever runs next pays for compiling it again
 * (docs/performance.md, "Spins: the warm-up serves both requests"). Throws
 * when any request failed. Returns how many of each were answered.
 */
export async function warmUp(rate: number, seconds: number, sends: Record<string, (index: number) => Promise<void>>): Promise<Record<string, number>> {
  const kinds = Object.entries(sends);
  const results = await Promise.all(kinds.map(([, send]) => offerOpenLoop(rate, seconds, send)));
  const answered: Record<string, number> = {};
  results.forEach((result, i) => {
    const kind = kinds[i][0];
    if (result.failures > 0) throw new Error(`warm-up: ${result.failures} of ${kind} failed, the first: ${result.firstFailure}`);
    answered[kind] = result.latencies.length;
  });
  return answered;
}

/** One offered rate of one scenario, as an open-loop benchmark prints it. */
export interface OpenLoopRow {
  rate: number;
  scenario: string;
  result: OpenLoopResult;
}

/** Per second of a run (by scheduled departure): `second: p50/p99` in ms, to see a stall where a run's percentiles only show a tail. */
export function perSecond(result: OpenLoopResult): string {
  const seconds = new Map<number, number[]>();
  result.latencies.forEach((latency, i) => {
    const second = Math.floor(result.departures[i] / 1000);
    const bucket = seconds.get(second);
    if (bucket) bucket.push(latency);
    else seconds.set(second, [latency]);
  });
  return [...seconds].map(([second, latencies]) => `${second}: ${percentile(latencies, 50).toFixed(0)}/${percentile(latencies, 99).toFixed(0)}`).join(' · ');
}

/** The header of the table of `openLoopCells` rows. */
export const OPEN_LOOP_HEADER = '| offered | scenario | 2xx | p50 ms | p95 ms | p99 ms | failed | sender lag max ms |\n|---|---|---|---|---|---|---|---|';

/** A markdown table row: the offered rate, the answered count, p50/p95/p99, failures and the sender's own lag. */
export function openLoopCells(row: OpenLoopRow): string {
  const { latencies, failures } = row.result;
  const ms = (p: number) => percentile(latencies, p).toFixed(1);
  return `| ${row.rate}/s | ${row.scenario} | ${latencies.length} | ${ms(50)} | ${ms(95)} | ${ms(99)} | ${failures} | ${row.result.sendLagMaxMs.toFixed(0)} |`;
}

/** Server settings that load pg_stat_statements, for openStatementsTable. */
export const STATEMENTS_SETTINGS = ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all', 'pg_stat_statements.track_planning=on'];

export interface StatementsTable {
  available: boolean;
  reset(): Promise<void>;
  print(title: string): Promise<void>;
}

/**
 * pg_stat_statements for a benchmark that asked for it (`on`; the database
 * started with STATEMENTS_SETTINGS): reset between phases, and print the `top`
 * statements by total time. The benchmark's own statements (bench_… in their
 * text) are left out. Off, or without the extension, every call is a no-op.
 */
export async function openStatementsTable(owner: pg.Pool, on: boolean, top: number): Promise<StatementsTable> {
  const off: StatementsTable = { available: false, reset: async () => undefined, print: async () => undefined };
  if (!on) return off;
  try {
    await owner.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await owner.query('SELECT pg_stat_statements_reset()');
  } catch (error) {
    process.stdout.write(`\npg_stat_statements is not available (${error instanceof Error ? error.message : String(error)}): statement stats skipped.\n`);
    return off;
  }
  return {
    available: true,
    reset: async () => void (await owner.query('SELECT pg_stat_statements_reset()')),
    async print(title: string) {
      const rows = await topStatements(owner, top);
      const all = rows.length > 0 ? Number(rows[0].all_ms).toFixed(0) : '0';
      process.stdout.write(`\n### Statements, ${title} (top ${top} by total time, executing and planning; "nested" ones run inside another, whose time includes theirs; every top-level statement together: ${all} ms)\n\n`);
      process.stdout.write('| calls | mean ms | total ms | planning ms | level | query |\n|---:|---:|---:|---:|---|---|\n');
      for (const row of rows) {
        const query = String(row.query).replaceAll('|', '\\|');
        process.stdout.write(`| ${row.calls} | ${Number(row.mean_ms).toFixed(3)} | ${Number(row.total_ms).toFixed(0)} | ${Number(row.plan_ms).toFixed(0)} | ${row.toplevel ? 'top' : 'nested'} | \`${query}\` |\n`);
      }
    },
  };
}

/**
 * The `top` statements of pg_stat_statements by total time (executing and
 * planning), texts on one line; only `database`'s when named. The
 * benchmarks' own statements (bench_… in their text) are left out.
 */
export async function topStatements(
  owner: pg.Pool | pg.Client,
  top: number,
  database: string | null = null,
): Promise<{ calls: number; mean_ms: number; total_ms: number; plan_ms: number; toplevel: boolean; query: string; all_ms: number }[]> {
  const { rows } = await owner.query(
    `SELECT s.calls::bigint AS calls, s.mean_exec_time AS mean_ms, s.total_exec_time AS total_ms, s.total_plan_time AS plan_ms, s.toplevel,
            left(regexp_replace(s.query, '\\s+', ' ', 'g'), 110) AS query,
            sum(s.total_exec_time + s.total_plan_time) FILTER (WHERE s.toplevel) OVER () AS all_ms
     FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
     WHERE s.query NOT LIKE '%bench\\_%' AND s.query NOT LIKE '%pg_stat_statements%' AND ($2::text IS NULL OR d.datname = $2)
     ORDER BY s.total_exec_time + s.total_plan_time DESC LIMIT $1`,
    [top, database],
  );
  return rows;
}

/** A process's resident memory now (VmRSS) or at its peak so far (VmHWM), in MB, from /proc; NaN when it cannot be read. */
export function residentMb(pid: number | undefined, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
  } catch {
    return Number.NaN;
  }
}

/**
 * Resets a process's peak resident memory (VmHWM) to its present size (Linux:
 * `5` written to /proc/<pid>/clear_refs), so that the next `residentMb(pid,
 * 'VmHWM')` is one phase's peak. False when it cannot (then VmHWM stays the
 * peak since the start).
 */
export function resetPeakResident(pid: number | undefined): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time in ms, from /proc: the whole machine's busy time (user, nice,
 * system, irq, softirq) and, with a pid, that process's (user + system, and
 * the kernel's part of it, `processSystem`; NaN when it cannot be read).
 */
export function cpuMs(pid?: number): { machine: number; process: number; processSystem: number } {
  const msPerTick = 1000 / TICKS_PER_SECOND;
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const machine = (fields[0] + fields[1] + fields[2] + fields[5] + fields[6]) * msPerTick;
  const own = pid === undefined ? null : processCpu(pid);
  return { machine, process: own ? own.userMs + own.systemMs : Number.NaN, processSystem: own ? own.systemMs : Number.NaN };
}

/**
 * CPU time in ms of every process named `name` now running (user + system,
 * from /proc): PostgreSQL's backends and helpers for `postgres`. A process
 * that exited between two readings takes its time with it.
 */
export function cpuMsOfProcesses(name: string): number {
  let total = 0;
  for (const pid of processIds()) {
    const cpu = processCpu(pid);
    if (cpu?.comm === name) total += cpu.userMs + cpu.systemMs;
  }
  return total;
}

/** The ids of the processes now running, from /proc. */
export const processIds = (): number[] => fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number);

/** A process's name and CPU time in ms (user, system) from /proc/<pid>/stat; null once it is gone. */
export function processCpu(pid: number): { comm: string; userMs: number; systemMs: number } | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const after = stat.slice(close + 2).split(' ');
    const msPerTick = 1000 / TICKS_PER_SECOND;
    return { comm: stat.slice(stat.indexOf('(') + 1, close), userMs: Number(after[11]) * msPerTick, systemMs: Number(after[12]) * msPerTick };
  } catch {
    return null;
  }
}

/**
 * A set-up POST to the service with the tenant's key, answering the parsed
 * body; a status of 300 or more throws. No content type without a body:
 * Fastify refuses an empty JSON body.
 */
export function tenantPoster(http: HttpPool, apiKey: string): (url: string, body?: unknown) => Promise<Record<string, unknown>> {
  return async (url, body) => {
    const headers = body === undefined ? { 'x-api-key': apiKey } : { 'content-type': 'application/json', 'x-api-key': apiKey };
    const response = await http.request({ method: 'POST', path: url, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.body.text();
    if (response.statusCode >= 300) throw new Error(`POST ${url}: ${response.statusCode} ${text.slice(0, 200)}`);
    return text === '' ? {} : JSON.parse(text);
  };
}

/** `GET /healthz`, the same-run baseline of the open-loop benchmarks: a bare route of the service, no database. */
export function healthzSender(http: HttpPool): () => Promise<void> {
  return async () => {
    const response = await http.request({ method: 'GET', path: '/healthz' });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`/healthz answered ${response.statusCode}`);
  };
}

/** A participant's `complete-with-actions` of the activity, with its session (never the tenant's key). */
export async function completeWithActions(http: HttpPool, activityId: string, body: Record<string, unknown>): Promise<void> {
  const response = await http.request({
    method: 'POST',
    path: `/api/v1/activities/${activityId}/complete-with-actions`,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`complete-with-actions answered ${response.statusCode}: ${text.slice(0, 200)}`);
}

/** The p-th percentile (nearest rank) of the values; NaN when there are none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export interface BenchDatabase {
  /** The schema owner's URL (migrations, assertions, cross-tenant set-up). */
  ownerUrl: string;
  /** The application role's password and URL, as the service connects. */
  appPassword: string;
  appUrl: string;
  /** Stops the embedded server this started and removes its files; a no-op for BENCH_DATABASE_URL. */
  stop(): Promise<void>;
}

/** The same server URL with another database (a second database of a bench's server, to compare two schemas in one run). */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * BENCH_DATABASE_URL (an owner URL of an empty database) when set; otherwise
 * an embedded PostgreSQL in a temporary directory on a free loopback port.
 * `fast` trades durability for speed (fsync off), for set-ups that load
 * millions of rows and measure reads only. BENCH_PG_SETTINGS adds server
 * settings (`name=value;name=value`) to an embedded server.
 */
export async function openBenchDatabase(name: string, options: { fast?: boolean; settings?: string[] } = {}): Promise<BenchDatabase> {
  let ownerUrl = process.env.BENCH_DATABASE_URL ?? null;
  let stop = async (): Promise<void> => undefined;
  if (!ownerUrl) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-bench-pg-`));
    // BENCH_PG_SETTINGS adds server settings, separated by ';' (for example auto_explain's, to see a slow statement's plan).
    const extra = (process.env.BENCH_PG_SETTINGS ?? '').split(';').map((setting) => setting.trim()).filter(Boolean);
    const settings = [...(options.settings ?? []), ...extra];
    const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), fast: options.fast, settings: settings.length ? settings : undefined });
    ownerUrl = server.ownerUrl;
    stop = async () => {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
  }
  const appPassword = deriveAppPassword(ownerUrl, null);
  return { ownerUrl, appPassword, appUrl: withCredentials(ownerUrl, APP_ROLE, appPassword), stop };
}

/**
 * Runs a benchmark's `main` and exits the process: 0 once it finished, 1 with
 * the error on stderr when it threw (after `cleanUp`, for children it started).
 */
export function runBench(main: () => Promise<void>, cleanUp: () => Promise<unknown> = async () => undefined): void {
  main().then(
    () => process.exit(0),
    async (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      await cleanUp().catch(() => undefined);
      process.exit(1);
    },
  );
}

const thisCheckout = path.resolve(import.meta.dirname, '..');
const SERVICE_READY_TIMEOUT_MS = 60_000;
const SERVICE_READY_POLL_MS = 200;
/** How long a stopping service may take (draining requests, finishing jobs, writing a CPU profile) before SIGKILL. */
const SERVICE_STOP_GRACE_MS = 30_000;

export interface ServiceProcessOptions {
  ownerUrl: string;
  port: number;
  /** SERVICE_ROLE: `all` (API and job runner in one process, what `npm start` runs by default), `api` or `worker`. */
  role: 'all' | 'api' | 'worker';
  /** More environment, over the defaults below (for example DB_POOL_SIZE). */
  env?: Record<string, string>;
  /** Node flags before those of `npm start` (for example `--inspect`). */
  nodeFlags?: string[];
  /** A directory for a CPU profile of the whole run (`--cpu-prof`), written when the service exits; none when null. */
  profileDir?: string | null;
  /** The checkout to build and start (another commit's worktree, to compare two versions); this one by default. */
  root?: string;
  /** A file for bench/service-probe.mjs's per-second lines (the service's own time per request, its event loop's delay); none when absent. */
  probeFile?: string;
}

/**
 * The service in a process of its own, built and started the way `npm start`
 * starts it (compiled JavaScript, the Node flags of package.json's `start`),
 * so that the load generator does not share its event loop. Rate limits are
 * raised out of the way and the log level is `warn` unless `env` says
 * otherwise. Resolves once `/readyz` answers 200.
 */
export async function startServiceProcess(options: ServiceProcessOptions): Promise<ChildProcess> {
  const root = options.root ?? thisCheckout;
  const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('building the service failed');
  const profileFlags = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [];
  if (options.profileDir) fs.mkdirSync(options.profileDir, { recursive: true });
  // BENCH_SERVICE_NODE_FLAGS adds Node flags to every bench's service (for example V8's heap settings, to compare them).
  const extraFlags = (process.env.BENCH_SERVICE_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const probeFlags = options.probeFile ? ['--import', path.join(thisCheckout, 'bench/service-probe.mjs')] : [];
  const launch = startCommand(root, [...profileFlags, ...probeFlags, ...(options.nodeFlags ?? []), ...extraFlags]);
  const child = spawn(launch.file, launch.args, {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: options.ownerUrl,
      SERVICE_ROLE: options.role,
      PORT: String(options.port),
      HOST: '127.0.0.1',
      APP_ENV: 'development',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_KEY_PER_MINUTE: '10000000',
      RATE_LIMIT_IP_PER_MINUTE: '10000000',
      RATE_LIMIT_INGEST_BURST_PER_SECOND: '10000000',
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret',
      ...(options.probeFile ? { BENCH_SERVICE_PROBE_FILE: options.probeFile } : {}),
      ...options.env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + SERVICE_READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${options.port}/readyz`)).status === 200) return child;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, SERVICE_READY_POLL_MS));
  }
  await stopServiceProcess(child);
  throw new Error(`the service was not ready within ${SERVICE_READY_TIMEOUT_MS} ms`);
}

/** SIGTERM, then SIGKILL if the service has not exited after the grace period; resolves once it exited. */
export async function stopServiceProcess(child: ChildProcess, graceMs: number = SERVICE_STOP_GRACE_MS): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
