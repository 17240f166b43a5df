import { personal } from '../../platform/privacy.js';
import { Type, type Static } from '@sinclair/typebox';
import { Pagination } from '../../platform/http.js';
import { ParticipantId } from '../participants/index.js';

/** Limits of a contest definition and of its reads (named so that every bound is visible). */
export const PRIZE_TIERS_MAX = 100;
export const PRIZE_RANK_MAX = 100_000;
export const LEADERBOARD_LIMIT_MAX = 100;
export const LEADERBOARD_LIMIT_DEFAULT = 10;
export const BRACKET_SIZE_MAX = 101;
export const BRACKET_SIZE_DEFAULT = 11;
export const VERIFICATION_WINDOW_HOURS_MIN = 24;
export const VERIFICATION_WINDOW_HOURS_MAX = 72;

const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
export const ContestId = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$',
  description: 'Chosen by the caller: 1 to 64 letters, digits, `_`, `.`, `:` or `-`, starting with a letter or digit.',
});
export const ContestStatus = Type.Union(
  ['draft', 'scheduled', 'active', 'scoring', 'completed'].map((s) => Type.Literal(s)),
  { description: 'draft → scheduled (publication) → active (at starts_at) → scoring (at ends_at) → completed (after the final sweep). Nothing moves back.' },
);
export const EntryStatus = Type.Union(
  ['active', 'flagged', 'disqualified', 'winner', 'under_review', 'paid', 'unfunded', 'finished'].map((s) => Type.Literal(s)),
  {
    description:
      'active: scoring; flagged: a fraud control fired, still scoring, reviewed if it wins; disqualified: out of the ranking; ' +
      'winner: won a prize rank, in verification; under_review: held for manual review; paid: prize code issued; ' +
      'unfunded: won a rank after max_reward_liability was reached; finished: ranked outside the prizes.',
  },
);

export const RewardType = Type.Union(['cash', 'voucher', 'coupon', 'points_multiplier', 'physical', 'digital'].map((s) => Type.Literal(s)), {
  description: 'The admin definition shows cash and voucher, the prize tier voucher, coupon and points_multiplier: all are accepted (docs/decisions/contests.md).',
});

export const Scoring = Type.Object(
  {
    event_type: Type.String({ minLength: 1, maxLength: 128, description: 'Matches the `event_name` of ingested events (and the fact name of activity facts).' }),
    score_attribute: Type.String({ minLength: 1, maxLength: 128, description: 'A numeric property of the event; its value × weight is added to the score.' }),
    weight: Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000 }),
  },
  { additionalProperties: false },
);

export const PrizeTierDefinition = Type.Object(
  {
    rank_from: Type.Integer({ minimum: 1, maximum: PRIZE_RANK_MAX }),
    rank_to: Type.Integer({ minimum: 1, maximum: PRIZE_RANK_MAX }),
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    reward: Type.Object(
      {
        type: RewardType,
        value: Type.Number({ minimum: 0, maximum: 1_000_000_000, description: 'Counted against max_reward_liability once per winning rank.' }),
        name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const FraudRules = Type.Object(
  {
    max_score_per_minute: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    max_score_per_hour: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    max_rank_jump_per_hour: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    block_disposable_emails: Type.Optional(Type.Boolean()),
    block_repeat_payment_methods: Type.Optional(Type.Boolean()),
    block_repeat_devices: Type.Optional(Type.Boolean()),
    review_threshold_score: Type.Optional(Type.Number({ minimum: 0 })),
    auto_disqualify_on_velocity_breach: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false, $id: 'ContestFraudRules' },
);
export type FraudRules = Static<typeof FraudRules>;

const definitionFields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  starts_at: Timestamp,
  ends_at: Timestamp,
  scoring: Scoring,
  prize_structure: Type.Array(PrizeTierDefinition, { maxItems: PRIZE_TIERS_MAX }),
  max_reward_liability: Type.Number({ minimum: 0, maximum: 1e12 }),
  fraud_rules: Type.Optional(Type.Ref('ContestFraudRules')),
  verification_window_hours: Type.Optional(
    Type.Integer({ minimum: VERIFICATION_WINDOW_HOURS_MIN, maximum: VERIFICATION_WINDOW_HOURS_MAX, default: 24, description: 'How long winners stay in verification (24 to 72 hours).' }),
  ),
};

export const CreateContestBody = Type.Object(
  { id: ContestId, ...definitionFields },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'spring-rally-2026',
        title: 'Spring Rally',
        description: 'Most order points by the end of the season wins; the top three get store credit.',
        starts_at: '2026-11-26T09:30:00.000Z',
        ends_at: '2027-12-31T23:00:00.000Z',
        scoring: { event_type: 'purchase_completed', score_attribute: 'order_total', weight: 1 },
        prize_structure: [
          { rank_from: 1, rank_to: 1, label: 'Winner', reward: { type: 'cash', value: 100, name: '100 EUR store credit' } },
          { rank_from: 2, rank_to: 3, label: 'Runners-up', reward: { type: 'voucher', value: 25, name: '25 EUR voucher' } },
        ],
        max_reward_liability: 150,
        fraud_rules: { max_score_per_hour: 2000, block_disposable_emails: true, block_repeat_devices: true, review_threshold_score: 5000 },
        verification_window_hours: 48,
      },
    ],
  },
);
export type CreateContestBody = Static<typeof CreateContestBody>;

