import type { Tx } from '../../platform/db.js';

/**
 * Counts deliveries that reached SUCCEEDED or EXHAUSTED, in the transaction
 * that records the outcome (the webhooks module calls it beside the outcome
 * it writes), into buckets of 15 minutes (UTC) of `analytics_webhook_delivery_counts`
 * (migration 1010 says why buckets of that size). CANCELLED deliveries and the
 * test ping are not traffic to a receiver and are not counted. Until migration
 * 1370 a trigger on webhook_deliveries did this where no module showed it.
 */
export async function countFinishedDeliveries(tx: Tx, tenantId: string, finished: ReadonlyArray<{ status: string; event: string; completedAt: Date }>): Promise<void> {
  const counted = finished.filter((f) => (f.status === 'SUCCEEDED' || f.status === 'EXHAUSTED') && f.event !== 'ping');
  if (counted.length === 0) return;
  await tx.query(
    `INSERT INTO analytics_webhook_delivery_counts AS c (tenant_id, bucket_start, succeeded, failed)
     SELECT $1, date_bin('15 minutes', f.completed_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket,
            count(*) FILTER (WHERE f.status = 'SUCCEEDED'), count(*) FILTER (WHERE f.status = 'EXHAUSTED')
     FROM unnest($2::text[], $3::timestamptz[]) AS f (status, completed_at)
     GROUP BY bucket
     ON CONFLICT (tenant_id, bucket_start) DO UPDATE
       SET succeeded = c.succeeded + EXCLUDED.succeeded, failed = c.failed + EXCLUDED.failed`,
    [tenantId, counted.map((f) => f.status), counted.map((f) => f.completedAt)],
  );
}
