import { personal } from '../../platform/privacy.js';
import { DOCUMENTED_AS } from '../../platform/openapi-examples.js';
import { Type, type Static } from '@sinclair/typebox';
import { FieldErrorSchema, Pagination } from '../../platform/http.js';
import { ParticipantId } from '../participants/index.js';
import { UnmatchedEventName } from '../rules/index.js';

/** The most events one batch request carries (decision: the spec's 500 "safe ceiling", see docs/decisions/ingestion.md). */
export const BATCH_EVENTS_MAX = 500;
/** The largest `properties` object of one event, measured as UTF-8 JSON. */
export const PROPERTIES_BYTES_MAX = 16 * 1024;
/** The deepest nesting of `properties`. */
export const PROPERTIES_DEPTH_MAX = 8;
/** How far in the future an event timestamp may lie (client clock skew). */
export const TIMESTAMP_FUTURE_SKEW_MS = 10 * 60 * 1000;
/** Body limit of batch requests: 500 events of up to 16 KiB of properties each. */
export const BATCH_BODY_BYTES_MAX = 9 * 1024 * 1024;
export const SEARCH_PAGE_MAX = 200;

export const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x21-\\x7e]+$',
  description: 'Printable ASCII, 1 to 255 characters. A key repeated within 24 hours returns the first event (`duplicate: true`) and stores nothing new.',
});

export const EventName = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[A-Za-z0-9_.:/-]+$',
  description: 'An event name: 1 to 128 letters, digits, `_`, `.`, `:`, `/` or `-`.',
});

export const IngestEvent = Type.Object(
  {
    event_name: EventName,
    participant_id: ParticipantId,
    properties: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        ...personal('free-form'),
        description: `Free-form attributes: at most ${PROPERTIES_BYTES_MAX} bytes as JSON, nested at most ${PROPERTIES_DEPTH_MAX} levels. Standard profile fields (email, first_name, …) update the participant profile.`,
      }),
    ),
    timestamp: Type.Optional(
      Type.String({ format: 'date-time', description: 'When it happened (ISO 8601 with a time zone); default the time of receipt. At most 10 minutes ahead.' }),
    ),
    idempotency_key: Type.Optional(IdempotencyKey),
    engagement_id: Type.Optional(Type.String({ format: 'uuid' })),
  },
  {
    additionalProperties: false,
    examples: [{ event_name: 'purchase_completed', participant_id: 'user_1042', properties: { order_id: 'A-88412', order_total: 42.5, currency: 'EUR' }, idempotency_key: 'order-A-88412' }],
    $id: 'IngestEvent',
    title: 'IngestEvent',
    description: 'One event. An idempotency key is required: `idempotency_key` in the event, or (single-event routes) the `Idempotency-Key` header.',
  },
);
export type IngestEvent = Static<typeof IngestEvent>;

export const IdempotencyHeader = Type.Object({ 'idempotency-key': Type.Optional(IdempotencyKey) });

export const AcceptedResponse = Type.Object({
  accepted: Type.Boolean(),
  message_id: Type.String({ description: 'The stored event id; the same for a duplicate.' }),
  duplicate: Type.Boolean({ description: 'True when the idempotency key was used within 24 hours; nothing new was stored.' }),
});

export const BatchBody = Type.Object(
  {
    events: Type.Array(Type.Unknown({ description: 'An IngestEvent; each is validated on its own.', [DOCUMENTED_AS]: 'IngestEvent' }), { minItems: 1, maxItems: BATCH_EVENTS_MAX }),
  },
  { additionalProperties: false },
);

export const BatchResult = Type.Object({
  index: Type.Integer({ description: 'Position of the event in the request.' }),
  status: Type.Union([Type.Literal('accepted'), Type.Literal('duplicate'), Type.Literal('rejected')]),
  message_id: Type.Optional(Type.String()),
  code: Type.Optional(Type.String({ description: 'Why it was rejected.' })),
  detail: Type.Optional(Type.String()),
  errors: Type.Optional(Type.Array(FieldErrorSchema, { description: 'Each field of the event at fault, paths from the request body (`/events/3/participant_id`), as in an error body.' })),
});

export const BatchResponse = Type.Object({
  accepted: Type.Integer(),
  duplicates: Type.Integer(),
  rejected: Type.Integer(),
  results: Type.Array(BatchResult),
});

const RuleResults = Type.Array(Type.Ref('EventRuleResult'), {
  description: 'Every active rule listening to the event name, in the order considered (highest priority first), with why it did or did not award.',
});

export const SyncResponse = Type.Object(
  {
    event_id: Type.String(),
    fact_id: Type.String(),
    duplicate: Type.Boolean(),
    status: Type.Literal('processed'),
    points_awarded: Type.Integer(),
    rules_applied: Type.Array(Type.Object({ rule_id: Type.String(), rule_name: Type.String(), points: Type.Integer(), badges_awarded: Type.Array(Type.String()) }), {
      description: 'The rules whose effects ran (also those a points cap or the spent budget left at 0 points).',
    }),
    rules: RuleResults,
    unmatched_event_name: Type.Optional(UnmatchedEventName),
  },
  {
    examples: [
      {
        event_id: 'ev_0d6b7e1f2a3c4d5e6f708192a3b4c5d6',
        fact_id: 'fct_6e1f2a3c4d5e6f708192a3b4c5d60d7b',
        duplicate: false,
        status: 'processed',
        points_awarded: 0,
        rules_applied: [],
        livemode: true,
        rules: [
          {
            rule_id: 'rul_6f1d2c3b4a5e46f7890a1b2c3d4e5f60',
            rule_name: '10 points per euro on orders over 20 EUR',
            result: 'condition_failed',
            points: 0,
            condition: { group: 'all', index: 0, operator: 'gte', expected: 20, fact: 'properties.order_total', actual: '50', actual_type: 'string' },
          },
          {
            rule_id: 'rul_0a1b2c3d4e5f46a7b8c9d0e1f2a3b4c5',
            rule_name: 'Two check-ins a day',
            result: 'capped',
            points: 0,
            cap: { period: 'per_day', limit: 'times', max: 2, used: 2 },
          },
        ],
      },
    ],
  },
);

