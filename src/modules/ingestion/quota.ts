import type { Tx } from '../../platform/db.js';
import { AppError } from '../../platform/errors.js';
import { nextUtcMidnight, tenantEventIngestionPerDay, type Plan } from '../../platform/plans.js';

/**
 * The plan's daily event-ingestion quota (spec, Limits, Plan quotas): events
 * accepted per tenant and UTC day. Counted in the transaction that stores the
 * events, after the insert, so that duplicates (a repeated idempotency key)
 * never count and a request that would cross the quota is refused whole and
 * stores nothing. The counter row is locked until the storing transaction
 * commits, which orders concurrent writes of one tenant exactly.
 */
export async function countAcceptedEventsInTx(tx: Tx, tenantId: string, accepted: number, now: Date): Promise<void> {
  if (accepted === 0) return;
  const day = now.toISOString().slice(0, 10);
  const { rows } = await tx.query<{ events: number; plan: Plan; event_ingestion_per_day: number | null }>(
    `WITH counted AS (
       INSERT INTO ingestion_usage (tenant_id, day, events) VALUES ($1, $2, $3)
       ON CONFLICT (tenant_id, day) DO UPDATE SET events = ingestion_usage.events + EXCLUDED.events
       RETURNING events
     )
     SELECT c.events, t.plan, t.event_ingestion_per_day FROM counted c LEFT JOIN tenants t ON t.id = $1`,
    [tenantId, day, accepted],
  );
  const { events, plan, event_ingestion_per_day: override } = rows[0];
  const quota = tenantEventIngestionPerDay(plan, override);
  if (quota === null || events <= quota) return;
  const resetsAt = nextUtcMidnight(now);
  const retryAfterSeconds = Math.max(1, Math.ceil((resetsAt.getTime() - now.getTime()) / 1000));
  throw new AppError(
    'rate_limited',
    'INGESTION_QUOTA_EXCEEDED',
    `the ${plan} plan accepts ${quota} events per day (UTC); ${events - accepted} were accepted today, so these ${accepted} would exceed it; the quota resets at ${resetsAt.toISOString()}`,
    { quota, used: events - accepted, resets_at: resetsAt.toISOString() },
    { 'Retry-After': String(retryAfterSeconds) },
  );
}
