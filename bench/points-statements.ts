/**
 * Where a direct grant's database time goes, statement by statement:
 * `npx tsx bench/points-statements.ts`
 *
 * Starts its own embedded PostgreSQL with pg_stat_statements (track = all, so
 * the statements of a direct grant's message and its triggers are counted one
 * by one), creates a tenant with STATEMENTS_PARTICIPANTS participants, then
 * runs `grantDirect` (the message a POST /gamify/points/grant sends) from
 * STATEMENTS_CONNECTIONS workers (1: no queueing, so the times are the
 * statements' own) for STATEMENTS_SECONDS, and prints the statements by total
 * execution time. A statement's time includes the statements it runs.
 * BENCH_DATABASE_URL is not honoured: the extension must be preloaded.
 * STATEMENTS_SQL=<file> runs that SQL file after the migrations (for example
 * an older version of a function, to compare two versions on one machine).
 */
import fs from 'node:fs';
import pg from 'pg';
import { migrate } from '../src/platform/migrate.js';
import { loadModules } from '../src/platform/module.js';
import { Database } from '../src/platform/db.js';
import { createTenant } from '../src/modules/access/index.js';
import { grantDirect } from '../src/modules/points/service.js';
import { cpuMs, openBenchDatabase } from './support.js';

const SECONDS = Number(process.env.STATEMENTS_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.STATEMENTS_CONNECTIONS ?? 1);
const PARTICIPANTS = Number(process.env.STATEMENTS_PARTICIPANTS ?? 2000);
/** STATEMENTS_ACTOR=1 grants as an API key does over HTTP (the ledger's "who granted" written beside the entry). */
const ACTOR = process.env.STATEMENTS_ACTOR === '1' ? { type: 'api_key' as const, id: 'key_statements' } : null;

delete process.env.BENCH_DATABASE_URL;
const database = await openBenchDatabase('statements', { settings: ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=all'] });
const owner = new pg.Client({ connectionString: database.ownerUrl });
let db: Database | null = null;
try {
  await migrate(database.ownerUrl, database.appPassword);
  await owner.connect();
  await owner.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  if (process.env.STATEMENTS_SQL) await owner.query(fs.readFileSync(process.env.STATEMENTS_SQL, 'utf8'));
  db = new Database(database.appUrl, database.ownerUrl, Math.max(CONNECTIONS, 2));
  // The modules' outbox followers, as the service registers them: the baseline's grant writes what the service's does.
  await loadModules();
  const tenant = await createTenant(db, { name: 'Statements', slug: `statements-${process.pid}`, plan: 'enterprise' });
  let sequence = 0;
  const grant = (participant: number) =>
    grantDirect(db!, tenant.tenant_id, { participant_id: `p-${participant}`, amount: 5, reason: 'bench', idempotency_key: `k-${sequence++}` }, ACTOR);
  // Every participant exists before the measurement, as in points.bench.ts.
  for (let i = 0; i < PARTICIPANTS; i++) await grant(i);
  await owner.query('SELECT pg_stat_statements_reset()');
  const cpuBefore = { node: process.cpuUsage(), machine: cpuMs().machine };
  const deadline = Date.now() + SECONDS * 1000;
  let grants = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < deadline) {
        await grant(Math.floor(Math.random() * PARTICIPANTS));
        grants += 1;
      }
    }),
  );
  const node = process.cpuUsage(cpuBefore.node);
  const machine = (cpuMs().machine - cpuBefore.machine) * 1000;
  const { rows } = await owner.query(
    `SELECT calls, total_exec_time AS ms, regexp_replace(query, '\\s+', ' ', 'g') AS query
     FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT 25`,
  );
  console.log(`${grants} grants in ${SECONDS} s from ${CONNECTIONS} connection(s): ${(grants / SECONDS).toFixed(0)}/s\n`);
  console.log(
    `CPU per grant: ${(machine / grants).toFixed(0)} µs on the machine, of which ${((node.user + node.system) / grants).toFixed(0)} µs in this Node process (${(node.system / grants).toFixed(0)} µs in the kernel) (the rest mostly PostgreSQL)\n`,
  );
  console.log('| µs per grant | calls per grant | statement |\n|---:|---:|---|');
  for (const row of rows) {
    console.log(`| ${((row.ms * 1000) / grants).toFixed(1)} | ${(row.calls / grants).toFixed(1)} | \`${String(row.query).slice(0, 120).replaceAll('|', '\\|')}\` |`);
  }
} finally {
  await db?.close();
  await owner.end().catch(() => undefined);
  await database.stop();
}
