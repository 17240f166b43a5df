import type pg from 'pg';
import { planEachCall, type Statement, type Tx } from '../../platform/db.js';
import type { DeliveryStatus } from './schemas.js';
import type { DestinationRow } from './destination-store.js';
import { outboxEventsByIds } from './stream-store.js';
import type { TakeCursor } from '../../platform/outbox.js';
import { countFinishedDeliveriesSql } from '../analytics/index.js';

/**
 * The statements on deliveries: the dispatcher's fan-out with its jobs and
 * notifications, claiming and finishing attempts, cancelling, a replay of one
 * delivery, and the delivery reads.
 */

export const DELIVER_TASK = 'webhooks.deliver';
/** The channel the dispatcher notifies on commit; live streams listen to it. */
export const DISPATCHED_CHANNEL = 'outbox_dispatched';
/** Event ids per notification, so a payload stays far below PostgreSQL's 8,000-byte limit. */
const NOTIFY_EVENT_IDS_MAX = 40;
export const DELIVER_JOB_ATTEMPTS_MAX = 25;
/**
 * Deliveries per `webhooks.deliver` job made by the fan-out: the deliveries of
 * one dispatch to one destination, in event order, in jobs of at most this
 * many. A job claims them in one statement, posts them concurrently and
 * records their outcomes in one statement (delivery.ts). As many as one
 * process may have open to a receiver (IN_FLIGHT_PER_RECEIVER_MAX): a lone
 * job fills the receiver's slots. 20 until issue 37: in
 * `npm run bench -- webhooks` a backlog to one receiver went from 75–84% of
 * bare signed POSTs to 83–101% (50 measured the same as 32 and would lengthen
 * an attempt's deadline further, see `wavesFor`).
 */
export const DELIVERY_BATCH_MAX = 32;

/**
 * The fan-out's statement over the outbox events that `events` (common table
 * expressions ending with `ev`: the events' rows with their `tenant_id`)
 * yields, of one tenant or several: one delivery per matching active
 * destination of the event's tenant (subscribed to the event by its name, by
 * `<prefix>.*` or by `*`, as catalog.ts's subscriptionMatches says, and scoped
 * to its engagement when the destination has one), delivery jobs for them
 * (one per destination and DELIVERY_BATCH_MAX deliveries, in event order), and
 * a notification per participant (and one per tenant for the events about no
 * participant) for the live streams. Running it twice for the same events
 * creates nothing new (the unique original-delivery index). It answers how
 * many of the rows of `counted` it read (the events asked for, or the pending
 * markers taken), the deliveries, jobs and notifications, and the events'
 * trace contexts. Parameters $1–$6 are its own (`fanOutValues`); the events'
 * CTEs use $7 on.
 */
function fanOutText(events: string, counted: string, alsoSelected = ''): string {
  return `WITH ${events}, inserted AS (
       INSERT INTO webhook_deliveries (tenant_id, id, destination_id, event_id, event, participant_id, engagement_id, occurred_at,
                                       status, max_attempts, next_attempt_at, created_at, updated_at)
       SELECT ev.tenant_id, 'dlv_' || replace(gen_random_uuid()::text, '-', ''), d.id, ev.id, ev.event, ev.participant_id, ev.engagement_id, ev.created_at,
              'PENDING', d.retry_count + 1, $1, $1, $1
       FROM ev
       JOIN webhook_destinations d
         ON d.tenant_id = ev.tenant_id AND d.active
        AND (ev.event = ANY (d.events) OR '*' = ANY (d.events)
             OR EXISTS (SELECT 1 FROM unnest(d.events) AS p (pattern) WHERE right(p.pattern, 2) = '.*' AND starts_with(ev.event, left(p.pattern, -1))))
        AND (d.engagement_id IS NULL OR d.engagement_id = ev.engagement_id)
       ON CONFLICT (tenant_id, destination_id, event_id) WHERE replay_of IS NULL DO NOTHING
       RETURNING tenant_id, id, destination_id, event_id
     ), numbered AS (
       SELECT i.tenant_id, i.id, i.destination_id, ev.seq, (row_number() OVER (PARTITION BY i.tenant_id, i.destination_id ORDER BY ev.seq) - 1) / $6 AS batch
       FROM inserted i JOIN ev ON ev.tenant_id = i.tenant_id AND ev.id = i.event_id
     ), batches AS (
       SELECT json_build_object('tenant_id', tenant_id, 'delivery_ids', json_agg(id ORDER BY seq)) AS payload
       FROM numbered GROUP BY tenant_id, destination_id, batch
     ), jobs AS (
       SELECT enqueue_jobs($2, ARRAY(SELECT payload FROM batches), $3) AS added
     ), chunks AS (
       SELECT tenant_id, participant_id, (row_number() OVER (PARTITION BY tenant_id, participant_id ORDER BY id) - 1) / $5 AS chunk, id
       FROM ev
     ), notified AS (
       SELECT pg_notify($4, json_build_object('tenant_id', tenant_id, 'participant_id', participant_id, 'event_ids', json_agg(id))::text) AS sent
       FROM chunks GROUP BY tenant_id, participant_id, chunk
     )
     SELECT (SELECT count(*) FROM ${counted})::int AS events,
            (SELECT count(*) FROM inserted)::int AS deliveries,
            (SELECT added FROM jobs)::int AS jobs,
            (SELECT count(*) FROM notified)::int AS notifications,
            ARRAY(SELECT DISTINCT traceparent FROM ev WHERE traceparent IS NOT NULL LIMIT 64) AS traceparents${alsoSelected}`;
}

