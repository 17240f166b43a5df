import type pg from 'pg';
import { planEachCall, type Statement, type Tx } from '../../platform/db.js';
import { usageUpsertSql, type UsageRow } from './quota.js';
import { eventNamesUpsertSql } from './event-names.js';

import { deleteBatch, type RetentionRule } from '../../platform/retention.js';
import { WAITING_LANES_SQL } from '../../platform/event-store.js';

/** Every SQL statement on ingested_events and event_idempotency_keys. */
export interface NewEvent {
  eventId: string;
  factId: string;
  key: string;
  fingerprint: string;
  eventName: string;
  participantId: string;
  engagementId: string | null;
  propertiesJson: string;
  occurredAt: Date;
  /** The processing queue (a hash bucket of the participant), or null when the caller processes the event itself. */
  queue: string | null;
  /** The accepting request's trace context while tracing is on (the lane batch's span links to it). */
  traceparent: string | null;
}

export interface InsertOutcome {
  /** Position in the input. */
  index: number;
  fresh: boolean;
  /** For a repeat of a key: the event that first used it, and the fingerprint of that request. */
  existingEventId: string | null;
  existingFingerprint: string | null;
}

/**
 * Processing lanes per tenant: a worker applies a batch of one lane's events in one transaction, one transaction per
 * lane at a time. A participant's queue bucket (normalize.ts) modulo this count is its lane, so its events stay in one
 * lane and in order.
 */
export const PROCESSING_LANES = 4;

export const PROCESS_TASK = 'ingestion.process';
// Any seed the service's other advisory locks do not use.
const LANE_LOCK_SEED = 7_130_503;
export const IDEMPOTENCY_WINDOW = '24 hours';

/**
 * Stores events in one statement: claims their idempotency keys (a key older
 * than 24 hours is free again), creates new participants, inserts the fresh
 * events and queues their processing — one job per queue with the event ids
 * in timestamp order. Keys must be unique within `events`.
 */
export async function insertEvents(tx: Tx, tenantId: string, events: NewEvent[], receivedAt: Date): Promise<InsertOutcome[]> {
  const { text, values } = insertEventsStatement(tenantId, events, receivedAt, null);
  return insertOutcomes((await tx.query<InsertRow>(text, [...values])).rows);
}

/** A row of the accept statement: with `countDay`, every row also carries the day's usage after counting and the tenant's plan. */
export interface InsertRow extends Partial<UsageRow> {
  ord: number;
  fresh: boolean;
  existing_event_id: string | null;
  existing_fingerprint: string | null;
}

export function insertOutcomes(rows: InsertRow[]): InsertOutcome[] {
  return rows.map((r) => ({ index: r.ord - 1, fresh: r.fresh, existingEventId: r.existing_event_id, existingFingerprint: r.existing_fingerprint }));
}

/**
 * The statement of `insertEvents`. With `countDay` (a UTC day), the same statement also counts the fresh events in the
 * day's quota row and by name (quota.ts, event-names.ts): the accept path's whole write is one statement, whose rows
 * carry the usage to check against the quota before the commit (`checkQuota`).
 */
