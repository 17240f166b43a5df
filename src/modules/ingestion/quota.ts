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
  const { rows } = await tx.query<UsageRow>(
    `WITH counted AS (${usageUpsertSql('$1::uuid', '$2::date', '$3::int', '')})
     SELECT c.events, t.plan, t.event_ingestion_per_day FROM counted c LEFT JOIN tenants t ON t.id = $1`,
    [tenantId, utcDay(now), accepted],
  );
  checkQuota(rows[0], accepted, now);
}

export interface UsageRow {
  events: number;
  plan: Plan;
  event_ingestion_per_day: number | null;
}

export const utcDay = (now: Date): string => now.toISOString().slice(0, 10);

/**
 * The day's counter upsert, adding `count` (an SQL expression over `from`, a FROM clause or empty) and returning the
 * day's total as `events`; also a data-modifying CTE of the accept statement (store.ts).
 */
export function usageUpsertSql(tenant: string, day: string, count: string, from: string): string {
  return `INSERT INTO ingestion_usage (tenant_id, day, events) SELECT ${tenant}, ${day}, ${count} ${from}
       ON CONFLICT (tenant_id, day) DO UPDATE SET events = ingestion_usage.events + EXCLUDED.events
       RETURNING events`;
}

/** Refuses (throws, so the storing transaction rolls back) when the day's total with these `accepted` events crosses the quota. */
export function checkQuota(row: UsageRow, accepted: number, now: Date): void {
  const { plan, event_ingestion_per_day: override } = row;
  // A bigint: node-postgres reads it as text.
  const events = Number(row.events);
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
