import { Type, type Static } from '@sinclair/typebox';

/** Limits of progression leaderboards (spec: limit default 10, maximum 100; refresh every 30 seconds). */
export const LEADERBOARD_LIMIT_DEFAULT = 10;
export const LEADERBOARD_LIMIT_MAX = 100;
export const AROUND_MAX = 25;
export const REFRESH_SECONDS_DEFAULT = 30;
export const REFRESH_SECONDS_MIN = 1;
export const REFRESH_SECONDS_MAX = 3600;
/** Lifetime leaderboards have one ranking; it is stored under this period start. */
export const LIFETIME_PERIOD_START = '1970-01-01';

const Code = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', description: 'Lower-case letters, digits, `_` and `-`; 1 to 64 characters.' });

export const CreateLeaderboardBody = Type.Object(
  {
    leaderboard_code: Code,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    metric: Type.Union([Type.Literal('lifetime_points'), Type.Literal('period_points')], {
      description: '`lifetime_points`: lifetime points (never decrease); `period_points`: points awarded within the current `period`, reset at each period start.',
    }),
    period: Type.Optional(Type.Union([Type.Literal('weekly'), Type.Literal('monthly')], { description: 'Required for `period_points`: weeks start Monday 00:00, months on the 1st, in the tenant\'s time zone.' })),
    engagement_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'Readable only with this engagement_id; null for every engagement.' })),
    refresh_seconds: Type.Optional(Type.Integer({ minimum: REFRESH_SECONDS_MIN, maximum: REFRESH_SECONDS_MAX, description: `How often the ranking is rebuilt (default ${REFRESH_SECONDS_DEFAULT}).` })),
  },
  { additionalProperties: false, examples: [{ leaderboard_code: 'weekly-stars', name: 'Stars of the week', metric: 'period_points', period: 'weekly', engagement_id: null, refresh_seconds: 60 }] },
);
export type CreateLeaderboardBody = Static<typeof CreateLeaderboardBody>;

export const UpdateLeaderboardBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    engagement_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
    refresh_seconds: Type.Optional(Type.Integer({ minimum: REFRESH_SECONDS_MIN, maximum: REFRESH_SECONDS_MAX })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateLeaderboardBody = Static<typeof UpdateLeaderboardBody>;

export const AdminLeaderboard = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    leaderboard_code: Type.String(),
    name: Type.String(),
    metric: Type.String(),
    period: Type.Union([Type.String(), Type.Null()]),
    engagement_id: Type.Union([Type.String(), Type.Null()]),
    refresh_seconds: Type.Integer(),
    status: Type.Union([Type.Literal('active'), Type.Literal('archived')]),
    last_refreshed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    last_refresh_ms: Type.Union([Type.Integer(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'AdminLeaderboard', title: 'Progression leaderboard (admin)' },
);

export const AdminLeaderboardList = Type.Object({ leaderboards: Type.Array(Type.Ref('AdminLeaderboard')) });

export const CodeParams = Type.Object({ code: Code }, { additionalProperties: false });

export const RefreshResponse = Type.Object({
  leaderboard_code: Type.String(),
  period_start: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
  total_participants: Type.Integer(),
  refreshed_at: Type.String({ format: 'date-time' }),
  refresh_ms: Type.Integer(),
});

export const PublicQuery = Type.Object(
  {
    engagement_id: Type.String({ format: 'uuid', description: 'The published engagement the board is shown in; it names the tenant, so no credential is needed.' }),
    limit: Type.Integer({
      minimum: 1,
      maximum: LEADERBOARD_LIMIT_MAX,
      default: LEADERBOARD_LIMIT_DEFAULT,
      description: `Rows from the top, 1 to ${LEADERBOARD_LIMIT_MAX} (default ${LEADERBOARD_LIMIT_DEFAULT}); out of range is a 400.`,
    }),
    session_id: Type.Optional(Type.String({ maxLength: 128, description: "The caller's session, issued for `engagement_id`: adds `me` (the caller's rank, even outside the top)." })),
    around: Type.Integer({ minimum: 0, maximum: AROUND_MAX, default: 0, description: `With session_id: this many neighbours above and below the caller in \`around_me\` (0 to ${AROUND_MAX}).` }),
    period_start: Type.Optional(Type.String({ format: 'date', description: 'A past period of a period leaderboard, by its start date (YYYY-MM-DD, tenant time zone); default the current period.' })),
  },
  { additionalProperties: false },
);
export type PublicQuery = Static<typeof PublicQuery>;

export const StandingsQuery = Type.Object(
  {
    limit: PublicQuery.properties.limit,
    period_start: PublicQuery.properties.period_start,
  },
  { additionalProperties: false },
);
export type StandingsQuery = Static<typeof StandingsQuery>;

export const Entry = Type.Object({
  rank: Type.Union([Type.Integer(), Type.Null()], { description: 'Null only in `me` when the caller has no points in this ranking.' }),
  participant_id: Type.String(),
  display_name: Type.Union([Type.String(), Type.Null()]),
  score: Type.Integer(),
  avatar_url: Type.Union([Type.String(), Type.Null()]),
  is_me: Type.Boolean({ description: 'True on the caller\'s own row (with session_id).' }),
});

export const PublicLeaderboard = Type.Object(
  {
    leaderboard_code: Type.String(),
    name: Type.String(),
    metric: Type.String(),
    period: Type.Union([Type.String(), Type.Null()]),
    period_start: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
    period_ends_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the shown period ends (null for lifetime).' }),
    next_reset_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the current period ends and the next one starts from zero (null for lifetime).' }),
    final: Type.Boolean({ description: 'True for a past period whose ranking no longer changes.' }),
    entries: Type.Array(Entry),
    total_participants: Type.Integer(),
    updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the ranking was last rebuilt.' }),
    refresh_seconds: Type.Integer(),
    me: Type.Union([Entry, Type.Null()]),
    around_me: Type.Union([Type.Array(Entry), Type.Null()]),
  },
  { $id: 'ProgressionLeaderboard', title: 'Progression leaderboard' },
);
