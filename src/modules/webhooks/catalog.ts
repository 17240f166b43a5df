import { PERSONAL_STANDARD_FIELDS } from '../../platform/privacy.js';
import { compileCheck, type Problems } from '../../platform/validation.js';
import { REMINDER_DAY_RANGE } from '../points/index.js';

/**
 * The event catalog: the 27 subscribable events, published at
 * `GET /.well-known/events.json`. Each `data` schema lists the fields the
 * event contract requires; emitters may add fields (`additionalProperties`
 * stays open), never remove or reshape one. Legacy activity events are frozen.
 */
export type EventKind = 'progression' | 'activity' | 'reminder' | 'contest' | 'fraud' | 'privacy';
export type EventStatus = 'active' | 'deferred';

export interface CatalogEntry {
  name: string;
  kind: EventKind;
  status: EventStatus;
  /** Unversioned legacy events: their shape never changes. */
  legacy: boolean;
  frozen: boolean;
  /** The module that emits it (null when deferred: no emitter yet). */
  emitter: string | null;
  description: string;
  /**
   * Canonical personal-data fields (see the participant masking table) the
   * payload may carry. Every catalog payload carries ids only, so each list is
   * empty; a delivery that nevertheless carries one of PERSONAL_DATA_FIELDS is
   * logged in pii_access_log.
   */
  personal_data: string[];
  schema: Record<string, unknown>;
}

/** Standard participant fields whose full read needs `read:pii` (spec: masking on read). */
export const PERSONAL_DATA_FIELDS = PERSONAL_STANDARD_FIELDS;

type Field = Record<string, unknown>;
const str: Field = { type: 'string' };
const int: Field = { type: 'integer' };
const num: Field = { type: 'number' };
const bool: Field = { type: 'boolean' };
const time: Field = { type: 'string', format: 'date-time' };
const nullable = (schema: Field): Field => ({ anyOf: [schema, { type: 'null' }] });

/** A `data` schema: the required fields with their types, participant_id included unless told otherwise. */
function data(fields: Record<string, Field>, options: { participant?: 'required' | 'nullable' } = {}): Record<string, unknown> {
  const participant = options.participant ?? 'required';
  const properties: Record<string, Field> = {
    participant_id: participant === 'required' ? { type: 'string', minLength: 1 } : nullable(str),
    ...fields,
  };
  const required = participant === 'required' ? ['participant_id', ...Object.keys(fields)] : Object.keys(fields);
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties, required, additionalProperties: true };
}

function entry(
  name: string,
  kind: EventKind,
  emitter: string | null,
  description: string,
  schema: Record<string, unknown>,
  options: { deferred?: boolean; legacy?: boolean } = {},
): CatalogEntry {
  return {
    name,
    kind,
    status: options.deferred ? 'deferred' : 'active',
    legacy: options.legacy ?? false,
    frozen: options.legacy ?? false,
    emitter,
    description,
    personal_data: [],
    schema,
  };
}