/** The fan-out's own parameters ($1–$6 of `fanOutText`). */
function fanOutValues(now: Date): unknown[] {
  return [now, DELIVER_TASK, DELIVER_JOB_ATTEMPTS_MAX, DISPATCHED_CHANNEL, NOTIFY_EVENT_IDS_MAX, DELIVERY_BATCH_MAX];
}

/** Planned on each call (`planEachCall`), as the outbox grows in bursts. */
const FAN_OUT = planEachCall(
  fanOutText(`ev AS (SELECT e.tenant_id, e.id, e.seq, e.event, e.participant_id, e.engagement_id, e.created_at, e.traceparent FROM ${outboxEventsByIds('$7', '$8')})`, 'ev'),
);

/** What a fan-out did; `events` counts the events asked for (`fanOut`) or the pending markers taken (`takeAndFanOut`). */
export interface FannedOut {
  events: number;
  deliveries: number;
  jobs: number;
  traceparents: string[];
}

function fannedOut(row: Record<string, unknown>): FannedOut {
  return { events: row.events as number, deliveries: row.deliveries as number, jobs: row.jobs as number, traceparents: row.traceparents as string[] };
}

/** The fan-out of one tenant's outbox events (an `outbox.dispatch` job's). */
export async function fanOut(tx: Tx, tenantId: string, eventIds: string[], now: Date): Promise<FannedOut> {
  const { rows } = await tx.query(FAN_OUT, [...fanOutValues(now), tenantId, eventIds]);
  return fannedOut(rows[0]);
}

// The function reads the events with the markers it takes (migration 1500): this statement's snapshot may not see them.
const TAKE_AND_FAN_OUT = fanOutText(
  `taken AS (SELECT * FROM take_outbox_pending($7, $8::tid)),
   ev AS (SELECT tenant_id, event_id AS id, seq, event, participant_id, engagement_id, created_at, traceparent FROM taken WHERE seq IS NOT NULL)`,
  'taken',
  ', (SELECT next_from FROM taken LIMIT 1)::text AS next_from',
);

/**
 * Takes up to `limit` pending outbox events of every tenant
 * (`take_outbox_pending`, migrations 1500 and 1515, from where `cursor`'s last
 * take ended) and fans them out, in one
 * statement: the markers' delete commits with the deliveries, their jobs and
 * the notifications. Runs as the schema owner, which sees every tenant; each
 * event's deliveries are its own tenant's (`fanOutText`).
 */
export async function takeAndFanOut(pool: pg.Pool, limit: number, now: Date, cursor: TakeCursor): Promise<FannedOut> {
  // Named, so planned once per connection: its rows come from the function, whatever the tables hold (planning it was 0.65 ms of 2.1 a call).
  const { rows } = await pool.query({ name: 'outbox_take_and_fan_out', text: TAKE_AND_FAN_OUT, values: [...fanOutValues(now), limit, cursor.next()] });
  cursor.ended(rows[0].next_from as string | null);
  return fannedOut(rows[0]);
}

