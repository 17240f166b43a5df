import type { Database } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { currentTraceparent } from '../../platform/tracing.js';
import type { CompleteBody } from './schemas.js';
import { sessionOf } from './attempts.js';
import { completeMany, type CompletionCall, type CompletionResponse } from './completion.js';

/**
 * A crowd's completions go together. A completion's own work in the database
 * is a few rows; what costs is each round trip, each statement and each
 * transaction around them (about 0.37 ms of machine CPU per round trip on two
 * cores, docs/performance/activities.md). So an activity has one batch in the
 * database at a time: its completions that arrive meanwhile wait, and go as
 * the next batch (`completeMany`): three or four round trips and one commit
 * for up to BATCH_MAX of them, so the batch grows with the crowd. Other
 * activities are not held behind it: a process has up to `inFlightMax`
 * batches in the database (COMPLETIONS_IN_FLIGHT, 2 by default), of as many
 * activities, and the waiting activities take turns. A lone request (its
 * activity without a batch in the database, a place free) does not wait: it
 * is a batch of one, as before. A completion that names its attempt
 * (`attempt_id`) never waits and always goes alone.
 */

/** Completions of one batch at most. */
export const BATCH_MAX = 50;

interface Waiting {
  call: CompletionCall;
  resolve(response: CompletionResponse): void;
  reject(error: unknown): void;
}

type RunBatch = (db: Database, calls: CompletionCall[]) => ReturnType<typeof completeMany>;

export class CompletionBatches {
  /** The activities with a batch in the database: one batch each, so also the count of batches the limit applies to. */
  private readonly busy = new Set<string>();
  /** The waiting calls by activity, the longest waiting first. */
  private readonly waiting = new Map<string, Waiting[]>();

  constructor(
    private readonly db: Database,
    private readonly inFlightMax: number,
    private readonly runBatch: RunBatch = completeMany,
  ) {}

  submit(call: CompletionCall): Promise<CompletionResponse> {
    return new Promise((resolve, reject) => {
      const entry = { call, resolve, reject };
      if (call.body.attempt_id !== undefined) return this.run(null, [entry]);
      const { tenantId, engagementId } = call.session;
      const key = JSON.stringify([tenantId, engagementId, call.activityId]);
      const list = this.waiting.get(key);
      if (list) list.push(entry);
      else this.waiting.set(key, [entry]);
      this.next();
    });
  }

  private next(): void {
    for (const [key, list] of this.waiting) {
      if (this.busy.size >= this.inFlightMax) return;
      if (this.busy.has(key)) continue;
      const batch = list.splice(0, BATCH_MAX);
      // An activity with calls left goes to the back, so that one crowd does not hold up another tenant's.
      this.waiting.delete(key);
      if (list.length > 0) this.waiting.set(key, list);
      this.run(key, batch);
    }
  }

  /** Runs a batch; `key` is its activity's, or null for a completion that goes alone outside the count. */
  private run(key: string | null, batch: Waiting[]): void {
    if (key !== null) this.busy.add(key);
    this.runBatch(this.db, batch.map((entry) => entry.call))
      .then(
        (outcomes) => outcomes.forEach((outcome, i) => ('error' in outcome ? batch[i].reject(outcome.error) : batch[i].resolve(outcome.response))),
        (error: unknown) => batch.forEach((entry) => entry.reject(error)),
      )
      .finally(() => {
        if (key === null) return;
        this.busy.delete(key);
        this.next();
      });
  }
}

const batchesOf = new WeakMap<Database, CompletionBatches>();

export async function complete(db: Database, inFlightMax: number, auth: AuthContext, activityId: string, body: CompleteBody): Promise<CompletionResponse> {
  let batches = batchesOf.get(db);
  if (!batches) batchesOf.set(db, (batches = new CompletionBatches(db, inFlightMax)));
  return batches.submit({ session: sessionOf(auth), activityId, body, traceparent: currentTraceparent() });
}