export const CATALOG: readonly CatalogEntry[] = [
  entry('points.awarded.v1', 'progression', 'points', 'Points were awarded (grant, rule, activity, bulk, challenge, contest, referral or reward).', data({
    amount: { type: 'integer', minimum: 1 }, available: int, lifetime: int, reason: str, ledger_entry_id: str, source_kind: str, multiplier: nullable(num),
  })),
  entry('points.deducted.v1', 'progression', 'points', 'Points were deducted (redemption or adjustment).', data({
    amount: { type: 'integer', minimum: 1 }, available: int, lifetime: int, reason: str, ledger_entry_id: str,
  })),
  entry('reward.points_expired.v1', 'progression', 'points', 'Points expired; available decreased by the expired batch, lifetime is unchanged.', data({
    expired_points: { type: 'integer', minimum: 1 }, available: int, lifetime: int,
  })),
  entry('points.expiring.v1', 'reminder', 'points', 'Points will expire soon: a reminder on each of the tenant\'s `reminder_days` before expiry (by default 60, 30, 7 and 1).', data({
    points: { type: 'integer', minimum: 1 }, expires_at: time, days_before: { type: 'integer', ...REMINDER_DAY_RANGE },
  })),
  entry('tier.changed.v1', 'progression', 'points', 'The participant\'s tier changed (qualification reads lifetime points).', data({
    previous_tier: nullable(str), tier: str, lifetime: int,
  })),
  entry('badge.earned.v1', 'progression', 'rules', 'A badge was earned.', data({ badge_code: str, badge_name: str, earned_at: time })),
  entry('streak.continued.v1', 'progression', 'rules', 'A streak continued.', data({ streak_code: str, current_length: int, longest_length: int })),
  entry('streak.broken.v1', 'progression', 'rules', 'A streak was broken.', data({ streak_code: str, previous_length: int })),
  entry('reward.claimed.v1', 'progression', 'activities', 'A reward was claimed through an on-completion action.', data({
    reward_id: str, claim_id: str, reward_type: str, code: nullable(str),
  })),
  entry('reward.expired.v1', 'progression', null, 'A claimed reward expired. Deferred: subscribable, no emitter yet; do not wait on it.', data({
    reward_id: str, claim_id: str, expired_at: time,
  }), { deferred: true }),
  entry('game.completed', 'activity', null, 'Legacy game completion. Deferred and frozen: subscribable, no emitter.', data({ activity_id: str }), { deferred: true, legacy: true }),
  entry('activity.completed', 'activity', 'activities', 'Legacy activity completion. Unversioned and frozen.', data({ activity_id: str, activity_type: str, fact_id: str }), { legacy: true }),
  entry('quiz.completed', 'activity', 'activities', 'Legacy quiz completion. Unversioned and frozen.', data({ activity_id: str, score: num, passed: bool, fact_id: str }), { legacy: true }),
  entry('challenge.enrolled.v1', 'progression', 'challenges', 'The participant enrolled in a challenge.', data({ challenge_id: str, enrolled_at: time })),
  entry('challenge.milestone_reached.v1', 'progression', 'challenges', 'A challenge milestone was reached.', data({ challenge_id: str, milestone: str, threshold: num })),
  entry('challenge.completed.v1', 'progression', 'challenges', 'A challenge was completed.', data({ challenge_id: str, completed_at: time, score: num })),
  entry('referral.converted.v1', 'progression', 'referrals', 'A referral converted; participant_id is the referrer.', data({
    referrer_id: str, conversion_id: str, code: str, referred_session_id: str,
  })),
  entry('contest.completed.v1', 'contest', 'contests', 'A contest completed: final ranks are frozen. Not about one participant (participant_id is null).', data({
    contest_id: str, completed_at: time, total_entries: int,
  }, { participant: 'nullable' })),
  entry('contest.prize_allocated.v1', 'progression', 'contests', 'A contest prize was allocated to a winner after verification (one delivery per winner).', data({
    contest_id: str, rank: { type: 'integer', minimum: 1 }, reward_type: str, reward_value: num, prize_code: str,
  })),
  entry('fraud.velocity_breach', 'fraud', 'contests', 'A participant exceeded a contest score velocity cap; the payload holds the cap, the observed value and 5 minutes of history.', data({
    contest_id: str,
    cap: { type: 'string', enum: ['per_minute', 'per_hour'] },
    limit: num,
    observed: num,
    history: { type: 'array', items: { type: 'object', properties: { at: time, score: num }, required: ['at', 'score'] } },
  })),
  entry('fraud.suspicious_rank_jump', 'fraud', 'contests', 'A contest entry climbed faster than the rank-jump cap allows.', data({
    contest_id: str, from_rank: int, to_rank: int, window_minutes: int,
  })),
  entry('fraud.review_required', 'fraud', 'contests', 'A high-value contest reward is held for manual review before it is paid.', data({ contest_id: str, entry_id: str, reason: str })),
  entry('reward.disqualified', 'fraud', 'contests', 'A contest reward was denied after review.', data({ contest_id: str, entry_id: str, reason: str })),
  entry('participant.anonymized.v1', 'privacy', 'participants', 'A participant was anonymized: personal data nulled, events and ledger kept; row_counts per table is the audit evidence.', data({
    anonymized_at: time, row_counts: { type: 'object', additionalProperties: { type: 'integer' } },
  })),
  entry('participant.deleted.v1', 'privacy', 'participants', 'A participant was hard-deleted.', data({ deleted_at: time })),
  entry('segment.entered.v1', 'progression', 'segments', 'The participant entered a materialized segment (found by its refresh, every minute or on demand).', data({
    segment_id: str, segment_name: str, at: time,
  })),
  entry('segment.left.v1', 'progression', 'segments', 'The participant left a materialized segment (found by its refresh, every minute or on demand).', data({
    segment_id: str, segment_name: str, at: time,
  })),
];

export const PING_EVENT = 'ping';

const byName = new Map(CATALOG.map((e) => [e.name, e]));

export function catalogEntry(name: string): CatalogEntry | undefined {
  return byName.get(name);
}

export function isCatalogEvent(name: string): boolean {
  return byName.has(name);
}

const checks = new Map<string, (value: unknown) => Problems | null>();

/** Checks an event's `data` against its published schema; returns the problems (empty when valid), one sentence each. */
export function validateEventData(name: string, payload: unknown): string[] {
  const catalogued = byName.get(name);
  if (!catalogued) return [`"${name}" is not in the event catalog`];
  let check = checks.get(name);
  if (!check) {
    const { $schema: _ignored, ...schema } = catalogued.schema;
    check = compileCheck(schema, { in: 'body', label: 'data' });
    checks.set(name, check);
  }
  return check(payload)?.sentences ?? [];
}

/** The personal-data fields present at the top level of a payload. */
export function personalDataIn(payload: Record<string, unknown>): string[] {
  return PERSONAL_DATA_FIELDS.filter((field) => payload[field] !== undefined && payload[field] !== null);
}

