import http from 'node:http';
import client from 'prom-client';
import type { Database } from './db.js';
import type { Logger } from './logger.js';
import { WAITING_LANES_SQL } from './event-store.js';

/**
 * The service's domain series for Prometheus, shared by every part of a
 * process: counters and histograms the code increments where the thing
 * happens (a webhook attempt, a ledger write, a job, a rate-limit refusal),
 * and gauges read from PostgreSQL when scraped (queue depth, outbox lag,
 * liability), so that every process reports the same shared state.
 *
 * Labels stay bounded: task names, outcomes, plans, never a tenant or
 * participant id. An API process serves them at `/metrics`; a worker process
 * (SERVICE_ROLE=worker) on `METRICS_PORT` when set (metricsServer below).
 */
export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });

export const eventsAccepted = new client.Counter({
  name: 'loyalty_events_accepted_total',
  help: 'Events accepted by ingestion (duplicates of an idempotency key included, labelled)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const eventsRejected = new client.Counter({
  name: 'loyalty_events_rejected_total',
  help: 'Events refused by ingestion, by error code',
  labelNames: ['code'] as const,
  registers: [registry],
});

export const jobsFinished = new client.Counter({
  name: 'loyalty_jobs_total',
  help: 'Background jobs run, by task and outcome (failed: the attempt failed and will be retried or gave up)',
  labelNames: ['task', 'outcome'] as const,
  registers: [registry],
});

