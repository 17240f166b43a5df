import type pg from 'pg';
import type { Statement, Tx } from './db.js';
import { prefixedId } from './ids.js';
import { clock } from './clock.js';
import { currentTraceparent } from './tracing.js';

/**
 * The outbox. A service that changes state calls `emit` inside the same
 * transaction; the event rows and their pending markers (`outbox_pending`)
 * commit or roll back together with the change, so a committed change always
 * yields its event and a rolled-back one never does.
 *
 * Delivery (webhooks, the live stream) happens later. `emit` adds no queue
 * job: a job insert sends a NOTIFY, and PostgreSQL serialises the commits of
 * all notifying transactions (one global lock held across the WAL flush),
 * which capped every state change at the rate of serial fsyncs. Instead the
 * outbox's pump, running in every worker process (the webhooks module's
 * dispatcher), takes pending markers in batches and fans their events out in
 * the statement that deletes them, or, when that fails, moves them into
 * `outbox.dispatch` jobs (`pumpOutbox`). Either way the markers' delete
 * commits with what replaces them, so a crash anywhere leaves either the
 * markers (taken again by the next pump) or the deliveries and jobs — never
 * neither.
 */
export interface OutboxEvent {
  event: string;
  participantId?: string | null;
  engagementId?: string | null;
  data: Record<string, unknown>;
  /** Emission time; defaults to the clock's now. */
  occurredAt?: Date;
  /**
   * The trace context of the request that caused the event, when the emitter
   * works for several (a batch of completions); absent, the emitter's own.
   */
  traceparent?: string | null;
}

export const DISPATCH_TASK = 'outbox.dispatch';

/**
 * What a module writes in the statement that writes the events it follows,
 * declared as `outboxFollower` in its ServiceModule (leaderboards: the points
 * totals of points.awarded.v1; challenges: a re-evaluation job for
 * participants with an open enrollment). A follower is SQL: common table
 * expressions (`name AS (…)`, comma-separated) over `written`, the rows the
 * statement has just inserted into outbox_events (`writtenReturning`), with
 * `$1` the tenant. Every statement
 * that inserts outbox rows ends with them (`followingSql`): `emit`, and the
 * grant and deduct statements of the points module, which write their own
 * events. So what follows an event is written in the same statement, and
 * reading the follower's module tells what it writes.
 */
export interface OutboxFollower {
  /** CTEs over `written` (each follower filters the events it follows). */
  sql: string;
  /** A CTE of `sql` that writes nothing by SQL (it calls a function): the statement reads it, or PostgreSQL would skip it. */
  read?: string;
}

const followers = new Map<string, OutboxFollower>();

export function registerOutboxFollower(module: string, follower: OutboxFollower): void {
  followers.set(module, follower);
  textsWithFollowers.clear();
}

const textsWithFollowers = new Map<string, string>();

/**
 * The text of a statement that ends with the followers (`followingSql`,
 * `followersRead`), built once per key and again only when a follower is
 * registered: a hot statement's text is then the same string on every call,
 * which spares building and hashing kilobytes of SQL per request.
 */
export function textWithFollowers(key: string, build: () => string): string {
  let text = textsWithFollowers.get(key);
  if (text === undefined) {
    text = build();
    textsWithFollowers.set(key, text);
  }
  return text;
}

/** The followers' CTEs, each preceded by a comma, to end the WITH list of a statement that has a `written` CTE; empty without followers. */
export function followingSql(): string {
  return [...followers.values()].map((f) => `,\n${f.sql}`).join('');
}

/** Columns for the final SELECT of such a statement (each beginning with a comma) that make PostgreSQL run the followers' `read` CTEs. */
export function followersRead(): string {
  return [...followers.values()].flatMap((f) => (f.read ? [`, (SELECT count(*) FROM ${f.read}) AS ${f.read}`] : [])).join('');
}

/**
 * What a `written` CTE returns for the followers (the RETURNING list of its
 * insert into outbox_events): `id, seq, event, participant_id, data,
 * created_at` and `participant_known`, whether the event's participant exists.
 * A statement that creates its participants itself (a grant) says so: its
 * own inserts are invisible to a look-up in the same statement.
 */
export function writtenReturning(participantsCreatedHere: boolean): string {
  // A scalar look-up with LIMIT, not EXISTS: a generic plan made while the tenant had few participants turned EXISTS into
  // a hash of every participant of the tenant, built on each statement.
  const known = participantsCreatedHere
    ? 'true'
    : 'coalesce((SELECT true FROM participants p WHERE p.tenant_id = outbox_events.tenant_id AND p.participant_id = outbox_events.participant_id LIMIT 1), false)';
  return `id, seq, event, participant_id, data, created_at, ${known} AS participant_known`;
}

/** Events emitted in a batch, in emission order, by tenant; a slot holds the place of events filled in later. */
type HeldEvent = { id: string; event: OutboxEvent; at: Date; traceparent: string | null };
type HeldEntry = HeldEvent | { slot: HeldEvent[] | null };

