import type { Tx } from '../../platform/db.js';

/** The statements of bulk grants: the job, its items taken in batches, and each batch's grants. */

export interface BulkJobRow {
  id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  reason: string;
  memo: string | null;
  type: string;
  total: number;
  done: number;
  /** Items that failed (balance limit); erased participants are derived from the counts. */
  failed: number;
  /** Items neither granted nor failed yet. */
  pending: number;
  /** The first failed items by participant id. */
  failures: Array<{ participant_id: string; amount: number; reason: string }>;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  /** The segment whose members the job grants to (`POST /admin/points/segment-grants`); null for a list of grants. */
  segment_id: string | null;
}

const BULK_COLUMNS = 'id, status, reason, memo, type, total, done, failed, error, created_at, started_at, finished_at, segment_id';

/** The job and all its items in one statement (`unnest`). */
export async function insertBulkJob(
  tx: Tx,
  tenantId: string,
  job: { id: string; reason: string; memo: string | null; type: string; now: Date; actor?: { type: string; id: string } | null },
  participantIds: string[],
  amounts: number[],
): Promise<BulkJobRow> {
  const { rows } = await tx.query<BulkJobRow>(
    `WITH job AS (
       INSERT INTO points_bulk_grants (tenant_id, id, status, reason, memo, type, total, created_at, actor_type, actor_id)
       VALUES ($1, $2, 'queued', $3, $4, $5, cardinality($6::text[]), $8, $9, $10)
       RETURNING ${BULK_COLUMNS}
     ),
     items AS (
       INSERT INTO points_bulk_grant_items (tenant_id, job_id, participant_id, amount)
       SELECT $1, $2, p, a FROM unnest($6::text[], $7::bigint[]) AS u (p, a)
     )
     SELECT *, total AS pending, '[]'::json AS failures FROM job`,
    [tenantId, job.id, job.reason, job.memo, job.type, participantIds, amounts, job.now, job.actor?.type ?? null, job.actor?.id ?? null],
  );
  return rows[0];
}

/** The members of a segment (`membersSql`: one column, participant_id, its own parameters from $1), counted. */
export async function countSegmentMembers(tx: Tx, members: { sql: string; params: unknown[] }): Promise<number> {
  const { rows } = await tx.query(`SELECT count(DISTINCT participant_id)::int AS n FROM (${members.sql}) m`, members.params);
  return rows[0].n;
}

/** Parameters of `insertSegmentBulkJob` before the members' own: theirs start at this number. */
export const SEGMENT_JOB_MEMBER_PARAMS_FROM = 11;

/**
 * A job granting `amount` to every member of a segment, and its items, in one statement: the members
 * are read set-based (`members`: SQL selecting participant_id, numbered from SEGMENT_JOB_MEMBER_PARAMS_FROM)
 * into the same items table a list of grants fills, so the same runner grants them.
 */
export async function insertSegmentBulkJob(
  tx: Tx,
  tenantId: string,
  job: { id: string; reason: string; memo: string | null; type: string; now: Date; actor?: { type: string; id: string } | null; segmentId: string; amount: number },
  members: { sql: string; params: unknown[] },
): Promise<BulkJobRow> {
  const { rows } = await tx.query<BulkJobRow>(
    `WITH members AS MATERIALIZED (SELECT DISTINCT participant_id FROM (${members.sql}) m),
     job AS (
       INSERT INTO points_bulk_grants (tenant_id, id, status, reason, memo, type, total, created_at, actor_type, actor_id, segment_id)
       VALUES ($1, $2, 'queued', $3, $4, $5, (SELECT count(*) FROM members), $6, $7, $8, $9)
       RETURNING ${BULK_COLUMNS}
     ),
     items AS (
       INSERT INTO points_bulk_grant_items (tenant_id, job_id, participant_id, amount)
       SELECT $1, $2, participant_id, $10::bigint FROM members
     )
     SELECT *, total AS pending, '[]'::json AS failures FROM job`,
    [tenantId, job.id, job.reason, job.memo, job.type, job.now, job.actor?.type ?? null, job.actor?.id ?? null, job.segmentId, job.amount, ...members.params],
  );
  return rows[0];
}