export const jobDuration = new client.Histogram({
  name: 'loyalty_job_duration_seconds',
  help: 'Duration of background jobs by task',
  labelNames: ['task'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

const laneBatchEvents = new client.Histogram({
  name: 'loyalty_event_batch_size',
  help: 'Accepted events applied per processing transaction (one lane of one tenant)',
  buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500],
  registers: [registry],
});

const laneBatchDuration = new client.Histogram({
  name: 'loyalty_event_batch_duration_seconds',
  help: 'Duration of an event processing transaction (one lane of one tenant), commit included',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

export function observeLaneBatch(events: number, seconds: number): void {
  laneBatchEvents.observe(events);
  laneBatchDuration.observe(seconds);
}

export const completionBatchSize = new client.Histogram({
  name: 'loyalty_completion_batch_size',
  help: 'Activity completions per committed transaction: a crowd on one activity goes together while others are in the database',
  buckets: [1, 2, 5, 10, 20, 50],
  registers: [registry],
});

export const completionBatchesSplit = new client.Counter({
  name: 'loyalty_completion_batches_split_total',
  help: 'Batches of activity completions that failed after their attempts were taken, rolled back and ran again one by one',
  registers: [registry],
});

export const completionOutcomesUnknown = new client.Counter({
  name: 'loyalty_completion_outcomes_unknown_total',
  help: 'Activity completions answered 503 COMPLETION_OUTCOME_UNKNOWN: the message with their COMMIT lost its answer (a lost database connection), so they may have been recorded and were not run again',
  registers: [registry],
});

export const webhookDeliveries = new client.Counter({
  name: 'loyalty_webhook_attempts_total',
  help: 'Webhook delivery attempts by outcome (succeeded, retrying, exhausted)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const webhookLatency = new client.Histogram({
  name: 'loyalty_webhook_attempt_duration_seconds',
  help: "Time from sending a webhook to the receiver's answer (or the failure)",
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const ledgerWrites = new client.Counter({
  name: 'loyalty_ledger_writes_total',
  help: 'Points ledger writes by kind (grant, deduct, expiry); counted when written inside their transaction',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const ledgerPoints = new client.Counter({
  name: 'loyalty_ledger_points_total',
  help: 'Points moved by ledger writes, by kind (grant, deduct, expiry)',
  labelNames: ['kind'] as const,
  registers: [registry],
});

/** One ledger write of `points` (a grant, a deduction, the expiry of one participant's lots). */
export function countLedgerWrite(kind: 'grant' | 'deduct' | 'expiry', points: number): void {
  ledgerWrites.inc({ kind });
  ledgerPoints.inc({ kind }, points);
}

export const overloadRefusals = new client.Counter({
  name: 'loyalty_overload_refusals_total',
  help: 'Requests refused with 503 SERVICE_OVERLOADED: the process held its limit of requests in progress (SERVICE_IN_FLIGHT_MAX)',
  registers: [registry],
});

export const rateLimitRefusals = new client.Counter({
  name: 'loyalty_rate_limit_refusals_total',
  help: 'Requests refused with 429, by the limit that refused them (key, ip, ingest, listing, public…)',
  labelNames: ['scope'] as const,
  registers: [registry],
});

/**
 * Gauges read from the database at scrape time. One database per process is
 * watched (the last service started in it; tests start several).
 */
let watched: Database | null = null;

async function sample(query: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  if (!watched) return [];
  try {
    return (await watched.system.query(query, params)).rows;
  } catch {
    // A scrape must answer even when the database does not; the series are then missing, which alerts notice.
    return [];
  }
}

new client.Gauge({
  name: 'loyalty_job_queue_depth',
  help: 'Background jobs due and not yet taken, by task',
  labelNames: ['task'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    const rows = await sample(
      `SELECT t.identifier AS task, count(*)::int AS depth
       FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
       WHERE j.is_available AND j.run_at <= now()
       GROUP BY t.identifier`,
    );
    for (const row of rows) this.set({ task: String(row.task) }, Number(row.depth));
  },
});

new client.Gauge({
  name: 'loyalty_jobs_failed_permanently',
  help: 'Jobs that used up their attempts and stay in the queue for inspection, by task',
  labelNames: ['task'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    const rows = await sample(
      `SELECT t.identifier AS task, count(*)::int AS failed
       FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
       WHERE j.attempts >= j.max_attempts
       GROUP BY t.identifier`,
    );
    for (const row of rows) this.set({ task: String(row.task) }, Number(row.failed));
  },
});

new client.Gauge({
  name: 'loyalty_outbox_lag_seconds',
  help: 'Age of the oldest committed outbox event not yet handed to webhook dispatch (0 when none waits)',
  registers: [registry],
  async collect() {
    const rows = await sample(
      `SELECT coalesce(extract(epoch FROM now() - min(e.created_at)), 0)::float8 AS lag
       FROM outbox_pending p JOIN outbox_events e ON e.tenant_id = p.tenant_id AND e.id = p.event_id`,
    );
    this.set(rows.length > 0 ? Number(rows[0]!.lag) : 0);
  },
});

new client.Gauge({
  name: 'loyalty_events_waiting',
  help: 'Accepted events not yet processed (all tenants; GET /api/v1/tenant/usage shows a tenant its own)',
  registers: [registry],
  async collect() {
    const rows = await sample('SELECT count(*)::int AS waiting FROM ingestion_pending');
    this.set(rows.length > 0 ? Number(rows[0]!.waiting) : 0);
  },
});

new client.Gauge({
  name: 'loyalty_event_processing_lag_seconds',
  help: 'Age of the oldest accepted event not yet processed (0 when none waits)',
  registers: [registry],
  async collect() {
    const rows = await sample(
      `SELECT coalesce(extract(epoch FROM now() - min(e.received_at)), 0)::float8 AS lag
       FROM (SELECT tenant_id, oldest_event_id AS event_id FROM (${WAITING_LANES_SQL}) w ORDER BY oldest_seq LIMIT 1) p
       JOIN ingested_events e ON e.tenant_id = p.tenant_id AND e.event_id = p.event_id`,
    );
    this.set(rows.length > 0 ? Number(rows[0]!.lag) : 0);
  },
});

new client.Gauge({
  name: 'loyalty_webhook_deliveries_waiting',
  help: 'Webhook deliveries not finished yet (pending, delivering or waiting for a retry)',
  registers: [registry],
  async collect() {
    const rows = await sample(`SELECT count(*)::int AS waiting FROM webhook_deliveries WHERE status IN ('PENDING', 'DELIVERING', 'RETRYING')`);
    this.set(rows.length > 0 ? Number(rows[0]!.waiting) : 0);
  },
});

new client.Gauge({
  name: 'loyalty_points_liability',
  help: 'Points available to participants (outstanding liability), by tenant plan',
  labelNames: ['plan'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    const rows = await sample(
      `SELECT t.plan, coalesce(sum(b.available), 0)::float8 AS points
       FROM points_balances b JOIN tenants t ON t.id = b.tenant_id
       GROUP BY t.plan`,
    );
    for (const row of rows) this.set({ plan: String(row.plan) }, Number(row.points));
  },
});

new client.Gauge({
  name: 'loyalty_db_pool_connections',
  help: "Connections of this process's database pools by pool (app, system) and state (total, idle, waiting: callers queued for a connection)",
  labelNames: ['pool', 'state'] as const,
  registers: [registry],
  collect() {
    this.reset();
    if (!watched) return;
    for (const [name, pool] of [['app', watched.app], ['system', watched.system]] as const) {
      this.set({ pool: name, state: 'total' }, pool.totalCount);
      this.set({ pool: name, state: 'idle' }, pool.idleCount);
      this.set({ pool: name, state: 'waiting' }, pool.waitingCount);
    }
  },
});

/** Points the database-read gauges at this database; returns the function that stops watching it. */
export function watchDatabase(db: Database): () => void {
  watched = db;
  return () => {
    if (watched === db) watched = null;
  };
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * A worker process serves no API; with METRICS_PORT it answers `/metrics`
 * (and `/healthz`, for the container's health check) on its own port.
 */
export async function startMetricsServer(host: string, port: number, log: Logger): Promise<MetricsServer> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method === 'GET' && path === '/metrics') {
      registry.metrics().then(
        (body) => response.writeHead(200, { 'content-type': registry.contentType }).end(body),
        () => response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n'),
      );
      return;
    }
    if (request.method === 'GET' && path === '/healthz') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as { port: number };
  log.info({ address: `http://${host}:${bound}/metrics` }, 'worker metrics listening');
  return { port: bound, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