export function insertEventsStatement(tenantId: string, events: NewEvent[], receivedAt: Date, countDay: string | null): Statement {
  const counting = countDay
    ? `,
     counted AS (${usageUpsertSql('$1::uuid', '$14::date', 'count(*)', 'FROM fresh HAVING count(*) > 0')}),
     named AS (${eventNamesUpsertSql('$1::uuid', '(SELECT event_name AS name, occurred_at AS at FROM fresh) f')})`
    : '';
  const usage = countDay
    ? ', (SELECT events FROM counted) AS events, (SELECT plan FROM tenants WHERE id = $1) AS plan, (SELECT event_ingestion_per_day FROM tenants WHERE id = $1) AS event_ingestion_per_day'
    : '';
  return {
    text: `WITH input AS (
       SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::uuid[], $9::jsonb[], $10::timestamptz[], $11::text[], $13::text[])
         WITH ORDINALITY AS i (event_id, fact_id, key, fingerprint, event_name, participant_id, engagement_id, properties, occurred_at, queue, traceparent, ord)
     ),
     claimed AS (
       INSERT INTO event_idempotency_keys (tenant_id, key, event_id, fingerprint, created_at, expires_at)
       SELECT $1, key, event_id, fingerprint, $12, $12::timestamptz + interval '${IDEMPOTENCY_WINDOW}' FROM input
       ON CONFLICT (tenant_id, key) DO UPDATE
         SET event_id = EXCLUDED.event_id, fingerprint = EXCLUDED.fingerprint, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
         WHERE event_idempotency_keys.expires_at <= EXCLUDED.created_at
       RETURNING event_id
     ),
     fresh AS (
       SELECT i.* FROM input i JOIN claimed c ON c.event_id = i.event_id
     ),
     new_participants AS (
       INSERT INTO participants (tenant_id, participant_id)
       SELECT DISTINCT $1::uuid, participant_id FROM fresh
       ON CONFLICT DO NOTHING
     ),
     stored AS (
       INSERT INTO ingested_events (tenant_id, event_id, event_name, participant_id, engagement_id, properties, occurred_at, received_at, idempotency_key, fact_id)
       SELECT $1, event_id, event_name, participant_id, engagement_id, properties, occurred_at, $12, key, fact_id FROM fresh
       ORDER BY occurred_at, ord
     ),
     pending AS (
       -- Processed in batches by lane (lanes.ts), in this order; the lane is the queue bucket modulo the lane count.
       INSERT INTO ingestion_pending (tenant_id, event_id, queue, lane, traceparent)
       SELECT $1, event_id, queue, split_part(queue, ':', 2)::int % ${PROCESSING_LANES}, traceparent FROM fresh WHERE queue IS NOT NULL
       ORDER BY occurred_at, ord
     )${counting}
     SELECT i.ord::int AS ord, f.event_id IS NOT NULL AS fresh, k.event_id AS existing_event_id, k.fingerprint AS existing_fingerprint${usage}
     FROM input i
     LEFT JOIN fresh f ON f.event_id = i.event_id
     -- A LATERAL with LIMIT: one key look-up per repeated event. A join let a generic plan made while the tenant had
     -- few keys hash every key of the tenant on each call (7 ms at 6,000 keys).
     LEFT JOIN LATERAL (
       SELECT k.event_id, k.fingerprint FROM event_idempotency_keys k WHERE f.event_id IS NULL AND k.tenant_id = $1 AND k.key = i.key LIMIT 1
     ) k ON true
     ORDER BY i.ord`,
    values: [
      tenantId,
      events.map((e) => e.eventId),
      events.map((e) => e.factId),
      events.map((e) => e.key),
      events.map((e) => e.fingerprint),
      events.map((e) => e.eventName),
      events.map((e) => e.participantId),
      events.map((e) => e.engagementId),
      events.map((e) => e.propertiesJson),
      events.map((e) => e.occurredAt.toISOString()),
      events.map((e) => e.queue),
      receivedAt,
      events.map((e) => e.traceparent),
      ...(countDay ? [countDay] : []),
    ],
  };
}

const FIND_KEYS = planEachCall('SELECT key, event_id, fingerprint FROM event_idempotency_keys WHERE tenant_id = $1 AND key = ANY($2::text[])');

/** Reads the holders of keys that a concurrent transaction claimed after the insert's snapshot. */
export async function findKeys(tx: Tx, tenantId: string, keys: string[]): Promise<Map<string, { eventId: string; fingerprint: string }>> {
  const { rows } = await tx.query<{ key: string; event_id: string; fingerprint: string }>(FIND_KEYS, [tenantId, keys]);
  return new Map(rows.map((r) => [r.key, { eventId: r.event_id, fingerprint: r.fingerprint }]));
}

export interface EventRow {
  event_id: string;
  seq: number;
  event_name: string;
  participant_id: string;
  engagement_id: string | null;
  properties: Record<string, unknown>;
  occurred_at: Date;
  received_at: Date;
  idempotency_key: string;
  fact_id: string;
  status: 'pending' | 'processed' | 'retrying' | 'failed';
  attempts: number;
  last_error: string | null;
  processed_at: Date | null;
  outcome: Record<string, unknown> | null;
}

const EVENT_COLUMNS = `event_id, seq, event_name, participant_id, engagement_id, properties, occurred_at, received_at, idempotency_key, fact_id,
  status, attempts, last_error, processed_at, outcome`;

/**
 * Claims an event for processing: locks it unless it is processed already,
 * and returns it. A concurrent second processor waits on the lock and then
 * finds it processed (the condition is checked again on the locked row), so
 * an event's effects happen once. `recordProcessed` writes the marker at the
 * end of the same transaction: one new row version per event, not two.
 */
