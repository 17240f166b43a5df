import os from 'node:os';
import { EventEmitter } from 'node:events';
import { Logger as WorkerLogger, makeWorkerUtils, parseCrontab, run, type Job, type Runner, type Task, type TaskList, type WorkerEvents, type WorkerUtils } from 'graphile-worker';
import type { Database, Tx } from './db.js';
import type { Config } from '../config.js';
import type { Logger } from './logger.js';
import { jobDuration, jobsFinished } from './metrics.js';
import { startPump, type Pump } from './pump.js';
import { splitTraceparent, traceJob, traceLogFields, tracingOn, withTraceparent } from './tracing.js';

/**
 * Background work runs on graphile-worker: jobs are rows in PostgreSQL, added
 * inside the caller's transaction (`addJob(tx, …)`), picked up at once through
 * LISTEN/NOTIFY, retried with backoff, scheduled with `run_at`, and recurring
 * through its crontab. (A job insert NOTIFYs, which serialises commits; hot
 * paths do not add jobs per request — pending markers are handed over in
 * batches by the pumps started here; see pump.ts.)
 *
 * graphile-worker only frees the jobs of a crashed process after four hours.
 * Each process therefore records a heartbeat for its workers, and every
 * process sweeps: jobs locked by a worker whose heartbeat is older than
 * WORKER_STALE_AFTER_SECONDS are unlocked through the library's own
 * `forceUnlockWorkers`, so another process runs them within a minute.
 */
export interface JobContext {
  db: Database;
  config: Config;
  log: Logger;
}

export type JobHandler = (payload: unknown, context: JobContext) => Promise<void>;

const HEARTBEAT_INTERVAL_MS = 5_000;
const SWEEP_INTERVAL_MS = 10_000;

export interface AddJobOptions {
  runAt?: Date;
  jobKey?: string;
  jobKeyMode?: 'replace' | 'preserve_run_at' | 'unsafe_dedupe';
  maxAttempts?: number;
  queueName?: string;
  priority?: number;
}

/**
 * Adds a job inside the caller's transaction: it exists only if the transaction commits.
 * While tracing is on, the payload carries the caller's trace context (`traceparent`),
 * so that the job's span joins the request's trace; the handler never sees that field.
 */
export async function addJob(tx: Tx, task: string, payload: unknown, options: AddJobOptions = {}): Promise<void> {
  await tx.query(
    `SELECT graphile_worker.add_job($1, $2::json, queue_name => $3, run_at => $4, max_attempts => $5, job_key => $6, priority => $7, job_key_mode => $8)`,
    [
      task,
      JSON.stringify(withTraceparent(payload ?? {})),
      options.queueName ?? null,
      options.runAt ?? null,
      options.maxAttempts ?? 25,
      options.jobKey ?? null,
      options.priority ?? 0,
      options.jobKeyMode ?? 'replace',
    ],
  );
}

/**
 * Routes graphile-worker's own messages into the service's log. Its failures
 * carry the error as `error`; it is logged as `err`, so that the logger's error
 * serializer (which drops PostgreSQL's value-quoting `detail`) applies to it.
 */
function workerLogger(log: Logger): WorkerLogger {
  return new WorkerLogger(() => (level, message, meta) => {
    const method = level === 'error' ? 'error' : level === 'warning' ? 'warn' : 'debug';
    const { error, ...rest } = (meta ?? {}) as Record<string, unknown>;
    log[method]({ component: 'job-queue', ...rest, ...(error === undefined ? {} : { err: error }) }, message);
  });
}

/** The tenant a job works for, when its payload names one (`tenant_id`, as every tenant job's does). */
function tenantOf(payload: unknown): string | undefined {
  const value = (payload as { tenant_id?: unknown } | null)?.tenant_id;
  return typeof value === 'string' ? value : undefined;
}

export interface JobRunner {
  stop(): Promise<void>;
}