export const UpdateContestBody = Type.Object(
  {
    title: Type.Optional(definitionFields.title),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    starts_at: Type.Optional(Timestamp),
    ends_at: Type.Optional(Timestamp),
    scoring: Type.Optional(Scoring),
    prize_structure: Type.Optional(definitionFields.prize_structure),
    max_reward_liability: Type.Optional(definitionFields.max_reward_liability),
    fraud_rules: Type.Optional(Type.Ref('ContestFraudRules')),
    // No default here: a default would be filled into every change and refuse a title edit of an active contest.
    verification_window_hours: Type.Optional(
      Type.Integer({ minimum: VERIFICATION_WINDOW_HOURS_MIN, maximum: VERIFICATION_WINDOW_HOURS_MAX, description: 'How long winners stay in verification (24 to 72 hours).' }),
    ),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ title: 'Spring Rally: final week', description: 'Most order points by Sunday wins; the top three get store credit.' }] },
);
export type UpdateContestBody = Static<typeof UpdateContestBody>;

export const AdminContest = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    status: ContestStatus,
    starts_at: Timestamp,
    ends_at: Timestamp,
    scoring: Scoring,
    prize_structure: Type.Array(PrizeTierDefinition),
    max_reward_liability: Type.Number(),
    fraud_rules: Type.Ref('ContestFraudRules'),
    verification_window_hours: Type.Integer(),
    entry_count: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
    published_at: NullableTimestamp,
    activated_at: NullableTimestamp,
    scoring_started_at: NullableTimestamp,
    completed_at: NullableTimestamp,
    final_sweep_ms: Type.Union([Type.Integer(), Type.Null()]),
    verification_ends_at: NullableTimestamp,
    prizes_issued_at: NullableTimestamp,
    liability_allocated: Type.Number(),
    tie_break: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'Seed and tied groups of the final tie-break, for audit.' }),
  },
  { $id: 'AdminContest', title: 'AdminContest' },
);

export const ContestSummary = Type.Object(
  {
    id: Type.String(),
    name: Type.String({ description: 'The admin definition\'s `title`.' }),
    description: Type.Union([Type.String(), Type.Null()]),
    status: ContestStatus,
    starts_at: Timestamp,
    ends_at: Timestamp,
    scoring_method: Type.Literal('cumulative'),
    entry_count: Type.Integer(),
  },
  { $id: 'ContestSummary', title: 'ContestSummary' },
);

export const Entry = Type.Object(
  {
    entry_id: Type.String(),
    contest_id: Type.String(),
    participant_id: Type.String(),
    entered_at: Timestamp,
    score: Type.Integer(),
    rank: Type.Union([Type.Integer(), Type.Null()], { description: 'Live rank while the contest runs, the frozen final rank once completed; null when not ranked (disqualified).' }),
    display_name: Type.Union([Type.String(), Type.Null()]),
    score_events: Type.Integer(),
    status: EntryStatus,
  },
  { $id: 'ContestEntry', title: 'ContestEntry' },
);

export const ContestIdParams = Type.Object({ id: ContestId });
export const EntryParams = Type.Object({ id: ContestId, participant_id: ParticipantId });

