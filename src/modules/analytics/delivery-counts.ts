/**
 * Counts deliveries that reached SUCCEEDED or EXHAUSTED into buckets of 15
 * minutes (UTC) of `analytics_webhook_delivery_counts` (migration 1010 says
 * why buckets of that size), in the statement that records their outcome: the
 * webhooks module's statement that finishes attempts runs this one as a step
 * of its WITH clause, so the count commits or rolls back with the outcome and
 * costs no round trip of its own. CANCELLED deliveries and the test ping are
 * not traffic to a receiver and are not counted. Until migration 1370 a
 * trigger on webhook_deliveries did this where no module showed it.
 *
 * A bucket's count is spread over 16 rows, one per database connection's
 * shard (migration 1455), so concurrent outcome transactions of one tenant do
 * not wait for each other's commit on one row; the reads sum the shards.
 *
 * `finished` names a relation of the enclosing statement (a CTE) with the
 * columns tenant_id, status, event and completed_at: the deliveries the
 * statement has just finished. Returns the data-modifying statement, to be
 * placed in that statement's WITH clause (`counted AS (…)`).
 */
export function countFinishedDeliveriesSql(finished: string): string {
  return `INSERT INTO analytics_webhook_delivery_counts AS c (tenant_id, bucket_start, shard, succeeded, failed)
     SELECT f.tenant_id, date_bin('15 minutes', f.completed_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS bucket, pg_backend_pid() % 16,
            count(*) FILTER (WHERE f.status = 'SUCCEEDED'), count(*) FILTER (WHERE f.status = 'EXHAUSTED')
     FROM ${finished} f
     WHERE f.status IN ('SUCCEEDED', 'EXHAUSTED') AND f.event <> 'ping'
     GROUP BY f.tenant_id, bucket
     ON CONFLICT (tenant_id, bucket_start, shard) DO UPDATE
       SET succeeded = c.succeeded + EXCLUDED.succeeded, failed = c.failed + EXCLUDED.failed`;
}
