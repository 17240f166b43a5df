import type { Tx } from '../../platform/db.js';
import { currentTraceparent } from '../../platform/tracing.js';

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
}

const BULK_COLUMNS = 'id, status, reason, memo, type, total, done, failed, error, created_at, started_at, finished_at';

/** The job and all its items in one statement (`unnest`). */
export async function insertBulkJob(
  tx: Tx,
  tenantId: string,
  job: { id: string; reason: string; memo: string | null; type: string; now: Date },
  participantIds: string[],
  amounts: number[],
): Promise<BulkJobRow> {
  const { rows } = await tx.query<BulkJobRow>(
    `WITH job AS (
       INSERT INTO points_bulk_grants (tenant_id, id, status, reason, memo, type, total, created_at)
       VALUES ($1, $2, 'queued', $3, $4, $5, cardinality($6::text[]), $8)
       RETURNING ${BULK_COLUMNS}
     ),
     items AS (
       INSERT INTO points_bulk_grant_items (tenant_id, job_id, participant_id, amount)
       SELECT $1, $2, p, a FROM unnest($6::text[], $7::bigint[]) AS u (p, a)
     )
     SELECT *, total AS pending, '[]'::json AS failures FROM job`,
    [tenantId, job.id, job.reason, job.memo, job.type, participantIds, amounts, job.now],
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

/**
 * Grants one batch of a bulk job in one statement, without a single join (so
 * the plan does not depend on row estimates): participants on first sight,
 * balances with tiers (in participant order, the lock order), lots, ledger
 * entries, the points.awarded.v1 and tier.changed.v1 outbox rows with their
 * pending markers, and the items marked granted or failed. The ledger entry id
 * of a participant's bulk grant is derived from the job and the participant,
 * so even a batch run twice could not write a second entry (primary key).
 */
export async function grantBulkBatch(
  tx: Tx,
  tenantId: string,
  jobId: string,
  grants: { participantIds: string[]; amounts: number[] },
  failed: { participantIds: string[]; reason: string },
  now: Date,
): Promise<number> {
  const { rows } = await tx.query(
    `WITH job AS (
       SELECT reason, memo, type FROM points_bulk_grants WHERE tenant_id = $1 AND id = $2
     ),
     settings AS (
       SELECT CASE WHEN coalesce((SELECT expiry_policy FROM points_settings WHERE tenant_id = $1), 'fifo') = 'none' THEN NULL
                   ELSE $6::timestamptz + make_interval(days => coalesce((SELECT default_ttl_days FROM points_settings WHERE tenant_id = $1), 365))
              END AS expires_at
     ),
     grants AS (
       SELECT g.participant_id, g.amount, 'ple_' || substr(md5($2 || '/' || g.participant_id), 1, 24) AS entry_id
       FROM unnest($3::text[], $4::bigint[]) AS g (participant_id, amount)
     ),
     people AS (
       INSERT INTO participants (tenant_id, participant_id) SELECT $1, participant_id FROM grants ON CONFLICT DO NOTHING
     ),
     balances AS (
       INSERT INTO points_balances AS b (tenant_id, participant_id, available, lifetime, last_earned_at, tier_code, updated_at)
       SELECT $1, g.participant_id, g.amount, g.amount, $6,
              (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= g.amount ORDER BY t.min_lifetime_points DESC LIMIT 1),
              $6
       FROM grants g ORDER BY g.participant_id
       ON CONFLICT (tenant_id, participant_id) DO UPDATE
         SET available = b.available + EXCLUDED.available,
             lifetime = b.lifetime + EXCLUDED.lifetime,
             last_earned_at = EXCLUDED.last_earned_at,
             updated_at = EXCLUDED.updated_at,
             tier_code_before = b.tier_code,
             tier_code = (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= b.lifetime + EXCLUDED.lifetime
                          ORDER BY t.min_lifetime_points DESC LIMIT 1)
       RETURNING b.participant_id, b.available, b.lifetime, (SELECT g.amount FROM grants g WHERE g.participant_id = b.participant_id) AS amount,
                 b.tier_code_before AS previous_tier, b.tier_code AS tier,
                 'ple_' || substr(md5($2 || '/' || b.participant_id), 1, 24) AS entry_id
     ),
     lots AS (
       INSERT INTO points_lots (tenant_id, participant_id, amount, remaining, ledger_entry_id, created_at, expires_at)
       SELECT $1, g.participant_id, g.amount, g.amount, g.entry_id, $6, s.expires_at FROM grants g, settings s
     ),
     entries AS (
       INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, memo, source_kind, source_id,
                                  available_after, lifetime_after, created_at)
       SELECT $1, b.participant_id, b.entry_id, j.type, b.amount, j.reason, j.memo, 'bulk', $2, b.available, b.lifetime, $6
       FROM balances b, job j
     ),
     events AS (
       INSERT INTO outbox_events (tenant_id, id, event, participant_id, engagement_id, data, created_at, traceparent)
       SELECT $1, 'evt_' || replace(gen_random_uuid()::text, '-', ''), e.event, b.participant_id, NULL, e.data, $6, $8::text
       FROM balances b, job j, settings s,
            LATERAL (VALUES
              ('points.awarded.v1', jsonb_build_object(
                 'participant_id', b.participant_id, 'amount', b.amount, 'available', b.available, 'lifetime', b.lifetime,
                 'reason', j.reason, 'ledger_entry_id', b.entry_id, 'source_kind', 'bulk', 'source_id', $2::text,
                 'multiplier', NULL, 'type', j.type, 'activity_id', NULL, 'expires_at', points_iso(s.expires_at))),
              ('tier.changed.v1', jsonb_build_object(
                 'participant_id', b.participant_id, 'previous_tier', b.previous_tier, 'tier', b.tier, 'lifetime', b.lifetime))
            ) AS e (event, data)
       WHERE e.event = 'points.awarded.v1' OR (b.tier IS NOT NULL AND b.tier IS DISTINCT FROM b.previous_tier)
       RETURNING id
     ),
     pending AS (
       INSERT INTO outbox_pending (tenant_id, event_id) SELECT $1, id FROM events
     ),
     granted AS (
       UPDATE points_bulk_grant_items it SET ledger_entry_id = 'ple_' || substr(md5($2 || '/' || it.participant_id), 1, 24)
       WHERE it.tenant_id = $1 AND it.job_id = $2 AND it.participant_id = ANY ($3::text[])
     ),
     refused AS (
       UPDATE points_bulk_grant_items it SET failure = $7
       WHERE it.tenant_id = $1 AND it.job_id = $2 AND it.participant_id = ANY ($5::text[])
     )
     SELECT count(*)::int AS granted FROM balances`,
    [tenantId, jobId, grants.participantIds, grants.amounts, failed.participantIds, now, failed.reason, currentTraceparent()],
  );
  return rows[0].granted;
}

/** Adds a batch's outcome to the job's counters: its own statement at the end of the batch, so parallel batches wait on the job row only briefly. */
export async function countBulkProgress(tx: Tx, tenantId: string, jobId: string, done: number, failed: number): Promise<void> {
  await tx.query('UPDATE points_bulk_grants SET done = done + $3, failed = failed + $4 WHERE tenant_id = $1 AND id = $2', [tenantId, jobId, done, failed]);
}