/** A place among the held events for events known only later in the transaction. */
export interface OutboxSlot {
  /** Sets the slot's events (emitted at `at` unless they carry their own time); returns their ids. */
  fill(events: OutboxEvent[], at: Date): string[];
}

/**
 * The events held by the batch of `tx` (platform/batch.ts), or null outside a
 * batch. The batch writes them with one statement per tenant, in emission
 * order, after every other held write of the batch (`onLastEnd`), so a
 * batch that applies a hundred events writes its outbox rows (and runs its
 * followers) once instead of a hundred times. Nothing in a batch reads the
 * outbox rows it emitted (the outbox is read by deliveries, after commit).
 */
function heldOf(tx: Tx, tenantId: string): HeldEntry[] | null {
  const batch = tx.batch;
  if (!batch) return null;
  const holding = batch.state('outbox:held', () => {
    const byTenant = new Map<string, HeldEntry[]>();
    batch.onLastEnd(() => writeHeld(tx, byTenant));
    return byTenant;
  });
  let ofTenant = holding.get(tenantId);
  if (!ofTenant) {
    ofTenant = [];
    holding.set(tenantId, ofTenant);
  }
  return ofTenant;
}

async function writeHeld(tx: Tx, holding: Map<string, HeldEntry[]>): Promise<void> {
  for (const [tenantId, entries] of holding) {
    const rows = entries.flatMap((entry) => {
      if (!('slot' in entry)) return [entry];
      if (entry.slot === null) throw new Error('an outbox slot was reserved and never filled');
      return entry.slot;
    });
    if (rows.length > 0) await write(tx, eventsStatement(tenantId, rows));
  }
}

function heldEvents(events: OutboxEvent[], now: Date): HeldEvent[] {
  // The emitter's trace context while tracing is on: the jobs that deliver the event link to it.
  const traceparent = currentTraceparent();
  return events.map((event) => ({ id: prefixedId('evt'), event, at: event.occurredAt ?? now, traceparent: event.traceparent === undefined ? traceparent : event.traceparent }));
}

/**
 * Reserves the place of events that a held change will know only when it is
 * written (a batch's grants: their balances come back from the batch's grant
 * statement). Null outside a batch. Every slot must be filled before the
 * batch's last endings run.
 */
export function reserveEmit(tx: Tx, tenantId: string): OutboxSlot | null {
  const entries = heldOf(tx, tenantId);
  if (!entries) return null;
  const entry: { slot: HeldEvent[] | null } = { slot: null };
  entries.push(entry);
  return {
    fill(events, at) {
      entry.slot = heldEvents(events, at);
      return entry.slot.map((row) => row.id);
    },
  };
}

/**
 * Writes events and their pending markers in one statement; returns the event
 * ids (`evt_…`). In a batch the events are kept and written with the others
 * when it ends, in the same transaction.
 */
export async function emit(tx: Tx, tenantId: string, events: OutboxEvent | OutboxEvent[]): Promise<string[]> {
  const { ids, statements } = emitting(tx, tenantId, Array.isArray(events) ? events : [events]);
  for (const statement of statements) await write(tx, statement);
  return ids;
}

async function write(tx: Tx, statement: Statement): Promise<void> {
  await tx.query(statement.text, [...statement.values]);
}

/**
 * `emit` for a transaction that sends its last statements with its COMMIT
 * (`db.tenantEndingWith`): the event ids, and the statement that writes them
 * for the caller to send; none when a batch holds the events (it writes them
 * when it ends) or there are none.
 */
export function emitting(tx: Tx, tenantId: string, events: OutboxEvent[]): { ids: string[]; statements: Statement[] } {
  if (events.length === 0) return { ids: [], statements: [] };
  const rows = heldEvents(events, clock.now());
  const ids = rows.map((row) => row.id);
  const entries = heldOf(tx, tenantId);
  if (entries) {
    entries.push(...rows);
    return { ids, statements: [] };
  }
  return { ids, statements: [eventsStatement(tenantId, rows)] };
}

/**
 * The statement that writes `events` for a caller that sends it without a
 * transaction object of its own (a benchmark's message of a spin's writes);
 * the same statement `emitting` hands back.
 */
export function emitStatement(tenantId: string, events: OutboxEvent[], now: Date = clock.now()): Statement {
  return eventsStatement(tenantId, heldEvents(events, now));
}

