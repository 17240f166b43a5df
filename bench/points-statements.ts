/**
 * Where a direct grant's database time goes, statement by statement:
 * `npx tsx bench/points-statements.ts`
 *
 * Starts its own embedded PostgreSQL with pg_stat_statements (track = all, so
 * the statements of a direct grant's message and its triggers are counted one
 * by one), creates a tenant with STATEMENTS_PARTICIPANTS participants, then
 * runs `grantDirect` (the message a POST /gamify/points/grant sends) from
 * STATEMENTS_CONNECTIONS workers (1: no queueing, so the times are the
 * statements' own) for STATEMENTS_SECONDS (STATEMENTS_OPERATION=deduct: the
 * direct deduct instead), and prints the statements by total
 * execution time. A statement's time includes the statements it runs.
 * BENCH_DATABASE_URL is not honoured: the extension must be preloaded.
 * STATEMENTS_SQL=<file> runs that SQL file after the migrations and the
 * tenant's creation (for example an older version of a function, to compare
 * two versions on one machine, or the tenant's own rows: a leaderboard).
 *
 * STATEMENTS_AB_SQL=<file> compares two schemas in one run instead: a second
 * database of the same server gets the migrations and then that file, and the
 * grants alternate between the two in slices of STATEMENTS_SLICE_SECONDS
 * (default 2) for STATEMENTS_ROUNDS rounds (default 5), after one uncounted
 * slice of each. A machine whose speed
 * drifts during a run (a shared host) slows both alike, so the ratio of the
 * two is what the run shows.
 */
import fs from 'node:fs';
import pg from 'pg';
import { migrate } from '../src/platform/migrate.js';
import { loadModules } from '../src/platform/module.js';
import { Database } from '../src/platform/db.js';
import { createTenant } from '../src/modules/access/index.js';
import { deductDirect, grantDirect } from '../src/modules/points/service.js';
import { cpuMs, openBenchDatabase, withDatabase, type BenchDatabase } from './support.js';

const SECONDS = Number(process.env.STATEMENTS_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.STATEMENTS_CONNECTIONS ?? 1);
const PARTICIPANTS = Number(process.env.STATEMENTS_PARTICIPANTS ?? 2000);
/** STATEMENTS_OPERATION=deduct measures the direct deduct (1 point from participants granted a million each) instead of the grant. */
const OPERATION = process.env.STATEMENTS_OPERATION === 'deduct' ? 'deduct' : 'grant';
/** STATEMENTS_ACTOR=1 grants as an API key does over HTTP (the ledger's "who granted" written beside the entry). */
const ACTOR = process.env.STATEMENTS_ACTOR === '1' ? { type: 'api_key' as const, id: 'key_statements' } : null;
const AB_SQL = process.env.STATEMENTS_AB_SQL ?? null;
const SLICE_SECONDS = Number(process.env.STATEMENTS_SLICE_SECONDS ?? 2);
const ROUNDS = Number(process.env.STATEMENTS_ROUNDS ?? 5);

/** A database of the server with its tenant and participants, ready for the measured operation. */
interface Target {
  name: string;
  db: Database;
  change: (participant: number) => Promise<unknown>;
}

async function prepare(name: string, ownerUrl: string, appUrl: string, appPassword: string, sql: string | null): Promise<Target> {
  await migrate(ownerUrl, appPassword);
  const db = new Database(appUrl, ownerUrl, Math.max(CONNECTIONS, 2));
  const tenant = await createTenant(db, { name: 'Statements', slug: `statements-${process.pid}`, plan: 'enterprise' });
  // After the tenant's creation, so that the file may write the tenant's own rows (a leaderboard, settings).
  if (sql) {
    const client = new pg.Client({ connectionString: ownerUrl });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  }
  let sequence = 0;
  const change = (participant: number, operation: 'grant' | 'deduct', amount: number) =>
    (operation === 'grant' ? grantDirect : deductDirect)(db, tenant.tenant_id, { participant_id: `p-${participant}`, amount, reason: 'bench', idempotency_key: `k-${sequence++}` }, ACTOR);
  // Every participant exists before the measurement, as in points.bench.ts (with enough points for every deduct).
  for (let i = 0; i < PARTICIPANTS; i++) await change(i, 'grant', OPERATION === 'deduct' ? 1_000_000 : 5);
  return { name, db, change: (participant) => change(participant, OPERATION, OPERATION === 'deduct' ? 1 : 5) };
}

