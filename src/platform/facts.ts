import type { Tx } from './db.js';
import { moduleHandlers } from './module-handlers.js';

/**
 * Facts are the things participants did that other modules react to: an
 * ingested event once processed, an activity completion, a custom fact
 * emitted through `/activities/facts/emit`. Whoever records a fact calls
 * `runFactHandlers` in the same transaction, so that challenge progress,
 * contest scores and similar effects commit (or roll back) with the fact
 * itself. Handlers must be idempotent per fact id: processing is
 * at-least-once, effects exactly-once.
 */
export interface Fact {
  /** Stable id of the fact (`fct_…`); the idempotency key of every effect. */
  id: string;
  /** The event name (`purchase`), or the activity fact name (`activity_completed`, `quiz_completed`). */
  name: string;
  participantId: string;
  engagementId: string | null;
  /** Free-form attributes: the event's properties or the activity's result. */
  properties: Record<string, unknown>;
  occurredAt: Date;
  source: 'event' | 'activity' | 'custom';
  /** Set for activity facts. */
  activityId?: string | null;
  /** False for custom facts emitted without `trigger_challenge_evaluation`. */
  evaluateChallenges: boolean;
}

export type FactHandler = (tx: Tx, tenantId: string, fact: Fact) => Promise<void>;

const handlers = moduleHandlers<[tx: Tx, tenantId: string, fact: Fact]>();

export const registerFactHandler = handlers.register;

/** Runs every module's handler for the fact, in module name order, inside the caller's transaction. */
export const runFactHandlers = handlers.run;
