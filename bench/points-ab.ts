/**
 * The HTTP grant and deduct of two checkouts, measured in one run:
 * `POINTS_AB_OTHER=<checkout> npx tsx bench/points-ab.ts`
 *
 * For a machine whose speed drifts (a shared host), where two runs of
 * `npm run bench -- points` minutes apart cannot be compared. One embedded
 * PostgreSQL holds two databases; this checkout's service (built and started
 * as `npm start` does, API role, pool of 64) runs on the first, the other
 * checkout's (another commit's worktree with its `node_modules`, for example
 * `git worktree add /tmp/wt-old <commit> && (cd /tmp/wt-old && npm ci)`) on
 * the second. Each checkout migrates its own database and creates its tenant
 * with its own code; the participants are then created over HTTP, so neither
 * version's schema matters to this file.
 *
 * Then the scenarios of `bench/points.bench.ts` (grants over 10,000
 * participants, grants over 10 hot participants, deducts on the 10 hot
 * participants; 64 autocannon connections) run on the two services in turn,
 * POINTS_AB_SLICE_SECONDS each (default 3), for POINTS_AB_ROUNDS rounds
 * (default 4) after one uncounted slice each, every round starting with the
 * other service. Neither runs an outbox pump (the API role; as in
 * `points.bench.ts`), so nothing a slice wrote is worked on during the
 * next. Both databases are analysed once seeded (see main). It prints requests per second, per slice, the machine's CPU per
 * request, the service process's share of it (and of that, the kernel's), PostgreSQL's share (every process named
 * postgres: the slices alternate, so it is the measured service's), the slices' p50 and p99, and the other checkout's
 * figures as a fraction of this one's. POINTS_AB_PROFILE_DIR=<dir> writes a CPU profile
 * of each service process there (`node --cpu-prof`; the file names carry the
 * pids printed at the start). POINTS_AB_STATEMENTS=<n>, on a server with
 * pg_stat_statements preloaded (BENCH_PG_SETTINGS or BENCH_DATABASE_URL's),
 * prints each database's top n statements by total time, per request of the
 * scenarios measured (counted from after the seeding; the statements
 * PostgreSQL runs inside others, such as foreign-key checks, included).
 * Loopback only, bounded by the rounds.
 */
import path from 'node:path';
import { spawnSync, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import pg from 'pg';
import { cpuMs, cpuMsOfProcesses, freePort, openBenchDatabase, percentile, runBench, startServiceProcess, stopServiceProcess, topStatements, withDatabase } from './support.js';

const OTHER = process.env.POINTS_AB_OTHER;
const SLICE_SECONDS = Number(process.env.POINTS_AB_SLICE_SECONDS ?? 3);
const ROUNDS = Number(process.env.POINTS_AB_ROUNDS ?? 4);
/** POINTS_AB_CONNECTIONS: autocannon's connections and the services' pool (64 by default; 1 measures a request's cost without contention). */
const CONNECTIONS = Number(process.env.POINTS_AB_CONNECTIONS ?? 64);
const PROFILE_DIR = process.env.POINTS_AB_PROFILE_DIR ?? null;
/** POINTS_AB_ONLY=<prefix>: only the scenarios whose name starts with it (`deduct`, `grant, 10 hot`), for a profile of one. */
const ONLY = process.env.POINTS_AB_ONLY ?? null;
const STATEMENTS = Number(process.env.POINTS_AB_STATEMENTS ?? 0);
const SPREAD_PARTICIPANTS = 10_000;
const HOT_PARTICIPANTS = 10;
const thisCheckout = path.resolve(import.meta.dirname, '..');

interface Service {
  name: string;
  child: ChildProcess;
  baseUrl: string;
  apiKey: string;
}

/** Migrates the database and creates the tenant with the checkout's own code; answers the tenant's API key. */
function prepareDatabase(checkout: string, ownerUrl: string, appUrl: string, appPassword: string): string {
  const script = `
    const { migrate } = await import('./src/platform/migrate.ts');
    const { Database } = await import('./src/platform/db.ts');
    const { createTenant } = await import('./src/modules/access/index.ts');
    await migrate(process.env.AB_OWNER_URL, process.env.AB_APP_PASSWORD);
    const db = new Database(process.env.AB_APP_URL, process.env.AB_OWNER_URL, 2);
    const tenant = await createTenant(db, { name: 'Bench', slug: 'bench-ab', plan: 'enterprise', adminEmail: 'bench-ab@example.com', requestsPerMinute: 100000000 });
    await db.close();
    process.stdout.write(JSON.stringify({ apiKey: tenant.api_key }));
    process.exit(0);`;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: checkout,
    env: { ...process.env, AB_OWNER_URL: ownerUrl, AB_APP_URL: appUrl, AB_APP_PASSWORD: appPassword },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`preparing the database of ${checkout} failed:\n${result.stderr}`);
  return (JSON.parse(result.stdout.trim().split('\n').pop() as string) as { apiKey: string }).apiKey;
}

let keySequence = 0;
const nextKey = (prefix: string) => `${prefix}-${++keySequence}`;

