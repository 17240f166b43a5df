import { secret } from '../../platform/privacy.js';
import { Type, type Static } from '@sinclair/typebox';
import { Pagination } from '../../platform/http.js';

/**
 * Request and response schemas of the webhook routes. The destination rules
 * of the spec (name length and `[system]` prefix, https and forgery rules,
 * catalog event names, retry and timeout ranges) are checked by the service
 * so that a violation answers 422 VALIDATION_INVALID_VALUE as Errors 4 asks;
 * the schemas here only fix the types and close the bodies.
 */
export const DELIVERY_STATUSES = ['PENDING', 'DELIVERING', 'RETRYING', 'SUCCEEDED', 'EXHAUSTED', 'CANCELLED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const DestinationIdParams = Type.Object({ destination_id: Type.String({ maxLength: 64 }) });
export const DeliveryParams = Type.Object({ destination_id: Type.String({ maxLength: 64 }), log_id: Type.String({ maxLength: 64 }) });
export const ReplayJobParams = Type.Object({ destination_id: Type.String({ maxLength: 64 }), job_id: Type.String({ maxLength: 64 }) });

const AllowPrivateNetwork = Type.Boolean({
  description:
    'Sandbox tenants only, and never when the service runs with APP_ENV=production: lets this destination reach a receiver on the private ' +
    'network (loopback, 10/8, 172.16/12, 192.168/16, fc00::/7, `localhost`, single-label names such as a container\'s service name) over ' +
    'https or plain http, for local development. Cloud metadata addresses (169.254.169.254, fd00:ec2::254) stay refused. Default false. ' +
    '`true` from a live tenant answers 403 `SANDBOX_ONLY`; in production 403 `TEST_CONTROLS_DISABLED`.',
});

const CustomHeaders = Type.Record(Type.String(), Type.String(), {
  description: 'Extra headers added to every delivery (at most 20; names other than the X-Service-* and transport headers).',
});

/** A destination's free note (not in the spec's table: docs/decisions.md, "Webhook destinations in the console"). */
export const DESCRIPTION_LENGTH_MAX = 500;
const DescriptionField = Type.String({
  maxLength: DESCRIPTION_LENGTH_MAX,
  description: 'A note on what the receiver is and who runs it: at most 500 characters; an empty string clears it.',
});

const EVENTS_DESCRIPTION =
  'What the destination subscribes to (1 to 25 entries): event names from `/.well-known/events.json`, `<prefix>.*` (every event whose name ' +
  'starts with `<prefix>.`, such as `points.*`; the prefix must start at least one catalog event), or `*` (every event, those added to the ' +
  'catalog later included). Anything else answers 422 `VALIDATION_INVALID_VALUE` naming the entry.';

export const CreateDestinationBody = Type.Object(
  {
    name: Type.String({ description: '1 to 100 characters; the prefix `[system]` is reserved.' }),
    url: Type.String({ description: 'An https URL whose host resolves to public addresses only.' }),
    events: Type.Array(Type.String(), { description: EVENTS_DESCRIPTION }),
    description: Type.Optional(DescriptionField),
    engagement_id: Type.Optional(Type.String({ format: 'uuid', description: 'Deliver only events of this engagement; omitted means all.' })),
    custom_headers: Type.Optional(CustomHeaders),
    retry_count: Type.Optional(Type.Integer({ description: '0 to 5 (default 3); attempts = retry_count + 1.' })),
    timeout_seconds: Type.Optional(Type.Integer({ description: '3 to 60 (default 10).' })),
    active: Type.Optional(Type.Boolean({ description: 'Default true.' })),
    allow_private_network: Type.Optional(AllowPrivateNetwork),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'CRM sync', url: 'https://hooks.shop.example.com/loyalty', events: ['points.*', 'badge.earned.v1'], retry_count: 3, timeout_seconds: 10 }],
  },
);
export type CreateDestinationInput = Static<typeof CreateDestinationBody>;

export const UpdateDestinationBody = Type.Object(
  {
    url: Type.Optional(Type.String({ description: 'Re-validated against the same forgery rules.' })),
    events: Type.Optional(Type.Array(Type.String(), { description: EVENTS_DESCRIPTION })),
    description: Type.Optional(DescriptionField),
    retry_count: Type.Optional(Type.Integer()),
    timeout_seconds: Type.Optional(Type.Integer()),
    active: Type.Optional(Type.Boolean()),
    allow_private_network: Type.Optional(AllowPrivateNetwork),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [{ events: ['points.*', 'badge.earned.v1', 'tier.changed.v1'], description: 'The CRM team\'s receiver', retry_count: 5, timeout_seconds: 15, active: true }],
  },
);
export type UpdateDestinationInput = Static<typeof UpdateDestinationBody>;