export async function claimForProcessing(tx: Tx, tenantId: string, eventId: string): Promise<EventRow | null> {
  const { rows } = await tx.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM ingested_events
     WHERE tenant_id = $1 AND event_id = $2 AND status <> 'processed'
     FOR UPDATE`,
    [tenantId, eventId],
  );
  return rows[0] ?? null;
}

const CLAIM_MANY = planEachCall(`SELECT ${EVENT_COLUMNS} FROM ingested_events
     WHERE tenant_id = $1 AND event_id = ANY($2::text[]) AND status <> 'processed'
     FOR UPDATE`);

/**
 * Claims several events at once (see claimForProcessing); the processed ones are left out. Rows: EventRow. Planned
 * on each call (`planEachCall`): a cached plan made while the table was small read every unfinished event of the
 * tenant once it had grown.
 */
export function claimManyStatement(tenantId: string, eventIds: string[]): Statement {
  return {
    text: CLAIM_MANY,
    values: [tenantId, eventIds],
  };
}

const RECORD_PROCESSED_MANY = planEachCall(`UPDATE ingested_events e SET status = 'processed', processed_at = $3, attempts = e.attempts + 1, last_error = NULL,
       outcome = ($4::jsonb[])[array_position($2::text[], e.event_id)]
     WHERE e.tenant_id = $1 AND e.event_id = ANY($2::text[])`);

/**
 * The processed markers of a batch, in one statement: the events by their primary key, each outcome picked by its
 * event's place in the list. Planned on each call, as the claim is: a plan made while the table was small scanned
 * every event of the tenant on each batch once it had grown (a join with the unnested list did, 10 ms at 10,000
 * events, and so did `= ANY` as a cached plan, up to 500 ms at 100,000).
 */
export function recordProcessedManyStatement(tenantId: string, processedAt: Date, processed: Array<{ eventId: string; outcome: unknown }>): Statement {
  return {
    text: RECORD_PROCESSED_MANY,
    values: [tenantId, processed.map((p) => p.eventId), processedAt, processed.map((p) => JSON.stringify(p.outcome))],
  };
}

/**
 * Lanes with accepted events waiting, oldest first (owner connection: it looks across tenants). On a client of its
 * own, which prepares the statement once when the pool prepares statements (DB_PREPARED_STATEMENTS; `pool.query`
 * prepares nothing, and planning this look every time cost more than running it).
 */
export async function waitingLanes(pool: pg.Pool, limit: number): Promise<Array<{ tenant_id: string; lane: number }>> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ tenant_id: string; lane: number }>(`SELECT tenant_id, lane FROM (${WAITING_LANES_SQL}) w ORDER BY oldest_seq LIMIT $1`, [limit]);
    return rows;
  } finally {
    client.release();
  }
}

export interface LaneEvent {
  seq: number;
  event_id: string;
  traceparent: string | null;
}

/**
 * Locks a lane for its transaction unless another transaction holds it, and reads up to `limit` of its waiting events
 * in accept order: one statement, sent with BEGIN (`laneTaken` reads its rows). Its snapshot is taken before the lock:
 * when the lane's previous holder commits in between, the rows it has just deleted are read too, and their events are
 * found processed by the claim, which checks on the locked row (claimManyStatement); none is applied twice and
 * none is skipped.
 */
export function takeLaneStatement(tenantId: string, lane: number, limit: number): Statement {
  return {
    // MATERIALIZED: the lock is taken once, before the read (a CTE that calls a volatile function is never inlined, said explicitly).
    text: `WITH lock AS MATERIALIZED (SELECT pg_try_advisory_xact_lock(hashtextextended($1::text || ':' || $2::text, ${LANE_LOCK_SEED})) AS locked)
           SELECT l.locked, p.seq, p.event_id, p.traceparent
           FROM lock l
           LEFT JOIN LATERAL (
             SELECT seq, event_id, traceparent FROM ingestion_pending
             WHERE l.locked AND tenant_id = $1::uuid AND lane = $2::smallint
             ORDER BY seq LIMIT $3::int
           ) p ON true`,
    values: [tenantId, lane, limit],
  };
}

export type TakeLaneRow = { locked: boolean } & { [K in keyof LaneEvent]: LaneEvent[K] | null };

/** The lane's waiting events out of `takeLaneStatement`'s rows, in accept order; null when another transaction holds the lane. */
export function laneTaken(rows: TakeLaneRow[]): LaneEvent[] | null {
  if (!rows[0]?.locked) return null;
  return rows.filter((row) => row.seq !== null).map((row) => ({ seq: row.seq!, event_id: row.event_id!, traceparent: row.traceparent }));
}

/** Locks a lane and reads its waiting events (`takeLaneStatement`) in a transaction already open; null when the lane is taken. */
export async function takeLane(tx: Tx, tenantId: string, lane: number, limit: number): Promise<LaneEvent[] | null> {
  const { text, values } = takeLaneStatement(tenantId, lane, limit);
  return laneTaken((await tx.query<TakeLaneRow>(text, [...values])).rows);
}

const DELETE_PENDING = planEachCall('DELETE FROM ingestion_pending WHERE tenant_id = $1 AND lane = $2 AND seq = ANY($3::bigint[])');

/** The pending rows of a lane's processed batch. */
export function deletePendingStatement(tenantId: string, lane: number, seqs: number[]): Statement {
  return { text: DELETE_PENDING, values: [tenantId, lane, seqs] };
}

export async function deletePending(tx: Tx, tenantId: string, lane: number, seqs: number[]): Promise<void> {
  const { text, values } = deletePendingStatement(tenantId, lane, seqs);
  await tx.query(text, [...values]);
}

/** One event's processed marker: the batch's statement for a batch of one. */
export async function recordProcessed(tx: Tx, tenantId: string, eventId: string, processedAt: Date, outcome: unknown): Promise<void> {
  const { text, values } = recordProcessedManyStatement(tenantId, processedAt, [{ eventId, outcome }]);
  await tx.query(text, [...values]);
}

/** Records a failed attempt; returns the attempts so far and the participant (for the retry's queue), or null when the event is processed. */
export async function recordFailure(
  tx: Tx,
  tenantId: string,
  eventId: string,
  error: string,
  final: boolean,
): Promise<{ attempts: number; participant_id: string } | null> {
  const { rows } = await tx.query<{ attempts: number; participant_id: string }>(
    `UPDATE ingested_events SET attempts = attempts + 1, last_error = $3, status = CASE WHEN $4 THEN 'failed' ELSE 'retrying' END
     WHERE tenant_id = $1 AND event_id = $2 AND status <> 'processed'
     RETURNING attempts, participant_id`,
    [tenantId, eventId, error, final],
  );
  return rows[0] ?? null;
}

export async function findEvent(tx: Tx, tenantId: string, eventId: string): Promise<EventRow | null> {
  const { rows } = await tx.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM ingested_events WHERE tenant_id = $1 AND event_id = $2`, [tenantId, eventId]);
  return rows[0] ?? null;
}

