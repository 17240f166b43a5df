import { createHash } from 'node:crypto';
import { clock } from '../../platform/clock.js';
import { prefixedId } from '../../platform/ids.js';
import { unstorableTextIn } from '../../platform/body-check.js';
import type { FieldError } from '../../platform/errors.js';
import { compileCheck } from '../../platform/validation.js';
import { currentTraceparent } from '../../platform/tracing.js';
import type { NewEvent } from './store.js';
import { IngestEvent, PROPERTIES_BYTES_MAX, PROPERTIES_DEPTH_MAX, TIMESTAMP_FUTURE_SKEW_MS } from './schemas.js';

/**
 * Turns one incoming event into a storable one, or says exactly what is wrong
 * with it. Everything that PostgreSQL would refuse is refused here, so that
 * one bad event can never fail a statement that carries other events.
 */
export type Rejection = { code: string; detail: string; errors?: FieldError[] };

/** Processing queues: events of one participant share a queue (a hash bucket), so they are processed one at a time, in order. */
export const PROCESSING_QUEUE_BUCKETS = 64;

/** An event of a batch, checked as the single-event route's body is; paths in `errors` are the event's own. */
const checkEvent = compileCheck(IngestEvent, { in: 'body', label: 'event' });

/** Validates an event of a batch against the same schema the single-event routes use; `index` is its place in the batch's `events`. */
export function checkShape(value: unknown, index: number): Rejection | null {
  const problems = checkEvent(value, `/events/${index}`);
  return problems && { code: 'VALIDATION_INVALID_REQUEST', detail: problems.detail, errors: problems.errors };
}

function depthOf(value: unknown, depth = 0): number {
  if (value === null || typeof value !== 'object') return depth;
  let deepest = depth + 1;
  for (const child of Object.values(value as Record<string, unknown>)) {
    deepest = Math.max(deepest, depthOf(child, depth + 1));
    if (deepest > PROPERTIES_DEPTH_MAX) break;
  }
  return deepest;
}

export function processingQueue(tenantId: string, participantId: string): string {
  const hash = createHash('sha1').update(tenantId).update('\u0000').update(participantId).digest();
  return `ingest:${hash.readUInt32BE(0) % PROCESSING_QUEUE_BUCKETS}`;
}

/**
 * Normalizes a shape-checked event. `headerKey` is the Idempotency-Key header
 * of a single-event request; it must agree with a key in the body.
 */
export function normalize(tenantId: string, event: IngestEvent, headerKey: string | undefined, queued: boolean): NewEvent | Rejection {
  const bodyKey = event.idempotency_key;
  if (headerKey !== undefined && bodyKey !== undefined && headerKey !== bodyKey) {
    return { code: 'IDEMPOTENCY_KEY_MISMATCH', detail: 'the Idempotency-Key header and the idempotency_key field differ; send one, or the same in both' };
  }
  const key = bodyKey ?? headerKey;
  if (key === undefined) {
    return { code: 'IDEMPOTENCY_KEY_REQUIRED', detail: 'an idempotency key is required: send idempotency_key in the event (or the Idempotency-Key header)' };
  }
  const properties = event.properties ?? {};
  const propertiesJson = JSON.stringify(properties);
  const bytes = Buffer.byteLength(propertiesJson, 'utf8');
  if (bytes > PROPERTIES_BYTES_MAX) {
    return { code: 'PROPERTIES_TOO_LARGE', detail: `properties take ${bytes} bytes as JSON; the limit is ${PROPERTIES_BYTES_MAX}` };
  }
  if (depthOf(properties) > PROPERTIES_DEPTH_MAX) {
    return { code: 'PROPERTIES_TOO_DEEP', detail: `properties are nested deeper than ${PROPERTIES_DEPTH_MAX} levels` };
  }
  // PostgreSQL's text and jsonb cannot hold U+0000 or a lone surrogate. A single event's body was
  // checked as a whole before validation; the events of a batch are checked here, one by one.
  const text = unstorableTextIn(event, 'event');
  if (text) return { code: 'VALIDATION_INVALID_REQUEST', detail: text };
  const now = clock.now(tenantId);
  let occurredAt = now;
  if (event.timestamp !== undefined) {
    occurredAt = new Date(event.timestamp);
    const year = occurredAt.getUTCFullYear();
    if (Number.isNaN(occurredAt.getTime()) || year < 1970 || year > 9999) {
      return { code: 'VALIDATION_INVALID_REQUEST', detail: 'event.timestamp is not a usable ISO 8601 date-time' };
    }
    if (occurredAt.getTime() > now.getTime() + TIMESTAMP_FUTURE_SKEW_MS) {
      return { code: 'TIMESTAMP_IN_FUTURE', detail: `event.timestamp lies more than ${TIMESTAMP_FUTURE_SKEW_MS / 60_000} minutes in the future` };
    }
  }
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([event.event_name, event.participant_id, propertiesJson, event.timestamp ?? null, event.engagement_id ?? null]))
    .digest('hex');
  return {
    eventId: prefixedId('ev'),
    factId: prefixedId('fct'),
    key,
    fingerprint,
    eventName: event.event_name,
    participantId: event.participant_id,
    engagementId: event.engagement_id ?? null,
    propertiesJson,
    occurredAt,
    queue: queued ? processingQueue(tenantId, event.participant_id) : null,
    traceparent: queued ? currentTraceparent() : null,
  };
}

export const isRejection = (value: NewEvent | Rejection): value is Rejection => 'code' in value && !('eventId' in value);
