/**
 * Real-time event pipeline benchmark (issue 19): `npm run bench -- pipeline`
 *
 * Starts its own embedded PostgreSQL (or uses BENCH_DATABASE_URL, an owner
 * URL of an empty database) and the service as `npm start` runs it: one
 * process, SERVICE_ROLE=all (API and job runner together), compiled. One
 * tenant, one active earn rule (`purchase` → `award_points` by
 * `properties.amount`), 1,000 participants.
 *
 * For each offered rate (BENCH_PIPELINE_RATES, default 10,100,500,1000,1500,2000
 * events/s) it sends single events to `POST /api/v1/ingest/events` for
 * BENCH_PIPELINE_SECONDS (default 15), open loop: request i leaves at
 * start + i / rate whatever the answers, and its latency counts from that
 * moment, so a slow answer delays no later request and hides no queueing.
 * Then it waits (up to BENCH_PIPELINE_DRAIN_SECONDS, default 120) until every
 * event of the rate is processed and reads, from the database, accept →
 * processed (`processed_at − received_at`), the backlog sampled every 500 ms,
 * and the points granted, checked equal to the amounts sent.
 *
 * Beside each rate, the baseline: the same grants (a balance upsert and a
 * ledger row, one statement, one transaction each) sent as raw SQL from this
 * process at the same rate, open loop, through a pool of 8 connections.
 *
 * BENCH_PIPELINE_PROFILE=<dir> runs the service with `--cpu-prof` into <dir>
 * (one profile for the whole run, written when the service exits; read it
 * with `node scripts/cpu-profile-summary.mjs <file>`).
 * BENCH_PIPELINE_STATEMENTS=1 loads pg_stat_statements and prints, per rate,
 * the top statements by total time (the baseline's and the benchmark's own
 * statements left out).
 *
 * Exits non-zero when the points granted for a rate differ from the amounts
 * sent. Loopback only; every phase is bounded in time.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Pool as HttpPool } from 'undici';
import { cpuMs, cpuMsOfProcesses, freePort, offerOpenLoop, openBenchDatabase, openStatementsTable, STATEMENTS_SETTINGS, type OpenLoopResult, percentile, runBench, startServiceProcess, stopServiceProcess } from './support.js';
import { migrate } from '../src/platform/migrate.js';
import { Database } from '../src/platform/db.js';
import { createTenant } from '../src/modules/access/index.js';
import { BATCH_EVENTS_MAX } from '../src/modules/ingestion/schemas.js';

const RATES = (process.env.BENCH_PIPELINE_RATES ?? '10,100,500,1000,1500,2000').split(',').map((rate) => Number(rate.trim()));
const SECONDS = Number(process.env.BENCH_PIPELINE_SECONDS ?? 15);
if (RATES.some((rate) => !(rate > 0 && Number.isFinite(rate))) || !(SECONDS > 0)) {
  throw new Error(`BENCH_PIPELINE_RATES must list positive rates and BENCH_PIPELINE_SECONDS be positive, got "${process.env.BENCH_PIPELINE_RATES}" and "${process.env.BENCH_PIPELINE_SECONDS}"`);
}
const DRAIN_TIMEOUT_MS = Number(process.env.BENCH_PIPELINE_DRAIN_SECONDS ?? 120) * 1000;
const PROFILE_DIR = process.env.BENCH_PIPELINE_PROFILE ? path.resolve(process.env.BENCH_PIPELINE_PROFILE) : null;
const STATEMENTS = process.env.BENCH_PIPELINE_STATEMENTS === '1';
const PARTICIPANTS = 1_000;
const AMOUNT_MAX = 100;
/** Enough sockets that the sender never waits for one below a few hundred requests in flight. */
const HTTP_CONNECTIONS = 256;
const BASELINE_POOL_SIZE = 8;
const BACKLOG_SAMPLE_MS = 500;
/**
 * The unprocessed count is taken every this many backlog samples (every 5 s). It reads the tenant's events
 * through an index full of finished ones: 44–260 ms of PostgreSQL per count at 1,500 events/s, 4.3 s of a
 * 60 s run when taken every 500 ms, load on the machine whose figures the run reports.
 */