export async function readBulkJob(tx: Tx, tenantId: string, id: string, failuresListed: number): Promise<BulkJobRow | null> {
  const { rows } = await tx.query<BulkJobRow>(
    `SELECT ${BULK_COLUMNS},
       (SELECT count(*)::int FROM points_bulk_grant_items i
        WHERE i.tenant_id = $1 AND i.job_id = $2 AND i.ledger_entry_id IS NULL AND i.failure IS NULL) AS pending,
       coalesce((SELECT json_agg(f) FROM (
         SELECT participant_id, amount, failure AS reason FROM points_bulk_grant_items i
         WHERE i.tenant_id = $1 AND i.job_id = $2 AND i.failure IS NOT NULL ORDER BY participant_id LIMIT $3) f), '[]'::json) AS failures
     FROM points_bulk_grants WHERE tenant_id = $1 AND id = $2`,
    [tenantId, id, failuresListed],
  );
  return rows[0] ?? null;
}

export async function markBulkJob(tx: Tx, tenantId: string, id: string, status: BulkJobRow['status'], now: Date, error: string | null = null): Promise<void> {
  await tx.query(
    `UPDATE points_bulk_grants SET status = $3,
       started_at = CASE WHEN $3 = 'running' THEN coalesce(started_at, $4) ELSE started_at END,
       finished_at = CASE WHEN $3 IN ('completed', 'failed') THEN $4 ELSE finished_at END,
       error = $5
     WHERE tenant_id = $1 AND id = $2`,
    [tenantId, id, status, now, error],
  );
}

export interface BulkBatch {
  participantIds: string[];
  amounts: number[];
  /** Lifetime points of the batch's participants whose lifetime is above `nearLimit` (candidates for the balance limit). */
  lifetimesNearLimit: Record<string, number>;
}

/**
 * Locks the next batch of a bulk job's pending items (SKIP LOCKED: parallel
 * batches take disjoint items), in participant order, and reads the lifetime
 * of those few participants who are close to the balance limit.
 */
export async function takeBulkBatch(tx: Tx, tenantId: string, jobId: string, limit: number, nearLimit: number): Promise<BulkBatch> {
  const { rows } = await tx.query(
    `WITH items AS MATERIALIZED (
       SELECT participant_id, amount FROM points_bulk_grant_items
       WHERE tenant_id = $1 AND job_id = $2 AND ledger_entry_id IS NULL AND failure IS NULL
       ORDER BY participant_id LIMIT $3
       FOR UPDATE SKIP LOCKED
     )
     SELECT coalesce((SELECT array_agg(participant_id ORDER BY participant_id) FROM items), '{}') AS participant_ids,
            coalesce((SELECT array_agg(amount ORDER BY participant_id) FROM items), '{}') AS amounts,
            coalesce((SELECT json_object_agg(b.participant_id, b.lifetime) FROM points_balances b
                      WHERE b.tenant_id = $1 AND b.participant_id = ANY (ARRAY(SELECT participant_id FROM items)) AND b.lifetime > $4), '{}') AS near`,
    [tenantId, jobId, limit, nearLimit],
  );
  return { participantIds: rows[0].participant_ids, amounts: rows[0].amounts.map(Number), lifetimesNearLimit: rows[0].near };
}

/** Marks a batch's items granted (with their ledger entries) or failed. */
export async function markBulkItems(
  tx: Tx,
  tenantId: string,
  jobId: string,
  granted: { participantIds: string[]; entryIds: string[] },
  failed: { participantIds: string[]; reason: string },
): Promise<void> {
  await tx.query(
    `WITH granted AS (
       UPDATE points_bulk_grant_items it SET ledger_entry_id = g.entry_id
       FROM unnest($3::text[], $4::text[]) AS g (participant_id, entry_id)
       WHERE it.tenant_id = $1 AND it.job_id = $2 AND it.participant_id = g.participant_id
     )
     UPDATE points_bulk_grant_items it SET failure = $6
     WHERE it.tenant_id = $1 AND it.job_id = $2 AND it.participant_id = ANY ($5::text[])`,
    [tenantId, jobId, granted.participantIds, granted.entryIds, failed.participantIds, failed.reason],
  );
}

/** Adds a batch's outcome to the job's counters: its own statement at the end of the batch, so parallel batches wait on the job row only briefly. */
export async function countBulkProgress(tx: Tx, tenantId: string, jobId: string, done: number, failed: number): Promise<void> {
  await tx.query('UPDATE points_bulk_grants SET done = done + $3, failed = failed + $4 WHERE tenant_id = $1 AND id = $2', [tenantId, jobId, done, failed]);
}
