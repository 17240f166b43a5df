/** The spec's plan table (Limits, Plan quotas). `null` is unlimited; enterprise "custom" figures are tenant settings. */
export type Plan = 'starter' | 'growth' | 'scale' | 'enterprise';
export const PLANS: readonly Plan[] = ['starter', 'growth', 'scale', 'enterprise'];

export interface PlanQuotas {
  participantsPerMonth: number | null;
  apiRequestsPerMinute: number;
  apiKeys: number | null;
  eventIngestionPerDay: number | null;
  headlessSdk: boolean;
  concurrentEngagements: number | null;
}

/** Enterprise is "custom": this is its default until a tenant's own figure is set. */
export const ENTERPRISE_DEFAULT_REQUESTS_PER_MINUTE = 20_000;

export const PLAN_QUOTAS: Record<Plan, PlanQuotas> = {
  starter: { participantsPerMonth: 5_000, apiRequestsPerMinute: 200, apiKeys: 2, eventIngestionPerDay: 10_000, headlessSdk: false, concurrentEngagements: 3 },
  growth: { participantsPerMonth: 25_000, apiRequestsPerMinute: 1_000, apiKeys: 10, eventIngestionPerDay: 100_000, headlessSdk: true, concurrentEngagements: 10 },
  scale: { participantsPerMonth: 100_000, apiRequestsPerMinute: 5_000, apiKeys: 50, eventIngestionPerDay: 1_000_000, headlessSdk: true, concurrentEngagements: 50 },
  enterprise: {
    participantsPerMonth: null,
    apiRequestsPerMinute: ENTERPRISE_DEFAULT_REQUESTS_PER_MINUTE,
    apiKeys: null,
    eventIngestionPerDay: null,
    headlessSdk: true,
    concurrentEngagements: null,
  },
};

export function tenantRequestsPerMinute(plan: Plan, override: number | null): number {
  return override ?? PLAN_QUOTAS[plan].apiRequestsPerMinute;
}

/** The tenant's daily event-ingestion quota: its own figure (enterprise "custom") or the plan's; null is unlimited. */
export function tenantEventIngestionPerDay(plan: Plan, override: number | null): number | null {
  return override ?? PLAN_QUOTAS[plan].eventIngestionPerDay;
}

const MS_PER_DAY = 86_400_000;

/** Daily quotas count UTC days: they reset at the next UTC midnight after `now`. */
export function nextUtcMidnight(now: Date): Date {
  return new Date(Math.floor(now.getTime() / MS_PER_DAY + 1) * MS_PER_DAY);
}