async function post(service: Service, pathName: string, body: unknown): Promise<void> {
  const response = await fetch(`${service.baseUrl}${pathName}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${service.name}: POST ${pathName} answered ${response.status}: ${text.slice(0, 200)}`);
}

/** Every participant of the scenarios, created over HTTP (the first grant creates the participant and its balance). */
async function seed(service: Service): Promise<void> {
  const bodies: unknown[] = [];
  for (let i = 0; i < HOT_PARTICIPANTS; i++) bodies.push({ participant_id: `hot-${i}`, amount: 1_000_000_000, reason: 'fund', idempotency_key: nextKey('fund') });
  for (let i = 0; i < SPREAD_PARTICIPANTS; i++) bodies.push({ participant_id: `p-${i}`, amount: 5, reason: 'seed', idempotency_key: nextKey('seed') });
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      for (let i = next++; i < bodies.length; i = next++) await post(service, '/api/v1/gamify/points/grant', bodies[i]);
    }),
  );
}

interface Slice {
  requests: number;
  failed: number;
  rate: number;
  p50: number;
  p99: number;
  machineUs: number;
  serviceUs: number;
  serviceSystemUs: number;
  postgresUs: number;
}

async function slice(service: Service, pathName: string, body: () => unknown): Promise<Slice> {
  const cpuBefore = cpuMs(service.child.pid);
  const postgresBefore = cpuMsOfProcesses('postgres');
  const result = await autocannon({
    url: service.baseUrl,
    connections: CONNECTIONS,
    duration: SLICE_SECONDS,
    requests: [
      {
        method: 'POST',
        path: pathName,
        headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey },
        setupRequest: (request) => ({ ...request, body: JSON.stringify(body()) }),
      },
    ],
  });
  const cpuAfter = cpuMs(service.child.pid);
  const postgresAfter = cpuMsOfProcesses('postgres');
  const requests = result.requests.total;
  requestsOf.set(service, (requestsOf.get(service) ?? 0) + requests);
  return {
    requests,
    failed: result.non2xx + result.errors,
    rate: requests / (result.duration || SLICE_SECONDS),
    p50: result.latency.p50,
    p99: result.latency.p99,
    machineUs: (cpuAfter.machine - cpuBefore.machine) * 1000,
    serviceUs: (cpuAfter.process - cpuBefore.process) * 1000,
    serviceSystemUs: (cpuAfter.processSystem - cpuBefore.processSystem) * 1000,
    postgresUs: (postgresAfter - postgresBefore) * 1000,
  };
}

async function inOwner<T>(url: string, work: (owner: pg.Client) => Promise<T>): Promise<T> {
  const owner = new pg.Client({ connectionString: url });
  await owner.connect();
  try {
    return await work(owner);
  } finally {
    await owner.end();
  }
}

/** Every request a service answered in its slices (warm-up included), for the statements' figures per request. */
const requestsOf = new Map<Service, number>();

async function printStatements(owner: pg.Client, databases: string[], names: string[], requests: number[]): Promise<void> {
  for (const [i, database] of databases.entries()) {
    const rows = await topStatements(owner, STATEMENTS, database);
    console.log(`\n### Statements of ${names[i]}, per request (${requests[i]} requests; nested ones run inside another, whose time includes theirs)\n`);
    console.log('| calls per request | mean µs | µs per request, executing | planning | level | query |\n|---:|---:|---:|---:|---|---|');
    for (const row of rows) {
      const calls = Number(row.calls);
      console.log(
        `| ${(calls / requests[i]).toFixed(2)} | ${((Number(row.total_ms) / calls) * 1000).toFixed(0)} | ${((Number(row.total_ms) / requests[i]) * 1000).toFixed(0)} | ${((Number(row.plan_ms) / requests[i]) * 1000).toFixed(0)} | ${row.toplevel ? 'top' : 'nested'} | \`${String(row.query).replaceAll('|', '\\|')}\` |`,
      );
    }
  }
}