const UNPROCESSED_EVERY_SAMPLES = 10;
const DRAIN_POLL_MS = 200;
/** Before the first rate, unmeasured: connections opened, code compiled, every participant's balance row present. */
const WARMUP_RATE = 100;
const WARMUP_SECONDS = 3;
/** The warm-up's own drain limit, whatever BENCH_PIPELINE_DRAIN_SECONDS says: a run cannot start before it drains. */
const WARMUP_DRAIN_TIMEOUT_MS = 180_000;
const STATEMENTS_TOP = 30;
/**
 * The benchmark's own statements name their result columns bench_pipeline_…,
 * so that the statement table can leave them out (pg_stat_statements drops a
 * leading comment, but keeps column aliases).
 */

const runId = randomBytes(4).toString('hex');
const loadAtStart = os.loadavg()[0];

function progress(message: string): void {
  process.stderr.write(`[pipeline] ${new Date().toISOString()} ${message}\n`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface BacklogSample {
  /** The tenant's `ingestion_pending` rows (accepted, not yet handed to the job queue); null when that table does not exist. */
  pending: number | null;
  /** The tenant's events not yet processed (pending or retrying), wherever they wait; null when not counted (UNPROCESSED_EVERY_SAMPLES). */
  unprocessed: number | null;
}

/**
 * Failed events are finished (they wait for no one). Written for the partial index on unfinished events, but
 * PostgreSQL may read the tenant's events by another (UNPROCESSED_EVERY_SAMPLES).
 */
const UNPROCESSED_SQL = `SELECT count(*) AS bench_pipeline_unprocessed FROM ingested_events WHERE tenant_id = $1 AND status <> 'processed' AND status <> 'failed'`;

async function countUnprocessed(client: pg.Client | pg.Pool, tenantId: string): Promise<number> {
  return Number((await client.query(UNPROCESSED_SQL, [tenantId])).rows[0].bench_pipeline_unprocessed);
}

/** The tenant's events in `ingestion_pending` (the lanes' queue, a small table); null when processing stages no events there. */
async function countQueued(client: pg.Client | pg.Pool, tenantId: string): Promise<number | null> {
  try {
    return Number((await client.query('SELECT count(*) AS bench_pipeline_queued FROM ingestion_pending WHERE tenant_id = $1', [tenantId])).rows[0].bench_pipeline_queued);
  } catch (error) {
    // 42P01: undefined table.
    if ((error as { code?: string }).code !== '42P01') throw error;
    return null;
  }
}

/**
 * Samples the backlog every BACKLOG_SAMPLE_MS on a connection of its own
 * (the unprocessed count every UNPROCESSED_EVERY_SAMPLES of them) until
 * stopped; stopping takes one last whole sample, the backlog at that moment.
 */
function sampleBacklog(client: pg.Client, tenantId: string): { stop(): Promise<BacklogSample[]> } {
  const samples: BacklogSample[] = [];
  let running = true;
  let pendingTable = true;
  let failure: unknown = null;
  let wake: () => void = () => undefined;
  let taken = 0;
  const sample = async (whole: boolean) => {
    const pending = pendingTable ? await countQueued(client, tenantId) : null;
    if (pendingTable && pending === null) {
      pendingTable = false;
      progress('ingestion_pending does not exist: its backlog is reported as n/a');
    }
    const counted = whole || taken++ % UNPROCESSED_EVERY_SAMPLES === 0;
    samples.push({ pending, unprocessed: counted ? await countUnprocessed(client, tenantId) : null });
  };
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      await sample(false);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.max(0, BACKLOG_SAMPLE_MS - (performance.now() - started)));
      });
    }
  })().catch((error: unknown) => {
    failure = error;
  });
  return {
    async stop() {
      running = false;
      wake();
      await loop;
      if (failure) throw failure;
      await sample(true);
      return samples;
    },
  };
}

