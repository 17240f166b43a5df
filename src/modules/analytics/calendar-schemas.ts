import { Type, type Static } from '@sinclair/typebox';

/** The longest window one calendar read covers, in days (a leap year). */
export const CALENDAR_DAYS_MAX = 366;
/** The most items one calendar read lists; `truncated` says when more ran in the window. */
export const CALENDAR_ITEMS_MAX = 500;

export const CALENDAR_KINDS = ['rule', 'multiplier', 'engagement', 'challenge', 'contest'] as const;
export const CALENDAR_STATES = ['draft', 'scheduled', 'live', 'paused', 'ended'] as const;

const LocalDate = (description: string, example: string) => Type.String({ format: 'date', description, examples: [example] });

export const CalendarQuery = Type.Object(
  {
    from: Type.Optional(LocalDate("First day of the window (YYYY-MM-DD, a calendar day in the tenant's time zone, inclusive). Default: the first day of the current month.", '2026-11-01')),
    to: Type.Optional(LocalDate("Last day of the window (YYYY-MM-DD, the tenant's time zone, inclusive). Default: the last day of `from`'s month.", '2026-11-30')),
  },
  { additionalProperties: false },
);
export type CalendarQuery = Static<typeof CalendarQuery>;

const Instant = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

export const CalendarOverlap = Type.Object(
  {
    kind: Type.Union([Type.Literal('rule'), Type.Literal('multiplier')]),
    id: Type.String(),
    starts_at: Instant('Where the two windows start to overlap; null: since always.'),
    ends_at: Instant('Where the overlap ends; null: open-ended.'),
  },
  { additionalProperties: false },
);

export const CalendarItem = Type.Object(
  {
    kind: Type.Union(CALENDAR_KINDS.map((kind) => Type.Literal(kind)), { description: 'What the item is: an earn rule, a points multiplier, an engagement, a challenge or a contest.' }),
    id: Type.String({ description: 'The item\'s id in its own API (`/admin/rules/{id}`, `/admin/points/multipliers/{id}`, `/admin/engagements/{id}`, `/admin/challenges/{id}`, `/admin/contests/{id}`).' }),
    name: Type.Union([Type.String(), Type.Null()], { description: 'The item\'s name (a contest\'s title); null for a multiplier, which has none (see `multiplier` and `event_name`).' }),
    status: Type.String({ description: "The item's own status in its API (a rule's `active`, a contest's `scoring`, a challenge's status as its window makes it now …)." }),
    state: Type.Union(CALENDAR_STATES.map((state) => Type.Literal(state)), {
      description: 'The status in the calendar\'s common words, now: `draft` (not published), `scheduled` (published, its window not started), `live` (running), `paused` (a paused rule), `ended` (its window over, or a contest scoring or completed, an archived challenge).',
    }),
    starts_at: Instant('Start of the item\'s window; null: open at the start (a rule or engagement without a start).'),
    ends_at: Instant('End of the item\'s window (exclusive); null: open-ended.'),
    event_name: Type.Union([Type.String(), Type.Null()], { description: "The event an earn rule (trigger `event`) or a multiplier acts on, or a contest scores; null otherwise." }),
    multiplier: Type.Union([Type.Number(), Type.Null()], { description: 'A multiplier\'s factor; null for other kinds.' }),
    overlaps: Type.Array(CalendarOverlap, {
      description:
        'For earn-affecting items (event rules that are not paused, and multipliers): the other such items of the same `event_name` whose window overlaps this one, with the stretch where they do. Both act on the same events there (rules add up; a multiplier multiplies them).',
    }),
  },
  { additionalProperties: false },
);
export type CalendarItem = Static<typeof CalendarItem>;

export const Calendar = Type.Object(
  {
    from: Type.String({ format: 'date', description: 'First day of the window (inclusive).' }),
    to: Type.String({ format: 'date', description: 'Last day of the window (inclusive).' }),
    timezone: Type.String({ description: "The tenant's time zone (IANA name) that the days are cut in." }),
    items: Type.Array(CalendarItem, { maxItems: CALENDAR_ITEMS_MAX, description: 'Every item whose window meets the days, by start (open starts first), then kind and id.' }),
    truncated: Type.Boolean({ description: `True when more than ${CALENDAR_ITEMS_MAX} items run in the window and the latest-starting were left out: ask for a shorter window.` }),
  },
  { $id: 'Calendar', title: 'Campaign calendar' },
);
export type Calendar = Static<typeof Calendar>;