/** The operation from CONNECTIONS workers for `seconds`; returns the count and the CPU they took. */
async function load(target: Target, seconds: number) {
  const cpuBefore = { node: process.cpuUsage(), machine: cpuMs().machine };
  const deadline = Date.now() + seconds * 1000;
  let changes = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < deadline) {
        await target.change(Math.floor(Math.random() * PARTICIPANTS));
        changes += 1;
      }
    }),
  );
  const node = process.cpuUsage(cpuBefore.node);
  return { changes, machineUs: (cpuMs().machine - cpuBefore.machine) * 1000, nodeUs: node.user + node.system, nodeSystemUs: node.system };
}

delete process.env.BENCH_DATABASE_URL;
const database: BenchDatabase = await openBenchDatabase('statements', { settings: ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all'] });
const owner = new pg.Client({ connectionString: database.ownerUrl });
const targets: Target[] = [];
try {
  await owner.connect();
  await owner.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  // The modules' outbox followers, as the service registers them: the baseline's grant writes what the service's does.
  await loadModules();
  targets.push(await prepare('as migrated', database.ownerUrl, database.appUrl, database.appPassword, process.env.STATEMENTS_SQL ? fs.readFileSync(process.env.STATEMENTS_SQL, 'utf8') : null));
  if (AB_SQL) {
    await owner.query('CREATE DATABASE statements_b');
    const b = (url: string) => withDatabase(url, 'statements_b');
    targets.push(await prepare(`with ${AB_SQL}`, b(database.ownerUrl), b(database.appUrl), database.appPassword, fs.readFileSync(AB_SQL, 'utf8')));
    const totals = targets.map(() => ({ changes: 0, machineUs: 0, nodeUs: 0, slices: [] as number[] }));
    // One uncounted slice each first: a fresh database's first seconds (caches, plans, the first analyze) are slower.
    for (const target of targets) await load(target, SLICE_SECONDS);
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts with the other variant, so neither always follows the other.
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        const slice = await load(targets[i], SLICE_SECONDS);
        totals[i].changes += slice.changes;
        totals[i].machineUs += slice.machineUs;
        totals[i].nodeUs += slice.nodeUs;
        totals[i].slices.push(Math.round(slice.changes / SLICE_SECONDS));
      }
    }
    console.log(`${ROUNDS} rounds of ${SLICE_SECONDS} s per variant, ${CONNECTIONS} connection(s), alternating\n`);
    console.log(`| variant | ${OPERATION}s/s | per slice | machine CPU per ${OPERATION} µs | of it this Node process µs |\n|---|---:|---|---:|---:|`);
    for (const [i, t] of totals.entries()) {
      const seconds = ROUNDS * SLICE_SECONDS;
      console.log(`| ${targets[i].name} | ${(t.changes / seconds).toFixed(0)} | ${t.slices.join(', ')} | ${(t.machineUs / t.changes).toFixed(0)} | ${(t.nodeUs / t.changes).toFixed(0)} |`);
    }
    console.log(`\nsecond / first: ${OPERATION}s/s ${((totals[1].changes / totals[0].changes) * 100).toFixed(1)}%, CPU per ${OPERATION} ${((totals[1].machineUs / totals[1].changes / (totals[0].machineUs / totals[0].changes)) * 100).toFixed(1)}%`);
  } else {
    await owner.query('SELECT pg_stat_statements_reset()');
    const run = await load(targets[0], SECONDS);
    const { rows } = await owner.query(
      `SELECT calls, total_exec_time AS ms, regexp_replace(query, '\\s+', ' ', 'g') AS query
       FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT 25`,
    );
    console.log(`${run.changes} ${OPERATION}s in ${SECONDS} s from ${CONNECTIONS} connection(s): ${(run.changes / SECONDS).toFixed(0)}/s\n`);
    console.log(
      `CPU per ${OPERATION}: ${(run.machineUs / run.changes).toFixed(0)} µs on the machine, of which ${(run.nodeUs / run.changes).toFixed(0)} µs in this Node process (${(run.nodeSystemUs / run.changes).toFixed(0)} µs in the kernel) (the rest mostly PostgreSQL)\n`,
    );
    console.log(`| µs per ${OPERATION} | calls per ${OPERATION} | statement |\n|---:|---:|---|`);
    for (const row of rows) {
      console.log(`| ${((row.ms * 1000) / run.changes).toFixed(1)} | ${(row.calls / run.changes).toFixed(1)} | \`${String(row.query).slice(0, 120).replaceAll('|', '\\|')}\` |`);
    }
  }
} finally {
  for (const target of targets) await target.db.close();
  await owner.end().catch(() => undefined);
  await database.stop();
}