/** Session routes carry the session in the query; these two fields are read by the auth hook. */
const SessionQueryFields = {
  session_id: Type.Optional(Type.String({ maxLength: 200 })),
  engagement_id: Type.Optional(Type.String({ format: 'uuid' })),
};
export const SessionQuery = Type.Object({ ...SessionQueryFields }, { additionalProperties: false });
export const MeQuery = Type.Object(
  { ...SessionQueryFields, participant_id: Type.Optional(ParticipantId) },
  { additionalProperties: false },
);
export const LeaderboardQuery = Type.Object(
  { ...SessionQueryFields, limit: Pagination.limit(LEADERBOARD_LIMIT_MAX, LEADERBOARD_LIMIT_DEFAULT) },
  { additionalProperties: false },
);
export const AdminLeaderboardQuery = Type.Object(
  { limit: Pagination.limit(LEADERBOARD_LIMIT_MAX, LEADERBOARD_LIMIT_DEFAULT), offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })) },
  { additionalProperties: false },
);
export const BracketQuery = Type.Object(
  {
    ...SessionQueryFields,
    around: Type.Optional(ParticipantId),
    size: Type.Integer({ minimum: 1, maximum: BRACKET_SIZE_MAX, default: BRACKET_SIZE_DEFAULT }),
  },
  { additionalProperties: false },
);

const Signals = {
  device_fingerprint: Type.Optional(Type.String({ ...personal('contact'), minLength: 1, maxLength: 256, description: 'A fingerprint of the device the participant enters from.' })),
  publish_consent: Type.Optional(Type.Boolean({ description: 'Whether the display name may appear on the public winners list (default false).' })),
};

export const EnterBody = Type.Object(
  {
    session_id: Type.Optional(Type.String({ maxLength: 200 })),
    engagement_id: Type.Optional(Type.String({ format: 'uuid' })),
    participant_id: Type.Optional(ParticipantId),
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    ...Signals,
  },
  { additionalProperties: false },
);
export type EnterBody = Static<typeof EnterBody>;

export const ServerEnterBody = Type.Object(
  {
    participant_id: ParticipantId,
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    email: Type.Optional(Type.String({ ...personal('email'), format: 'email', maxLength: 254, description: 'Checked against the disposable-email list when block_disposable_emails is set.' })),
    payment_method: Type.Optional(Type.String({ ...personal('contact'), minLength: 1, maxLength: 256, description: 'A stable fingerprint (token or hash) of the payment method, never the card number.' })),
    ...Signals,
  },
  { additionalProperties: false },
);
export type ServerEnterBody = Static<typeof ServerEnterBody>;

export const PublicLeaderboard = Type.Object({
  contest_id: Type.String(),
  entries: Type.Array(
    Type.Object({ rank: Type.Integer(), display_name: Type.Union([Type.String(), Type.Null()]), score: Type.Integer(), last_scored_at: NullableTimestamp }),
  ),
  total_entries: Type.Integer(),
  updated_at: Timestamp,
});

const AdminRow = Type.Object({
  rank: Type.Integer(),
  participant_id: Type.String(),
  display_name: Type.Union([Type.String(), Type.Null()]),
  score: Type.Integer(),
  entry_id: Type.String(),
  status: EntryStatus,
  reached_at: Timestamp,
});

export const AdminLeaderboard = Type.Object({
  contest_id: Type.String(),
  window: Type.Union([Type.Literal('active'), Type.Literal('final')], { description: '`active` while ranks are live, `final` once frozen at completion.' }),
  as_of: Timestamp,
  rows: Type.Array(AdminRow),
  total_entries: Type.Integer(),
});

export const BracketLeaderboard = Type.Object({
  contest_id: Type.String(),
  around: Type.String(),
  rows: Type.Array(Type.Object({ rank: Type.Integer(), participant_id: Type.String(), display_name: Type.Union([Type.String(), Type.Null()]), score: Type.Integer() })),
  total_entries: Type.Integer(),
});

export const PrizeTier = Type.Object({
  rank_from: Type.Integer(),
  rank_to: Type.Integer(),
  label: Type.String(),
  reward_name: Type.String(),
  reward_type: RewardType,
  reward_value: Type.Number(),
});
export const PrizesResponse = Type.Object({ contest_id: Type.String(), prizes: Type.Array(PrizeTier) });

