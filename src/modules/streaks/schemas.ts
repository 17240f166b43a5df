import { Type, type Static } from '@sinclair/typebox';
import { Pagination } from '../../platform/http.js';

export const StreakCode = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_.:-]+$',
  description: 'The streak code: 1 to 64 letters, digits, `_`, `.`, `:` or `-`.',
});

export const EventName = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[A-Za-z0-9_.:/-]+$',
  description: 'An event name: 1 to 128 letters, digits, `_`, `.`, `:`, `/` or `-`.',
});

export const GRACE_PERIODS_MAX = 7;

const Period = Type.Union([Type.Literal('daily'), Type.Literal('weekly')], {
  description: 'A daily streak counts calendar days, a weekly one ISO weeks (Monday to Sunday), both in the tenant time zone.',
});
const GracePeriods = Type.Integer({
  minimum: 0,
  maximum: GRACE_PERIODS_MAX,
  description: 'Missed periods forgiven before the streak breaks (a "freeze"); 0 means a missed period breaks it.',
});

export const StreakDefinition = Type.Object(
  {
    code: Type.String(),
    name: Type.String(),
    period: Period,
    event_name: Type.Union([Type.String(), Type.Null()], { description: 'The event that counts; null when only earn rules continue the streak.' }),
    grace_periods: Type.Integer(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'StreakDefinition', title: 'StreakDefinition' },
);
export type StreakDefinition = Static<typeof StreakDefinition>;

export const CreateStreakBody = Type.Object(
  {
    code: StreakCode,
    name: Type.String({ minLength: 1, maxLength: 100 }),
    period: Period,
    event_name: Type.Optional(EventName),
    grace_periods: Type.Optional(GracePeriods),
  },
  { additionalProperties: false },
);
export type CreateStreakBody = Static<typeof CreateStreakBody>;

export const UpdateStreakBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    event_name: Type.Optional(Type.Union([EventName, Type.Null()])),
    grace_periods: Type.Optional(GracePeriods),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateStreakBody = Static<typeof UpdateStreakBody>;

export const StreakCodeParams = Type.Object({ code: StreakCode }, { additionalProperties: false });

export const ListStreaksQuery = Type.Object(
  { limit: Type.Optional(Pagination.limit(100, 50)), cursor: Pagination.cursor() },
  { additionalProperties: false },
);

export const StreakList = Type.Object({
  streaks: Type.Array(Type.Ref('StreakDefinition')),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

/** A participant's streak, as the state read shows it. */
export const ParticipantStreak = Type.Object(
  {
    streak_code: Type.String(),
    name: Type.String(),
    period: Period,
    current_length: Type.Integer({ description: '0 once the streak is broken and not yet restarted.' }),
    longest_length: Type.Integer(),
    last_period_start: Type.String({ format: 'date', description: 'First day (tenant time zone) of the last period that counted.' }),
    last_activity_at: Type.String({ format: 'date-time' }),
    freezes_used: Type.Integer({ description: 'Missed periods forgiven by the grace option during the current streak.' }),
  },
  { $id: 'ParticipantStreak', title: 'ParticipantStreak' },
);
export type ParticipantStreak = Static<typeof ParticipantStreak>;
