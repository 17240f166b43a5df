import type pg from 'pg';
import type { Pump } from '../../platform/pump.js';
import { PROCESS_TASK } from './store.js';

/** Accepted events taken per pump transaction. */
export const INGESTION_PUMP_BATCH = 5_000;
/** Event ids per processing job: a job's payload stays small, and a retried job repeats few events. */
export const EVENTS_PER_PROCESSING_JOB = 500;
// Any constant the service's other advisory locks do not use.
const PUMP_LOCK_KEY = 7_130_502;

/**
 * Moves up to `limit` accepted events from `ingestion_pending` into
 * `ingestion.process` jobs — one per tenant, participant queue and chunk of
 * EVENTS_PER_PROCESSING_JOB, in accept order — deleting the pending rows in
 * the same transaction. One pump at a time (a transaction advisory lock; the
 * others return 0 at once), so that the jobs of one queue are created in
 * accept order and each participant's events are processed in that order.
 * Runs as the schema owner: it looks across tenants.
 */
export async function pumpIngestion(pool: pg.Pool, limit: number = INGESTION_PUMP_BATCH): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows: lock } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [PUMP_LOCK_KEY]);
    if (!lock[0].locked) {
      await client.query('COMMIT');
      return 0;
    }
    const { rows: taken } = await client.query<{ seq: number; tenant_id: string; event_id: string; queue: string }>(
      `DELETE FROM ingestion_pending WHERE seq IN (SELECT seq FROM ingestion_pending ORDER BY seq LIMIT $1)
       RETURNING seq, tenant_id, event_id, queue`,
      [limit],
    );
    if (taken.length > 0) {
      const jobs = chunkByQueue(taken.sort((a, b) => a.seq - b.seq));
      await client.query('SELECT enqueue_jobs($1, $2::json[], 25, $3::text[])', [
        PROCESS_TASK,
        jobs.map((job) => JSON.stringify({ tenant_id: job.tenantId, event_ids: job.eventIds })),
        jobs.map((job) => job.queue),
      ]);
    }
    await client.query('COMMIT');
    return taken.length;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Groups events (in accept order) by tenant and queue, in chunks; jobs come in the order of their first event. */
function chunkByQueue(events: Array<{ tenant_id: string; event_id: string; queue: string }>) {
  const open = new Map<string, { tenantId: string; queue: string; eventIds: string[] }>();
  const jobs: Array<{ tenantId: string; queue: string; eventIds: string[] }> = [];
  for (const event of events) {
    const group = `${event.tenant_id} ${event.queue}`;
    let job = open.get(group);
    if (!job || job.eventIds.length >= EVENTS_PER_PROCESSING_JOB) {
      job = { tenantId: event.tenant_id, queue: event.queue, eventIds: [] };
      open.set(group, job);
      jobs.push(job);
    }
    job.eventIds.push(event.event_id);
  }
  return jobs;
}

export const ingestionPump: Pump = { name: 'ingestion', move: (pool) => pumpIngestion(pool) };
