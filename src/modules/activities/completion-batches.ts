import type { Database } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { currentTraceparent } from '../../platform/tracing.js';
import type { CompleteBody } from './schemas.js';
import { sessionOf } from './attempts.js';
import { completeMany, type CompletionCall, type CompletionResponse } from './completion.js';

/**
 * A crowd's completions go together. A completion's own work in the database
 * is a few rows; what costs is each round trip and each transaction around
 * them (about 0.37 ms of machine CPU per round trip on two cores,
 * docs/performance/activities.md). So while `inFlightMax` completions
 * (COMPLETIONS_IN_FLIGHT, 2 by default) are in the database, new ones of a
 * process wait, and those of one activity then go as one batch
 * (`completeMany`): three or four round trips and one commit for up to
 * BATCH_MAX of them. A lone request does not wait: it is a batch of one, as before. A
 * completion that names its attempt (`attempt_id`) never waits and always
 * goes alone.
 */

/** Completions of one batch at most. */
export const BATCH_MAX = 50;

interface Waiting {
  call: CompletionCall;
  resolve(response: CompletionResponse): void;
  reject(error: unknown): void;
}

class CompletionBatches {
  private inFlight = 0;
  /** The waiting calls by activity, the longest waiting first. */
  private readonly waiting = new Map<string, Waiting[]>();

  constructor(
    private readonly db: Database,
    private readonly inFlightMax: number,
  ) {}

  submit(call: CompletionCall): Promise<CompletionResponse> {
    return new Promise((resolve, reject) => {
      const entry = { call, resolve, reject };
      if (call.body.attempt_id !== undefined) return this.run([entry], false);
      if (this.inFlight < this.inFlightMax && this.waiting.size === 0) return this.run([entry], true);
      const { tenantId, engagementId } = call.session;
      const key = JSON.stringify([tenantId, engagementId, call.activityId]);
      const list = this.waiting.get(key);
      if (list) list.push(entry);
      else this.waiting.set(key, [entry]);
      this.next();
    });
  }

  private next(): void {
    while (this.inFlight < this.inFlightMax && this.waiting.size > 0) {
      const [key, list] = this.waiting.entries().next().value!;
      const batch = list.splice(0, BATCH_MAX);
      // An activity with calls left goes to the back, so that one crowd does not hold up another tenant's.
      this.waiting.delete(key);
      if (list.length > 0) this.waiting.set(key, list);
      this.run(batch, true);
    }
  }

  private run(batch: Waiting[], counted: boolean): void {
    if (counted) this.inFlight++;
    completeMany(this.db, batch.map((entry) => entry.call))
      .then(
        (outcomes) => outcomes.forEach((outcome, i) => ('error' in outcome ? batch[i].reject(outcome.error) : batch[i].resolve(outcome.response))),
        (error: unknown) => batch.forEach((entry) => entry.reject(error)),
      )
      .finally(() => {
        if (!counted) return;
        this.inFlight--;
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
