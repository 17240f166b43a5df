import { Type, type Static } from '@sinclair/typebox';
import { ParticipantId } from '../participants/index.js';
import { SegmentId } from '../segments/index.js';

/** Limits of a challenge definition and of its reads. */
export const OBJECTIVES_MAX = 20;
export const MILESTONES_MAX = 20;
export const CONDITIONS_MAX = 10;
export const CHALLENGE_LEADERBOARD_LIMIT_MAX = 100;
export const CHALLENGE_LEADERBOARD_LIMIT_DEFAULT = 10;
export const CHALLENGE_LIST_LIMIT_MAX = 100;

export const EVALUATORS = ['activity_count', 'event_count', 'points_earned', 'badge_earned'] as const;
export const STATUSES = ['draft', 'scheduled', 'active', 'ended', 'archived'] as const;
export const CONDITION_OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'exists'] as const;

const Code = (description: string) => Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]*$', description });

export const Condition = Type.Object(
  {
    property: Type.String({ minLength: 1, maxLength: 200, description: 'A property of the event; dots reach into nested objects (`order.total`).' }),
    op: Type.Union(
      CONDITION_OPERATORS.map((op) => Type.Literal(op)),
      { description: '`eq`/`neq` compare exactly; `gt`/`gte`/`lt`/`lte` compare numbers; `in` takes an array; `exists` ignores `value`.' },
    ),
    value: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
export type Condition = Static<typeof Condition>;

export const ObjectiveInput = Type.Object(
  {
    id: Type.Optional(Code('Stable id of the objective within the challenge; default `objective_<n>`.')),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    evaluator: Type.Union(
      EVALUATORS.map((e) => Type.Literal(e)),
      {
        description:
          '`activity_count`: completed activities (optionally of one `activity_type` or `activity_id`); ' +
          '`event_count`: events or custom facts named `event_name` whose properties meet every condition; ' +
          '`points_earned`: points awarded since enrollment; `badge_earned`: the badge `badge_code` held (target 1), or without a code the number of badges earned since enrollment.',
      },
    ),
    target: Type.Integer({ minimum: 1, maximum: 1_000_000_000 }),
    weight: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1000, description: 'Share of the overall progress; default 1.' })),
    activity_type: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    activity_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    event_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    conditions: Type.Optional(Type.Array(Condition, { maxItems: CONDITIONS_MAX })),
    badge_code: Type.Optional(Code('The badge to hold (badge_earned).')),
  },
  { additionalProperties: false },
);
export type ObjectiveInput = Static<typeof ObjectiveInput>;

export const MilestoneInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    threshold: Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'Overall progress (0 to 1) at which the milestone is reached.' }),
  },
  { additionalProperties: false },
);

const Completion = {
  completion_points: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000_000 }), Type.Null()], { description: 'Points granted when every objective is completed.' })),
  completion_badge_code: Type.Optional(Type.Union([Code('A badge awarded on completion.'), Type.Null()])),
};

const SegmentIdOrNull = Type.Union([Type.Unsafe<string>(SegmentId), Type.Null()], {
  description: 'Only the members of this segment (`seg_…`, one of the tenant\'s) may enrol; others are answered 403 `NOT_IN_SEGMENT`. Null or absent: everyone.',
});

export const CreateChallengeBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    starts_at: Type.String({ format: 'date-time' }),
    ends_at: Type.String({ format: 'date-time' }),
    engagement_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'Shows the challenge only to sessions of this engagement; null for every engagement.' })),
    segment_id: Type.Optional(SegmentIdOrNull),
    objectives: Type.Array(ObjectiveInput, { minItems: 1, maxItems: OBJECTIVES_MAX }),
    milestones: Type.Optional(Type.Array(MilestoneInput, { maxItems: MILESTONES_MAX })),
    status: Type.Optional(
      Type.Union([Type.Literal('draft'), Type.Literal('active')], {
        description: '`draft` (default) is invisible to participants; `active` publishes at once (the status is then `scheduled` until `starts_at`).',
      }),
    ),
    ...Completion,
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Spring explorer',
        description: 'Spin the wheel three times and place two orders over 20 EUR before the season ends.',
        starts_at: '2026-11-26T09:30:00.000Z',
        ends_at: '2027-12-31T23:00:00.000Z',
        engagement_id: null,
        objectives: [
          { id: 'spin_three', name: 'Spin the wheel three times', evaluator: 'activity_count', target: 3, weight: 1, activity_type: 'spin_wheel' },
          { id: 'two_orders', name: 'Two orders over 20 EUR', evaluator: 'event_count', target: 2, weight: 2, event_name: 'purchase_completed', conditions: [{ property: 'order_total', op: 'gte', value: 20 }] },
        ],
        milestones: [{ name: 'Halfway there', threshold: 0.5 }],
        status: 'draft',
        completion_points: 500,
        completion_badge_code: null,
      },
    ],
  },
);
export type CreateChallengeBody = Static<typeof CreateChallengeBody>;

export const UpdateChallengeBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    starts_at: Type.Optional(Type.String({ format: 'date-time' })),
    ends_at: Type.Optional(Type.String({ format: 'date-time' })),
    engagement_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
    segment_id: Type.Optional(SegmentIdOrNull),
    objectives: Type.Optional(Type.Array(ObjectiveInput, { minItems: 1, maxItems: OBJECTIVES_MAX })),
    milestones: Type.Optional(Type.Array(MilestoneInput, { maxItems: MILESTONES_MAX })),
    ...Completion,
  },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [{ name: 'Spring explorer: extra time', description: 'Three spins and two orders over 20 EUR; the season now runs to the end of next year.', ends_at: '2027-12-31T23:00:00.000Z' }],
  },
);
export type UpdateChallengeBody = Static<typeof UpdateChallengeBody>;

