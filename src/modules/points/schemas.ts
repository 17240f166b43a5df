import { personal } from '../../platform/privacy.js';
import { Type } from '@sinclair/typebox';
import { ParticipantId } from '../participants/index.js';
import { SegmentId } from '../segments/index.js';
import { Pagination } from '../../platform/http.js';
import {
  BULK_GRANT_PARTICIPANTS_MAX,
  DEDUCT_TYPES,
  GRANT_TYPES,
  HISTORY_PAGE_DEFAULT,
  HISTORY_PAGE_MAX,
  LEDGER_TYPES,
  MEMO_LENGTH_MAX,
  POINTS_PER_OPERATION_MAX,
  REASON_LENGTH_MAX,
  REMINDER_DAYS_MAX,
  REMINDER_DAY_RANGE,
  TRANSACTIONS_OFFSET_MAX,
  TRANSACTIONS_PAGE_DEFAULT,
  TRANSACTIONS_PAGE_MAX,
  EXPIRED_VISIBLE_DAYS,
} from './service.js';

/** TypeBox schemas of the points routes. */

export const IDEMPOTENCY_KEY_LENGTH_MAX = 255;

export const Amount = Type.Integer({
  minimum: 1,
  maximum: POINTS_PER_OPERATION_MAX,
  description: `Points, a whole number from 1 to ${POINTS_PER_OPERATION_MAX}.`,
});
const Reason = Type.String({ minLength: 1, maxLength: REASON_LENGTH_MAX });
const Memo = Type.String({ maxLength: MEMO_LENGTH_MAX });
const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_LENGTH_MAX,
  description:
    'Required here or as the `Idempotency-Key` header (both: they must agree). A repeat inside 24 hours returns the first result with `duplicate: true` and applies nothing; the same key with a different body gets 422.',
});