const AttemptCounts = Type.Object({ attempts: Type.Integer(), failed: Type.Integer() });
export const HEALTH_STATUSES = ['healthy', 'degraded', 'failing', 'disabled', 'idle'] as const;

export const DestinationHealth = Type.Object(
  {
    status: Type.Union(HEALTH_STATUSES.map((s) => Type.Literal(s)), {
      description:
        '`failing`: the latest 3 or more attempts (across deliveries) failed. `degraded`: the latest attempt failed, or 10 % or more of the ' +
        'last hour\'s attempts did. `healthy`: otherwise. `idle`: no attempts yet. `disabled`: the destination is not active (its figures stay).',
    }),
    last_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_success_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_failure_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()], { description: 'The error of the latest failed attempt (a timeout, a refused connection, the HTTP status).' }),
    last_response_status: Type.Union([Type.Integer(), Type.Null()], { description: 'The HTTP status of the latest failed attempt; null when there was no answer.' }),
    consecutive_failures: Type.Integer({ description: 'Failed attempts since the latest success (within the sample).' }),
    last_hour: AttemptCounts,
    last_day: AttemptCounts,
  },
  {
    description:
      'Computed when read, from the attempts of the destination\'s latest 200 deliveries (test deliveries included; interrupted attempts left out).',
  },
);
export type DestinationHealthView = Static<typeof DestinationHealth>;

export const Destination = Type.Object(
  {
    id: Type.String({ description: 'Destination id (`whk_…`).' }),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    url: Type.String(),
    events: Type.Array(Type.String()),
    engagement_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    custom_headers: CustomHeaders,
    retry_count: Type.Integer(),
    timeout_seconds: Type.Integer(),
    active: Type.Boolean(),
    allow_private_network: Type.Boolean({ description: 'The destination may reach a private-network receiver (sandbox tenants, outside production).' }),
    health: DestinationHealth,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'WebhookDestination', title: 'Webhook destination' },
);
export type DestinationView = Static<typeof Destination>;

export const CreatedDestination = Type.Object({
  ...Destination.properties,
  secret: Type.String({ ...secret(), description: 'The signing secret (`whsec_…`). Shown once; store it.' }),
});

export const TestEventBody = Type.Object(
  {
    event: Type.String({ minLength: 1, maxLength: 100, description: 'A catalog event name (not a pattern), such as `points.awarded.v1`.' }),
  },
  { additionalProperties: false },
);
export type TestEventInput = Static<typeof TestEventBody>;

export const ListDestinationsQuery = Type.Object({ limit: Pagination.limit(100, 50), cursor: Pagination.cursor() }, { additionalProperties: false });
export const DestinationList = Type.Object({ destinations: Type.Array(Type.Ref('WebhookDestination')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const Attempt = Type.Object({
  attempt: Type.Integer({ description: 'Attempt number: 1, 2, 3… in order; every attempt has its own, an interrupted one too.' }),
  outcome: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('interrupted')]),
  started_at: Type.String({ format: 'date-time' }),
  duration_ms: Type.Integer(),
  response_status: Type.Union([Type.Integer(), Type.Null()]),
  response_body: Type.Union([Type.String(), Type.Null()], { description: 'The first 1,024 bytes of the response body.' }),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const Delivery = Type.Object(
  {
    log_id: Type.String({ description: 'Id of this delivery record (`dlv_…`); a replay gets a new one.' }),
    delivery_id: Type.String({ description: 'The envelope id and X-Service-Delivery-Id (`evt_…`); the same for retries and replays.' }),
    destination_id: Type.String(),
    event: Type.String(),
    participant_id: Type.Union([Type.String(), Type.Null()]),
    engagement_id: Type.Union([Type.String(), Type.Null()]),
    status: Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s))),
    attempts: Type.Integer({ description: 'Attempts that finished with an outcome.' }),
    max_attempts: Type.Integer({ description: 'retry_count + 1 at the time the delivery was created.' }),
    next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_response_status: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    replay_of: Type.Union([Type.String(), Type.Null()], { description: 'The log_id this delivery replays.' }),
    replay_job_id: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    completed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    attempt_log: Type.Array(Attempt),
  },
  { $id: 'WebhookDelivery', title: 'Webhook delivery' },
);
export type DeliveryView = Static<typeof Delivery>;

export const LogsQuery = Type.Object(
  {
    limit: Pagination.limit(100, 50),
    cursor: Pagination.cursor(),
    status: Type.Optional(Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s)))),
    event: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);
