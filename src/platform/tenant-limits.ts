import type { Tx } from './db.js';
import { effectiveLimits, type EffectiveLimits, type LimitOverrides, type Plan } from './plans.js';

/**
 * A tenant's limits as they are in force: its plan's figures with the
 * operator's overrides on top (`tenants` columns, migration 1170). The quota
 * checks that run inside a transaction (API keys, published engagements) read
 * them here, in the transaction, so a change applies to the next check in
 * every process. The request-rate figure reaches the rate limiter through the
 * credential look-ups instead (platform/auth.ts), which a change empties.
 */
export const LIMIT_COLUMNS =
  'plan, rate_limit_per_minute, event_ingestion_per_day, api_keys_max, concurrent_engagements_max, participants_per_month, headless_sdk';

export interface LimitRow {
  plan: Plan;
  rate_limit_per_minute: number | null;
  event_ingestion_per_day: number | null;
  api_keys_max: number | null;
  concurrent_engagements_max: number | null;
  participants_per_month: number | null;
  headless_sdk: boolean | null;
}

export function overridesOf(row: LimitRow): LimitOverrides {
  return {
    requestsPerMinute: row.rate_limit_per_minute,
    eventIngestionPerDay: row.event_ingestion_per_day,
    apiKeys: row.api_keys_max,
    concurrentEngagements: row.concurrent_engagements_max,
    participantsPerMonth: row.participants_per_month,
    headlessSdk: row.headless_sdk,
  };
}

/** The tenant's plan and limits in force, or null when there is no such tenant. */
export async function readTenantLimits(tx: Tx, tenantId: string): Promise<{ plan: Plan; limits: EffectiveLimits } | null> {
  const { rows } = await tx.query<LimitRow>(`SELECT ${LIMIT_COLUMNS} FROM tenants WHERE id = $1`, [tenantId]);
  const row = rows[0];
  return row ? { plan: row.plan, limits: effectiveLimits(row.plan, overridesOf(row)) } : null;
}
