import type { Database, Statement, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { AppError, conflict, invalid, notFound } from '../../platform/errors.js';
import { addJob } from '../../platform/jobs.js';
import { runFactHandlers } from '../../platform/facts.js';
import { inBatch, readWithQuestions } from '../../platform/batch.js';
import type { EventScanFilter } from '../../platform/event-store.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import type { AuthContext } from '../../platform/auth.js';
import { continueStreaksForEventInTx } from '../streaks/index.js';
import { applyEarnRulesInTx, coalesceProfile, type RuleVerdict } from '../rules/index.js';
import * as store from './store.js';
import { checkQuota, countAcceptedEventsInTx, utcDay, type UsageRow } from './quota.js';
import { countEventNamesInTx } from './event-names.js';
import { processingQueue, type Rejection } from './normalize.js';

/**
 * The event store and its processing. Storing: idempotency keys, the event
 * row and its processing job commit together, so an accepted event is never
 * lost. Processing: one transaction per event that flips its processed
 * marker and applies everything the event causes; a second processor of the
 * same event finds it processed and does nothing.
 */
export type StoreResult =
  | { status: 'accepted'; eventId: string }
  | { status: 'duplicate'; eventId: string }
  | { status: 'rejected'; code: string; detail: string };

const KEY_REUSED: Rejection = {
  code: 'IDEMPOTENCY_KEY_REUSED',
  detail: 'this idempotency key was already used within 24 hours for a different event',
};

/**
 * Stores events of one tenant in one statement; events repeating a key within the list are duplicates of its first use.
 * The accepted ones are counted against the daily quota here unless `countQuota` is false, in which case the caller
 * counts them later in the same transaction (`countAcceptedEventsInTx`).
 */
export async function storeEventsInTx(tx: Tx, tenantId: string, events: store.NewEvent[], countQuota = true): Promise<StoreResult[]> {
  const uses = firstUses(events);
  const outcomes = uses.unique.length > 0 ? await store.insertEvents(tx, tenantId, uses.unique, clock.now()) : [];
  const results = await resultsOf(tx, tenantId, events, uses, outcomes);
  if (countQuota) await countAcceptedInTx(tx, tenantId, outcomes.filter((o) => o.fresh).map((o) => uses.unique[o.index]));
  return results;
}

/**
 * `storeEventsInTx` in its own transaction of two round trips: BEGIN, the tenant and the one accept statement (which
 * also counts the quota and the names) in one message, then COMMIT, after the quota is checked on the statement's
 * rows (over the quota: rolled back, nothing stored). The accept path's write (writer.ts).
 */
export async function storeEvents(db: Database, tenantId: string, events: store.NewEvent[]): Promise<StoreResult[]> {
  const uses = firstUses(events);
  const now = clock.now();
  const { text, values } = store.insertEventsStatement(tenantId, uses.unique, now, utcDay(now));
  return db.tenantStartingWith<StoreResult[], store.InsertRow>(tenantId, text, values, async (tx, rows) => {
    const outcomes = store.insertOutcomes(rows);
    const fresh = outcomes.filter((o) => o.fresh).length;
    if (fresh > 0) checkQuota(rows[0] as UsageRow, fresh, now);
    return resultsOf(tx, tenantId, events, uses, outcomes);
  });
}

interface FirstUses {
  /** The first event of each key, in order, and its index in the list. */
  unique: store.NewEvent[];
  uniqueIndex: number[];
}

function firstUses(events: store.NewEvent[]): FirstUses {
  const uses: FirstUses = { unique: [], uniqueIndex: [] };
  const seen = new Set<string>();
  events.forEach((event, index) => {
    if (seen.has(event.key)) return;
    seen.add(event.key);
    uses.unique.push(event);
    uses.uniqueIndex.push(index);
  });
  return uses;
}

function answer(event: store.NewEvent, holder: { eventId: string; fingerprint: string } | undefined, fresh: boolean): StoreResult {
  if (fresh) return { status: 'accepted', eventId: event.eventId };
  if (!holder) return { status: 'rejected', code: 'IDEMPOTENCY_IN_PROGRESS', detail: 'the idempotency key is in use by a request that is still running' };
  if (holder.fingerprint !== event.fingerprint) return { status: 'rejected', ...KEY_REUSED };
  return { status: 'duplicate', eventId: holder.eventId };
}

/** Each event's answer from the insert's outcomes: accepted, a duplicate of the key's holder, or refused. */
async function resultsOf(tx: Tx, tenantId: string, events: store.NewEvent[], uses: FirstUses, outcomes: store.InsertOutcome[]): Promise<StoreResult[]> {
  const { unique, uniqueIndex } = uses;
  const results: StoreResult[] = new Array(events.length);
  const missing = outcomes.filter((o) => !o.fresh && o.existingEventId === null).map((o) => unique[o.index].key);
  const late = missing.length > 0 ? await store.findKeys(tx, tenantId, missing) : new Map();
  // Who holds each key once the statement ran: a repeat later in the list is compared with the holder, not with the key's first use in the list.
  const holders = new Map<string, { eventId: string; fingerprint: string } | undefined>();
  for (const outcome of outcomes) {
    const event = unique[outcome.index];
    const index = uniqueIndex[outcome.index];
    const holder = outcome.fresh
      ? { eventId: event.eventId, fingerprint: event.fingerprint }
      : outcome.existingEventId !== null
        ? { eventId: outcome.existingEventId, fingerprint: outcome.existingFingerprint! }
        : late.get(event.key);
    holders.set(event.key, holder);
    results[index] = answer(event, holder, outcome.fresh);
  }
  events.forEach((event, index) => {
    if (!results[index]) results[index] = answer(event, holders.get(event.key), false);
  });
  return results;
}

/** The quota first: its row lock orders the tenant's writes, so the name counts after it wait for no one. */
async function countAcceptedInTx(tx: Tx, tenantId: string, accepted: ReadonlyArray<{ eventName: string; occurredAt: Date }>): Promise<void> {
  await countAcceptedEventsInTx(tx, tenantId, accepted.length, clock.now());
  await countEventNamesInTx(tx, tenantId, accepted);
}

export interface ProcessedEvent {
  eventId: string;
  factId: string;
  outcome: ProcessingOutcome;
}

export interface ProcessingOutcome {
  points_awarded: number;
  /** Every active rule listening to the event's name, with its result (see RuleVerdict). */
  rules: RuleVerdict[];
  capped_rules: string[];
  streaks_continued: string[];
  unmatched_event_name?: { nearest: string[] };
}

/**
 * An outcome as stored, in today's shape: outcomes written before rules had
 * results list only the rules that ran, each of which applied.
 */
function currentOutcome(stored: Record<string, unknown> | null): ProcessingOutcome | null {
  if (!stored) return null;
  const outcome = stored as Partial<ProcessingOutcome>;
  return {
    ...outcome,
    points_awarded: outcome.points_awarded ?? 0,
    rules: (outcome.rules ?? []).map((rule) => (rule.result ? rule : { ...rule, result: 'applied' as const })),
    capped_rules: outcome.capped_rules ?? [],
    streaks_continued: outcome.streaks_continued ?? [],
  };
}

/**
 * Processes one stored event inside the caller's transaction: the processed
 * marker, profile coalescing, earn rules (points, badges, streaks), streaks
 * counting this event, and the fact handlers (challenges, contests). Returns
 * null when the event was processed already.
 */
export async function processEventInTx(tx: Tx, tenantId: string, eventId: string): Promise<ProcessedEvent | null> {
  const startedAt = clock.now();
  const event = await store.claimForProcessing(tx, tenantId, eventId);
  if (!event) return null;
  const outcome = await applyClaimedEventInTx(tx, tenantId, event);
  await store.recordProcessed(tx, tenantId, eventId, startedAt, outcome);
  return { eventId: event.event_id, factId: event.fact_id, outcome };
}

/**
 * Processes a batch of stored events in the caller's transaction, in the order
 * given: claims them all with one statement (the processed ones are skipped),
 * sent with the batch's questions (platform/batch.ts), applies each, and
 * writes their outbox rows with one statement. Returns how many were
 * processed here and the statement of their processed markers, for the caller
 * to send before it commits (a lane sends it with its COMMIT).
 */
export async function processEventBatchInTx(tx: Tx, tenantId: string, eventIds: string[]): Promise<{ processed: number; markers: Statement[] }> {
  const { rows, answers } = await readWithQuestions(tx, tenantId, [store.claimManyStatement(tenantId, eventIds)]);
  const claimed = new Map((rows[0] as store.EventRow[]).map((event) => [event.event_id, event]));
  const processed: Array<{ eventId: string; outcome: ProcessingOutcome }> = [];
  // One batch: definitions read once (platform/batch.ts), outbox rows written with one statement at the end.
  await inBatch(
    tx,
    async (batchTx) => {
      for (const eventId of eventIds) {
        const event = claimed.get(eventId);
        if (event) processed.push({ eventId, outcome: await applyClaimedEventInTx(batchTx, tenantId, event) });
      }
    },
    answers,
  );
  if (processed.length === 0) return { processed: 0, markers: [] };
  // Processed when committed: the markers carry the batch's end, not each event's start.
  const processedAt = clock.now();
  return { processed: processed.length, markers: [store.recordProcessedManyStatement(tenantId, processedAt, processed)] };
}

/** Everything an event causes, for an event claimed in this transaction; the caller writes its processed marker. */
async function applyClaimedEventInTx(tx: Tx, tenantId: string, event: store.EventRow): Promise<ProcessingOutcome> {
  // The event timestamp tells the profile how recent these values are, so a late event cannot overwrite newer ones.
  await coalesceProfile(tx, tenantId, event.participant_id, event.properties, { observedAt: event.occurred_at });
  const rules = await applyEarnRulesInTx(tx, tenantId, {
    eventId: event.event_id,
    eventName: event.event_name,
    participantId: event.participant_id,
    engagementId: event.engagement_id,
    properties: event.properties,
    occurredAt: event.occurred_at,
  });
  const streaks = await continueStreaksForEventInTx(tx, tenantId, { participantId: event.participant_id, eventName: event.event_name, at: event.occurred_at });
  await runFactHandlers(tx, tenantId, {
    id: event.fact_id,
    name: event.event_name,
    participantId: event.participant_id,
    engagementId: event.engagement_id,
    properties: event.properties,
    occurredAt: event.occurred_at,
    source: 'event',
    evaluateChallenges: true,
  });
  return {
    points_awarded: rules.points_awarded,
    rules: rules.rules,
    capped_rules: rules.capped_rules,
    streaks_continued: streaks.map((s) => s.streakCode),
    ...(rules.unmatched_event_name && { unmatched_event_name: rules.unmatched_event_name }),
  };
}

/** Attempts before an event that keeps failing for operating reasons is left as failed. */
export const PROCESSING_ATTEMPTS_MAX = 5;
const RETRY_BASE_DELAY_MS = 2_000;

function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error instanceof AppError ? error.code : error.name}: ${error.message}` : String(error);
  return text.slice(0, 2000);
}

/**
 * Records that processing an event failed. A domain error (AppError) will
 * fail the same way again, so the event is left as failed at once; any other
 * error is retried with backoff in the participant's queue, up to
 * PROCESSING_ATTEMPTS_MAX attempts. Either way the events behind it go on.
 */
export async function recordProcessingFailure(db: Database, tenantId: string, eventId: string, error: unknown): Promise<void> {
  await db.tenant(tenantId, (tx) => recordProcessingFailureInTx(tx, tenantId, eventId, error));
}

export async function recordProcessingFailureInTx(tx: Tx, tenantId: string, eventId: string, error: unknown): Promise<void> {
  const permanent = error instanceof AppError;
  const current = await store.findEvent(tx, tenantId, eventId);
  if (!current || current.status === 'processed') return;
  const final = permanent || current.attempts + 1 >= PROCESSING_ATTEMPTS_MAX;
  const recorded = await store.recordFailure(tx, tenantId, eventId, errorText(error), final);
  if (recorded && !final) {
    // Infrastructure time, not domain time: graphile-worker compares run_at with the database clock.
    const runAt = new Date(Date.now() + RETRY_BASE_DELAY_MS * 2 ** (recorded.attempts - 1));
    await addJob(tx, store.PROCESS_TASK, { tenant_id: tenantId, event_ids: [eventId] }, { runAt, queueName: processingQueue(tenantId, recorded.participant_id) });
  }
}

/** The processing job: each event in its own transaction, in the order given (timestamp order). */
export async function processEvents(db: Database, tenantId: string, eventIds: string[], onError: (eventId: string, error: unknown) => void): Promise<void> {
  for (const eventId of eventIds) {
    try {
      await db.tenant(tenantId, (tx) => processEventInTx(tx, tenantId, eventId));
    } catch (error) {
      onError(eventId, error);
      await recordProcessingFailure(db, tenantId, eventId, error);
    }
  }
}

/**
 * The synchronous route: stores and processes the event in one transaction.
 * When processing fails, the event is still stored, as failed with its
 * error, and the caller gets a 422 naming it.
 */
export async function ingestSync(db: Database, tenantId: string, event: store.NewEvent) {
  try {
    return await db.tenant(tenantId, async (tx) => {
      const [stored] = await storeEventsInTx(tx, tenantId, [event], false);
      if (stored.status === 'rejected') throw new AppError('rule_violation', stored.code, stored.detail);
      const processed = await processEventInTx(tx, tenantId, stored.eventId);
      // Counted after processing: the tenant's counter row stays locked until commit, and taken before
      // processing it would make every synchronous event of the tenant wait for the others' whole processing.
      await countAcceptedInTx(tx, tenantId, stored.status === 'accepted' ? [event] : []);
      const row = processed ? null : await store.findEvent(tx, tenantId, stored.eventId);
      const outcome = processed?.outcome ?? currentOutcome(row?.outcome ?? null);
      // The effects of a rule ran when it has badges_awarded (see RuleVerdict).
      const ran = (outcome?.rules ?? []).filter((r) => r.badges_awarded !== undefined);
      return {
        event_id: stored.eventId,
        fact_id: processed?.factId ?? row!.fact_id,
        duplicate: stored.status === 'duplicate',
        status: 'processed' as const,
        points_awarded: outcome?.points_awarded ?? 0,
        rules_applied: ran.map((r) => ({ rule_id: r.rule_id, rule_name: r.rule_name, points: r.points, badges_awarded: r.badges_awarded! })),
        rules: outcome?.rules ?? [],
        ...(outcome?.unmatched_event_name && { unmatched_event_name: outcome.unmatched_event_name }),
      };
    });
  } catch (error) {
    // Refusals that store nothing are answered as they are; only a processing failure keeps the event.
    if (error instanceof AppError && (error.code.startsWith('IDEMPOTENCY') || error.code === 'INGESTION_QUOTA_EXCEEDED')) throw error;
    // Keep the event, marked failed with its error, so that it is visible and can be retried.
    const stored = await db.tenant(tenantId, async (tx) => (await storeEventsInTx(tx, tenantId, [{ ...event, queue: null }]))[0]);
    if (stored.status !== 'rejected') {
      await db.tenant(tenantId, (tx) => store.recordFailure(tx, tenantId, stored.eventId, errorText(error), true));
    }
    const detail = error instanceof AppError ? error.message : 'processing failed; the event is stored as failed';
    throw new AppError('rule_violation', 'EVENT_PROCESSING_FAILED', `the event could not be processed: ${detail}`, {
      event_id: stored.status === 'rejected' ? null : stored.eventId,
    });
  }
}

function toStoredEvent(row: store.EventRow, auth: AuthContext) {
  return {
    event_id: row.event_id,
    event_name: row.event_name,
    participant_id: row.participant_id,
    engagement_id: row.engagement_id,
    // Personal values in properties are masked by the answer's masking step (platform/privacy.ts; the schema marks them free-form).
    properties: row.properties,
    timestamp: row.occurred_at.toISOString(),
    received_at: row.received_at.toISOString(),
    idempotency_key: row.idempotency_key,
    fact_id: row.fact_id,
    status: row.status,
    attempts: row.attempts,
    last_error: row.last_error,
    processed_at: row.processed_at ? row.processed_at.toISOString() : null,
    outcome: currentOutcome(row.outcome),
  };
}

export async function searchEvents(
  db: Database,
  auth: AuthContext,
  query: { participant_id?: string; event_name?: string; status?: string; from?: string; to?: string; limit?: number; cursor?: string },
) {
  const limit = query.limit ?? 50;
  const before = decodeCursor(query.cursor, { at: 'timestamp', seq: 'int64' });
  const from = query.from ? new Date(query.from) : undefined;
  const to = query.to ? new Date(query.to) : undefined;
  if (from && to && from >= to) throw invalid('"from" must be before "to"');
  return db.tenant(auth.tenantId, async (tx) => {
    const rows = await store.searchEvents(
      tx,
      auth.tenantId,
      { participantId: query.participant_id, eventName: query.event_name, status: query.status, from, to },
      before,
      limit + 1,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      events: page.map((r) => toStoredEvent(r, auth)),
      next_cursor: rows.length > limit ? encodeCursor({ at: last.occurred_at.toISOString(), seq: last.seq }) : null,
    };
  });
}

export async function readEvent(db: Database, auth: AuthContext, eventId: string) {
  return db.tenant(auth.tenantId, async (tx) => {
    const row = await store.findEvent(tx, auth.tenantId, eventId);
    if (!row) throw notFound(`event "${eventId}"`);
    return toStoredEvent(row, auth);
  });
}

/** Queues a failed event for another attempt. */
export async function retryEvent(db: Database, tenantId: string, eventId: string) {
  return db.tenant(tenantId, async (tx) => {
    const row = await store.requeue(tx, tenantId, eventId);
    if (!row) {
      const existing = await store.findEvent(tx, tenantId, eventId);
      if (!existing) throw notFound(`event "${eventId}"`);
      throw conflict(`the event is ${existing.status}; only failed events are retried`, 'EVENT_NOT_FAILED');
    }
    await addJob(tx, store.PROCESS_TASK, { tenant_id: tenantId, event_ids: [eventId] }, { queueName: processingQueue(tenantId, row.participant_id) });
    return { event_id: eventId, status: row.status };
  });
}

/** Stored events in timestamp order, for rule simulation (registered as the module's `eventScan`). */
export async function scanEventsInTx(tx: Tx, tenantId: string, filter: EventScanFilter) {
  return store.scanEvents(tx, tenantId, filter);
}
