import { SpanKind } from '@opentelemetry/api';
import type { Database } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { linkActiveTraces, recordRootSpan } from '../../platform/tracing.js';
import { DISPATCH_TASK, OUTBOX_PUMP, OUTBOX_PUMP_BATCH, pumpOutbox, takeCursorOf } from '../../platform/outbox.js';
import type { Pump } from '../../platform/pump.js';
import * as store from './store.js';

/**
 * The dispatcher: committed outbox events to deliveries and live-stream
 * notifications (store's `fanOutText`).
 *
 * The outbox's pump (run by every worker process, platform/pump.ts) takes the
 * pending events of every tenant and fans them out in one statement, so a
 * crowd's events reach their receivers without a queue job between: a job per
 * take cost its insert into the queue (graphile-worker's `add_jobs`, 1.1 ms),
 * its fetch and its completion, and a transaction of its own for the fan-out
 * (issue 37). When that statement fails it took nothing, and the platform's
 * pump hands the same events to `outbox.dispatch` jobs of their tenants
 * (`pumpOutbox`), which the queue retries each on its own: a tenant whose
 * fan-out keeps failing holds up no other tenant's events.
 */

/** An `outbox.dispatch` job's fan-out of one tenant's events; its span links to the traces that emitted them. */
export async function dispatch(context: { db: Database }, tenantId: string, eventIds: string[]): Promise<{ events: number; deliveries: number; jobs: number }> {
  const { traceparents, ...counts } = await context.db.tenant(tenantId, (tx) => store.fanOut(tx, tenantId, eventIds, clock.now()));
  linkActiveTraces(traceparents);
  return counts;
}

export const dispatchPump: Pump = {
  name: OUTBOX_PUMP,
  async move(pool, _db, log) {
    const startTime = new Date();
    let done: store.FannedOut;
    try {
      done = await store.takeAndFanOut(pool, OUTBOX_PUMP_BATCH, clock.now(), takeCursorOf(pool));
    } catch (error) {
      log.warn({ err: error }, 'the outbox fan-out failed and took nothing; its events go to dispatch jobs of their tenants');
      return pumpOutbox(pool);
    }
    if (done.events > 0) {
      // A trace of its own, as an `outbox.dispatch` job's was, linked to the traces that emitted the events.
      const attributes = { 'messaging.operation.name': 'process', 'messaging.destination.name': DISPATCH_TASK, 'messaging.batch.message_count': done.events };
      recordRootSpan(`process ${DISPATCH_TASK}`, { kind: SpanKind.CONSUMER, attributes, startTime, traceparents: done.traceparents });
    }
    return done.events;
  },
};