/**
 * Waits until the tenant has no unprocessed event; returns how many are left when the timeout comes first (0: drained).
 * While events wait in `ingestion_pending` (the lanes' queue, a small table) it polls that; the tenant's unprocessed
 * count, dear while the lanes catch up (UNPROCESSED_EVERY_SAMPLES), is taken once the queue is empty, and again
 * until it is 0 (an event retrying after a failure is not in the queue).
 */
async function drain(owner: pg.Pool, tenantId: string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const queued = await countQueued(owner, tenantId);
    const left = queued === 0 || queued === null ? await countUnprocessed(owner, tenantId) : queued;
    if (left === 0 || Date.now() > deadline) return left;
    await sleep(DRAIN_POLL_MS);
  }
}

async function walPosition(owner: pg.Pool): Promise<string> {
  return (await owner.query('SELECT pg_current_wal_lsn()::text AS bench_pipeline_lsn')).rows[0].bench_pipeline_lsn;
}

async function walBytesSince(owner: pg.Pool, lsn: string): Promise<number> {
  return Number((await owner.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn) AS bench_pipeline_wal', [lsn])).rows[0].bench_pipeline_wal);
}

type BatchTotals = { count: number; events: number; seconds: number };

/** The service's lane batch histograms (`GET /metrics`): transactions, events and seconds so far; null when it has none. */
async function laneBatches(http: HttpPool): Promise<BatchTotals | null> {
  const response = await http.request({ method: 'GET', path: '/metrics' });
  const text = await response.body.text();
  const value = (name: string) => {
    const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return match ? Number(match[1]) : null;
  };
  const count = value('loyalty_event_batch_size_count');
  const events = value('loyalty_event_batch_size_sum');
  const seconds = value('loyalty_event_batch_duration_seconds_sum');
  return count === null || events === null || seconds === null ? null : { count, events, seconds };
}

function batchesBetween(before: BatchTotals, after: BatchTotals): RateRow['batches'] {
  const count = after.count - before.count;
  return { count, events: count ? (after.events - before.events) / count : 0, ms: count ? ((after.seconds - before.seconds) * 1000) / count : 0 };
}

interface PipelineFigures {
  processed: number;
  failed: number;
  /** accept → processed, ms: p50, p95, p99 (nearest rank). */
  latency: [number, number, number] | null;
  points: number;
}

/** What the database says about the events whose idempotency key starts with `prefix`. */
async function readPipelineFigures(owner: pg.Pool, tenantId: string, prefix: string): Promise<PipelineFigures> {
  const { rows } = await owner.query(
    `SELECT count(*) FILTER (WHERE status = 'processed')::int AS bench_pipeline_processed,
            count(*) FILTER (WHERE status = 'failed')::int AS bench_pipeline_failed,
            percentile_disc(ARRAY[0.5, 0.95, 0.99]::float8[]) WITHIN GROUP (ORDER BY extract(epoch FROM processed_at - received_at)::float8 * 1000)
              FILTER (WHERE status = 'processed') AS bench_pipeline_latency
     FROM ingested_events WHERE tenant_id = $1 AND idempotency_key LIKE $2`,
    [tenantId, `${prefix}%`],
  );
  // The rule engine names the event in the ledger memo of the grant it makes. The memo has no index: the join must
  // hash (a nested loop over 90,000 events of a 60 s run took minutes), so nested loops are off for this one query.
  const client = await owner.connect();
  let granted: Array<{ bench_pipeline_points: string }>;
  try {
    await client.query('BEGIN READ ONLY');
    await client.query('SET LOCAL enable_nestloop = off');
    ({ rows: granted } = await client.query(
      `SELECT coalesce(sum(l.delta), 0)::bigint AS bench_pipeline_points
       FROM ingested_events e JOIN points_ledger l ON l.tenant_id = e.tenant_id AND l.memo = 'event ' || e.event_id
       WHERE e.tenant_id = $1 AND e.idempotency_key LIKE $2`,
      [tenantId, `${prefix}%`],
    ));
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  const [figures] = rows;
  return {
    processed: figures.bench_pipeline_processed,
    failed: figures.bench_pipeline_failed,
    latency: figures.bench_pipeline_latency,
    points: Number(granted[0].bench_pipeline_points),
  };
}


/**
 * The baseline's tables: a balance per participant and a ledger, the two
 * writes of a grant, without the service's lots, outbox or idempotency.
 */
async function createBaselineTables(owner: pg.Pool): Promise<void> {
  await owner.query(`
    DROP TABLE IF EXISTS bench_baseline_ledger, bench_baseline_balances;
    CREATE TABLE bench_baseline_balances (participant_id text PRIMARY KEY, available bigint NOT NULL, lifetime bigint NOT NULL, updated_at timestamptz NOT NULL);
    CREATE TABLE bench_baseline_ledger (
      seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      participant_id text NOT NULL,
      event_key text NOT NULL,
      delta bigint NOT NULL,
      available_after bigint NOT NULL,
      lifetime_after bigint NOT NULL,
      created_at timestamptz NOT NULL
    );
    INSERT INTO bench_baseline_balances (participant_id, available, lifetime, updated_at)
    SELECT 'p-' || g, 0, 0, now() FROM generate_series(0, ${PARTICIPANTS - 1}) g;
  `);
}

/** One grant as one statement (so one round trip and one transaction): the balance upserted, the ledger row appended. */
const BASELINE_GRANT = {
  name: 'bench_baseline_grant',
  text: `WITH balance AS (
           INSERT INTO bench_baseline_balances AS b (participant_id, available, lifetime, updated_at) VALUES ($1, $3, $3, now())
           ON CONFLICT (participant_id) DO UPDATE SET available = b.available + EXCLUDED.available, lifetime = b.lifetime + EXCLUDED.lifetime, updated_at = now()
           RETURNING available, lifetime
         )
         INSERT INTO bench_baseline_ledger (participant_id, event_key, delta, available_after, lifetime_after, created_at)
         SELECT $1, $2, $3, available, lifetime, now() FROM balance`,
};

interface Purchase {
  participantId: string;
  amount: number;
}

function randomPurchase(): Purchase {
  return { participantId: `p-${Math.floor(Math.random() * PARTICIPANTS)}`, amount: 1 + Math.floor(Math.random() * AMOUNT_MAX) };
}

interface RateRow {
  rate: number;
  offered: number;
  accept: OpenLoopResult;
  accepted: number;
  figures: PipelineFigures | null;
  pointsSent: number;
  left: number;
  backlog: BacklogSample[];
  /** CPU ms per event offered, from the start of sending to the end of processing: the service process's and the whole machine's (the sender and PostgreSQL included). */
  cpuPerEvent: { service: number; postgres: number; machine: number };
  /** Write-ahead log written per event offered, kB, from the start of sending to the end of processing (everything the database wrote, the baseline not included). */
  walKbPerEvent: number;
  /** Lane transactions of the rate, from the service's own histograms: how many, events per batch, ms per batch (commit included). */
  batches: { count: number; events: number; ms: number } | null;
  baseline: OpenLoopResult | null;
}

function formatMs(values: number[]): string {
  return values.map((v) => (Number.isFinite(v) ? v.toFixed(v < 10 ? 1 : 0) : '–')).join(' / ');
}

function backlogCell(samples: BacklogSample[], pick: (sample: BacklogSample) => number | null): string {
  // Samples that did not count this figure (the table is missing, or UNPROCESSED_EVERY_SAMPLES) are left out.
  const values = samples.map(pick).filter((v): v is number => v !== null);
  if (values.length === 0) return 'n/a';
  return `${Math.max(...values)} / ${values[values.length - 1]}`;
}

function pointsOk(row: RateRow): boolean {
  return row.left === 0 && row.figures !== null && row.figures.points === row.pointsSent;
}

async function main(): Promise<void> {
  const database = await openBenchDatabase('pipeline', STATEMENTS ? { settings: STATEMENTS_SETTINGS } : {});
  const { ownerUrl, appPassword, appUrl } = database;
  await migrate(ownerUrl, appPassword);
  const db = new Database(appUrl, ownerUrl, 2);
  const owner = new pg.Pool({ connectionString: ownerUrl, max: 2 });
  const baselinePool = new pg.Pool({ connectionString: ownerUrl, max: BASELINE_POOL_SIZE });
  const sampler = new pg.Client({ connectionString: ownerUrl });
  // Connections cut when the database stops must not crash the run.
  for (const pool of [owner, baselinePool]) pool.on('error', () => undefined);
  sampler.on('error', () => undefined);
  let service: ChildProcess | null = null;
  let http: HttpPool | null = null;
  const rows: RateRow[] = [];
  try {
    await sampler.connect();
    const statements = await openStatementsTable(owner, STATEMENTS, STATEMENTS_TOP);
    await createBaselineTables(owner);
    const tenant = await createTenant(db, { name: 'Pipeline', slug: `pipeline-${runId}`, plan: 'enterprise', requestsPerMinute: 100_000_000 });
    const tenantId = tenant.tenant_id;

    const port = await freePort();
    progress(`starting the service (SERVICE_ROLE=all${PROFILE_DIR ? `, CPU profile into ${PROFILE_DIR}` : ''})`);
    service = await startServiceProcess({ ownerUrl, port, role: 'all', profileDir: PROFILE_DIR });
    http = new HttpPool(`http://127.0.0.1:${port}`, { connections: HTTP_CONNECTIONS });
    const headers = { 'content-type': 'application/json', 'x-api-key': tenant.api_key };
    const post = async (pathName: string, body: unknown, expected: number): Promise<unknown> => {
      const response = await http!.request({ method: 'POST', path: pathName, headers, body: JSON.stringify(body) });
      const text = await response.body.text();
      if (response.statusCode !== expected) throw new Error(`${pathName} answered ${response.statusCode}: ${text.slice(0, 200)}`);
      return JSON.parse(text);
    };
    const sendPurchase = async (key: string, purchase: Purchase) => {
      await post('/api/v1/ingest/events', { event_name: 'purchase', participant_id: purchase.participantId, properties: { amount: purchase.amount }, idempotency_key: key }, 202);
    };

    const rule = (await post(
      '/api/v1/admin/rules',
      { name: 'bench purchase points', event_name: 'purchase', status: 'active', effects: [{ type: 'award_points', rate: { property: 'properties.amount', points_per_unit: 1 } }] },
      201,
    )) as { id: string; status: string };
    if (rule.status !== 'active') throw new Error(`the rule was created ${rule.status}, not active`);

    // Warm-up: one event per participant (which creates the participants and their balances), then a short paced run.
    progress('warming up');
    for (let first = 0; first < PARTICIPANTS; first += BATCH_EVENTS_MAX) {
      const events = Array.from({ length: Math.min(BATCH_EVENTS_MAX, PARTICIPANTS - first) }, (_, i) => ({
        event_name: 'purchase',
        participant_id: `p-${first + i}`,
        properties: { amount: 1 },
        idempotency_key: `${runId}-seed-${first + i}`,
      }));
      await post('/api/v1/ingest/events/batch', { events }, 200);
    }
    const warmup = await offerOpenLoop(WARMUP_RATE, WARMUP_SECONDS, (i) => sendPurchase(`${runId}-warm-${i}`, randomPurchase()));
    if (warmup.failures > 0) throw new Error(`warm-up: ${warmup.failures} requests failed, the first: ${warmup.firstFailure}`);
    const warmLeft = await drain(owner, tenantId, WARMUP_DRAIN_TIMEOUT_MS);
    if (warmLeft > 0) throw new Error(`warm-up: ${warmLeft} events still unprocessed after ${WARMUP_DRAIN_TIMEOUT_MS / 1000} s`);

    for (const [step, rate] of RATES.entries()) {
      const prefix = `${runId}-s${step}-r${rate}-`;
      const offered = Math.round(rate * SECONDS);
      const purchases = Array.from({ length: offered }, randomPurchase);
      const pointsSent = purchases.reduce((sum, p) => sum + p.amount, 0);
      await statements.reset();
      progress(`${rate} events/s for ${SECONDS} s (${offered} events)`);
      const backlog = sampleBacklog(sampler, tenantId);
      const cpuBefore = { ...cpuMs(service.pid), postgres: cpuMsOfProcesses('postgres') };
      const batchesBefore = await laneBatches(http);
      const walBefore = await walPosition(owner);
      const accept = await offerOpenLoop(rate, SECONDS, (i) => sendPurchase(`${prefix}${i}`, purchases[i]));
      const backlogSamples = await backlog.stop();
      progress(`${rate} events/s: sent (${accept.failures} failed, sender lag max ${accept.sendLagMaxMs.toFixed(0)} ms); waiting for processing`);
      const left = await drain(owner, tenantId, DRAIN_TIMEOUT_MS);
      const cpuAfter = { ...cpuMs(service.pid), postgres: cpuMsOfProcesses('postgres') };
      const batchesAfter = await laneBatches(http);
      const walKbPerEvent = (await walBytesSince(owner, walBefore)) / 1024 / offered;
      const batches = batchesBefore && batchesAfter ? batchesBetween(batchesBefore, batchesAfter) : null;
      const cpuPerEvent = { service: (cpuAfter.process - cpuBefore.process) / offered, postgres: (cpuAfter.postgres - cpuBefore.postgres) / offered, machine: (cpuAfter.machine - cpuBefore.machine) / offered };
      const figures = await readPipelineFigures(owner, tenantId, prefix);
      await statements.print(`${rate} events/s, from the start of sending to the end of processing`);
      const row: RateRow = { rate, offered, accept, accepted: accept.latencies.length, figures, pointsSent, left, backlog: backlogSamples, cpuPerEvent, walKbPerEvent, batches, baseline: null };
      rows.push(row);
      if (left > 0) {
        // The backlog would spill into whatever runs next, the baseline included: the run stops here.
        progress(`${rate} events/s: ${left} events still unprocessed after ${DRAIN_TIMEOUT_MS / 1000} s; the remaining rates are not run`);
        break;
      }
      progress(`${rate} events/s: baseline`);
      row.baseline = await offerOpenLoop(rate, SECONDS, async (i) => {
        await baselinePool.query({ ...BASELINE_GRANT, values: [purchases[i].participantId, `${prefix}${i}`, purchases[i].amount] });
      });
    }
  } finally {
    await http?.close();
    if (service) {
      progress('stopping the service');
      await stopServiceProcess(service);
    }
    await sampler.end().catch(() => undefined);
    await baselinePool.end();
    await owner.end();
    await db.close();
    await database.stop();
  }

  printReport(rows);
  if (PROFILE_DIR) {
    const profiles = fs.readdirSync(PROFILE_DIR).filter((name) => name.endsWith('.cpuprofile'));
    process.stdout.write(`\nCPU profiles in ${PROFILE_DIR}: ${profiles.join(', ') || 'none'}; summary: \`node scripts/cpu-profile-summary.mjs <file> [top]\`\n`);
  }
  const failed = rows.filter((row) => !pointsOk(row)).map((row) => `${row.rate}/s`);
  if (failed.length > 0) throw new Error(`points check failed at ${failed.join(', ')}: points granted differ from the amounts sent, or events were left unprocessed (see the table)`);
}

function printReport(rows: RateRow[]): void {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['describe', '--always', '--dirty'], { encoding: 'utf8' }).trim();
  } catch {
    // Not a git checkout.
  }
  process.stdout.write(
    `\nPipeline benchmark: commit ${commit}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ` +
      `load average ${loadAtStart.toFixed(1)} at the start, ${os.loadavg()[0].toFixed(1)} at the end; ${SECONDS} s per rate, one service process (SERVICE_ROLE=all), ${PARTICIPANTS} participants.\n`,
  );
  process.stdout.write('Latencies in ms. Accept: scheduled send → 202. Processed: received_at → processed_at. Backlog: ingestion_pending rows, max / at the end of sending (sampled every 500 ms); unprocessed: the tenant\'s events not yet processed (counted every 5 s). CPU: ms per event, from the start of sending to the end of processing, of the service process, of PostgreSQL\'s processes and of the whole machine (sender and PostgreSQL included; the drain\'s polling too). WAL: write-ahead log kB per event. Batches: the lane transactions that applied the rate\'s events (the service\'s loyalty_event_batch_* histograms): how many, events and ms per transaction. Baseline: scheduled send → commit.\n\n');
  process.stdout.write('| rate | accepted | accept p50 / p99 | processed | processed p50 / p95 / p99 | backlog max / end | unprocessed max / end | CPU ms/event service / postgres / machine | WAL kB/event | batches: count, events, ms | baseline p50 / p95 / p99 | points |\n');
  process.stdout.write('|---:|---:|---|---:|---|---|---|---|---|---|---|---|\n');
  for (const row of rows) {
    const accept = row.accept;
    const figures = row.figures;
    const acceptedCell = `${row.accepted} / ${row.offered}${accept.failures ? ` (${accept.failures} failed)` : ''}`;
    const processedCell = `${figures?.processed ?? 0}${figures?.failed ? ` (${figures.failed} failed)` : ''}${row.left ? ` (${row.left} left at timeout)` : ''}`;
    const baseline = row.baseline;
    const baselineCell = baseline
      ? `${formatMs([50, 95, 99].map((p) => percentile(baseline.latencies, p)))}${baseline.failures ? ` (${baseline.failures} failed)` : ''}`
      : 'not run';
    const pointsCell = `${pointsOk(row) ? '✓' : '✗'} ${figures?.points ?? 0} of ${row.pointsSent}`;
    process.stdout.write(
      `| ${row.rate}/s | ${acceptedCell} | ${formatMs([50, 99].map((p) => percentile(accept.latencies, p)))} | ${processedCell} | ${formatMs(figures?.latency ?? [NaN, NaN, NaN])} | ` +
        `${backlogCell(row.backlog, (s) => s.pending)} | ${backlogCell(row.backlog, (s) => s.unprocessed)} | ${row.cpuPerEvent.service.toFixed(2)} / ${row.cpuPerEvent.postgres.toFixed(2)} / ${row.cpuPerEvent.machine.toFixed(2)} | ${row.walKbPerEvent.toFixed(1)} | ${row.batches ? `${row.batches.count}, ${row.batches.events.toFixed(1)}, ${row.batches.ms.toFixed(1)}` : 'n/a'} | ${baselineCell} | ${pointsCell} |\n`,
    );
  }
  const failures = rows.flatMap((row) => [row.accept.firstFailure, row.baseline?.firstFailure].filter((f): f is string => f !== null && f !== undefined));
  if (failures.length > 0) process.stdout.write(`\nFirst failures: ${[...new Set(failures)].slice(0, 5).join('; ')}\n`);
  const notRun = RATES.slice(rows.length);
  if (notRun.length > 0) process.stdout.write(`\nNot run (the previous rate did not drain): ${notRun.join(', ')} events/s\n`);
}

runBench(main);
