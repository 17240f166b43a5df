import type { Tx } from '../../platform/db.js';
import type { DestinationRow } from './destination-store.js';
import { DELIVER_JOB_ATTEMPTS_MAX, DELIVER_TASK } from './delivery-store.js';

/** The statements of bulk replay jobs: recording, claiming and running them. */

export const BULK_REPLAY_TASK = 'webhooks.bulk_replay';

export interface ReplayJobRow {
  tenant_id: string;
  id: string;
  destination_id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  filter: { since: string | null; until: string | null; statuses: string[]; events: string[] | null };
  matched: number;
  replayed: number;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

export async function insertReplayJob(tx: Tx, row: Pick<ReplayJobRow, 'tenant_id' | 'id' | 'destination_id' | 'filter' | 'created_at'>): Promise<ReplayJobRow> {
  const { rows } = await tx.query<ReplayJobRow>(
    `INSERT INTO webhook_replay_jobs (tenant_id, id, destination_id, status, filter, created_at)
     VALUES ($1, $2, $3, 'queued', $4, $5) RETURNING *`,
    [row.tenant_id, row.id, row.destination_id, JSON.stringify(row.filter), row.created_at],
  );
  return rows[0];
}

export async function findReplayJob(tx: Tx, tenantId: string, destinationId: string, jobId: string): Promise<ReplayJobRow | null> {
  const { rows } = await tx.query<ReplayJobRow>('SELECT * FROM webhook_replay_jobs WHERE tenant_id = $1 AND destination_id = $2 AND id = $3', [tenantId, destinationId, jobId]);
  return rows[0] ?? null;
}

/** Claims a queued replay job; null when it is not queued (already run, or running elsewhere). */
export async function startReplayJob(tx: Tx, tenantId: string, jobId: string, now: Date): Promise<ReplayJobRow | null> {
  const { rows } = await tx.query<ReplayJobRow>(
    `UPDATE webhook_replay_jobs SET status = 'running', started_at = $3
     WHERE tenant_id = $1 AND id = $2 AND status IN ('queued', 'running')
     RETURNING *`,
    [tenantId, jobId, now],
  );
  return rows[0] ?? null;
}

/**
 * The bulk replay in one statement: for each event of the destination in the
 * filter, the latest delivery; those whose latest delivery ended in one of the
 * chosen states get a new delivery and a job; the replay job records the counts.
 */
export async function runBulkReplay(tx: Tx, tenantId: string, job: ReplayJobRow, destination: DestinationRow, limit: number, now: Date): Promise<{ matched: number; replayed: number }> {
  const { rows } = await tx.query(
    `WITH latest AS (
       SELECT DISTINCT ON (w.event_id) w.*
       FROM webhook_deliveries w
       WHERE w.tenant_id = $1 AND w.destination_id = $2
         AND ($3::timestamptz IS NULL OR w.occurred_at >= $3::timestamptz)
         AND ($4::timestamptz IS NULL OR w.occurred_at < $4::timestamptz)
         AND ($5::text[] IS NULL OR w.event = ANY ($5::text[]))
       ORDER BY w.event_id, w.created_at DESC, w.id DESC
     ), chosen AS (
       SELECT * FROM latest WHERE status = ANY ($6::text[]) ORDER BY occurred_at, event_id LIMIT $7
     ), inserted AS (
       INSERT INTO webhook_deliveries (tenant_id, id, destination_id, event_id, event, participant_id, engagement_id, occurred_at,
                                       status, max_attempts, next_attempt_at, replay_of, replay_job_id, created_at, updated_at)
       SELECT $1, 'dlv_' || replace(gen_random_uuid()::text, '-', ''), $2, c.event_id, c.event, c.participant_id, c.engagement_id, c.occurred_at,
              'PENDING', $8, $9, c.id, $10, $9, $9
       FROM chosen c
       RETURNING id
     ), jobs AS (
       SELECT enqueue_jobs($11, ARRAY(SELECT json_build_object('tenant_id', $1::uuid, 'delivery_id', id) FROM inserted), $12) AS added
     ), counts AS (
       SELECT (SELECT count(*) FROM chosen)::int AS matched, (SELECT added FROM jobs)::int AS replayed
     )
     UPDATE webhook_replay_jobs r SET status = 'completed', matched = counts.matched, replayed = counts.replayed, completed_at = $9
     FROM counts
     WHERE r.tenant_id = $1 AND r.id = $10
     RETURNING r.matched, r.replayed`,
    [
      tenantId, destination.id, job.filter.since, job.filter.until, job.filter.events, job.filter.statuses, limit,
      destination.retry_count + 1, now, job.id, DELIVER_TASK, DELIVER_JOB_ATTEMPTS_MAX,
    ],
  );
  return { matched: rows[0].matched, replayed: rows[0].replayed };
}

export async function failReplayJob(tx: Tx, tenantId: string, jobId: string, error: string, now: Date): Promise<void> {
  await tx.query(`UPDATE webhook_replay_jobs SET status = 'failed', error = $3, completed_at = $4 WHERE tenant_id = $1 AND id = $2`, [tenantId, jobId, error, now]);
}
