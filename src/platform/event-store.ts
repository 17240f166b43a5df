import type { Tx } from './db.js';

/**
 * Stored events read by modules that do not own the event store (the earn
 * rules' simulation replays them). The module that stores events answers
 * through `ServiceModule.eventScan`, so that the reader does not import it:
 * ingestion applies earn rules, and an import back would make a circle.
 */
export interface StoredEventForScan {
  event_id: string;
  seq: number;
  event_name: string;
  participant_id: string;
  properties: Record<string, unknown>;
  occurred_at: Date;
}

export interface EventScanFilter {
  eventName: string;
  from: Date;
  to: Date;
  participantId: string | null;
  /** The last event of the previous page (timestamp order, then seq). */
  after: { occurredAt: Date; seq: number } | null;
  limit: number;
}

/** Events of one name in `[from, to)`, oldest first. */
export type EventScan = (tx: Tx, tenantId: string, filter: EventScanFilter) => Promise<StoredEventForScan[]>;

let registered: { module: string; scan: EventScan } | null = null;

export function registerEventScan(module: string, scan: EventScan): void {
  if (registered && registered.module !== module) throw new Error(`two modules answer for stored events: ${registered.module} and ${module}`);
  registered = { module, scan };
}

export function scanStoredEvents(tx: Tx, tenantId: string, filter: EventScanFilter): Promise<StoredEventForScan[]> {
  if (!registered) throw new Error('no module stores events (the ingestion module is not loaded)');
  return registered.scan(tx, tenantId, filter);
}
