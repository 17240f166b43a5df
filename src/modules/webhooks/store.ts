import type { Database, Tx } from '../../platform/db.js';
import { daysBefore, deleteBatch, type RetentionRule } from '../../platform/retention.js';
import type { DeliveryStatus } from './schemas.js';

/**
 * Every SQL statement on the webhook tables. Each takes the transaction and
 * the tenant first and filters by the tenant.
 */
export const DELIVER_TASK = 'webhooks.deliver';
export const BULK_REPLAY_TASK = 'webhooks.bulk_replay';
/** The channel the dispatcher notifies on commit; live streams listen to it. */
export const DISPATCHED_CHANNEL = 'outbox_dispatched';
/** Event ids per notification, so a payload stays far below PostgreSQL's 8,000-byte limit. */
const NOTIFY_EVENT_IDS_MAX = 40;
const DELIVER_JOB_ATTEMPTS_MAX = 25;
/**
 * Deliveries per `webhooks.deliver` job made by the fan-out: the deliveries of
 * one dispatch to one destination, in event order, in jobs of at most this
 * many. A job claims them in one statement, posts them concurrently and
 * records their outcomes in one statement (delivery.ts).
 */
export const DELIVERY_BATCH_MAX = 20;

export interface DestinationRow {
  tenant_id: string;
  id: string;
  name: string;
  url: string;
  events: string[];
  engagement_id: string | null;
  custom_headers: Record<string, string>;
  retry_count: number;
  timeout_seconds: number;
  active: boolean;
  /** A sandbox tenant's opt-in to a receiver on the private network (migration 0205). */
  allow_private_network: boolean;
  secret: string;
  created_at: Date;
  updated_at: Date;
}

export async function insertDestination(tx: Tx, row: DestinationRow): Promise<DestinationRow> {
  const { rows } = await tx.query<DestinationRow>(
    `INSERT INTO webhook_destinations (tenant_id, id, name, url, events, engagement_id, custom_headers, retry_count, timeout_seconds, active, secret, created_at, updated_at, allow_private_network)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13)
     RETURNING *`,
    [
      row.tenant_id, row.id, row.name, row.url, row.events, row.engagement_id, JSON.stringify(row.custom_headers), row.retry_count, row.timeout_seconds, row.active, row.secret, row.created_at,
      row.allow_private_network,
    ],
  );
  return rows[0];
}