export const GrantBody = Type.Object(
  {
    participant_id: ParticipantId,
    amount: Amount,
    reason: Reason,
    memo: Type.Optional(Memo),
    type: Type.Optional(Type.Union(GRANT_TYPES.map((t) => Type.Literal(t)), { description: 'Ledger type of the entry; default `award`.' })),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  {
    additionalProperties: false,
    examples: [{ participant_id: 'user_1042', amount: 250, reason: 'Welcome bonus', idempotency_key: 'welcome-user_1042' }],
  },
);

export const DeductBody = Type.Object(
  {
    participant_id: ParticipantId,
    amount: Amount,
    reason: Reason,
    memo: Type.Optional(Memo),
    type: Type.Optional(Type.Union(DEDUCT_TYPES.map((t) => Type.Literal(t)), { description: 'Ledger type of the entry; default `redemption`.' })),
    idempotency_key: Type.Optional(IdempotencyKey),
  },
  {
    additionalProperties: false,
    examples: [{ participant_id: 'user_1042', amount: 100, reason: 'Redeemed for a free coffee', idempotency_key: 'order-88413-redeem' }],
  },
);

export const DirectResponse = Type.Object({
  available: Type.Integer(),
  lifetime: Type.Integer(),
  delta: Type.Integer({ description: 'Positive on grant, negative on deduct.' }),
  duplicate: Type.Boolean({ description: 'True when the idempotency key was already used inside 24 hours; nothing was applied again.' }),
  ledger_entry_id: Type.String(),
});

export const InsufficientPoints = Type.Object(
  {
    error: Type.Optional(Type.Literal('insufficient_points')),
    available: Type.Optional(Type.Integer({ description: 'Points available now.' })),
    required: Type.Optional(Type.Integer({ description: 'Points the deduct needed.' })),
    detail: Type.String(),
    code: Type.String(),
    error_version: Type.Literal(1),
  },
  { description: 'The balance is too low (or a validation failure: then the standard error body without `error`, `available`, `required`).', additionalProperties: true },
);

const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

// Settings ------------------------------------------------------------------

/** The largest point value (money per point) a tenant may set. */
export const POINT_VALUE_MAX = 1000;

const ExpiryPolicy = Type.Union([Type.Literal('fifo'), Type.Literal('lifo'), Type.Literal('none')], {
  description: '`fifo`: deducts use the oldest lot first; `lifo`: the newest first; `none`: points granted while set never expire.',
});

export const Settings = Type.Object({
  expiry_policy: ExpiryPolicy,
  default_ttl_days: Type.Integer({ description: 'Days from grant to expiry of a lot (default 365).' }),
  reminder_days: Type.Array(Type.Integer(), { description: 'Days before expiry at which points.expiring.v1 is sent (default 60, 30, 7, 1).' }),
  currency_name: Type.String({ description: 'Name of the points shown to participants (default "points").' }),
  point_value: Type.Union([Type.Number(), Type.Null()], {
    description: "What one point is worth in the tenant's currency (`currency` of GET /tenant), e.g. 0.01 for a cent per point; null when not set. The overview turns points into money with it (liability, expiry forecast, breakage).",
  }),
  updated_at: NullableTimestamp,
});

export const SettingsPatch = Type.Object(
  {
    expiry_policy: Type.Optional(ExpiryPolicy),
    default_ttl_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 36_500 })),
    reminder_days: Type.Optional(Type.Array(Type.Integer(REMINDER_DAY_RANGE), { maxItems: REMINDER_DAYS_MAX })),
    currency_name: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    // One schema for "a number in bounds, or null" (not a union), so a refusal names the broken bound, not "any of".
    point_value: Type.Optional(
      Type.Unsafe<number | null>({
        type: ['number', 'null'],
        exclusiveMinimum: 0,
        maximum: POINT_VALUE_MAX,
        description: `Money per point in the tenant's currency: more than 0, at most ${POINT_VALUE_MAX}, at most 6 decimal places (e.g. 0.01). null clears it.`,
        examples: [0.01],
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

// Multipliers ---------------------------------------------------------------

const AttributeValue = Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean()]);

export const MultiplierBody = Type.Object(
  {
    multiplier: Type.Number({ exclusiveMinimum: 0, maximum: 100, description: 'Factor applied to points earned from matching events (0 < m ≤ 100).' }),
    starts_at: Timestamp,
    ends_at: Timestamp,
    match: Type.Object(
      {
        event_type: Type.String({ minLength: 1, maxLength: 200, description: 'The event name (`event_name` of ingested events) the multiplier applies to.' }),
        attributes: Type.Optional(
          Type.Record(Type.String({ maxLength: 100 }), AttributeValue, {
            maxProperties: 20,
            description: 'Every attribute listed must be present with an equal value in the event properties.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    participant_id: Type.Optional(ParticipantId),
    segment_id: Type.Optional(
      Type.Union([Type.Unsafe<string>(SegmentId), Type.Null()], {
        description: 'Applies the multiplier only to events of the members of this segment (`seg_…`, one of the tenant\'s); null or absent: everyone.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const Multiplier = Type.Object(
  {
    id: Type.String(),
    multiplier: Type.Number(),
    starts_at: Timestamp,
    ends_at: Timestamp,
    match: Type.Object({ event_type: Type.String(), attributes: Type.Record(Type.String(), AttributeValue) }),
    participant_id: Type.Union([Type.String(), Type.Null()], { description: 'Set when the multiplier applies to one participant only.' }),
    segment_id: Type.Union([Type.String(), Type.Null()], { description: 'Set when the multiplier applies to the members of this segment only; null: everyone.' }),
    created_at: Timestamp,
  },
  { $id: 'PointsMultiplier' },
);

export const MultiplierList = Type.Object({ multipliers: Type.Array(Type.Ref('PointsMultiplier')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const MultiplierListQuery = Type.Object(
  { limit: Pagination.limit(100, 50), cursor: Pagination.cursor(), active_at: Type.Optional(Timestamp) },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

// Tiers ---------------------------------------------------------------------

const TierCode = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', description: 'Lower-case code (1-64 characters: a-z, 0-9, _ and -).' });

export const TierBody = Type.Object(
  { code: TierCode, name: Type.String({ minLength: 1, maxLength: 100 }), min_lifetime_points: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) },
  { additionalProperties: false },
);
export const TierPatch = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), min_lifetime_points: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })) },
  { additionalProperties: false, minProperties: 1 },
);
export const Tier = Type.Object(
  {
    code: Type.String(),
    name: Type.String(),
    min_lifetime_points: Type.Integer({ description: 'Lifetime points from which a participant holds this tier.' }),
    level: Type.Integer({ description: 'Order of the tier, 1 for the lowest threshold.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'PointsTier' },
);
export const TierList = Type.Object({ tiers: Type.Array(Type.Ref('PointsTier')) });
export const TierParams = Type.Object({ code: TierCode });

// History -------------------------------------------------------------------

export const HistoryQuery = Type.Object(
  {
    participant_id: Type.Optional(ParticipantId),
    type: Type.Optional(
      Type.String({ maxLength: 100, description: `Comma-separated ledger types to keep: ${LEDGER_TYPES.join(', ')}.` }),
    ),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Entries created at or after this time.' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Entries created before this time.' })),
    limit: Pagination.limit(HISTORY_PAGE_MAX, HISTORY_PAGE_DEFAULT),
    cursor: Pagination.cursor(),
  },
  { additionalProperties: false },
);

export const LedgerEntry = Type.Object(
  {
    id: Type.String(),
    participant_id: Type.String(),
    type: Type.Union(LEDGER_TYPES.map((t) => Type.Literal(t))),
    amount: Type.Integer({ description: 'Positive for grants, negative for redemptions, deduct adjustments and expiry.' }),
    reason: Type.String(),
    memo: Type.Union([Type.String(), Type.Null()]),
    source_kind: Type.String(),
    source_id: Type.Union([Type.String(), Type.Null()]),
    activity_id: Type.Union([Type.String(), Type.Null()]),
    engagement_id: Type.Union([Type.String(), Type.Null()]),
    multiplier: Type.Union([Type.Number(), Type.Null()]),
    available_after: Type.Integer(),
    lifetime_after: Type.Integer(),
    created_at: Timestamp,
    actor: Type.Union(
      [
        Type.Object({
          type: Type.Union([Type.Literal('user'), Type.Literal('api_key'), Type.Literal('rule')]),
          id: Type.String({ description: "The console user's, API key's or earn rule's id." }),
          name: Type.Union([Type.String(), Type.Null()], { ...personal('staff'), description: "Its current name (a person's name, else their sign-in email); null once it is gone." }),
        }),
        Type.Null(),
      ],
      {
        description:
          'Who caused the entry: the person or API key that asked for a direct grant or deduct, a bulk grant or the import the row came from, or the earn rule that awarded it; ' +
          'null for other sources (an activity, a challenge, expiry, entries written before who-asked was kept).',
      },
    ),
  },
  { $id: 'PointsLedgerEntry' },
);

export const HistoryResponse = Type.Object({
  entries: Type.Array(Type.Ref('PointsLedgerEntry'), { description: `Newest first. Expiry entries are kept visible for ${EXPIRED_VISIBLE_DAYS} days.` }),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

// Session reads -------------------------------------------------------------

const SessionFields = {
  session_id: Type.String({ maxLength: 200 }),
  engagement_id: Type.String({ format: 'uuid' }),
};

export const SessionBalanceBody = Type.Object(SessionFields, { additionalProperties: false });
export const SessionBalance = Type.Object({
  available_points: Type.Integer(),
  total_points: Type.Integer({ description: 'Lifetime points.' }),
  currency_name: Type.String(),
  last_earned_at: NullableTimestamp,
});

export const SessionTransactionsBody = Type.Object(
  {
    ...SessionFields,
    limit: Type.Integer({ minimum: 1, maximum: TRANSACTIONS_PAGE_MAX, default: TRANSACTIONS_PAGE_DEFAULT, description: `Page size, 1 to ${TRANSACTIONS_PAGE_MAX} (default ${TRANSACTIONS_PAGE_DEFAULT}).` }),
    offset: Type.Integer({ minimum: 0, maximum: TRANSACTIONS_OFFSET_MAX, default: 0, description: `0 to ${TRANSACTIONS_OFFSET_MAX}.` }),
  },
  { additionalProperties: false },
);
export const SessionTransactions = Type.Object({
  transactions: Type.Array(
    Type.Object({
      id: Type.String(),
      type: Type.Union(LEDGER_TYPES.map((t) => Type.Literal(t)), { description: 'award, bonus, adjustment, redemption or expiry.' }),
      amount: Type.Integer({ description: 'Negative for redemptions, deduct adjustments and expiry.' }),
      reason: Type.String(),
      activity_id: Type.Optional(Type.String({ description: 'Present on awards from activities.' })),
      created_at: Timestamp,
    }),
  ),
  total: Type.Integer(),
  has_more: Type.Boolean(),
});

// Bulk grant ----------------------------------------------------------------

export const BulkGrantBody = Type.Object(
  {
    idempotency_key: Type.Optional(IdempotencyKey),
    reason: Reason,
    memo: Type.Optional(Memo),
    type: Type.Optional(Type.Union(GRANT_TYPES.map((t) => Type.Literal(t)), { description: 'Ledger type of the entries; default `bonus`.' })),
    grants: Type.Array(
      Type.Object({ participant_id: ParticipantId, amount: Amount }, { additionalProperties: false }),
      { minItems: 1, maxItems: BULK_GRANT_PARTICIPANTS_MAX, description: `1 to ${BULK_GRANT_PARTICIPANTS_MAX} grants, one per participant.` },
    ),
  },
  { additionalProperties: false },
);

export const BulkGrantJob = Type.Object({
  job_id: Type.String(),
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]),
  total: Type.Integer(),
  done: Type.Integer(),
  failed: Type.Integer({ description: 'Participants not granted: `failure_counts` says why.' }),
  pending: Type.Integer(),
  failure_counts: Type.Object(
    {
      balance_limit: Type.Integer({ description: "The grant would have taken the participant's lifetime points above 2^53 - 1." }),
      participant_erased: Type.Integer({ description: 'The participant was erased (hard delete) after the job was accepted, before their grant.' }),
    },
    { additionalProperties: false },
  ),
  failures: Type.Array(
    Type.Object({ participant_id: Type.String(), amount: Type.Integer(), reason: Type.String() }, { additionalProperties: false }),
    { description: 'The first 100 failed grants by participant id (erased participants are only counted: their id is gone).' },
  ),
  error: Type.Union([Type.String(), Type.Null()], { description: 'The last error of a batch; the job retries.' }),
  created_at: Timestamp,
  started_at: NullableTimestamp,
  finished_at: NullableTimestamp,
  segment_id: Type.Union([Type.String(), Type.Null()], { description: 'A segment grant (`POST /admin/points/segment-grants`): the segment whose members the job grants to; null for a list of grants.' }),
  duplicate: Type.Optional(Type.Boolean()),
});

// Segment grant (issue 36) ---------------------------------------------------

export const SegmentGrantBody = Type.Object(
  {
    segment_id: SegmentId,
    amount: { ...Amount, description: `Points for each member, a whole number from 1 to ${POINTS_PER_OPERATION_MAX}.` },
    reason: Reason,
    memo: Type.Optional(Memo),
    type: Type.Optional(Type.Union(GRANT_TYPES.map((t) => Type.Literal(t)), { description: 'Ledger type of the entries; default `bonus`.' })),
    dry_run: Type.Optional(Type.Boolean({ description: 'true: count the members and the points, write nothing (no key needed); answers 200.' })),
    idempotency_key: Type.Optional({ ...IdempotencyKey, description: 'Required for a grant (not for a dry run), here or as the `Idempotency-Key` header (both: they must agree). A repeat inside 24 hours answers the same job with `duplicate: true` and grants nothing more; the same key with another body gets 422.' }),
  },
  {
    additionalProperties: false,
    // The dry run a marketer sends first; the grant is the same body without dry_run, with an idempotency key.
    examples: [{ segment_id: 'seg_0f8fad5bd9cb469fa16570867728950e', amount: 500, reason: 'Spring thank-you to our regulars', dry_run: true }],
  },
);

export const SegmentGrantDryRun = Type.Object({
  dry_run: Type.Literal(true),
  segment_id: Type.String(),
  participants: Type.Integer({ description: 'Members of the segment now (test participants are never members): the grant would grant each of them.' }),
  points: Type.Integer({ description: 'participants × amount: the points the grant would give in total.' }),
});
export const BulkJobParams = Type.Object({ job_id: Type.String({ minLength: 1, maxLength: 100 }) });

// State read ----------------------------------------------------------------

export const STATE_PARTS = ['points', 'tier', 'badges', 'streaks', 'rewards', 'challenges', 'contests', 'referrals', 'profile'] as const;

const OpenObject = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const StateQuery = Type.Object(
  {
    include: Type.Optional(
      Type.String({ maxLength: 200, description: `Comma-separated parts: ${STATE_PARTS.join(', ')}. Omitted: every part.` }),
    ),
  },
  { additionalProperties: false },
);
export const StateParams = Type.Object({ participant_id: ParticipantId });

export const StateResponse = Type.Object({
  participant_id: Type.String(),
  points: Type.Optional(
    Type.Object({ available: Type.Integer(), lifetime: Type.Integer(), currency_name: Type.String(), last_earned_at: NullableTimestamp }),
  ),
  tier: Type.Optional(
    Type.Object({
      current: Type.Union([Type.Object({ code: Type.String(), name: Type.String(), min_lifetime_points: Type.Integer() }), Type.Null()]),
      next: Type.Union([Type.Object({ code: Type.String(), name: Type.String(), min_lifetime_points: Type.Integer() }), Type.Null()]),
      points_to_next: Type.Union([Type.Integer(), Type.Null()]),
      lifetime: Type.Integer(),
    }),
  ),
  badges: Type.Optional(Type.Array(OpenObject('A badge: code, name, description, image_url, earned, earned_at.'))),
  streaks: Type.Optional(Type.Array(OpenObject('A streak: streak_code, current_length, longest_length, last_at.'))),
  rewards: Type.Optional(
    Type.Array(
      Type.Object(
        {
          // The participant's redemption code works like a credential: `***` without read:pii (support sees that a code was handed out, not the code).
          code: Type.Optional(Type.Union([Type.String(), Type.Null()], { ...personal('secret'), description: 'The redemption code; `***` without read:pii.' })),
        },
        { additionalProperties: true, description: 'A claimed reward: reward_id, claim_id, name, type, code, display_type, claimed_at, expires_at, status, metadata.' },
      ),
    ),
  ),
  challenges: Type.Optional(Type.Array(OpenObject('A challenge enrolment: challenge_id, enrolled_at, overall_progress, score, milestones_reached.'))),
  contests: Type.Optional(
    Type.Object(
      { entries: Type.Array(OpenObject('A contest entry: entry_id, contest_id, score, rank, status, entered_at.')) },
      { additionalProperties: true, description: "The participant's contest entries." },
    ),
  ),
  referrals: Type.Optional(
    OpenObject('Referral stats: participant_id, total_referrals, conversions, pending, referral_code, codes (code, campaign_id, referral_url, created_at).'),
  ),
  profile: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Profile fields, masked for callers without read:pii.', ...personal('profile') })),
});
