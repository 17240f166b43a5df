import type pg from 'pg';
import type { Config } from '../config.js';
import type { JobContext } from './jobs.js';
import { clock } from './clock.js';
import { DISPATCH_TASK } from './outbox.js';

/**
 * Retention: rows that have served their purpose are deleted by one recurring
 * job, `platform:retention` (every five minutes). Each module declares what it
 * keeps and for how long as `RetentionRule`s (`ServiceModule.retention`); the
 * platform's own rules are below. The job takes a session advisory lock, so
 * that two workers never purge at once, and deletes in batches of
 * RETENTION_BATCH_ROWS rows (short transactions, no long lock), rule after
 * rule, until a rule has nothing left or the run's time budget is spent; the
 * next run goes on where this one stopped.
 */
export interface RetentionRule {
  /** What the rule removes, for the log (`outbox events`). */
  name: string;
  /** Deletes at most `limit` rows past retention at `now`, across tenants; returns how many. */
  purge(client: pg.ClientBase, limit: number, now: Date, config: Config): Promise<number>;
}

// graphile-worker's crontab accepts letters, digits, `_`, `-`, `:` and `/` in a task name, no dot.
export const RETENTION_TASK = 'platform:retention';
export const RETENTION_CRONTAB = `*/5 * * * * ${RETENTION_TASK} ?max=1`;
export const RETENTION_BATCH_ROWS = 5_000;
/** A run stops starting new batches after this long; the next run (five minutes later) continues. */
const RUN_BUDGET_MS = 4 * 60 * 1000;
// Any constant the service's other advisory locks do not use.
const RETENTION_LOCK_KEY = 7_130_501;
const DAY_MS = 24 * 60 * 60 * 1000;

export function daysBefore(now: Date, days: number): Date {
  return new Date(now.getTime() - days * DAY_MS);
}

/**
 * Deletes at most `limit` rows of `table` matching `condition` (which uses
 * `$2`, `$3`, … for `values`; `$1` is the limit, and `withClause`, when given,
 * names common table expressions the condition may read). Rows are chosen by
 * ctid in a sub-select, so the batch size is bounded; a row changed meanwhile
 * is skipped (its new version has another ctid), never deleted on its old evidence.
 */
export async function deleteBatch(client: pg.ClientBase, table: string, condition: string, values: unknown[], limit: number, withClause = ''): Promise<number> {
  const { rowCount } = await client.query(
    `${withClause ? `WITH ${withClause} ` : ''}DELETE FROM ${table} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${table} WHERE ${condition} LIMIT $1))`,
    [limit, ...values],
  );
  return rowCount ?? 0;
}

/** The platform's rules: expired idempotency keys, and outbox events past OUTBOX_RETENTION_DAYS. */
export const PLATFORM_RETENTION: RetentionRule[] = [
  {
    // A key past its 24 hours is treated as new by the claim already; the row is dead weight.
    name: 'idempotency keys',
    purge: (client, limit, now) => deleteBatch(client, 'idempotency_keys', 'expires_at < $2', [now], limit),
  },
  {
    // An event is kept while it waits for the dispatcher: still pending, or named
    // by a dispatch job not yet done (a worker fleet that was down longer than the
    // retention window still delivers it). Deliveries of a deleted event keep
    // their log; retries and replays then carry `data: {}`, as the spec allows.
    name: 'outbox events',
    purge: (client, limit, now, config) =>
      deleteBatch(
        client,
        'outbox_events',
        `created_at < $2
         AND NOT EXISTS (SELECT 1 FROM outbox_pending p WHERE p.tenant_id = outbox_events.tenant_id AND p.event_id = outbox_events.id)
         AND NOT EXISTS (SELECT 1 FROM held h WHERE h.tenant_id = outbox_events.tenant_id AND h.event_id = outbox_events.id)`,
        [daysBefore(now, config.outboxRetentionDays), DISPATCH_TASK],
        limit,
        // The events named by dispatch jobs, read once per batch (each job's payload parsed once).
        `jobs AS MATERIALIZED (
           SELECT j.payload::jsonb AS payload FROM graphile_worker._private_jobs j
           JOIN graphile_worker._private_tasks t ON t.id = j.task_id
           WHERE t.identifier = $3
         ),
         held AS MATERIALIZED (
           SELECT (jobs.payload ->> 'tenant_id')::uuid AS tenant_id, ids.event_id
           FROM jobs CROSS JOIN LATERAL jsonb_array_elements_text(jobs.payload -> 'event_ids') AS ids (event_id)
         )`,
      ),
  },
];

/** The job body over the given rules. */
export function retentionTask(rules: RetentionRule[]) {
  return async (_payload: unknown, context: JobContext): Promise<void> => {
    const client = await context.db.system.connect();
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [RETENTION_LOCK_KEY]);
      if (!rows[0].locked) return;
      try {
        const purged = await purgeAll(client, rules, context.config, Date.now() + RUN_BUDGET_MS);
        if (Object.keys(purged).length > 0) context.log.info({ purged }, 'retention: deleted rows past their retention');
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_KEY]);
      }
    } finally {
      client.release();
    }
  };
}

/** Runs every rule until it has nothing left or `deadline` (epoch ms) passes; returns the rows deleted by rule. */
export async function purgeAll(client: pg.ClientBase, rules: RetentionRule[], config: Config, deadline: number): Promise<Record<string, number>> {
  const now = clock.now();
  const purged: Record<string, number> = {};
  for (const rule of rules) {
    let deleted: number;
    do {
      if (Date.now() > deadline) return purged;
      deleted = await rule.purge(client, RETENTION_BATCH_ROWS, now, config);
      if (deleted > 0) purged[rule.name] = (purged[rule.name] ?? 0) + deleted;
    } while (deleted === RETENTION_BATCH_ROWS);
  }
  return purged;
}
