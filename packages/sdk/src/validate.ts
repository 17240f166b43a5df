import { LoyaltyValidationError } from './errors.js';
import type { OperationName } from './operations.js';

/**
 * Argument checks made before a request is sent. They catch programming
 * mistakes (a missing id, a fractional or negative amount) with a message
 * naming the argument, and send nothing. They do not repeat every rule of the
 * service (lengths, patterns): the service's 400/422 answers those.
 */
export const MAX_BATCH_EVENTS = 500;

/** No C0 control characters, as the service's participant ids. */
const CONTROL_CHARACTERS = /[\u0000-\u001f]/;

export function requireNonEmptyString(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new LoyaltyValidationError(field, 'must be a non-empty string');
  return value;
}

export function requirePositiveSafeInteger(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new LoyaltyValidationError(field, `must be a positive whole number (a safe integer), got ${describe(value)}`);
  }
  return value;
}

export function requirePlainObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LoyaltyValidationError(field, `must be an object, got ${describe(value)}`);
  return value as Record<string, unknown>;
}

function optionalString(value: unknown, field: string): void {
  if (value !== undefined) requireNonEmptyString(value, field);
}

function participantId(value: unknown, field: string): void {
  const id = requireNonEmptyString(value, field);
  if (CONTROL_CHARACTERS.test(id)) throw new LoyaltyValidationError(field, 'must not contain control characters');
}

function timestamp(value: unknown, field: string): void {
  if (value === undefined) return;
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) throw new LoyaltyValidationError(field, 'must be an ISO 8601 timestamp string');
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === 'number') return String(value);
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : typeof value;
}

function pointsChange(body: Record<string, unknown>): void {
  participantId(body.participant_id, 'body.participant_id');
  requirePositiveSafeInteger(body.amount, 'body.amount');
  requireNonEmptyString(body.reason, 'body.reason');
  optionalString(body.idempotency_key, 'body.idempotency_key');
}

function event(value: unknown, field: string): void {
  const body = requirePlainObject(value, field);
  requireNonEmptyString(body.event_name, `${field}.event_name`);
  participantId(body.participant_id, `${field}.participant_id`);
  if (body.properties !== undefined) requirePlainObject(body.properties, `${field}.properties`);
  timestamp(body.timestamp, `${field}.timestamp`);
  optionalString(body.idempotency_key, `${field}.idempotency_key`);
}

function eventBatch(body: Record<string, unknown>): void {
  const events = body.events;
  if (!Array.isArray(events) || events.length === 0) throw new LoyaltyValidationError('body.events', 'must be a non-empty array of events');
  if (events.length > MAX_BATCH_EVENTS) throw new LoyaltyValidationError('body.events', `holds ${events.length} events; at most ${MAX_BATCH_EVENTS} per request`);
  events.forEach((item, index) => event(item, `body.events[${index}]`));
}

function stringList(value: unknown, field: string): void {
  if (!Array.isArray(value) || value.length === 0) throw new LoyaltyValidationError(field, 'must be a non-empty array of strings');
  value.forEach((item, index) => requireNonEmptyString(item, `${field}[${index}]`));
}

/** Body checks per operation (the body is already known to be an object). */
const BODY_RULES: Partial<Record<OperationName, (body: Record<string, unknown>) => void>> = {
  grantPoints: pointsChange,
  deductPoints: pointsChange,
  ingestEvent: (body) => event(body, 'body'),
  ingestEventSync: (body) => event(body, 'body'),
  ingestEventBatch: eventBatch,
  postEventBatch: eventBatch,
  createSession: (body) => {
    participantId(body.participant_id, 'body.participant_id');
    requireNonEmptyString(body.engagement_id, 'body.engagement_id');
  },
  awardBadge: (body) => participantId(body.participant_id, 'body.participant_id'),
  generateReferralCode: (body) => participantId(body.participant_id, 'body.participant_id'),
  checkGates: (body) => stringList(body.targets, 'body.targets'),
  recordScreenVisit: (body) => requireNonEmptyString(body.screen_id, 'body.screen_id'),
  validateActivity: (body) => requireNonEmptyString(body.activity_type, 'body.activity_type'),
  completeActivity: (body) => requireNonEmptyString(body.activity_type, 'body.activity_type'),
};

export function validateBody(name: OperationName, body: unknown, required: boolean): void {
  if (body === undefined) {
    if (required) throw new LoyaltyValidationError('body', 'is required');
    return;
  }
  const object = requirePlainObject(body, 'body');
  BODY_RULES[name]?.(object);
}

/** Path parameters named in the path template, each a non-empty string. */
export function pathParameterNames(template: string): string[] {
  return [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
}

export function fillPath(template: string, values: Record<string, unknown> | undefined): string {
  return template.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const value = values?.[name];
    const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : requireNonEmptyString(value, `path.${name}`);
    return encodeURIComponent(text);
  });
}