function eventsStatement(tenantId: string, rows: HeldEvent[]): Statement {
  // WITH ORDINALITY … ORDER BY: the identity column `seq` follows emission order.
  return {
    text: `WITH written AS (
       INSERT INTO outbox_events (tenant_id, id, event, participant_id, engagement_id, data, created_at, traceparent)
       SELECT $1::uuid, e.id, e.event, e.participant_id, e.engagement_id, e.data, e.created_at, e.traceparent
       FROM unnest($2::text[], $3::text[], $4::text[], $5::uuid[], $6::jsonb[], $7::timestamptz[], $8::text[])
         WITH ORDINALITY AS e (id, event, participant_id, engagement_id, data, created_at, traceparent, n)
       ORDER BY e.n
       RETURNING ${writtenReturning(false)}
     ),
     pending AS (
       INSERT INTO outbox_pending (tenant_id, event_id) SELECT $1::uuid, id FROM written
     )${followingSql()}
     SELECT count(*) AS written${followersRead()} FROM written`,
    values: [
      tenantId,
      rows.map((r) => r.id),
      rows.map((r) => r.event.event),
      rows.map((r) => r.event.participantId ?? null),
      rows.map((r) => r.event.engagementId ?? null),
      rows.map((r) => JSON.stringify(r.event.data)),
      rows.map((r) => r.at.toISOString()),
      rows.map((r) => r.traceparent),
    ],
  };
}

/** The name of the outbox's pump (platform/pump.ts): the webhooks module's dispatcher, which falls back on `pumpOutbox`. */
export const OUTBOX_PUMP = 'outbox';
/** Pending events taken per pump transaction. */
export const OUTBOX_PUMP_BATCH = 5_000;
/** The longest a pump's takes read from where the last one ended before one reads `outbox_pending` from its start (`TakeCursor`). */
export const TAKE_FROM_START_MS = 250;

/**
 * Where a pump's next take of `outbox_pending` starts (`take_outbox_pending`,
 * migration 1515): the heap position where its last take ended, so that it
 * does not read again past the rows the takes before it deleted (they stay
 * until a vacuum frees them); from the start of the heap at least every
 * TAKE_FROM_START_MS, so that a row inserted behind the position (into space a
 * vacuum freed) waits no longer than that. A hint: a take from any position
 * takes only pending rows, each once.
 */
export class TakeCursor {
  private at = HEAP_START;
  private fromStartAt = -Infinity;

  /** `now`: milliseconds on a monotonic clock. */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** The position the next take starts from. */
  next(): string {
    const now = this.now();
    if (now - this.fromStartAt < TAKE_FROM_START_MS) return this.at;
    this.fromStartAt = now;
    return HEAP_START;
  }

  /** Where a take ended (its rows' `next_from`), when it took any. */
  ended(at: string | null | undefined): void {
    if (at) this.at = at;
  }
}

const HEAP_START = '(0,0)';

const takeCursors = new WeakMap<pg.Pool, TakeCursor>();

/** The position of the takes through `pool` (one database's heap; a pump's loops share it: each take still locks only rows no other holds). */
export function takeCursorOf(pool: pg.Pool): TakeCursor {
  let cursor = takeCursors.get(pool);
  if (!cursor) takeCursors.set(pool, (cursor = new TakeCursor()));
  return cursor;
}

/** Event ids per dispatch job (a job's payload stays small, and one failing job retries few events). */
export const DISPATCH_EVENTS_PER_JOB = 500;

/**
 * Moves up to `limit` pending events into `outbox.dispatch` jobs (one per
 * tenant and chunk of DISPATCH_EVENTS_PER_JOB) in one transaction, which the
 * queue runs and retries each on its own: what the outbox's pump does with
 * events whose fan-out failed (modules/webhooks/dispatcher.ts). Returns
 * how many events it moved. Safe to run in several processes at once
 * (SKIP LOCKED); runs as the schema owner because it looks across tenants.
 * The take (`take_outbox_pending`, migrations 1500 and 1515) starts where the last one ended (`TakeCursor`) and deletes the rows it locked
 * by their addresses, where a join of the locked rows with the table made a
 * second pass and a hash of it (5.9 ms per run at 1,500 events/s, 12% of a
 * core).
 */
export async function pumpOutbox(pool: pg.Pool, limit: number = OUTBOX_PUMP_BATCH, cursor: TakeCursor = takeCursorOf(pool)): Promise<number> {
  const { rows } = await pool.query(
    `WITH taken AS (
       SELECT tenant_id, event_id, next_from FROM take_outbox_pending($1, $4::tid)
     ),
     chunks AS (
       SELECT tenant_id, array_agg(event_id ORDER BY event_id) AS ids
       FROM (SELECT tenant_id, event_id, (row_number() OVER (PARTITION BY tenant_id) - 1) / $3 AS chunk FROM taken) c
       GROUP BY tenant_id, chunk
     ),
     jobs AS (
       SELECT enqueue_jobs($2, ARRAY(SELECT json_build_object('tenant_id', tenant_id, 'event_ids', ids) FROM chunks), 25) AS added
     )
     SELECT (SELECT count(*) FROM taken)::int AS events, (SELECT added FROM jobs)::int AS jobs, (SELECT next_from FROM taken LIMIT 1)::text AS next_from`,
    [limit, DISPATCH_TASK, DISPATCH_EVENTS_PER_JOB, cursor.next()],
  );
  cursor.ended(rows[0].next_from as string | null);
  return rows[0].events as number;
}