/** What processing did, stored with the event: the same `rules` the synchronous answer gives. */
export const EventOutcome = Type.Object(
  {
    points_awarded: Type.Integer(),
    rules: RuleResults,
    capped_rules: Type.Array(Type.String(), { description: 'The ids of the rules whose result is `capped`.' }),
    streaks_continued: Type.Array(Type.String(), { description: 'Streaks this event counted for (streak definitions, not rule effects).' }),
    unmatched_event_name: Type.Optional(UnmatchedEventName),
  },
  { description: 'What processing did: each rule considered with its result, points, badges; null until processed.' },
);

const EventStatus = Type.Union([Type.Literal('pending'), Type.Literal('processed'), Type.Literal('retrying'), Type.Literal('failed')]);

export const StoredEvent = Type.Object(
  {
    event_id: Type.String(),
    event_name: Type.String(),
    participant_id: Type.String(),
    engagement_id: Type.Union([Type.String(), Type.Null()]),
    properties: Type.Record(Type.String(), Type.Unknown(), {
      ...personal('free-form'),
      description: 'As sent. Standard personal field names at any depth (email, first_name, …, payment_method) and personal custom fields are masked without read:pii.',
    }),
    timestamp: Type.String({ format: 'date-time' }),
    received_at: Type.String({ format: 'date-time' }),
    idempotency_key: Type.String(),
    fact_id: Type.String(),
    status: EventStatus,
    attempts: Type.Integer(),
    last_error: Type.Union([Type.String(), Type.Null()]),
    processed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    outcome: Type.Union([EventOutcome, Type.Null()]),
  },
  { $id: 'StoredEvent', title: 'StoredEvent' },
);

export const SearchQuery = Type.Object(
  {
    participant_id: Type.Optional(ParticipantId),
    event_name: Type.Optional(EventName),
    status: Type.Optional(EventStatus),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Events at or after this timestamp.' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Events before this timestamp.' })),
    limit: Type.Optional(Pagination.limit(SEARCH_PAGE_MAX, 50)),
    cursor: Pagination.cursor(),
  },
  { additionalProperties: false },
);

export const SearchResponse = Type.Object({ events: Type.Array(Type.Ref('StoredEvent')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const EventIdParams = Type.Object({ event_id: Type.String({ pattern: '^ev_[0-9a-f]{32}$' }) }, { additionalProperties: false });

export const RetryResponse = Type.Object({ event_id: Type.String(), status: EventStatus });

/** The latest events of a name whose properties are sampled for the rule editor. */
export const PROPERTY_SAMPLE_EVENTS = 1_000;
/** Nesting levels of properties walked (`properties.a.b.c`). */
export const PROPERTY_DEPTH_SAMPLED = 3;
/** The most property paths answered for one name. */
export const PROPERTY_PATHS_MAX = 200;
export const EVENT_NAMES_PAGE_MAX = 200;

export const EventNamesQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Names containing this text, case-insensitively.', examples: ['purchase'] })),
    limit: Type.Optional(Pagination.limit(EVENT_NAMES_PAGE_MAX, 50)),
    cursor: Pagination.cursor(),
  },
  { additionalProperties: false },
);

export const EventNamesResponse = Type.Object({
  names: Type.Array(
    Type.Object({
      event_name: Type.String(),
      events: Type.Integer({ description: 'Events of this name accepted so far (erased participants\' events included).' }),
      first_seen_at: Type.String({ format: 'date-time', description: 'The earliest `occurred_at` received.' }),
      last_seen_at: Type.String({ format: 'date-time', description: 'The latest `occurred_at` received.' }),
    }),
  ),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const EventNameParams = Type.Object({ event_name: { ...EventName, examples: ['purchase_completed'] } }, { additionalProperties: false });

export const EventNamePropertiesResponse = Type.Object({
  event_name: Type.String(),
  sampled: Type.Integer({ description: `How many of the latest events of the name were read (at most ${PROPERTY_SAMPLE_EVENTS}); 0 when none was ever stored.` }),
  properties: Type.Array(
    Type.Object({
      fact: Type.String({ description: 'The path as a rule condition reads it: `properties.<name>`, nested objects joined by dots.' }),
      types: Type.Array(Type.Union([Type.Literal('string'), Type.Literal('number'), Type.Literal('boolean'), Type.Literal('object'), Type.Literal('array'), Type.Literal('null')]), {
        description: 'The JSON types seen at the path, most frequent first.',
      }),
      seen: Type.Integer({ description: 'In how many sampled events the path was present.' }),
    }),
    { maxItems: PROPERTY_PATHS_MAX },
  ),
});