export async function requeue(tx: Tx, tenantId: string, eventId: string): Promise<EventRow | null> {
  const { rows } = await tx.query<EventRow>(
    `UPDATE ingested_events SET status = 'retrying' WHERE tenant_id = $1 AND event_id = $2 AND status IN ('failed', 'retrying')
     RETURNING ${EVENT_COLUMNS}`,
    [tenantId, eventId],
  );
  return rows[0] ?? null;
}

export interface SearchFilter {
  participantId?: string;
  eventName?: string;
  status?: string;
  from?: Date;
  to?: Date;
}

/** Newest first; the cursor is the (timestamp, seq) of the last row of the previous page. */
export async function searchEvents(tx: Tx, tenantId: string, filter: SearchFilter, before: { at: string; seq: number } | null, limit: number): Promise<EventRow[]> {
  const { rows } = await tx.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM ingested_events
     WHERE tenant_id = $1
       AND ($2::text IS NULL OR participant_id = $2)
       AND ($3::text IS NULL OR event_name = $3)
       AND ($4::text IS NULL OR status = $4)
       AND ($5::timestamptz IS NULL OR occurred_at >= $5)
       AND ($6::timestamptz IS NULL OR occurred_at < $6)
       AND ($7::timestamptz IS NULL OR (occurred_at, seq) < ($7::timestamptz, $8::bigint))
     ORDER BY occurred_at DESC, seq DESC
     LIMIT $9`,
    [
      tenantId,
      filter.participantId ?? null,
      filter.eventName ?? null,
      filter.status ?? null,
      filter.from ?? null,
      filter.to ?? null,
      before?.at ?? null,
      before?.seq ?? null,
      limit,
    ],
  );
  return rows;
}

/** Oldest first, for rule simulation. */
export async function scanEvents(
  tx: Tx,
  tenantId: string,
  filter: { eventName: string; from: Date; to: Date; participantId: string | null; after: { occurredAt: Date; seq: number } | null; limit: number },
): Promise<EventRow[]> {
  const { rows } = await tx.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM ingested_events
     WHERE tenant_id = $1 AND event_name = $2 AND occurred_at >= $3 AND occurred_at < $4
       AND ($5::text IS NULL OR participant_id = $5)
       AND ($6::timestamptz IS NULL OR (occurred_at, seq) > ($6::timestamptz, $7::bigint))
     ORDER BY occurred_at, seq
     LIMIT $8`,
    [tenantId, filter.eventName, filter.from, filter.to, filter.participantId, filter.after?.occurredAt ?? null, filter.after?.seq ?? null, filter.limit],
  );
  return rows;
}

/** Event idempotency keys past their 24 hours: the key is new again already, and the event itself stays in the store. */
export const retention: RetentionRule[] = [
  { name: 'event idempotency keys', purge: (client, limit, now) => deleteBatch(client, 'event_idempotency_keys', 'expires_at < $2', [now], limit) },
];
