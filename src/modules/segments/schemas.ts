import { Type, type Static } from '@sinclair/typebox';
import { Pagination } from '../../platform/http.js';
import { personal } from '../../platform/privacy.js';

/** The operators a condition compares with. Which ones a fact takes is in its catalogue entry (`GET /admin/segments/facts`). */
export const OPERATORS = ['equals', 'not_equals', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists', 'contains', 'not_contains'] as const;
export type Operator = (typeof OPERATORS)[number];

export const CONDITIONS_MAX = 20;
export const IN_VALUES_MAX = 100;
export const WITHIN_DAYS_MAX = 3650;
export const SAMPLE_MAX = 10;

/** A segment id's pattern, the one other modules' schemas and checks use (through index.ts). */
export const SEGMENT_ID_PATTERN = '^seg_[0-9a-f]{32}$';

/** Whether `text` is a segment id. */
export const isSegmentId = (text: string): boolean => SEGMENT_ID.test(text);
const SEGMENT_ID = new RegExp(SEGMENT_ID_PATTERN);

/** A segment id: `seg_` and 32 lower-case hex digits. */
export const SegmentIdSchema = Type.String({ pattern: SEGMENT_ID_PATTERN, description: 'A segment id: `seg_` and 32 lower-case hex digits.', examples: ['seg_0f8fad5bd9cb469fa16570867728950e'] });

const Scalar = Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean(), Type.Null()]);

export const SegmentCondition = Type.Object(
  {
    fact: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '^[a-z][a-z0-9_]*(\\.[A-Za-z0-9_.:-]+)?$',
      description: 'What is compared: `profile.<field>`, `custom.<key>`, `tier`, `available_points`, `lifetime_points`, `badges`, `streak.<code>`, `days_since_last_activity`, `days_since_joined`, `event_count`, `referrals_converted`, `contests_entered` (see `GET /admin/segments/facts`).',
    }),
    operator: Type.Union(OPERATORS.map((o) => Type.Literal(o))),
    value: Type.Optional(Type.Union([Scalar, Type.Array(Scalar, { maxItems: IN_VALUES_MAX })], { description: 'The value compared with; a list for `in` / `not_in`; absent for `exists` / `not_exists`.' })),
    event_name: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:/-]+$', description: '`event_count` only: the event counted.' })),
    within_days: Type.Optional(Type.Integer({ minimum: 1, maximum: WITHIN_DAYS_MAX, description: '`event_count` only: the window, the last N days.' })),
  },
  { additionalProperties: false, $id: 'SegmentCondition', title: 'SegmentCondition' },
);
export type SegmentCondition = Static<typeof SegmentCondition>;

export const SegmentFilter = Type.Object(
  {
    // The values of personal facts are masked for callers without read:pii and redacted in the audit log (platform/privacy.ts `conditions`).
    all: Type.Optional(Type.Array(Type.Ref('SegmentCondition'), { maxItems: CONDITIONS_MAX, description: 'Every one of these holds.', ...personal('conditions') })),
    any: Type.Optional(Type.Array(Type.Ref('SegmentCondition'), { maxItems: CONDITIONS_MAX, description: 'At least one of these holds (when the list is not empty).', ...personal('conditions') })),
  },
  {
    additionalProperties: false,
    $id: 'SegmentFilter',
    title: 'SegmentFilter',
    description: 'Which participants are members. Both lists empty: every participant. Test participants are never members.',
  },
);
export interface SegmentFilter {
  all?: SegmentCondition[];
  any?: SegmentCondition[];
}

const UsedBy = Type.Object({
  type: Type.String({ description: 'What uses the segment: `rule`, or the table holding the reference.' }),
  id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  live: Type.Boolean({
    description:
      'Whether the user is live: an active rule, a published engagement, a multiplier not yet over, a published challenge not yet over, a running experiment. ' +
      'A segment with a live user is live itself: a change of its filter or materialization needs the publishing permission, else it is kept as a draft for review.',
  }),
});