export const WinnersResponse = Type.Object({
  contest_id: Type.String(),
  published: Type.Boolean({ description: 'False until prize codes are issued after verification.' }),
  winners: Type.Array(
    Type.Object({
      rank: Type.Integer(),
      display_name: Type.Union([Type.String(), Type.Null()], { description: 'Null when the winner did not consent to publication.' }),
      reward_type: RewardType,
      reward_name: Type.String(),
    }),
  ),
});

export const ActiveContests = Type.Object({ contests: Type.Array(Type.Ref('ContestSummary')) });

export const AdminContestList = Type.Object({ contests: Type.Array(Type.Ref('AdminContest')), next_cursor: Type.Union([Type.String(), Type.Null()]) });
export const AdminContestListQuery = Type.Object(
  { status: Type.Optional(ContestStatus), limit: Pagination.limit(100, 20), cursor: Pagination.cursor() },
  { additionalProperties: false },
);

export const Review = Type.Object(
  {
    review_id: Type.String(),
    contest_id: Type.String(),
    entry_id: Type.String(),
    participant_id: Type.String(),
    reasons: Type.Array(Type.String()),
    status: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('disqualified')]),
    created_at: Timestamp,
    decided_at: NullableTimestamp,
    decided_by: Type.Union([Type.String(), Type.Null()]),
    note: Type.Union([Type.String(), Type.Null()]),
    score: Type.Integer(),
    final_rank: Type.Union([Type.Integer(), Type.Null()]),
  },
  { $id: 'ContestReview', title: 'ContestReview' },
);
export const ReviewList = Type.Object({ reviews: Type.Array(Type.Ref('ContestReview')), next_cursor: Type.Union([Type.String(), Type.Null()]) });
export const ReviewListQuery = Type.Object(
  {
    contest_id: Type.Optional(ContestId),
    status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('disqualified')])),
    limit: Pagination.limit(100, 20),
    cursor: Pagination.cursor(),
  },
  { additionalProperties: false },
);

/** A decision's reason is read later in the trail by someone else: a word or two does not explain it. */
export const DECISION_REASON_MIN = 10;

export const FraudDecisionBody = Type.Object(
  {
    review_id: Type.Optional(Type.String({ maxLength: 100, description: 'The held review to resolve; or name it by contest_id and entry_id.' })),
    contest_id: Type.Optional(ContestId),
    entry_id: Type.Optional(Type.String({ maxLength: 100 })),
    decision: Type.Union([Type.Literal('approve'), Type.Literal('disqualify')]),
    reason: Type.Optional(
      Type.String({
        minLength: DECISION_REASON_MIN,
        maxLength: 500,
        description: 'Why (at least 10 characters): kept in the decision trail and, for a disqualification, sent in reward.disqualified.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type FraudDecisionBody = Static<typeof FraudDecisionBody>;

export const FraudDecisionResponse = Type.Object({
  review: Type.Ref('ContestReview'),
  entry_status: EntryStatus,
  prize_status: Type.Union([Type.String(), Type.Null()]),
});

export const EntryAdminView = Type.Object({
  entry: Type.Ref('ContestEntry'),
  signals: Type.Object({
    email: Type.Union([Type.String(personal('email')), Type.Null()]),
    payment_method: Type.Union([Type.String(personal('contact')), Type.Null()]),
    device_fingerprint: Type.Union([Type.String(personal('contact')), Type.Null()]),
    publish_consent: Type.Boolean(),
  }),
  status_history: Type.Array(
    Type.Object({ from_status: Type.Union([EntryStatus, Type.Null()]), to_status: EntryStatus, reason: Type.String(), actor: Type.String(), changed_at: Timestamp }),
  ),
  prize: Type.Union([
    Type.Object({ rank: Type.Integer(), reward_type: RewardType, reward_value: Type.Number(), reward_name: Type.String(), status: Type.String(), prize_code: Type.Union([Type.String(personal('secret')), Type.Null()]), issued_at: NullableTimestamp }),
    Type.Null(),
  ]),
});

export const sharedSchemas = [FraudRules, AdminContest, ContestSummary, Entry, Review];
