/**
 * The spec's plan table (Limits, Plan quotas). `null` is unlimited. A tenant's
 * own figures (the enterprise "custom" ones, or any the operator sets) override
 * these: see `effectiveLimits`.
 */
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

/**
 * The tenant's own figures, set by the operator (`PATCH /api/v1/operator/tenants/{id}/limits`);
 * null is the plan's figure. "Unlimited" is not an override: it is the enterprise plan's default.
 */
export interface LimitOverrides {
  requestsPerMinute: number | null;
  eventIngestionPerDay: number | null;
  apiKeys: number | null;
  concurrentEngagements: number | null;
  participantsPerMonth: number | null;
  headlessSdk: boolean | null;
}

/** The bounds of an override: wide enough for any real tenant, narrow enough that a typing slip is refused. */
export const OVERRIDE_BOUNDS = {
  requestsPerMinute: { minimum: 1, maximum: 1_000_000 },
  eventIngestionPerDay: { minimum: 1, maximum: 1_000_000_000 },
  apiKeys: { minimum: 1, maximum: 100_000 },
  concurrentEngagements: { minimum: 1, maximum: 100_000 },
  participantsPerMonth: { minimum: 1, maximum: 1_000_000_000 },
} as const;

export interface EffectiveLimit<T> {
  /** What is in force: the override when there is one, else the plan's figure. */
  value: T;
  source: 'plan' | 'override';
  planDefault: T;
  override: T | null;
}

export type EffectiveLimits = {
  [K in keyof LimitOverrides]: EffectiveLimit<K extends 'headlessSdk' ? boolean : K extends 'requestsPerMinute' ? number : number | null>;
};

function effective<T>(planDefault: T, override: T | null): EffectiveLimit<T> {
  return override === null ? { value: planDefault, source: 'plan', planDefault, override } : { value: override, source: 'override', planDefault, override };
}

/** Every limit of a tenant, with where its figure comes from. */
export function effectiveLimits(plan: Plan, overrides: LimitOverrides): EffectiveLimits {
  const quotas = PLAN_QUOTAS[plan];
  return {
    requestsPerMinute: effective<number>(quotas.apiRequestsPerMinute, overrides.requestsPerMinute),
    eventIngestionPerDay: effective<number | null>(quotas.eventIngestionPerDay, overrides.eventIngestionPerDay),
    apiKeys: effective<number | null>(quotas.apiKeys, overrides.apiKeys),
    concurrentEngagements: effective<number | null>(quotas.concurrentEngagements, overrides.concurrentEngagements),
    participantsPerMonth: effective<number | null>(quotas.participantsPerMonth, overrides.participantsPerMonth),
    headlessSdk: effective<boolean>(quotas.headlessSdk, overrides.headlessSdk),
  };
}

const MS_PER_DAY = 86_400_000;

/** Daily quotas count UTC days: they reset at the next UTC midnight after `now`. */
export function nextUtcMidnight(now: Date): Date {
  return new Date(Math.floor(now.getTime() / MS_PER_DAY + 1) * MS_PER_DAY);
}
