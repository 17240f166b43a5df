import type { Tx } from './db.js';

/**
 * Whether an engagement exists, asked by modules that take an `engagement_id`
 * before the engagements module may exist (participant sessions). The module
 * that owns engagements answers through `ServiceModule.engagementExists`;
 * until one does, every engagement id is taken on trust.
 */
export type EngagementCheck = (tx: Tx, tenantId: string, engagementId: string) => Promise<boolean>;

let registered: { module: string; check: EngagementCheck } | null = null;

export function registerEngagementCheck(module: string, check: EngagementCheck): void {
  if (registered && registered.module !== module) {
    throw new Error(`two modules answer for engagements: ${registered.module} and ${module}`);
  }
  registered = { module, check };
}

/** True or false when a module owns engagements; null when none does yet. */
export async function engagementExists(tx: Tx, tenantId: string, engagementId: string): Promise<boolean | null> {
  return registered ? registered.check(tx, tenantId, engagementId) : null;
}
