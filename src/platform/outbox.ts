import type { Tx } from './db.js';
import { prefixedId } from './ids.js';
import { clock } from './clock.js';

/**
 * The outbox. A service that changes state calls `emit` inside the same
 * transaction; the row and the job that dispatches it commit or roll back
 * together with the change, so a committed change always yields its event
 * and a rolled-back one never does. Delivery (webhooks, the live stream)
 * happens later, from the `outbox.dispatch` job.
 */
export interface OutboxEvent {
  event: string;
  participantId?: string | null;
  engagementId?: string | null;
  data: Record<string, unknown>;
  /** Emission time; defaults to the clock's now. */
  occurredAt?: Date;
}

export const DISPATCH_TASK = 'outbox.dispatch';

/** Writes events and their dispatch job in one statement; returns the event ids (`evt_…`). */
export async function emit(tx: Tx, tenantId: string, events: OutboxEvent | OutboxEvent[]): Promise<string[]> {
  const list = Array.isArray(events) ? events : [events];
  if (list.length === 0) return [];
  const ids = list.map(() => prefixedId('evt'));
  const now = clock.now();
  await tx.query(
    `WITH inserted AS (
       INSERT INTO outbox_events (tenant_id, id, event, participant_id, engagement_id, data, created_at)
       SELECT $1::uuid, e.id, e.event, e.participant_id, e.engagement_id, e.data, e.created_at
       FROM unnest($2::text[], $3::text[], $4::text[], $5::uuid[], $6::jsonb[], $7::timestamptz[])
         AS e (id, event, participant_id, engagement_id, data, created_at)
       RETURNING id
     )
     SELECT graphile_worker.add_job($8, json_build_object('tenant_id', $1::uuid, 'event_ids', array_agg(id)), max_attempts => 25)
     FROM inserted`,
    [
      tenantId,
      ids,
      list.map((e) => e.event),
      list.map((e) => e.participantId ?? null),
      list.map((e) => e.engagementId ?? null),
      list.map((e) => JSON.stringify(e.data)),
      list.map((e) => (e.occurredAt ?? now).toISOString()),
      DISPATCH_TASK,
    ],
  );
  return ids;
}