export async function startJobRunner(
  db: Database,
  config: Config,
  log: Logger,
  handlers: Record<string, JobHandler>,
  crontab: string,
  pumps: Pump[] = [],
): Promise<JobRunner> {
  const context: JobContext = { db, config, log };
  const taskList: TaskList = {};
  const traced = tracingOn();
  // While tracing is on: each running job's trace_id and span_id, for its `job done` line, which is written after the span.
  const jobTraces = new Map<string, Record<string, string>>();
  for (const [name, handler] of Object.entries(handlers)) {
    // A job added by a process that traces carries a trace context; a handler gets its payload without it, traced or not.
    const task: Task = traced
      ? async (payload, helpers) => {
          const { payload: own, traceparent } = splitTraceparent(payload);
          const job = { id: String(helpers.job.id), task: name, attempt: helpers.job.attempts, tenantId: tenantOf(own) };
          await traceJob(job, traceparent, () => {
            jobTraces.set(job.id, traceLogFields());
            return handler(own, context);
          });
        }
      : async (payload) => handler(splitTraceparent(payload).payload, context);
    taskList[name] = task;
  }
  // The ids this process's jobs are locked by: graphile-worker (0.17) locks a job with its worker
  // pool's id (`pool-…`), not with the id of the worker that runs it. Until 3 Dec the heartbeat
  // recorded the workers' ids, so the sweep took every job of this process that ran longer than
  // WORKER_STALE_AFTER_SECONDS for a dead process's and unlocked it while it ran.
  const livePools = new Set<string>();
  // The listeners must be in place before run() starts the pool: `runner.events` only exists once
  // it has started, and a listener added there misses its 'pool:create', which left the heartbeat
  // (and so the stale-lock sweep) with nothing to report.
  const events: WorkerEvents = new EventEmitter();
  events.on('pool:create', ({ workerPool }) => {
    livePools.add(workerPool.id);
    void heartbeat();
  });
  events.on('pool:release', ({ workerPool }) => {
    livePools.delete(workerPool.id);
  });
  // One info line per job (id, task, tenant, duration, outcome) and the job series of /metrics.
  const started = new Map<string, number>();
  events.on('job:start', ({ job }) => {
    started.set(job.id, performance.now());
  });
  const finished = (job: Job, outcome: 'succeeded' | 'failed'): { jobId: string; task: string; tenantId: string | undefined; durationMs: number; attempts: number; trace_id?: string; span_id?: string } => {
    const start = started.get(job.id);
    started.delete(job.id);
    const durationMs = start === undefined ? 0 : Math.round((performance.now() - start) * 10) / 10;
    jobsFinished.inc({ task: job.task_identifier, outcome });
    jobDuration.observe({ task: job.task_identifier }, durationMs / 1000);
    // Job ids are bigints, read as numbers here (db.ts); the span took them as text.
    const traceFields = jobTraces.get(String(job.id));
    if (traceFields) jobTraces.delete(String(job.id));
    return { jobId: job.id, task: job.task_identifier, tenantId: tenantOf(job.payload), durationMs, attempts: job.attempts, ...traceFields };
  };
  events.on('job:success', ({ job }) => {
    log.info({ ...finished(job, 'succeeded'), outcome: 'succeeded' }, 'job done');
  });
  events.on('job:error', ({ job, error }) => {
    log.warn({ ...finished(job, 'failed'), outcome: 'failed', err: error }, 'job failed; it will be retried');
  });
  events.on('job:failed', ({ job }) => {
    log.error({ jobId: job.id, task: job.task_identifier, tenantId: tenantOf(job.payload), attempts: job.attempts, outcome: 'gave up' }, 'job failed for the last time; it stays in the queue for inspection');
  });
  const runner: Runner = await run({
    events,
    pgPool: db.system,
    taskList,
    parsedCronItems: parseCrontab(crontab),
    concurrency: config.jobConcurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: workerLogger(log),
  });
  const utils: WorkerUtils = await makeWorkerUtils({ pgPool: db.system, logger: workerLogger(log) });
  // Every worker process also runs the pumps: committed outbox events to the dispatcher, stored events to processing.
  const runningPumps = pumps.map((pump) => startPump(pump, db, log, config));

  async function heartbeat(): Promise<void> {
    if (livePools.size === 0) return;
    await db.system
      .query(
        `INSERT INTO worker_heartbeats (worker_id, last_seen_at)
         SELECT unnest($1::text[]), now()
         ON CONFLICT (worker_id) DO UPDATE SET last_seen_at = now()`,
        [[...livePools]],
      )
      .catch((error) => log.warn({ err: error }, 'worker heartbeat failed'));
  }

  async function sweep(): Promise<void> {
    try {
      const stale = await db.system.query(
        `SELECT DISTINCT j.locked_by
         FROM graphile_worker._private_jobs j
         LEFT JOIN worker_heartbeats h ON h.worker_id = j.locked_by
         WHERE j.locked_by IS NOT NULL
           AND j.locked_at < now() - make_interval(secs => $1)
           AND (h.worker_id IS NULL OR h.last_seen_at < now() - make_interval(secs => $1))
           AND NOT (j.locked_by = ANY($2::text[]))`,
        [config.workerStaleAfterSeconds, [...livePools]],
      );
      const workerIds = stale.rows.map((row) => row.locked_by as string);
      if (workerIds.length > 0) {
        log.warn({ workerIds }, 'unlocking the jobs of workers that stopped checking in');
        await utils.forceUnlockWorkers(workerIds);
        await db.system.query('DELETE FROM worker_heartbeats WHERE worker_id = ANY($1::text[])', [workerIds]);
      }
      await db.system.query(`DELETE FROM worker_heartbeats WHERE last_seen_at < now() - interval '1 day'`);
    } catch (error) {
      log.warn({ err: error }, 'stale worker sweep failed');
    }
  }

  const heartbeatTimer = setInterval(() => void heartbeat(), HEARTBEAT_INTERVAL_MS);
  const sweepTimer = setInterval(() => void sweep(), SWEEP_INTERVAL_MS);
  heartbeatTimer.unref();
  sweepTimer.unref();
  void sweep();
  log.info({ host: os.hostname(), concurrency: config.jobConcurrency, tasks: Object.keys(handlers).length }, 'job runner started');

  return {
    async stop() {
      clearInterval(heartbeatTimer);
      clearInterval(sweepTimer);
      await Promise.all(runningPumps.map((pump) => pump.stop()));
      await runner.stop();
      await utils.release();
    },
  };
}
