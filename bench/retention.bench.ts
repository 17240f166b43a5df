/**
 * Retention benchmark: `npm run bench -- retention`
 *
 * How fast the retention job (`platform:retention`) deletes outbox events
 * past OUTBOX_RETENTION_DAYS, in its batches of 5,000 with the dispatcher
 * guards (pending markers, ids named by unfinished dispatch jobs), beside the
 * same rows deleted by one plain statement in one transaction, in the same run.
 * Also idempotency keys past their window, the same way. BENCH_RETENTION_ROWS
 * (1,000,000) old events, 50,000 recent ones and 10,000 held by dispatch jobs.
 *
 * Starts its own embedded PostgreSQL (durable settings) in a temporary
 * directory, or uses BENCH_DATABASE_URL; prints a markdown table and exits.
 */
import os from 'node:os';
import pg from 'pg';
import { openBenchDatabase, runBench } from './support.js';
import { migrate } from '../src/platform/migrate.js';
import { Database } from '../src/platform/db.js';
import { createTenant } from '../src/modules/access/index.js';
import { loadConfig } from '../src/config.js';
import { PLATFORM_RETENTION, purgeAll, type RetentionRule } from '../src/platform/retention.js';
import { DISPATCH_TASK } from '../src/platform/outbox.js';

const ROWS = Number(process.env.BENCH_RETENTION_ROWS ?? 1_000_000);
const RECENT_ROWS = 50_000;
const HELD_JOBS = 20;
const HELD_PER_JOB = 500;
const RUN_BUDGET_SECONDS = 240;
const RUN_EVERY_SECONDS = 300;
const loadBefore = os.loadavg()[0];
if (!(ROWS >= HELD_JOBS * HELD_PER_JOB * 2)) throw new Error(`BENCH_RETENTION_ROWS must be at least ${HELD_JOBS * HELD_PER_JOB * 2}`);

function rule(name: string): RetentionRule {
  const found = PLATFORM_RETENTION.find((r) => r.name === name);
  if (!found) throw new Error(`no platform retention rule "${name}"`);
  return found;
}

async function loadOutbox(client: pg.Client, tenantId: string): Promise<void> {
  await client.query('TRUNCATE outbox_events, outbox_pending');
  await client.query(`DELETE FROM graphile_worker._private_jobs`);
  await client.query(
    `INSERT INTO outbox_events (tenant_id, id, event, participant_id, data, created_at)
     SELECT $1, 'evt_' || n, 'points.awarded.v1', 'p-' || (n % 10000), jsonb_build_object('amount', 5, 'participant_id', 'p-' || (n % 10000)),
            now() - interval '40 days' + n * interval '1 millisecond'
     FROM generate_series(1, $2::int) n`,
    [tenantId, ROWS],
  );
  await client.query(
    `INSERT INTO outbox_events (tenant_id, id, event, participant_id, data, created_at)
     SELECT $1, 'evt_recent_' || n, 'points.awarded.v1', 'p-1', '{}', now() - interval '1 day' FROM generate_series(1, $2::int) n`,
    [tenantId, RECENT_ROWS],
  );
  for (let job = 0; job < HELD_JOBS; job++) {
    await client.query(
      `SELECT graphile_worker.add_job($1, json_build_object('tenant_id', $2::uuid, 'event_ids', (SELECT array_agg('evt_' || n) FROM generate_series($3::int, $3::int + $4::int - 1) n)),
                                      run_at => now() + interval '1 day')`,
      [DISPATCH_TASK, tenantId, 1 + job * Math.floor(ROWS / HELD_JOBS), HELD_PER_JOB],
    );
  }
  await client.query('VACUUM ANALYZE outbox_events');
}

async function loadKeys(client: pg.Client, tenantId: string): Promise<void> {
  await client.query('TRUNCATE idempotency_keys');
  await client.query(
    `INSERT INTO idempotency_keys (tenant_id, scope, key, fingerprint, response, created_at, expires_at)
     SELECT $1, 'points.grant', 'k-' || n, 'f', '{"available": 5}', now() - interval '3 days', now() - interval '2 days'
     FROM generate_series(1, $2::int) n`,
    [tenantId, ROWS],
  );
  await client.query('VACUUM ANALYZE idempotency_keys');
}