export async function findDestination(tx: Tx, tenantId: string, id: string, lock = false): Promise<DestinationRow | null> {
  const { rows } = await tx.query<DestinationRow>(
    `SELECT * FROM webhook_destinations WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
    [tenantId, id],
  );
  return rows[0] ?? null;
}

export async function listDestinations(tx: Tx, tenantId: string, limit: number, after: { created_at: string; id: string } | null): Promise<DestinationRow[]> {
  const { rows } = await tx.query<DestinationRow>(
    `SELECT * FROM webhook_destinations
     WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) > ($2::timestamptz, $3::text))
     ORDER BY created_at, id
     LIMIT $4`,
    [tenantId, after?.created_at ?? null, after?.id ?? null, limit],
  );
  return rows;
}

export async function updateDestination(
  tx: Tx,
  tenantId: string,
  id: string,
  patch: { url?: string; events?: string[]; retry_count?: number; timeout_seconds?: number; active?: boolean; allow_private_network?: boolean },
  now: Date,
): Promise<DestinationRow | null> {
  const { rows } = await tx.query<DestinationRow>(
    `UPDATE webhook_destinations SET
       url = COALESCE($3, url),
       events = COALESCE($4, events),
       retry_count = COALESCE($5, retry_count),
       timeout_seconds = COALESCE($6, timeout_seconds),
       active = COALESCE($7, active),
       allow_private_network = COALESCE($9, allow_private_network),
       updated_at = $8
     WHERE tenant_id = $1 AND id = $2
     RETURNING *`,
    [tenantId, id, patch.url ?? null, patch.events ?? null, patch.retry_count ?? null, patch.timeout_seconds ?? null, patch.active ?? null, now, patch.allow_private_network ?? null],
  );
  return rows[0] ?? null;
}

export async function deleteDestination(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM webhook_destinations WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  return rowCount === 1;
}

// ---- tenant settings (migration 0205) --------------------------------------------

export interface SettingsRow {
  backoff_scale: number;
  updated_at: Date | null;
}

/** The tenant's webhook settings; the defaults when it never changed them. */
export async function readSettings(tx: Tx, tenantId: string): Promise<SettingsRow> {
  const { rows } = await tx.query<SettingsRow>('SELECT backoff_scale, updated_at FROM webhook_settings WHERE tenant_id = $1', [tenantId]);
  return rows[0] ?? { backoff_scale: 1, updated_at: null };
}

/** The factor on the retry schedule: 1 unless the (sandbox) tenant set another. */
export async function backoffScale(tx: Tx, tenantId: string): Promise<number> {
  return (await readSettings(tx, tenantId)).backoff_scale;
}

export async function upsertSettings(tx: Tx, tenantId: string, backoffScaleValue: number, now: Date): Promise<SettingsRow> {
  const { rows } = await tx.query<SettingsRow>(
    `INSERT INTO webhook_settings (tenant_id, backoff_scale, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (tenant_id) DO UPDATE SET backoff_scale = EXCLUDED.backoff_scale, updated_at = EXCLUDED.updated_at
     RETURNING backoff_scale, updated_at`,
    [tenantId, backoffScaleValue, now],
  );
  return rows[0];
}

/**
 * The dispatcher's one statement: for the given outbox events, one delivery
 * per matching active destination (subscribed to the event by its name, by
 * `<prefix>.*` or by `*`, as catalog.ts's subscriptionMatches says, and scoped to its
 * engagement when the destination has one), delivery jobs for them (one per
 * destination and DELIVERY_BATCH_MAX deliveries, in event order), and a
 * notification per participant (and one for the events about no participant)
 * for the live streams. Running it twice for the
 * same events creates nothing new (the unique original-delivery index).
 */
export async function fanOut(
  tx: Tx,
  tenantId: string,
  eventIds: string[],
  now: Date,
): Promise<{ events: number; deliveries: number; jobs: number; traceparents: string[] }> {
  const { rows } = await tx.query(
    `WITH ev AS (
       SELECT e.id, e.seq, e.event, e.participant_id, e.engagement_id, e.created_at, e.traceparent
       FROM outbox_events e
       WHERE e.tenant_id = $1 AND e.id = ANY ($2::text[])
     ), inserted AS (
       INSERT INTO webhook_deliveries (tenant_id, id, destination_id, event_id, event, participant_id, engagement_id, occurred_at,
                                       status, max_attempts, next_attempt_at, created_at, updated_at)
       SELECT $1, 'dlv_' || replace(gen_random_uuid()::text, '-', ''), d.id, ev.id, ev.event, ev.participant_id, ev.engagement_id, ev.created_at,
              'PENDING', d.retry_count + 1, $3, $3, $3
       FROM ev
       JOIN webhook_destinations d
         ON d.tenant_id = $1 AND d.active
        AND (ev.event = ANY (d.events) OR '*' = ANY (d.events)
             OR EXISTS (SELECT 1 FROM unnest(d.events) AS p (pattern) WHERE right(p.pattern, 2) = '.*' AND starts_with(ev.event, left(p.pattern, -1))))
        AND (d.engagement_id IS NULL OR d.engagement_id = ev.engagement_id)
       ON CONFLICT (tenant_id, destination_id, event_id) WHERE replay_of IS NULL DO NOTHING
       RETURNING id, destination_id, event_id
     ), numbered AS (
       SELECT i.id, i.destination_id, ev.seq, (row_number() OVER (PARTITION BY i.destination_id ORDER BY ev.seq) - 1) / $8 AS batch
       FROM inserted i JOIN ev ON ev.id = i.event_id
     ), batches AS (
       SELECT json_build_object('tenant_id', $1::uuid, 'delivery_ids', json_agg(id ORDER BY seq)) AS payload
       FROM numbered GROUP BY destination_id, batch
     ), jobs AS (
       SELECT enqueue_jobs($4, ARRAY(SELECT payload FROM batches), $5) AS added
     ), chunks AS (
       SELECT participant_id, (row_number() OVER (PARTITION BY participant_id ORDER BY id) - 1) / $7 AS chunk, id
       FROM ev
     ), notified AS (
       SELECT pg_notify($6, json_build_object('tenant_id', $1::uuid, 'participant_id', participant_id, 'event_ids', json_agg(id))::text) AS sent
       FROM chunks GROUP BY participant_id, chunk
     )
     SELECT (SELECT count(*) FROM ev)::int AS events,
            (SELECT count(*) FROM inserted)::int AS deliveries,
            (SELECT added FROM jobs)::int AS jobs,
            (SELECT count(*) FROM notified)::int AS notifications,
            ARRAY(SELECT DISTINCT traceparent FROM ev WHERE traceparent IS NOT NULL LIMIT 64) AS traceparents`,
    [tenantId, eventIds, now, DELIVER_TASK, DELIVER_JOB_ATTEMPTS_MAX, DISPATCHED_CHANNEL, NOTIFY_EVENT_IDS_MAX, DELIVERY_BATCH_MAX],
  );
  return { events: rows[0].events, deliveries: rows[0].deliveries, jobs: rows[0].jobs, traceparents: rows[0].traceparents };
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
  const { rows } = await tx.query(
    `UPDATE webhook_deliveries w
     SET status = 'DELIVERING', attempts_started = w.attempts_started + 1, attempt_token = $3,
         attempt_deadline = now() + make_interval(secs => d.timeout_seconds * $6::int + $4), attempt_started_at = $5, updated_at = $5
     FROM webhook_destinations d
     WHERE w.tenant_id = $1 AND w.id = ANY ($2::text[]) AND w.status IN ('PENDING', 'RETRYING')
       AND d.tenant_id = w.tenant_id AND d.id = w.destination_id AND d.active
     RETURNING to_jsonb(w) AS delivery, to_jsonb(d) AS destination,
               (SELECT o.data FROM outbox_events o WHERE o.tenant_id = w.tenant_id AND o.id = w.event_id) AS data,
               (SELECT o.traceparent FROM outbox_events o WHERE o.tenant_id = w.tenant_id AND o.id = w.event_id) AS traceparent`,
    [tenantId, deliveryIds, token, graceSeconds, now, waves],
  );
  return rows.map((row) => ({
    delivery: row.delivery as DeliveryRow,
    destination: row.destination as DestinationRow,
    data: row.data ?? null,
    traceparent: row.traceparent ?? null,
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

/**
 * Records the outcomes of attempts that hold `token`, each with its log row
 * under the number the attempt was claimed with, in one statement. A delivery
 * is missing from `held` when its attempt no longer holds it (another worker
 * took over after the deadline): its result is then dropped. A log row gives
 * way on a clash (missing from `logged`) rather than lose an outcome whose
 * POST already went out; with numbers allocated on the delivery row no clash
 * is expected.
 */
export async function finishAttempts(tx: Tx, tenantId: string, token: string, now: Date, outcomes: AttemptOutcome[]): Promise<{ held: Set<string>; logged: Set<string> }> {
  if (outcomes.length === 0) return { held: new Set(), logged: new Set() };
  const terminal = (status: DeliveryStatus) => status === 'SUCCEEDED' || status === 'EXHAUSTED' || status === 'CANCELLED';
  const { rows } = await tx.query(
    `WITH outcome AS (
       SELECT * FROM unnest($4::text[], $5::text[], $6::timestamptz[], $7::int[], $8::text[], $9::boolean[], $10::text[], $11::timestamptz[], $12::int[], $13::text[])
         AS o (id, status, next_attempt_at, response_status, error, terminal, outcome, started_at, duration_ms, response_body)
     ), updated AS (
       UPDATE webhook_deliveries w
       SET status = o.status, attempts = w.attempts + 1, next_attempt_at = o.next_attempt_at, attempt_token = NULL, attempt_deadline = NULL,
           attempt_started_at = NULL, last_response_status = o.response_status, last_error = o.error, updated_at = $3,
           completed_at = CASE WHEN o.terminal THEN $3::timestamptz END
       FROM outcome o
       WHERE w.tenant_id = $1 AND w.id = o.id AND w.attempt_token = $2
       RETURNING w.id, w.attempts_started
     ), logged AS (
       INSERT INTO webhook_delivery_attempts (tenant_id, delivery_id, attempt, outcome, started_at, duration_ms, response_status, response_body, error)
       SELECT $1, u.id, u.attempts_started, o.outcome, o.started_at, o.duration_ms, o.response_status, o.response_body, o.error
       FROM updated u JOIN outcome o ON o.id = u.id
       ON CONFLICT (tenant_id, delivery_id, attempt) DO NOTHING
       RETURNING delivery_id
     )
     SELECT u.id, EXISTS (SELECT 1 FROM logged l WHERE l.delivery_id = u.id) AS logged FROM updated u`,
    [
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
  );
  return { held: new Set(rows.map((r) => r.id as string)), logged: new Set(rows.filter((r) => r.logged === true).map((r) => r.id as string)) };
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

export interface ReplayJobRow {
  tenant_id: string;
  id: string;
  destination_id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  filter: { since: string | null; until: string | null; statuses: string[]; events: string[] | null };
  matched: number;
  replayed: number;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

export async function insertReplayJob(tx: Tx, row: Pick<ReplayJobRow, 'tenant_id' | 'id' | 'destination_id' | 'filter' | 'created_at'>): Promise<ReplayJobRow> {
  const { rows } = await tx.query<ReplayJobRow>(
    `INSERT INTO webhook_replay_jobs (tenant_id, id, destination_id, status, filter, created_at)
     VALUES ($1, $2, $3, 'queued', $4, $5) RETURNING *`,
    [row.tenant_id, row.id, row.destination_id, JSON.stringify(row.filter), row.created_at],
  );
  return rows[0];
}

export async function findReplayJob(tx: Tx, tenantId: string, destinationId: string, jobId: string): Promise<ReplayJobRow | null> {
  const { rows } = await tx.query<ReplayJobRow>('SELECT * FROM webhook_replay_jobs WHERE tenant_id = $1 AND destination_id = $2 AND id = $3', [tenantId, destinationId, jobId]);
  return rows[0] ?? null;
}

/** Claims a queued replay job; null when it is not queued (already run, or running elsewhere). */
export async function startReplayJob(tx: Tx, tenantId: string, jobId: string, now: Date): Promise<ReplayJobRow | null> {
  const { rows } = await tx.query<ReplayJobRow>(
    `UPDATE webhook_replay_jobs SET status = 'running', started_at = $3
     WHERE tenant_id = $1 AND id = $2 AND status IN ('queued', 'running')
     RETURNING *`,
    [tenantId, jobId, now],
  );
  return rows[0] ?? null;
}

/**
 * The bulk replay in one statement: for each event of the destination in the
 * filter, the latest delivery; those whose latest delivery ended in one of the
 * chosen states get a new delivery and a job; the replay job records the counts.
 */
export async function runBulkReplay(tx: Tx, tenantId: string, job: ReplayJobRow, destination: DestinationRow, limit: number, now: Date): Promise<{ matched: number; replayed: number }> {
  const { rows } = await tx.query(
    `WITH latest AS (
       SELECT DISTINCT ON (w.event_id) w.*
       FROM webhook_deliveries w
       WHERE w.tenant_id = $1 AND w.destination_id = $2
         AND ($3::timestamptz IS NULL OR w.occurred_at >= $3::timestamptz)
         AND ($4::timestamptz IS NULL OR w.occurred_at < $4::timestamptz)
         AND ($5::text[] IS NULL OR w.event = ANY ($5::text[]))
       ORDER BY w.event_id, w.created_at DESC, w.id DESC
     ), chosen AS (
       SELECT * FROM latest WHERE status = ANY ($6::text[]) ORDER BY occurred_at, event_id LIMIT $7
     ), inserted AS (
       INSERT INTO webhook_deliveries (tenant_id, id, destination_id, event_id, event, participant_id, engagement_id, occurred_at,
                                       status, max_attempts, next_attempt_at, replay_of, replay_job_id, created_at, updated_at)
       SELECT $1, 'dlv_' || replace(gen_random_uuid()::text, '-', ''), $2, c.event_id, c.event, c.participant_id, c.engagement_id, c.occurred_at,
              'PENDING', $8, $9, c.id, $10, $9, $9
       FROM chosen c
       RETURNING id
     ), jobs AS (
       SELECT enqueue_jobs($11, ARRAY(SELECT json_build_object('tenant_id', $1::uuid, 'delivery_id', id) FROM inserted), $12) AS added
     ), counts AS (
       SELECT (SELECT count(*) FROM chosen)::int AS matched, (SELECT added FROM jobs)::int AS replayed
     )
     UPDATE webhook_replay_jobs r SET status = 'completed', matched = counts.matched, replayed = counts.replayed, completed_at = $9
     FROM counts
     WHERE r.tenant_id = $1 AND r.id = $10
     RETURNING r.matched, r.replayed`,
    [
      tenantId, destination.id, job.filter.since, job.filter.until, job.filter.events, job.filter.statuses, limit,
      destination.retry_count + 1, now, job.id, DELIVER_TASK, DELIVER_JOB_ATTEMPTS_MAX,
    ],
  );
  return { matched: rows[0].matched, replayed: rows[0].replayed };
}

export async function failReplayJob(tx: Tx, tenantId: string, jobId: string, error: string, now: Date): Promise<void> {
  await tx.query(`UPDATE webhook_replay_jobs SET status = 'failed', error = $3, completed_at = $4 WHERE tenant_id = $1 AND id = $2`, [tenantId, jobId, error, now]);
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
    `SELECT id, seq, event, participant_id, engagement_id, data, created_at FROM outbox_events
     WHERE tenant_id = $1 AND id = ANY ($2::text[]) ORDER BY seq`,
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

// ---- retention -----------------------------------------------------------------

/** Finished deliveries (their attempts go by cascade) and finished replay jobs, WEBHOOK_LOG_RETENTION_DAYS after they finished. */
export const retention: RetentionRule[] = [
  {
    name: 'webhook deliveries',
    purge: (client, limit, now, config) =>
      deleteBatch(client, 'webhook_deliveries', `completed_at < $2 AND status IN ('SUCCEEDED', 'EXHAUSTED', 'CANCELLED')`, [daysBefore(now, config.webhookLogRetentionDays)], limit),
  },
  {
    name: 'webhook replay jobs',
    purge: (client, limit, now, config) =>
      deleteBatch(client, 'webhook_replay_jobs', `completed_at < $2 AND status IN ('completed', 'failed')`, [daysBefore(now, config.webhookLogRetentionDays)], limit),
  },
];