export const Segment = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    filter: Type.Ref('SegmentFilter', { description: 'Values of personal facts read `***` (partly masked) for callers without read:pii.' }),
    materialized: Type.Boolean(),
    size: Type.Union([Type.Integer(), Type.Null()], { description: 'Members as of the last refresh (materialized segments); null otherwise.' }),
    refreshed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    used_by: Type.Array(UsedBy),
    status: Type.Union([Type.Literal('live'), Type.Literal('draft_pending')], {
      description: '`live`: the saved filter decides membership and nothing waits; `draft_pending`: a change of the filter or materialization waits for review (`draft`), the saved filter still decides.',
    }),
    draft: Type.Union(
      [
        Type.Object({
          filter: Type.Ref('SegmentFilter', { description: 'The filter the draft would apply; masked like `filter`.' }),
          materialized: Type.Boolean(),
        }),
        Type.Null(),
      ],
      {
        description:
          'The change waiting for review: a segment used by a live program (`used_by[].live`) changed by someone who may not publish (or anyone, where the tenant requires four-eyes publishing) keeps it here; ' +
          'submit it with `POST /admin/reviews` (kind `segment`); the approval applies it (and refreshes a materialized segment), a return leaves the live filter. Null when nothing waits.',
      },
    ),
  },
  { $id: 'Segment', title: 'Segment' },
);
export type Segment = Static<typeof Segment>;

const EXAMPLE_FILTER = { all: [{ fact: 'lifetime_points', operator: 'gte', value: 100 }, { fact: 'event_count', event_name: 'purchase', within_days: 30, operator: 'gte', value: 3 }] };

export const CreateSegmentBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 120 }),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    filter: Type.Ref('SegmentFilter'),
    materialized: Type.Optional(Type.Boolean({ default: false, description: 'Keep the membership as a table (refreshed every minute), emitting segment.entered.v1 / segment.left.v1.' })),
  },
  { additionalProperties: false, examples: [{ name: 'Frequent buyers', description: 'At least 3 purchases in 30 days', filter: EXAMPLE_FILTER }] },
);
export type CreateSegmentBody = Static<typeof CreateSegmentBody> & { filter: SegmentFilter };

export const UpdateSegmentBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 120 })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    filter: Type.Optional(Type.Ref('SegmentFilter')),
    materialized: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ name: 'Frequent buyers (30 days)' }] },
);
export type UpdateSegmentBody = Static<typeof UpdateSegmentBody> & { filter?: SegmentFilter };

export const SegmentParams = Type.Object({ segment_id: SegmentIdSchema }, { additionalProperties: false });

export const ListSegmentsQuery = Type.Object({ limit: Type.Optional(Pagination.limit(100, 50)), cursor: Pagination.cursor() }, { additionalProperties: false });

export const SegmentList = Type.Object({ segments: Type.Array(Type.Ref('Segment')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const PreviewBody = Type.Object({ filter: Type.Ref('SegmentFilter') }, { additionalProperties: false, examples: [{ filter: EXAMPLE_FILTER }] });

export const SegmentPreview = Type.Object({
  size: Type.Integer(),
  sample: Type.Array(Type.Ref('ParticipantProfile'), { maxItems: SAMPLE_MAX, description: 'Up to 10 members, masked for callers without read:pii.' }),
  took_ms: Type.Number(),
});

export const SegmentSize = Type.Object({ size: Type.Integer(), took_ms: Type.Number(), as_of: Type.String({ format: 'date-time' }) });

export const MembersQuery = Type.Object({ limit: Type.Optional(Pagination.limit(100, 50)), cursor: Pagination.cursor() }, { additionalProperties: false });

export const MemberList = Type.Object({ members: Type.Array(Type.Ref('ParticipantProfile')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const RefreshResult = Type.Object({ entered: Type.Integer(), left: Type.Integer(), size: Type.Integer() });

export const SegmentFact = Type.Object({
  fact: Type.String({ description: 'The fact as a condition names it (`profile.email`, `custom.newsletter`, `streak.daily_login`, …).' }),
  type: Type.Union([Type.Literal('string'), Type.Literal('number'), Type.Literal('boolean'), Type.Literal('date'), Type.Literal('code')]),
  operators: Type.Array(Type.String()),
  personal: Type.Boolean({ description: 'Personal data: only callers with read:pii may filter on it.' }),
  needs_event: Type.Boolean({ description: 'Takes `event_name` and `within_days` (event_count).' }),
  allowed_values: Type.Optional(Type.Array(Type.String(), { description: 'The values it can hold, when they are a fixed list (gender, tier and badge codes).' })),
  description: Type.String(),
});
export type SegmentFact = Static<typeof SegmentFact>;

export const FactList = Type.Object({ facts: Type.Array(SegmentFact) });