async function timed(fn: () => Promise<number>): Promise<{ rows: number; seconds: number }> {
  const started = process.hrtime.bigint();
  const rows = await fn();
  return { rows, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

async function main(): Promise<void> {
  const database = await openBenchDatabase('retention');
  const client = new pg.Client({ connectionString: database.ownerUrl });
  try {
    await migrate(database.ownerUrl, database.appPassword);
    const db = new Database(database.appUrl, database.ownerUrl, 2);
    const tenant = await createTenant(db, { name: 'Bench', slug: `bench-${process.pid}`, plan: 'enterprise' });
    await db.close();
    await client.connect();
    const config = loadConfig({ OUTBOX_RETENTION_DAYS: '30' });
    const forever = Number.MAX_SAFE_INTEGER;
    const held = HELD_JOBS * HELD_PER_JOB;

    await loadOutbox(client, tenant.tenant_id);
    const outboxJob = await timed(async () => (await purgeAll(client, [rule('outbox events')], config, forever))['outbox events'] ?? 0);
    await loadOutbox(client, tenant.tenant_id);
    const outboxRaw = await timed(async () => {
      const { rowCount } = await client.query(
        `DELETE FROM outbox_events o WHERE o.created_at < now() - interval '30 days'
           AND NOT EXISTS (SELECT 1 FROM outbox_pending p WHERE p.tenant_id = o.tenant_id AND p.event_id = o.id)
           AND o.id NOT IN (SELECT jsonb_array_elements_text(j.payload::jsonb -> 'event_ids') FROM graphile_worker._private_jobs j)`,
      );
      return rowCount ?? 0;
    });
    if (outboxJob.rows !== ROWS - held || outboxRaw.rows !== ROWS - held) {
      throw new Error(`expected ${ROWS - held} outbox events deleted, got ${outboxJob.rows} (job) and ${outboxRaw.rows} (one statement)`);
    }

    await loadKeys(client, tenant.tenant_id);
    const keysJob = await timed(async () => (await purgeAll(client, [rule('idempotency keys')], config, forever))['idempotency keys'] ?? 0);
    await loadKeys(client, tenant.tenant_id);
    const keysRaw = await timed(async () => (await client.query('DELETE FROM idempotency_keys WHERE expires_at < now()')).rowCount ?? 0);

    const rate = (m: { rows: number; seconds: number }) => m.rows / m.seconds;
    const row = (name: string, job: { rows: number; seconds: number }, raw: { rows: number; seconds: number }) =>
      `| ${name} | ${job.rows.toLocaleString('en')} | ${job.seconds.toFixed(1)} s (${Math.round(rate(job)).toLocaleString('en')}/s) | ${raw.seconds.toFixed(1)} s (${Math.round(rate(raw)).toLocaleString('en')}/s) | ${((rate(job) / rate(raw)) * 100).toFixed(0)}% | ${Math.round((rate(job) * RUN_BUDGET_SECONDS) / RUN_EVERY_SECONDS).toLocaleString('en')}/s |`;
    process.stdout.write(
      [
        `Retention, ${ROWS.toLocaleString('en')} rows past retention per table (outbox: plus ${RECENT_ROWS.toLocaleString('en')} recent and ${held.toLocaleString('en')} held by ${HELD_JOBS} dispatch jobs, all kept), ${os.cpus().length} CPUs, load average before: ${loadBefore.toFixed(1)}`,
        '',
        '| table | rows deleted | retention job (batches of 5,000, guards) | one DELETE statement (baseline) | job / baseline | sustained rate one job keeps up with (4 min of every 5) |',
        '|---|---:|---:|---:|---:|---:|',
        row('outbox events', outboxJob, outboxRaw),
        row('idempotency keys', keysJob, keysRaw),
        '',
      ].join('\n'),
    );
  } finally {
    await client.end().catch(() => undefined);
    await database.stop();
  }
}

runBench(main);
