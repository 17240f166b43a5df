import type { Database } from '../../platform/db.js';
import type { Logger } from '../../platform/logger.js';
import type { NewEvent } from './store.js';
import { storeEventsInTx, type StoreResult } from './service.js';

/**
 * Group commit for the asynchronous ingestion routes. Requests that arrive
 * while a write is in flight are gathered and written together — one
 * transaction and one statement per tenant — and each request is answered
 * once its events are committed. Under load this turns hundreds of small
 * transactions into a few large ones; when idle, a request is written at
 * once, alone. If a combined write fails, each request is retried on its
 * own, so that one request's failure never fails another's.
 */
interface Pending {
  tenantId: string;
  events: NewEvent[];
  resolve: (results: StoreResult[]) => void;
  reject: (error: unknown) => void;
}

/** Writes in flight at once; each holds one pooled connection per tenant in it. */
const WRITES_IN_FLIGHT_MAX = 4;
/** Events per combined write. */
const EVENTS_PER_WRITE_MAX = 2_000;

export class EventWriter {
  private queue: Pending[] = [];
  private inFlight = 0;
  private idle: Array<() => void> = [];

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
  ) {}

  submit(tenantId: string, events: NewEvent[]): Promise<StoreResult[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ tenantId, events, resolve, reject });
      this.pump();
    });
  }

  /** Resolves once every submitted request is answered. */
  async drain(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.inFlight < WRITES_IN_FLIGHT_MAX && this.queue.length > 0) {
      const batch: Pending[] = [];
      let events = 0;
      while (this.queue.length > 0 && (batch.length === 0 || events + this.queue[0].events.length <= EVENTS_PER_WRITE_MAX)) {
        const next = this.queue.shift()!;
        events += next.events.length;
        batch.push(next);
      }
      this.inFlight += 1;
      void this.write(batch).finally(() => {
        this.inFlight -= 1;
        this.pump();
        if (this.inFlight === 0 && this.queue.length === 0) for (const resolve of this.idle.splice(0)) resolve();
      });
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    const byTenant = new Map<string, Pending[]>();
    for (const pending of batch) byTenant.set(pending.tenantId, [...(byTenant.get(pending.tenantId) ?? []), pending]);
    await Promise.all([...byTenant.entries()].map(([tenantId, requests]) => this.writeTenant(tenantId, requests)));
  }

  private async writeTenant(tenantId: string, requests: Pending[]): Promise<void> {
    if (requests.length > 1) {
      try {
        const results = await this.db.tenant(tenantId, (tx) => storeEventsInTx(tx, tenantId, requests.flatMap((r) => r.events)));
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
        request.resolve(await this.db.tenant(tenantId, (tx) => storeEventsInTx(tx, tenantId, request.events)));
      } catch (error) {
        request.reject(error);
      }
    }
  }
}
