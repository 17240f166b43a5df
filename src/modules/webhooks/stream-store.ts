import type { Database, Tx } from '../../platform/db.js';

/**
 * The reads of the live event streams: a participant's or the tenant's events
 * by id, after a position, or after an event.
 */

/**
 * The outbox events of `ids` (a text[] parameter) of a tenant, as a FROM item
 * `e`: one key look-up per id, whatever the statistics say. With
 * `id = ANY (ids)`, a plan made while the tenant had few events scans all of
 * them: at 1,000 spins/s the fan-out's time grew with the outbox (13,500
 * events: 3–6 ms for 200 ids, against 0.7 ms this way). A LATERAL with LIMIT,
 * which the planner does not flatten into a join.
 */
export function outboxEventsByIds(tenant: string, ids: string): string {
  return `unnest(${ids}::text[]) AS asked (id) CROSS JOIN LATERAL (SELECT * FROM outbox_events o WHERE o.tenant_id = ${tenant} AND o.id = asked.id LIMIT 1) e`;
}

export interface StreamEventRow {
  id: string;
  seq: number;
  event: string;
  participant_id: string | null;
  engagement_id: string | null;
  data: Record<string, unknown>;
  created_at: Date;
}

/** Events of one participant by id (for a live notification), in outbox order. */
export async function participantEventsByIds(tx: Tx, tenantId: string, participantId: string, engagementId: string, ids: string[]): Promise<StreamEventRow[]> {
  const { rows } = await tx.query<StreamEventRow>(
    `SELECT id, seq, event, participant_id, engagement_id, data, created_at FROM outbox_events
     WHERE tenant_id = $1 AND participant_id = $2 AND id = ANY ($4::text[]) AND (engagement_id IS NULL OR engagement_id = $3)
     ORDER BY seq`,
    [tenantId, participantId, engagementId, ids],
  );
  return rows;
}

/**
 * The outbox position of the participant's latest event (0 when none): where a fresh stream's catch-up starts.
 * One read-only round trip (`db.tenantRead`).
 */
export async function participantLatestSeq(db: Database, tenantId: string, participantId: string): Promise<number> {
  const rows = await db.tenantRead<{ seq: number | null }>(tenantId, 'SELECT max(seq) AS seq FROM outbox_events WHERE tenant_id = $1 AND participant_id = $2', [
    tenantId,
    participantId,
  ]);
  return Number(rows[0]?.seq ?? 0);
}

/**
 * The events of one participant after an outbox position (the heartbeat's catch-up of a missed notification),
 * in one read-only round trip: every open stream runs it at each heartbeat.
 */
export async function participantEventsAfterSeq(db: Database, tenantId: string, participantId: string, engagementId: string, afterSeq: number, limit: number): Promise<StreamEventRow[]> {
  return db.tenantRead<StreamEventRow>(
    tenantId,
    `SELECT id, seq, event, participant_id, engagement_id, data, created_at FROM outbox_events
     WHERE tenant_id = $1 AND participant_id = $2 AND seq > $4 AND (engagement_id IS NULL OR engagement_id = $3)
     ORDER BY seq
     LIMIT $5`,
    [tenantId, participantId, engagementId, afterSeq, limit],
  );
}

/**
 * The events of one participant after the one with id `afterId` (catch-up on resume), or null when
 * that event is not the participant's or no longer kept: its position, then the events after it.
 */
export async function participantEventsAfter(db: Database, tenantId: string, participantId: string, engagementId: string, afterId: string, limit: number): Promise<StreamEventRow[] | null> {
  const [marker] = await db.tenantRead<{ seq: number }>(tenantId, 'SELECT seq FROM outbox_events WHERE tenant_id = $1 AND participant_id = $2 AND id = $3', [
    tenantId,
    participantId,
    afterId,
  ]);
  return marker ? participantEventsAfterSeq(db, tenantId, participantId, engagementId, Number(marker.seq), limit) : null;
}

/**
 * The tenant-level stream's reads (a sandbox tenant's forwarder): by id for a
 * notification, and after an outbox position. There is no (tenant_id, seq)
 * index on the outbox, so the heartbeat's catch-up also bounds the time
 * (TENANT_CATCH_UP_WINDOW): PostgreSQL then reads either the tenant's rows
 * or the last minutes' rows, whichever is fewer.
 */
const TENANT_CATCH_UP_WINDOW = '10 minutes';

export async function tenantEventsByIds(tx: Tx, tenantId: string, ids: string[]): Promise<StreamEventRow[]> {
  const { rows } = await tx.query<StreamEventRow>(
    `SELECT e.id, e.seq, e.event, e.participant_id, e.engagement_id, e.data, e.created_at FROM ${outboxEventsByIds('$1', '$2')} ORDER BY e.seq`,
    [tenantId, ids],
  );
  return rows;
}

/** The position of the tenant's latest recent event (0 when none): where a fresh tenant stream's catch-up starts. */
export async function tenantLatestSeq(db: Database, tenantId: string): Promise<number> {
  const rows = await db.tenantRead<{ seq: number | null }>(
    tenantId,
    `SELECT max(seq) AS seq FROM outbox_events WHERE tenant_id = $1 AND created_at > now() - interval '${TENANT_CATCH_UP_WINDOW}'`,
    [tenantId],
  );
  return Number(rows[0]?.seq ?? 0);
}

/** The tenant's recent events after a position (the heartbeat's catch-up of a missed notification). */
export async function tenantEventsAfterSeq(db: Database, tenantId: string, afterSeq: number, limit: number): Promise<StreamEventRow[]> {
  return db.tenantRead<StreamEventRow>(
    tenantId,
    `SELECT id, seq, event, participant_id, engagement_id, data, created_at FROM outbox_events
     WHERE tenant_id = $1 AND seq > $2 AND created_at > now() - interval '${TENANT_CATCH_UP_WINDOW}'
     ORDER BY seq LIMIT $3`,
    [tenantId, afterSeq, limit],
  );
}

/** The tenant's events after the one with id `afterId` (resume), or null when that event is not kept. */
export async function tenantEventsAfter(db: Database, tenantId: string, afterId: string, limit: number): Promise<StreamEventRow[] | null> {
  const [marker] = await db.tenantRead<{ seq: number }>(tenantId, 'SELECT seq FROM outbox_events WHERE tenant_id = $1 AND id = $2', [tenantId, afterId]);
  if (!marker) return null;
  return db.tenantRead<StreamEventRow>(
    tenantId,
    `SELECT id, seq, event, participant_id, engagement_id, data, created_at FROM outbox_events
     WHERE tenant_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    [tenantId, Number(marker.seq), limit],
  );
}