export interface DeliveryRow {
  tenant_id: string;
  id: string;
  destination_id: string;
  event_id: string;
  event: string;
  participant_id: string | null;
  engagement_id: string | null;
  occurred_at: Date;
  status: DeliveryStatus;
  attempts: number;
  max_attempts: number;
  next_attempt_at: Date | null;
  /** The number of the latest attempt claimed, cut short or not: each attempt's own number in the log. */
  attempts_started: number;
  attempt_token: string | null;
  attempt_deadline: Date | null;
  attempt_started_at: Date | null;
  last_response_status: number | null;
  last_error: string | null;
  replay_of: string | null;
  replay_job_id: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export interface DeliveryWork {
  delivery: DeliveryRow;
  destination: DestinationRow;
  /** The outbox event's data, or null when the outbox row is gone (pruned or erased). */
  data: Record<string, unknown> | null;
  /** The trace context of what emitted the event, while tracing is on (the delivery job's span links to it). */
  traceparent: string | null;
  /** True when the previous attempt's deadline passed without an outcome (its worker died). */
  deadlineExpired: boolean;
}

/**
 * The common case in one statement: of the given deliveries, those that are
 * due (PENDING or RETRYING) to an active destination are marked DELIVERING
 * with the attempt's token, deadline and number (the next one), and returned
 * with their destination and event data. The deadline allows `waves` times
 * the destination's timeout (the POSTs of a batch run in waves) plus the
 * grace. A delivery in any other situation is left out (the caller then
 * looks closer at it).
 */
export async function claimDue(tx: Tx, tenantId: string, deliveryIds: string[], token: string, waves: number, graceSeconds: number, now: Date): Promise<DeliveryWork[]> {
  const { text, values } = claimDueStatement(tenantId, deliveryIds, token, waves, graceSeconds, now);
  return claimedWork((await tx.query(text, values as unknown[])).rows);
}

const CLAIM_DUE = planEachCall(
  `UPDATE webhook_deliveries w
     SET status = 'DELIVERING', attempts_started = w.attempts_started + 1, attempt_token = $3,
         attempt_deadline = now() + make_interval(secs => d.timeout_seconds * $6::int + $4), attempt_started_at = $5, updated_at = $5
     FROM webhook_destinations d
     WHERE w.tenant_id = $1 AND w.id = ANY ($2::text[]) AND w.status IN ('PENDING', 'RETRYING')
       AND d.tenant_id = w.tenant_id AND d.id = w.destination_id AND d.active
     RETURNING to_jsonb(w) AS delivery, to_jsonb(d) AS destination,
               (SELECT o.data FROM outbox_events o WHERE o.tenant_id = w.tenant_id AND o.id = w.event_id) AS data,
               (SELECT o.traceparent FROM outbox_events o WHERE o.tenant_id = w.tenant_id AND o.id = w.event_id) AS traceparent`,
);

/** `claimDue`'s statement, for a caller that sends it in one round trip with its transaction (`db.tenantInOneTrip`); `claimedWork` reads its rows. */
export function claimDueStatement(tenantId: string, deliveryIds: string[], token: string, waves: number, graceSeconds: number, now: Date): Statement {
  return {
    text: CLAIM_DUE,
    values: [tenantId, deliveryIds, token, graceSeconds, now, waves],
  };
}

export function claimedWork(rows: unknown[]): DeliveryWork[] {
  return (rows as Array<Record<string, unknown>>).map((row) => ({
    delivery: row.delivery as DeliveryRow,
    destination: row.destination as DestinationRow,
    data: (row.data as Record<string, unknown> | null) ?? null,
    traceparent: (row.traceparent as string | null) ?? null,
    deadlineExpired: false,
  }));
}

/** Reads a delivery with its destination and event data, locking the delivery row. */
export async function lockDeliveryWork(tx: Tx, tenantId: string, deliveryId: string): Promise<DeliveryWork | null> {
  const { rows } = await tx.query(
    `SELECT to_jsonb(w) AS delivery, to_jsonb(d) AS destination, o.data, o.traceparent, (w.attempt_deadline < now()) AS deadline_expired
     FROM webhook_deliveries w
     JOIN webhook_destinations d ON d.tenant_id = w.tenant_id AND d.id = w.destination_id
     LEFT JOIN outbox_events o ON o.tenant_id = w.tenant_id AND o.id = w.event_id
     WHERE w.tenant_id = $1 AND w.id = $2
     FOR UPDATE OF w`,
    [tenantId, deliveryId],
  );
  const row = rows[0];
  if (!row) return null;
  const delivery = row.delivery as DeliveryRow;
  return { delivery, destination: row.destination as DestinationRow, data: row.data ?? null, traceparent: row.traceparent ?? null, deadlineExpired: row.deadline_expired === true };
}

/** An attempt whose deadline passed without an outcome: its worker died, or gave up on it. */
export interface AbandonedAttempt {
  /** The token it held the delivery with (the statement changes nothing if another has it by now). */
  token: string | null;
  startedAt: Date;
  error: string;
}

/**
 * Claims a delivery that the caller holds locked (`lockDeliveryWork`) for a new attempt, under
 * the next attempt number, until `deadlineSeconds` from now (database time, shared by every
 * process). When an abandoned attempt held it, the same statement logs that attempt as
 * `interrupted` under its own number, the one before the new attempt's: the number is allocated
 * once, on the delivery row, so the cut attempt and its repeat can never share it.
 */
export async function claimLocked(
  tx: Tx,
  tenantId: string,
  deliveryId: string,
  token: string,
  deadlineSeconds: number,
  now: Date,
  abandoned: AbandonedAttempt | null,
): Promise<DeliveryRow> {
  const { rows } = await tx.query(
    `WITH claimed AS (
       UPDATE webhook_deliveries
       SET status = 'DELIVERING', attempts_started = attempts_started + 1, attempt_token = $3,
           attempt_deadline = now() + make_interval(secs => $4), attempt_started_at = $5, updated_at = $5
       WHERE tenant_id = $1 AND id = $2 AND attempt_token IS NOT DISTINCT FROM $6::text
       RETURNING *
     ), interrupted AS (
       INSERT INTO webhook_delivery_attempts (tenant_id, delivery_id, attempt, outcome, started_at, duration_ms, error)
       SELECT tenant_id, id, attempts_started - 1, 'interrupted', $7::timestamptz, 0, $8 FROM claimed WHERE $7::timestamptz IS NOT NULL
     )
     SELECT to_jsonb(claimed) AS delivery FROM claimed`,
    [tenantId, deliveryId, token, deadlineSeconds, now, abandoned?.token ?? null, abandoned?.startedAt ?? null, abandoned?.error ?? null],
  );
  // The caller holds the row locked and read its token under the lock.
  if (rows.length !== 1) throw new Error(`claimLocked: delivery ${deliveryId} changed under its lock`);
  return rows[0].delivery as DeliveryRow;
}

export interface AttemptRecord {
  outcome: 'succeeded' | 'failed';
  startedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}

export interface AttemptOutcome {
  deliveryId: string;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  record: AttemptRecord;
}

export interface FinishedAttempts {
  /** Deliveries whose attempt still held them: their outcome was recorded. */
  held: Set<string>;
  /** Of those, the ones whose log row was written under the attempt's number. */
  logged: Set<string>;
}

/**
 * Records the outcomes of attempts that hold `token`, each with its log row
 * under the number the attempt was claimed with, and counts the deliveries it
 * finished for analytics (`countFinishedDeliveriesSql`), in one statement. A
 * delivery is missing from `held` when its attempt no longer holds it (another
 * worker took over after the deadline): its result is then dropped, and not
 * counted. A log row gives way on a clash (missing from `logged`) rather than
 * lose an outcome whose POST already went out; with numbers allocated on the
 * delivery row no clash is expected. `finishedAttempts` reads its rows; the
 * caller sends it in its transaction or, with nothing else to write, in one
 * round trip (`db.tenantInOneTrip`).
 */
export function finishAttemptsStatement(tenantId: string, token: string, now: Date, outcomes: AttemptOutcome[]): Statement {
  const terminal = (status: DeliveryStatus) => status === 'SUCCEEDED' || status === 'EXHAUSTED' || status === 'CANCELLED';
  return {
    text: `WITH outcome AS (
       SELECT * FROM unnest($4::text[], $5::text[], $6::timestamptz[], $7::int[], $8::text[], $9::boolean[], $10::text[], $11::timestamptz[], $12::int[], $13::text[])
         AS o (id, status, next_attempt_at, response_status, error, terminal, outcome, started_at, duration_ms, response_body)
     ), updated AS (
       UPDATE webhook_deliveries w
       SET status = o.status, attempts = w.attempts + 1, next_attempt_at = o.next_attempt_at, attempt_token = NULL, attempt_deadline = NULL,
           attempt_started_at = NULL, last_response_status = o.response_status, last_error = o.error, updated_at = $3,
           completed_at = CASE WHEN o.terminal THEN $3::timestamptz END
       FROM outcome o
       WHERE w.tenant_id = $1 AND w.id = o.id AND w.attempt_token = $2
       RETURNING w.tenant_id, w.id, w.attempts_started, w.status, w.event, w.completed_at
     ), logged AS (
       INSERT INTO webhook_delivery_attempts (tenant_id, delivery_id, attempt, outcome, started_at, duration_ms, response_status, response_body, error)
       SELECT $1, u.id, u.attempts_started, o.outcome, o.started_at, o.duration_ms, o.response_status, o.response_body, o.error
       FROM updated u JOIN outcome o ON o.id = u.id
       ON CONFLICT (tenant_id, delivery_id, attempt) DO NOTHING
       RETURNING delivery_id
     ), counted AS (
       ${countFinishedDeliveriesSql('updated')}
     )
     SELECT u.id, EXISTS (SELECT 1 FROM logged l WHERE l.delivery_id = u.id) AS logged FROM updated u`,
    values: [
      tenantId,
      token,
      now,
      outcomes.map((o) => o.deliveryId),
      outcomes.map((o) => o.status),
      outcomes.map((o) => o.nextAttemptAt),
      outcomes.map((o) => o.record.responseStatus),
      outcomes.map((o) => o.record.error),
      outcomes.map((o) => terminal(o.status)),
      outcomes.map((o) => o.record.outcome),
      outcomes.map((o) => o.record.startedAt),
      outcomes.map((o) => o.record.durationMs),
      outcomes.map((o) => o.record.responseBody),
    ],
  };
}

export function finishedAttempts(rows: unknown[]): FinishedAttempts {
  const finished = rows as Array<{ id: string; logged: boolean }>;
  return { held: new Set(finished.map((r) => r.id)), logged: new Set(finished.filter((r) => r.logged === true).map((r) => r.id)) };
}

/**
 * Ends a delivery without a new attempt (its destination was deactivated meanwhile); an abandoned
 * attempt that held it is logged as `interrupted` under its own number in the same statement.
 */
export async function cancelDelivery(tx: Tx, tenantId: string, deliveryId: string, reason: string, now: Date, abandoned: AbandonedAttempt | null): Promise<void> {
  await tx.query(
    `WITH cancelled AS (
       UPDATE webhook_deliveries SET status = 'CANCELLED', attempt_token = NULL, attempt_deadline = NULL, attempt_started_at = NULL, next_attempt_at = NULL,
         last_error = $3, updated_at = $4, completed_at = $4
       WHERE tenant_id = $1 AND id = $2 AND attempt_token IS NOT DISTINCT FROM $5::text
       RETURNING tenant_id, id, attempts_started
     )
     INSERT INTO webhook_delivery_attempts (tenant_id, delivery_id, attempt, outcome, started_at, duration_ms, error)
     SELECT tenant_id, id, attempts_started, 'interrupted', $6::timestamptz, 0, $7 FROM cancelled WHERE $6::timestamptz IS NOT NULL`,
    [tenantId, deliveryId, reason, now, abandoned?.token ?? null, abandoned?.startedAt ?? null, abandoned?.error ?? null],
  );
}

export async function insertDelivery(
  tx: Tx,
  row: Pick<DeliveryRow, 'tenant_id' | 'id' | 'destination_id' | 'event_id' | 'event' | 'participant_id' | 'engagement_id' | 'occurred_at' | 'max_attempts' | 'created_at'>,
): Promise<void> {
  await tx.query(
    `INSERT INTO webhook_deliveries (tenant_id, id, destination_id, event_id, event, participant_id, engagement_id, occurred_at,
                                     status, max_attempts, next_attempt_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'PENDING', $9, $10, $10, $10)`,
    [row.tenant_id, row.id, row.destination_id, row.event_id, row.event, row.participant_id, row.engagement_id, row.occurred_at, row.max_attempts, row.created_at],
  );
}

/** A new delivery of an earlier delivery's event (same envelope id), with its job. */
export async function insertReplay(tx: Tx, tenantId: string, original: DeliveryRow, destination: DestinationRow, newId: string, now: Date): Promise<void> {
  await tx.query(
    `WITH inserted AS (
       INSERT INTO webhook_deliveries (tenant_id, id, destination_id, event_id, event, participant_id, engagement_id, occurred_at,
                                       status, max_attempts, next_attempt_at, replay_of, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'PENDING', $9, $10, $11, $10, $10)
       RETURNING id
     )
     SELECT enqueue_jobs($12, ARRAY(SELECT json_build_object('tenant_id', $1::uuid, 'delivery_id', id) FROM inserted), $13)`,
    [
      tenantId, newId, destination.id, original.event_id, original.event, original.participant_id, original.engagement_id, original.occurred_at,
      destination.retry_count + 1, now, original.id, DELIVER_TASK, DELIVER_JOB_ATTEMPTS_MAX,
    ],
  );
}

export async function findDelivery(tx: Tx, tenantId: string, destinationId: string, deliveryId: string): Promise<DeliveryRow | null> {
  const { rows } = await tx.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE tenant_id = $1 AND destination_id = $2 AND id = $3', [tenantId, destinationId, deliveryId]);
  return rows[0] ?? null;
}

export interface DeliveryWithAttempts extends DeliveryRow {
  attempt_log: Array<{
    attempt: number;
    outcome: 'succeeded' | 'failed' | 'interrupted';
    started_at: string;
    duration_ms: number;
    response_status: number | null;
    response_body: string | null;
    error: string | null;
  }>;
}

const WITH_ATTEMPTS = `
  SELECT w.*, COALESCE((
    SELECT json_agg(json_build_object('attempt', a.attempt, 'outcome', a.outcome, 'started_at', a.started_at, 'duration_ms', a.duration_ms,
                                      'response_status', a.response_status, 'response_body', a.response_body, 'error', a.error)
                    ORDER BY a.attempt)
    FROM webhook_delivery_attempts a WHERE a.tenant_id = w.tenant_id AND a.delivery_id = w.id
  ), '[]'::json) AS attempt_log
  FROM webhook_deliveries w`;

export async function findDeliveryWithAttempts(tx: Tx, tenantId: string, deliveryId: string): Promise<DeliveryWithAttempts | null> {
  const { rows } = await tx.query<DeliveryWithAttempts>(`${WITH_ATTEMPTS} WHERE w.tenant_id = $1 AND w.id = $2`, [tenantId, deliveryId]);
  return rows[0] ?? null;
}

export async function listDeliveries(
  tx: Tx,
  tenantId: string,
  destinationId: string,
  filter: { status?: string; event?: string },
  limit: number,
  before: { created_at: string; id: string } | null,
): Promise<DeliveryWithAttempts[]> {
  const { rows } = await tx.query<DeliveryWithAttempts>(
    `${WITH_ATTEMPTS}
     WHERE w.tenant_id = $1 AND w.destination_id = $2
       AND ($3::text IS NULL OR w.status = $3) AND ($4::text IS NULL OR w.event = $4)
       AND ($5::timestamptz IS NULL OR (w.created_at, w.id) < ($5::timestamptz, $6::text))
     ORDER BY w.created_at DESC, w.id DESC
     LIMIT $7`,
    [tenantId, destinationId, filter.status ?? null, filter.event ?? null, before?.created_at ?? null, before?.id ?? null, limit],
  );
  return rows;
}