const StatusSchema = Type.Union(STATUSES.map((s) => Type.Literal(s)));

export const StoredObjective = Type.Object({
  id: Type.String(),
  name: Type.String(),
  evaluator: Type.String(),
  target: Type.Number(),
  weight: Type.Number(),
  activity_type: Type.Optional(Type.String()),
  activity_id: Type.Optional(Type.String()),
  event_name: Type.Optional(Type.String()),
  conditions: Type.Optional(Type.Array(Condition)),
  badge_code: Type.Optional(Type.String()),
});
export type StoredObjective = Static<typeof StoredObjective>;

const adminChallengeFields = {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Type.String(),
    status: StatusSchema,
    starts_at: Type.String({ format: 'date-time' }),
    ends_at: Type.String({ format: 'date-time' }),
    engagement_id: Type.Union([Type.String(), Type.Null()]),
    segment_id: Type.Union([Type.String(), Type.Null()], { description: 'Set when only the members of this segment may enrol.' }),
    objectives: Type.Array(StoredObjective),
    milestones: Type.Array(Type.Object({ name: Type.String(), threshold: Type.Number() })),
    completion_points: Type.Union([Type.Integer(), Type.Null()]),
    completion_badge_code: Type.Union([Type.String(), Type.Null()]),
    enrolled_count: Type.Integer(),
    completed_count: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
};

export const AdminChallenge = Type.Object(
  {
    ...adminChallengeFields,
    status_moves: Type.Array(
      Type.Object({ from_status: Type.Union([Type.String(), Type.Null()]), to_status: Type.String(), moved_by: Type.String(), moved_at: Type.String({ format: 'date-time' }) }),
      { description: 'Every status move, by an admin (`admin:<actor>`) or by time (`lifecycle`).' },
    ),
  },
  { $id: 'AdminChallenge', title: 'Challenge (admin)' },
);

export const AdminChallengeList = Type.Object({
  challenges: Type.Array(Type.Object(adminChallengeFields)),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const ListChallengesQuery = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    limit: Type.Integer({ minimum: 1, maximum: CHALLENGE_LIST_LIMIT_MAX, default: 50 }),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

export const ChallengeIdParams = Type.Object({ id: Type.String({ format: 'uuid', description: 'Challenge id.' }) }, { additionalProperties: false });

export const SessionQuery = Type.Object(
  { session_id: Type.String({ maxLength: 128 }), engagement_id: Type.String({ format: 'uuid' }) },
  { additionalProperties: false },
);
export const SessionBody = SessionQuery;

export const PublicObjective = Type.Object({
  id: Type.String(),
  name: Type.String(),
  evaluator: Type.String(),
  target: Type.Number(),
  current: Type.Number(),
  completed: Type.Boolean(),
});

export const PublicChallenge = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Type.String(),
    status: StatusSchema,
    starts_at: Type.String({ format: 'date-time' }),
    ends_at: Type.String({ format: 'date-time' }),
    enrolled: Type.Boolean(),
    eligible: Type.Boolean({ description: 'False when the challenge is for the members of a segment the caller is not in: enrolment is then answered 403 `NOT_IN_SEGMENT`.' }),
    objectives: Type.Array(PublicObjective),
    milestones: Type.Array(Type.Object({ name: Type.String(), threshold: Type.Number(), reached: Type.Boolean() })),
  },
  { $id: 'PublicChallenge', title: 'Challenge' },
);

export const PublicChallengeList = Type.Object({ challenges: Type.Array(Type.Ref('PublicChallenge')) });

export const EnrollResponse = Type.Object({
  enrolled: Type.Literal(true),
  challenge_id: Type.String({ format: 'uuid' }),
  enrolled_at: Type.String({ format: 'date-time' }),
});

export const ProgressResponse = Type.Object(
  {
    challenge_id: Type.String({ format: 'uuid' }),
    overall_progress: Type.Number({ minimum: 0, maximum: 1 }),
    score: Type.Number(),
    objectives: Type.Array(Type.Object({ id: Type.String(), current: Type.Number(), target: Type.Number(), completed: Type.Boolean() })),
    milestones_reached: Type.Array(Type.String()),
    enrolled_at: Type.String({ format: 'date-time' }),
    completed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'ChallengeProgress', title: 'Challenge progress' },
);

export const ChallengeLeaderboardQuery = Type.Object(
  {
    limit: Type.Integer({
      minimum: 1,
      maximum: CHALLENGE_LEADERBOARD_LIMIT_MAX,
      default: CHALLENGE_LEADERBOARD_LIMIT_DEFAULT,
      description: `Rows, 1 to ${CHALLENGE_LEADERBOARD_LIMIT_MAX} (default ${CHALLENGE_LEADERBOARD_LIMIT_DEFAULT}); out of range is a 400.`,
    }),
    session_id: Type.Optional(Type.String({ maxLength: 128, description: 'Adds the caller\'s own row as `me` (not needed to name the tenant: the challenge id does).' })),
    engagement_id: Type.Optional(Type.String({ format: 'uuid' })),
  },
  { additionalProperties: false },
);

export const ChallengeLeaderboardEntry = Type.Object({
  rank: Type.Integer(),
  participant_id: Type.String(),
  display_name: Type.Union([Type.String(), Type.Null()]),
  score: Type.Number(),
  objectives_completed: Type.Integer(),
});

export const ChallengeLeaderboardResponse = Type.Object({
  challenge_id: Type.String({ format: 'uuid' }),
  entries: Type.Array(ChallengeLeaderboardEntry),
  total_participants: Type.Integer(),
  me: Type.Optional(Type.Union([ChallengeLeaderboardEntry, Type.Null()])),
});

