import { personal, secret } from '../../platform/privacy.js';
import { Type, type Static } from '@sinclair/typebox';
import { SCOPES } from '../../platform/auth.js';
import { ParticipantId } from '../participants/index.js';
import { OVERRIDE_BOUNDS, PLANS } from '../../platform/plans.js';

export const Scope = Type.Union(SCOPES.map((s) => Type.Literal(s)), {
  description: '`admin` and `gamify:admin`: administration; `read:pii`: unmasked personal data; `ingest`: server integration routes (events, sessions, referrals).',
});

export const LoginBody = Type.Object(
  {
    email: Type.String({ ...personal('staff'), format: 'email', maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);

export const LoginResponse = Type.Object({
  token: Type.String({ description: 'Send as `Authorization: Bearer <token>`.' }),
  token_type: Type.Literal('Bearer'),
  expires_at: Type.String({ format: 'date-time' }),
  tenant_id: Type.String({ format: 'uuid' }),
});

export const ApiKeyRecord = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    environment: Type.Union([Type.Literal('live'), Type.Literal('test')]),
    prefix: Type.String({ description: 'The first 16 characters of the key; the rest is never shown again.' }),
    scopes: Type.Array(Scope),
    rate_limit_per_minute: Type.Union([Type.Integer(), Type.Null()], { description: 'Per-key limit; null uses the default of 1,000 per 60 s.' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'ApiKey', title: 'ApiKey' },
);
export type ApiKeyRecord = Static<typeof ApiKeyRecord>;

export const CreatedApiKey = Type.Intersect([
  Type.Ref('ApiKey'),
  Type.Object({ key: Type.String({ ...secret(), description: 'The plaintext key. Shown once; store it now.' }) }),
]);

const KeyName = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const KeyRateLimit = Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Requests per 60 s for this key.' });

export const CreateApiKeyBody = Type.Object(
  {
    name: KeyName,
    environment: Type.Optional(
      Type.Union([Type.Literal('live'), Type.Literal('test')], {
        description:
          "`test` makes an `lk_test_` key that acts in the tenant's sandbox (made on first use: its own participants, ledger, events and webhook destinations), never on live data. " +
          'Defaults to the environment of the calling tenant (`live` for a live tenant, `test` for a sandbox); a sandbox refuses `live` (400 `LIVE_KEY_IN_SANDBOX`).',
      }),
    ),
    scopes: Type.Array(Scope, { minItems: 1, uniqueItems: true }),
    rate_limit_per_minute: Type.Optional(KeyRateLimit),
  },
  { additionalProperties: false },
);

export const UpdateApiKeyBody = Type.Object(
  {
    name: Type.Optional(KeyName),
    scopes: Type.Optional(Type.Array(Scope, { minItems: 1, uniqueItems: true })),
    rate_limit_per_minute: Type.Optional(Type.Union([KeyRateLimit, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const KeyIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const ListApiKeysQuery = Type.Object(
  {
    include_revoked: Type.Optional(Type.Boolean({ default: false })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

export const ApiKeyList = Type.Object({
  api_keys: Type.Array(Type.Ref('ApiKey')),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const CreateSessionBody = Type.Object(
  {
    participant_id: ParticipantId,
    engagement_id: Type.String({ format: 'uuid' }),
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    ttl_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 90 * 24 * 3600, description: 'Lifetime; default 24 hours.' })),
  },
  { additionalProperties: false },
);

export const SessionResponse = Type.Object({
  session_id: Type.String({ description: 'Pass as `session_id` to participant-facing routes. Keep it as secret as a password.' }),
  participant_id: Type.String(),
  engagement_id: Type.String({ format: 'uuid' }),
  expires_at: Type.String({ format: 'date-time' }),
});

export const TenantResponse = Type.Object({
  tenant_id: Type.String({ format: 'uuid' }),
  slug: Type.String(),
  name: Type.String(),
  plan: Type.String(),
  environment: Type.Union([Type.Literal('live'), Type.Literal('sandbox')], {
    description: '`sandbox` tenants are for integration tests: their keys are `lk_test_` and the test controls (test clock, private webhook receivers, webhook backoff scale) work only for them. Chosen at creation; never changes.',
  }),
  timezone: Type.String({ description: 'IANA time zone: the tenant\'s calendar days (daily caps, streaks, leaderboard periods, analytics).' }),
  currency: Type.String({ description: 'ISO 4217 code of the tenant\'s money amounts.' }),
  locale: Type.String({ description: 'BCP 47 language tag of the tenant\'s staff and messages.' }),
  require_four_eyes: Type.Boolean({
    description:
      'Four-eyes publishing: when true, nobody (publishers and API keys included) puts a rule, engagement, challenge or contest live directly; ' +
      'each goes through a review request (`POST /admin/reviews`) that a person other than its submitter approves. False by default.',
  }),
  requests_per_minute: Type.Integer(),
  quotas: Type.Object({
    participants_per_month: Type.Union([Type.Integer(), Type.Null()]),
    api_keys: Type.Union([Type.Integer(), Type.Null()]),
    event_ingestion_per_day: Type.Union([Type.Integer(), Type.Null()]),
    headless_sdk: Type.Boolean(),
    concurrent_engagements: Type.Union([Type.Integer(), Type.Null()]),
  }),
});

export const UpdateTenantBody = Type.Object(
  {
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'An IANA time zone (`Europe/Paris`); takes effect for the next calendar-day computation.' })),
    currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$', description: 'An ISO 4217 currency code (`EUR`); stored upper-case.' })),
    locale: Type.Optional(Type.String({ minLength: 2, maxLength: 35, description: 'A BCP 47 language tag (`fr-FR`); stored in its canonical form.' })),
    require_four_eyes: Type.Optional(
      Type.Boolean({
        description:
          'Turns four-eyes publishing on or off: when on, direct publishing is refused (403 `FOUR_EYES_REQUIRED`, or 403 `AUTH_FORBIDDEN` for a live status or a change of something live) ' +
          'and a review request is approved only by a person other than its submitter. Takes effect with the next request.',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateTenantInput = Static<typeof UpdateTenantBody>;

const usageFields = {
  used: Type.Integer({ minimum: 0 }),
  quota: Type.Union([Type.Integer(), Type.Null()], { description: 'The plan\'s figure (or the tenant\'s own); null is unlimited.' }),
  exceeded: Type.Boolean({ description: 'Over the quota (monthly participants), or at it so that the next one is refused (the enforced quotas).' }),
};
const Usage = (description: string) => Type.Object(usageFields, { description });

/**
 * How many waiting events the usage read counts at most. A backlog is counted
 * row by row on each read (the rows churn too fast for a kept counter to pay);
 * past this many the answer says `waiting_capped` instead of counting on.
 */
export const WAITING_COUNTED_MAX = 100_000;

export const TenantUsageResponse = Type.Object(
  {
    day: Type.String({ format: 'date', description: 'The UTC day the daily figures count.' }),
    month: Type.String({ pattern: '^\\d{4}-\\d{2}$', examples: ['2026-11'], description: 'The UTC month the monthly figures count.' }),
    participants_this_month: Usage(
      'Participants first seen this month. Not enforced: a tenant over it keeps working and is told here (see docs/decisions/foundation.md).',
    ),
    events_today: Type.Object(
      { ...usageFields, resets_at: Type.String({ format: 'date-time' }) },
      { description: 'Events accepted by the ingestion routes today. Enforced: a request that would exceed it gets 429 INGESTION_QUOTA_EXCEEDED.' },
    ),
    api_keys: Usage('Active (not revoked) API keys. Enforced at key creation (422 PLAN_QUOTA_EXCEEDED).'),
    concurrent_engagements: Usage('Published engagements. Enforced at publication (422).'),
    event_processing: Type.Object(
      {
        waiting: Type.Integer({ minimum: 0, maximum: WAITING_COUNTED_MAX, description: `Accepted events of this tenant not yet processed, counted up to ${WAITING_COUNTED_MAX}.` }),
        waiting_capped: Type.Boolean({ description: `True when more than ${WAITING_COUNTED_MAX} events wait: \`waiting\` then reads ${WAITING_COUNTED_MAX}.` }),
        lag_seconds: Type.Number({ minimum: 0, description: 'How long the oldest of them has waited since it was accepted (0 when none waits).' }),
      },
      {
        description:
          "The tenant's processing backlog. Events are processed in accept order per participant; a tenant that sends faster than its events are processed sees `waiting` and `lag_seconds` grow, while other tenants are served between its batches (docs/decisions/ingestion.md, Processing).",
      },
    ),
  },
  { description: "The tenant's use of its plan's quotas." },
);

const limitSource = Type.Union([Type.Literal('plan'), Type.Literal('override')], {
  description: '`plan`: the plan\'s figure; `override`: the tenant\'s own figure, set by the operator.',
});
const CountLimit = (description: string, nullable: boolean) => {
  const figure = nullable ? Type.Union([Type.Integer(), Type.Null()]) : Type.Integer();
  return Type.Object(
    {
      value: nullable ? Type.Union([Type.Integer(), Type.Null()], { description: 'The figure in force; null is unlimited.' }) : Type.Integer({ description: 'The figure in force.' }),
      source: limitSource,
      plan_default: figure,
      override: Type.Union([Type.Integer(), Type.Null()], { description: 'The tenant\'s own figure; null when the plan\'s applies.' }),
    },
    { description },
  );
};

export const TenantLimitsResponse = Type.Object(
  {
    tenant_id: Type.String({ format: 'uuid' }),
    plan: Type.String(),
    limits: Type.Object({
      requests_per_minute: CountLimit(
        'API requests per 60 s for the whole tenant (the per-tenant scopes of the rate limiter). Enforced: 429 `RATE_LIMITED` with `Retry-After` and the `X-RateLimit-*` headers.',
        false,
      ),
      event_ingestion_per_day: CountLimit('Events accepted per UTC day by the ingestion routes. Enforced: 429 `INGESTION_QUOTA_EXCEEDED`.', true),
      api_keys: CountLimit('Active (not revoked) API keys. Enforced at key creation: 422 `PLAN_QUOTA_EXCEEDED`; keys above a lowered figure keep working.', true),
      concurrent_engagements: CountLimit(
        'Published engagements at a time. Enforced at publication: 422 `PLAN_QUOTA_EXCEEDED`; engagements above a lowered figure stay published.',
        true,
      ),
      participants_per_month: CountLimit('Participants first seen per UTC month. Reported by `GET /tenant/usage`, not enforced.', true),
      headless_sdk: Type.Object(
        {
          value: Type.Boolean(),
          source: limitSource,
          plan_default: Type.Boolean(),
          override: Type.Union([Type.Boolean(), Type.Null()]),
        },
        { description: 'Whether the plan includes the headless SDK. Reported, not enforced (the SDK calls the same public routes).' },
      ),
    }),
  },
  { description: "The caller's tenant's limits in force, each with where its figure comes from." },
);

const override = (bounds: { minimum: number; maximum: number }, description: string) =>
  Type.Optional(Type.Union([Type.Integer(bounds), Type.Null()], { description: `${description} ${bounds.minimum} to ${bounds.maximum}; null returns to the plan's figure.` }));

export const OperatorLimitsBody = Type.Object(
  {
    plan: Type.Optional(Type.Union(PLANS.map((plan) => Type.Literal(plan)), { description: 'The tenant\'s plan: its figures apply wherever no override is set.' })),
    requests_per_minute: override(OVERRIDE_BOUNDS.requestsPerMinute, 'API requests per 60 s for the tenant:'),
    event_ingestion_per_day: override(OVERRIDE_BOUNDS.eventIngestionPerDay, 'Events per UTC day:'),
    api_keys: override(OVERRIDE_BOUNDS.apiKeys, 'Active API keys:'),
    concurrent_engagements: override(OVERRIDE_BOUNDS.concurrentEngagements, 'Published engagements at a time:'),
    participants_per_month: override(OVERRIDE_BOUNDS.participantsPerMonth, 'Participants per UTC month (reported):'),
    headless_sdk: Type.Optional(Type.Union([Type.Boolean(), Type.Null()], { description: 'Headless SDK included (reported); null returns to the plan\'s.' })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ plan: 'growth', requests_per_minute: 6000, event_ingestion_per_day: 2_000_000, api_keys: null, headless_sdk: true }] },
);
export type OperatorLimitsInput = Static<typeof OperatorLimitsBody>;

export const OperatorTenantParams = Type.Object({ tenant_id: Type.String({ format: 'uuid' }) });