/** The document served at `/.well-known/events.json`. */
export function catalogDocument(): { version: number; events: CatalogEntry[] } {
  return { version: 1, events: [...CATALOG] };
}

// ---- subscription patterns ---------------------------------------------------

/** The pattern that subscribes to every event, those added to the catalog later included. */
export const ALL_EVENTS_PATTERN = '*';
const PREFIX_PATTERN = /^([a-z0-9_]+(?:\.[a-z0-9_]+)*)\.\*$/;

/**
 * What is wrong with a subscription pattern, or null when it is valid: an
 * exact catalog name, `*`, or `<prefix>.*` whose prefix (whole dot-separated
 * segments, no other wildcard) starts at least one catalog event's name.
 */
export function patternProblem(pattern: string): string | null {
  if (pattern === ALL_EVENTS_PATTERN || byName.has(pattern)) return null;
  if (pattern.trim() === '') return 'an empty event name or pattern';
  if (!pattern.includes('*')) return `unknown event name ${JSON.stringify(pattern)}`;
  const prefix = PREFIX_PATTERN.exec(pattern)?.[1];
  if (!prefix) {
    return `invalid pattern ${JSON.stringify(pattern)}: a wildcard is either "*" alone or ".*" after a name prefix (such as "points.*")`;
  }
  if (!CATALOG.some((e) => e.name.startsWith(`${prefix}.`))) return `the pattern ${JSON.stringify(pattern)} matches no event in the catalog`;
  return null;
}

/** Whether a subscription (exact names and patterns) covers an event; the fan-out's SQL says the same. */
export function subscriptionMatches(patterns: readonly string[], event: string): boolean {
  return patterns.some((p) => p === ALL_EVENTS_PATTERN || p === event || (p.endsWith('.*') && event.startsWith(p.slice(0, -1))));
}

/** The catalog events a subscription covers today. */
export function eventsMatching(patterns: readonly string[]): string[] {
  return CATALOG.filter((e) => subscriptionMatches(patterns, e.name)).map((e) => e.name);
}

// ---- sample payloads (test events) ----------------------------------------------

/** Ids in a sample payload start with this, so that a receiver cannot take one for a real record. */
export const SAMPLE_ID_PREFIX = 'test_';
/** Values a field of that name takes in a sample payload, where its type alone would read oddly. */
const SAMPLE_VALUES: Record<string, unknown> = {
  amount: 100,
  available: 1250,
  lifetime: 4800,
  expired_points: 50,
  points: 200,
  reason: 'test event',
  source_kind: 'grant',
  multiplier: null,
  previous_tier: 'silver',
  tier: 'gold',
  badge_code: 'first_purchase',
  badge_name: 'First purchase',
  streak_code: 'daily_login',
  current_length: 7,
  longest_length: 12,
  previous_length: 5,
  reward_type: 'coupon',
  code: 'TEST-CODE-0001',
  prize_code: 'TEST-PRIZE-0001',
  activity_type: 'quiz',
  score: 80,
  passed: true,
  milestone: 'halfway',
  threshold: 50,
  total_entries: 120,
  rank: 1,
  reward_value: 25,
  limit: 100,
  observed: 240,
  from_rank: 40,
  to_rank: 2,
  window_minutes: 5,
  row_counts: { participants: 1, ledger_entries: 3 },
};

function sampleValue(field: string, schema: Field, occurredAt: string): unknown {
  if (field in SAMPLE_VALUES) return SAMPLE_VALUES[field];
  const options = schema.anyOf as Field[] | undefined;
  if (options) return sampleValue(field, options.find((o) => o.type !== 'null') ?? options[0], occurredAt);
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      if (schema.format === 'date-time') return occurredAt;
      return field.endsWith('_id') ? `${SAMPLE_ID_PREFIX}${field.slice(0, -3)}` : `test ${field.replaceAll('_', ' ')}`;
    case 'integer':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 1) : 1;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    case 'array': {
      const items = schema.items as Field | undefined;
      return items ? [sampleValue(`${field}_item`, items, occurredAt)] : [];
    }
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Field>;
      return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, sampleValue(name, property, occurredAt)]));
    }
    default:
      return null;
  }
}

/**
 * A payload for a test event, built from the event's published schema: every
 * field the schema lists, with a plausible value (ids prefixed `test_`, times
 * set to `occurredAt`). It passes `validateEventData`.
 */
export function sampleEventData(name: string, occurredAt: string): Record<string, unknown> {
  const catalogued = byName.get(name);
  if (!catalogued) throw new Error(`sampleEventData: "${name}" is not in the event catalog`);
  const data = sampleValue('data', catalogued.schema as Field, occurredAt) as Record<string, unknown>;
  // An event that is not about one participant (contest.completed.v1) says so with null.
  if (!(catalogued.schema.required as string[]).includes('participant_id')) data.participant_id = null;
  return data;
}
