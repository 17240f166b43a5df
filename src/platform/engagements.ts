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

/**
 * Whether a participant may have a session for an engagement (an engagement for a segment refuses
 * non-members with 403 NOT_IN_SEGMENT): asked by `POST /sessions` after the participant exists, in
 * the session's transaction, of the module that owns engagements (`ServiceModule.sessionCheck`).
 * It throws the refusal; until a module answers, every session is allowed.
 */
export type SessionCheck = (tx: Tx, tenantId: string, engagementId: string, participantId: string) => Promise<void>;

let sessionCheck: SessionCheck | null = null;

export function registerSessionCheck(check: SessionCheck): void {
  sessionCheck = check;
}

export async function checkSessionAllowed(tx: Tx, tenantId: string, engagementId: string, participantId: string): Promise<void> {
  if (sessionCheck) await sessionCheck(tx, tenantId, engagementId, participantId);
}