async function main(): Promise<void> {
  if (!OTHER) throw new Error('POINTS_AB_OTHER must name another checkout (with node_modules) to compare with this one');
  const database = await openBenchDatabase('points-ab');
  const services: Service[] = [];
  const stop = async () => {
    for (const service of services) {
      await stopServiceProcess(service.child);
    }
    await database.stop();
  };
  try {
    await inOwner(database.ownerUrl, (admin) => admin.query('CREATE DATABASE points_ab_other'));
    const checkouts = [
      { name: `this (${thisCheckout})`, root: thisCheckout, database: null },
      { name: `other (${path.resolve(OTHER)})`, root: path.resolve(OTHER), database: 'points_ab_other' },
    ];
    for (const checkout of checkouts) {
      const at = (url: string) => (checkout.database ? withDatabase(url, checkout.database) : url);
      const apiKey = prepareDatabase(checkout.root, at(database.ownerUrl), at(database.appUrl), database.appPassword);
      const port = await freePort();
      const child = await startServiceProcess({ root: checkout.root, ownerUrl: at(database.ownerUrl), port, role: 'api', profileDir: PROFILE_DIR, env: { DB_POOL_SIZE: String(CONNECTIONS) } });
      process.stderr.write(`${checkout.name}: service pid ${child.pid}\n`);
      const service = { name: checkout.name, child, baseUrl: `http://127.0.0.1:${port}`, apiKey };
      services.push(service);
      await seed(service);
    }
    // Statistics, as a database in service has them: without, the plans made while the tables were being seeded (an
    // empty table's) stay cached, and which index they chose was luck (the foreign-key checks on participants walked
    // participants_listing in one database and not in the other: 0.18 against 0.03 ms per check, on PostgreSQL 15).
    // ANALYZE invalidates them.
    for (const checkout of checkouts) {
      await inOwner(checkout.database ? withDatabase(database.ownerUrl, checkout.database) : database.ownerUrl, (owner) => owner.query('ANALYZE'));
    }
    if (STATEMENTS > 0) await inOwner(database.ownerUrl, (owner) => owner.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()'));

    const spread = () => `p-${Math.floor(Math.random() * SPREAD_PARTICIPANTS)}`;
    const hot = () => `hot-${Math.floor(Math.random() * HOT_PARTICIPANTS)}`;
    const scenarios = [
      { name: 'grant, 10,000 participants', path: '/api/v1/gamify/points/grant', body: () => ({ participant_id: spread(), amount: 5, reason: 'bench', idempotency_key: nextKey('g') }) },
      { name: 'grant, 10 hot participants', path: '/api/v1/gamify/points/grant', body: () => ({ participant_id: hot(), amount: 5, reason: 'bench', idempotency_key: nextKey('g') }) },
      { name: 'deduct, 10 hot participants', path: '/api/v1/gamify/points/deduct', body: () => ({ participant_id: hot(), amount: 1, reason: 'bench', idempotency_key: nextKey('d') }) },
    ];
    console.log(`${ROUNDS} rounds of ${SLICE_SECONDS} s per service and scenario, ${CONNECTIONS} connections, alternating\n`);
    console.log('| scenario | service | req/s | per slice | machine CPU per request µs | of it the service process µs | of that in the kernel µs | of it PostgreSQL µs | p50 / p99 ms (median of slices) | failed |\n|---|---|---:|---|---:|---:|---:|---:|---|---:|');
    const summary: string[] = [];
    for (const scenario of scenarios.filter((s) => !ONLY || s.name.startsWith(ONLY))) {
      for (const service of services) await slice(service, scenario.path, scenario.body);
      const slices: Slice[][] = services.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? [0, 1] : [1, 0];
        for (const i of order) slices[i].push(await slice(services[i], scenario.path, scenario.body));
      }
      const totals = slices.map((list) => ({
        requests: list.reduce((sum, s) => sum + s.requests, 0),
        machineUs: list.reduce((sum, s) => sum + s.machineUs, 0),
        serviceUs: list.reduce((sum, s) => sum + s.serviceUs, 0),
        serviceSystemUs: list.reduce((sum, s) => sum + s.serviceSystemUs, 0),
        postgresUs: list.reduce((sum, s) => sum + s.postgresUs, 0),
        failed: list.reduce((sum, s) => sum + s.failed, 0),
      }));
      for (const [i, list] of slices.entries()) {
        const rate = totals[i].requests / (ROUNDS * SLICE_SECONDS);
        console.log(
          `| ${scenario.name} | ${services[i].name} | ${rate.toFixed(0)} | ${list.map((s) => s.rate.toFixed(0)).join(', ')} | ${(totals[i].machineUs / totals[i].requests).toFixed(0)} | ${(totals[i].serviceUs / totals[i].requests).toFixed(0)} | ${(totals[i].serviceSystemUs / totals[i].requests).toFixed(0)} | ${(totals[i].postgresUs / totals[i].requests).toFixed(0)} | ${percentile(list.map((s) => s.p50), 50)} / ${percentile(list.map((s) => s.p99), 50)} | ${totals[i].failed} |`,
        );
      }
      summary.push(
        `${scenario.name}: other / this = ${((totals[1].requests / totals[0].requests) * 100).toFixed(1)}% of the requests, ${((totals[1].machineUs / totals[1].requests / (totals[0].machineUs / totals[0].requests)) * 100).toFixed(1)}% of the machine's CPU per request, ${((totals[1].serviceUs / totals[1].requests / (totals[0].serviceUs / totals[0].requests)) * 100).toFixed(1)}% of the service process's, ${((totals[1].postgresUs / totals[1].requests / (totals[0].postgresUs / totals[0].requests)) * 100).toFixed(1)}% of PostgreSQL's`,
      );
    }
    console.log(`\n${summary.join('\n')}`);
    if (STATEMENTS > 0) {
      const requests = services.map((service) => requestsOf.get(service) ?? 0);
      await inOwner(database.ownerUrl, (owner) => printStatements(owner, checkouts.map((c) => c.database ?? new URL(database.ownerUrl).pathname.slice(1)), services.map((s) => s.name), requests));
    }
  } finally {
    await stop();
  }
}

runBench(main);
