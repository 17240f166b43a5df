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

/**
 * The lanes of accepted events waiting to be processed (`ingestion_pending`)
 * and each lane's oldest event, as a skip scan of the key (tenant_id, lane,
 * seq): one index probe per lane, where a GROUP BY read every waiting row on
 * every look of every lane loop. Read by the ingestion module's lane loops and
 * by the processing-lag gauge.
 */
export const WAITING_LANES_SQL = `WITH RECURSIVE lanes AS (
    (SELECT tenant_id, lane FROM ingestion_pending ORDER BY tenant_id, lane LIMIT 1)
    UNION ALL
    SELECT n.tenant_id, n.lane FROM lanes l
    CROSS JOIN LATERAL (SELECT p.tenant_id, p.lane FROM ingestion_pending p WHERE (p.tenant_id, p.lane) > (l.tenant_id, l.lane)
                        ORDER BY p.tenant_id, p.lane LIMIT 1) n
  )
  SELECT l.tenant_id, l.lane, o.seq AS oldest_seq, o.event_id AS oldest_event_id
  FROM lanes l
  CROSS JOIN LATERAL (SELECT p.seq, p.event_id FROM ingestion_pending p WHERE p.tenant_id = l.tenant_id AND p.lane = l.lane ORDER BY p.seq LIMIT 1) o`;
