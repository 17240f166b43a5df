import type { Database } from '../../platform/db.js';
import type { Logger } from '../../platform/logger.js';
import { wakePump } from '../../platform/pump.js';
import type { NewEvent } from './store.js';
import { storeEvents, type StoreResult } from './service.js';
import { LANES_PUMP } from './lanes.js';

/**
 * Group commit for the asynchronous ingestion routes. Requests of a tenant
 * that arrive while that tenant's write is in flight are gathered and written
 * together — one transaction and one statement — and each request is
 * answered once its events are committed. Under load this turns hundreds of
 * small transactions into a few large ones; when idle, a request is written
 * at once, alone. If a combined write fails, each request is retried on its
 * own, so that one request's failure never fails another's.
 *
 * One write per tenant is in flight at a time: every write of a tenant
 * updates its daily quota row, so two would only wait for each other's
 * commit on that row lock (measured: 10.5 ms of lock wait per write at 1,000
 * events/s with four in flight, 0.09 ms with one). Different tenants' writes
 * run side by side, up to WRITES_IN_FLIGHT_MAX.
 */
interface Pending {
  events: NewEvent[];
  resolve: (results: StoreResult[]) => void;
  reject: (error: unknown) => void;
}

/** Writes in flight at once across tenants; each holds one pooled connection. */
const WRITES_IN_FLIGHT_MAX = 4;
/** Events per combined write. */
const EVENTS_PER_WRITE_MAX = 2_000;

export class EventWriter {
  /** Requests waiting, per tenant, in arrival order; a tenant's turn comes in the order tenants first waited. */
  private readonly waiting = new Map<string, Pending[]>();
  private readonly writing = new Set<string>();
  private idle: Array<() => void> = [];

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
  ) {}

  submit(tenantId: string, events: NewEvent[]): Promise<StoreResult[]> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(tenantId);
      if (queue) queue.push({ events, resolve, reject });
      else this.waiting.set(tenantId, [{ events, resolve, reject }]);
      this.pump();
    });
  }

  /** Resolves once every submitted request is answered. */
  async drain(): Promise<void> {
    if (this.writing.size === 0 && this.waiting.size === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    for (const [tenantId, queue] of this.waiting) {
      if (this.writing.size >= WRITES_IN_FLIGHT_MAX) return;
      if (this.writing.has(tenantId)) continue;
      const batch: Pending[] = [];
      let events = 0;
      while (queue.length > 0 && (batch.length === 0 || events + queue[0].events.length <= EVENTS_PER_WRITE_MAX)) {
        const next = queue.shift()!;
        events += next.events.length;
        batch.push(next);
      }
      // Re-inserted at the back when requests remain, so that other tenants come first next time.
      this.waiting.delete(tenantId);
      if (queue.length > 0) this.waiting.set(tenantId, queue);
      this.writing.add(tenantId);
      void this.write(tenantId, batch).finally(() => {
        this.writing.delete(tenantId);
        this.pump();
        if (this.writing.size === 0 && this.waiting.size === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
    }
  }

  private async write(tenantId: string, requests: Pending[]): Promise<void> {
    if (requests.length > 1) {
      try {
        const results = await storeEvents(this.db, tenantId, requests.flatMap((r) => r.events));
        this.committed(results);
        let offset = 0;
        for (const request of requests) {
          request.resolve(results.slice(offset, offset + request.events.length));
          offset += request.events.length;
        }
        return;
      } catch (error) {
        this.log.warn({ err: error, tenantId, requests: requests.length }, 'combined event write failed; writing each request alone');
      }
    }
    for (const request of requests) {
      try {
        const results = await storeEvents(this.db, tenantId, request.events);
        this.committed(results);
        request.resolve(results);
      } catch (error) {
        request.reject(error);
      }
    }
  }

  /** After the commit: accepted events wake the processing lanes at once instead of at their next look. */
  private committed(results: StoreResult[]): void {
    if (results.some((result) => result.status === 'accepted')) wakePump(LANES_PUMP);
  }
}