export const DeliveryList = Type.Object({ deliveries: Type.Array(Type.Ref('WebhookDelivery')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const BulkReplayBody = Type.Object(
  {
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Events that occurred at or after this time.' })),
    until: Type.Optional(Type.String({ format: 'date-time', description: 'Events that occurred before this time.' })),
    statuses: Type.Optional(
      Type.Array(Type.Union(['SUCCEEDED', 'EXHAUSTED', 'CANCELLED'].map((s) => Type.Literal(s))), {
        minItems: 1,
        uniqueItems: true,
        description: 'Replay events whose latest delivery ended in one of these states (default ["EXHAUSTED"]).',
      }),
    ),
    events: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { minItems: 1, maxItems: 25, description: 'Only these event names.' })),
  },
  { additionalProperties: false },
);
export type BulkReplayInput = Static<typeof BulkReplayBody>;

export const ReplayJob = Type.Object(
  {
    job_id: Type.String({ description: 'Replay job id (`wrj_…`).' }),
    destination_id: Type.String(),
    status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]),
    filter: Type.Object({
      since: Type.Union([Type.String(), Type.Null()]),
      until: Type.Union([Type.String(), Type.Null()]),
      statuses: Type.Array(Type.String()),
      events: Type.Union([Type.Array(Type.String()), Type.Null()]),
    }),
    matched: Type.Integer({ description: 'Events whose latest delivery matched the filter (at most 10,000 per job).' }),
    replayed: Type.Integer({ description: 'New deliveries created.' }),
    error: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    started_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    completed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'WebhookReplayJob', title: 'Bulk replay job' },
);
export type ReplayJobView = Static<typeof ReplayJob>;

export const StreamQuery = Type.Object(
  {
    session_id: Type.String(),
    engagement_id: Type.String({ format: 'uuid' }),
    last_event_id: Type.Optional(Type.String({ maxLength: 64, description: 'Resume after this envelope id (the Last-Event-ID header wins when both are sent).' })),
  },
  { additionalProperties: false },
);

export const TenantStreamQuery = Type.Object(
  {
    events: Type.Optional(
      Type.String({
        maxLength: 2_000,
        description: 'Comma-separated event names and patterns, as in a destination\'s `events` (`points.*,badge.earned.v1`); default `*`.',
      }),
    ),
    last_event_id: Type.Optional(Type.String({ maxLength: 64, description: 'Resume after this envelope id (the Last-Event-ID header wins when both are sent).' })),
  },
  { additionalProperties: false },
);

export const CatalogDocument = Type.Object({
  version: Type.Integer(),
  events: Type.Array(
    Type.Object({
      name: Type.String(),
      kind: Type.String(),
      status: Type.Union([Type.Literal('active'), Type.Literal('deferred')]),
      legacy: Type.Boolean(),
      frozen: Type.Boolean(),
      emitter: Type.Union([Type.String(), Type.Null()]),
      description: Type.String(),
      personal_data: Type.Array(Type.String()),
      schema: Type.Unknown({ description: 'JSON Schema (2020-12) of the event\'s `data`.' }),
    }),
  ),
});

/** Limits of the sandbox tenant's webhook backoff scale. */
export const BACKOFF_SCALE_MIN = 0.001;
export const BACKOFF_SCALE_MAX = 1;

export const WebhookSettings = Type.Object(
  {
    environment: Type.Union([Type.Literal('live'), Type.Literal('sandbox')], { description: "The tenant's environment; only a sandbox tenant may change these settings." }),
    webhook_backoff_scale: Type.Number({
      description: 'Factor on the retry schedule (30 s, 5 min, 30 min, 30 min, 30 min) applied when each retry is scheduled: from 0.001 to 1, default 1. Always 1 for a live tenant.',
    }),
    retry_delays_seconds: Type.Array(Type.Number(), {
      description:
        'The waits before attempts 2 to 6 as they are scheduled now: the spec\'s intervals times webhook_backoff_scale times the service\'s TIME_SCALE ' +
        '(1 in production). A destination makes retry_count of them.',
    }),
    updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the settings last changed; null when never.' }),
  },
  { $id: 'WebhookSettings', title: 'Webhook settings' },
);
export type WebhookSettingsView = Static<typeof WebhookSettings>;

export const UpdateSettingsBody = Type.Object(
  {
    webhook_backoff_scale: Type.Number({
      minimum: BACKOFF_SCALE_MIN,
      maximum: BACKOFF_SCALE_MAX,
      description: 'From 0.001 to 1; 1 restores the spec\'s timing. With 0.01 the retries wait 0.3 s, 3 s, 18 s, 18 s, 18 s.',
    }),
  },
  { additionalProperties: false },
);
export type UpdateSettingsInput = Static<typeof UpdateSettingsBody>;
