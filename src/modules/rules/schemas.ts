import { Type, type Static } from '@sinclair/typebox';
import { Pagination } from '../../platform/http.js';
import { ParticipantId } from '../participants/index.js';

/**
 * The earn rule format. A rule is data, never code: conditions are a typed
 * list of (fact, operator, value) triples evaluated by a small interpreter,
 * and effects are a closed list of kinds.
 */
export const CONDITIONS_MAX = 20;
export const EFFECTS_MAX = 10;
export const IN_VALUES_MAX = 100;
/** The most segments one `participant.segment` condition lists. */
export const SEGMENT_IDS_MAX = 20;

export const EventName = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[A-Za-z0-9_.:/-]+$',
  description: 'An event name: 1 to 128 letters, digits, `_`, `.`, `:`, `/` or `-`.',
});

const FactPath = Type.String({
  maxLength: 200,
  examples: ['properties.order_total'],
  pattern: '^(properties(\\.[A-Za-z0-9_-]+)+|participant\\.(lifetime_points|available_points|badges|segment))$',
  description:
    'What the condition reads: `properties.<name>` (nested with dots) from the event, or a participant attribute: ' +
    '`participant.lifetime_points`, `participant.available_points`, `participant.badges` (the codes of the badges held), ' +
    '`participant.segment` (segment membership: operator `in` = a member of at least one of the listed segments, `not_in` = a member of none; ' +
    `the value is a list of 1 to ${SEGMENT_IDS_MAX} segment ids \`seg_…\` of the tenant, e.g. \`{ "fact": "participant.segment", "operator": "in", "value": ["seg_…"] }\`).`,
});

export const Operator = Type.Union(
  ['equals', 'not_equals', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'exists', 'not_exists', 'contains'].map((o) => Type.Literal(o)),
  {
    description:
      '`equals`/`not_equals` compare with a string, number, boolean or null; `in`/`not_in` with a list of those; ' +
      '`gt`/`gte`/`lt`/`lte` need a number (the fact must be a number); `exists`/`not_exists` take no value; ' +
      '`contains` tests that a list (or a string) holds the value. `participant.segment` takes `in` and `not_in` only.',
  },
);

export const Condition = Type.Object(
  {
    fact: FactPath,
    operator: Operator,
    value: Type.Optional(Type.Unknown({ description: 'The value to compare with; its type depends on the operator.' })),
  },
  { additionalProperties: false, $id: 'RuleCondition', title: 'RuleCondition' },
);
export type Condition = Static<typeof Condition>;

export const Conditions = Type.Object(
  {
    all: Type.Optional(Type.Array(Type.Ref('RuleCondition'), { maxItems: CONDITIONS_MAX, description: 'Every one must hold.' })),
    any: Type.Optional(Type.Array(Type.Ref('RuleCondition'), { maxItems: CONDITIONS_MAX, description: 'At least one must hold (ignored when empty).' })),
  },
  { additionalProperties: false, $id: 'RuleConditions', title: 'RuleConditions' },
);
export interface Conditions {
  all?: Condition[];
  any?: Condition[];
}

export const Rate = Type.Object(
  {
    property: Type.String({ maxLength: 200, pattern: '^properties(\\.[A-Za-z0-9_-]+)+$', examples: ['properties.amount'], description: 'A numeric event property, e.g. `properties.amount`.' }),
    points_per_unit: Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000 }),
    rounding: Type.Optional(Type.Union([Type.Literal('floor'), Type.Literal('round'), Type.Literal('ceil')], { default: 'floor' })),
  },
  { additionalProperties: false },
);

export const Effect = Type.Object(
  {
    type: Type.Union([Type.Literal('award_points'), Type.Literal('award_badge'), Type.Literal('continue_streak')]),
    points: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'award_points: a fixed amount.' })),
    rate: Type.Optional(Rate),
    max_points: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'award_points with a rate: the most one event earns.' })),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'award_points: the ledger reason; default the rule name.' })),
    badge_code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$', description: 'award_badge: the badge.' })),
    streak_code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$', description: 'continue_streak: the streak.' })),
  },
  { additionalProperties: false, $id: 'RuleEffect', title: 'RuleEffect' },
);
export type Effect = Static<typeof Effect>;

const CapLimit = Type.Object(
  {
    times: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'The most times the rule applies to one participant in the period.' })),
    points: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'The most points the rule awards one participant in the period.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const Caps = Type.Object(
  {
    per_day: Type.Optional(CapLimit),
    per_week: Type.Optional(CapLimit),
    lifetime: Type.Optional(CapLimit),
  },
  {
    additionalProperties: false,
    $id: 'RuleCaps',
    title: 'RuleCaps',
    description: 'Per-participant caps. Days and ISO weeks (Monday first) are those of the tenant time zone, at the event timestamp.',
  },
);
export type Caps = Static<typeof Caps>;

const Trigger = Type.Union([Type.Literal('event'), Type.Literal('birthday'), Type.Literal('recurring')], {
  description:
    '`event`: runs on each processed event named `event_name`. `birthday`: runs once a day (tenant time zone) for participants whose profile `date_of_birth` is today. ' +
    '`recurring`: runs for every participant on `schedule` (daily at 00:00, weekly on Mondays, monthly on the 1st, tenant time zone).',
});
const Schedule = Type.Union([Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('monthly')]);
const Status = Type.Union([Type.Literal('draft'), Type.Literal('active'), Type.Literal('paused')], {
  description:
    '`active` rules apply to events; `paused` ones are published but skipped; a `draft` has never been published and applies to nothing. ' +
    'People without the publishing permission create drafts (the default for them) and submit them for review (POST /admin/reviews); API keys and publishers create `active` rules by default.',
});

const ruleFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.String({ maxLength: 2000 }),
  status: Status,
  trigger: Trigger,
  event_name: EventName,
  schedule: Schedule,
  conditions: Type.Ref('RuleConditions'),
  effects: Type.Array(Type.Ref('RuleEffect'), { minItems: 1, maxItems: EFFECTS_MAX }),
  caps: Type.Ref('RuleCaps'),
  budget_points: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000, description: 'Total points the rule may award across all participants; awards stop once spent.' }),
  priority: Type.Integer({ minimum: -1000, maximum: 1000, description: 'Higher runs first; ties by creation time.' }),
  stop_processing: Type.Boolean({ description: 'When the rule applies, rules of lower priority are skipped for this event.' }),
  starts_at: Type.String({ format: 'date-time' }),
  ends_at: Type.String({ format: 'date-time' }),
};

export const CreateRuleBody = Type.Object(
  {
    name: ruleFields.name,
    description: Type.Optional(ruleFields.description),
    status: Type.Optional(Status),
    trigger: Type.Optional(Trigger),
    event_name: Type.Optional(ruleFields.event_name),
    schedule: Type.Optional(Schedule),
    conditions: Type.Optional(ruleFields.conditions),
    effects: ruleFields.effects,
    caps: Type.Optional(ruleFields.caps),
    budget_points: Type.Optional(ruleFields.budget_points),
    priority: Type.Optional(ruleFields.priority),
    stop_processing: Type.Optional(ruleFields.stop_processing),
    starts_at: Type.Optional(ruleFields.starts_at),
    ends_at: Type.Optional(ruleFields.ends_at),
  },
  {
    additionalProperties: false,
    $id: 'EarnRuleInput',
    title: 'EarnRuleInput',
    examples: [
      {
        name: '10 points per euro on orders over 20 EUR',
        event_name: 'purchase_completed',
        conditions: { all: [{ fact: 'properties.order_total', operator: 'gte', value: 20 }] },
        effects: [{ type: 'award_points', rate: { property: 'properties.order_total', points_per_unit: 10 } }],
        caps: { per_day: { points: 500 } },
      },
    ],
  },
);
export type CreateRuleBody = {
  name: string;
  description?: string;
  status?: 'draft' | 'active' | 'paused';
  trigger?: 'event' | 'birthday' | 'recurring';
  event_name?: string;
  schedule?: 'daily' | 'weekly' | 'monthly';
  conditions?: Conditions;
  effects: Effect[];
  caps?: Caps;
  budget_points?: number;
  priority?: number;
  stop_processing?: boolean;
  starts_at?: string;
  ends_at?: string;
};

const nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(schema: T) => Type.Union([schema, Type.Null()]);

export const UpdateRuleBody = Type.Object(
  {
    name: Type.Optional(ruleFields.name),
    description: Type.Optional(nullable(ruleFields.description)),
    status: Type.Optional(Status),
    event_name: Type.Optional(ruleFields.event_name),
    schedule: Type.Optional(Schedule),
    conditions: Type.Optional(ruleFields.conditions),
    effects: Type.Optional(ruleFields.effects),
    caps: Type.Optional(ruleFields.caps),
    budget_points: Type.Optional(nullable(ruleFields.budget_points)),
    priority: Type.Optional(ruleFields.priority),
    stop_processing: Type.Optional(ruleFields.stop_processing),
    starts_at: Type.Optional(nullable(ruleFields.starts_at)),
    ends_at: Type.Optional(nullable(ruleFields.ends_at)),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ name: '10 points per euro on orders over 20 EUR', caps: { per_day: { points: 800 } } }] },
);
export type UpdateRuleBody = Partial<Omit<CreateRuleBody, 'trigger' | 'description' | 'budget_points' | 'starts_at' | 'ends_at'>> & {
  description?: string | null;
  budget_points?: number | null;
  starts_at?: string | null;
  ends_at?: string | null;
};

export const EarnRule = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    status: Status,
    trigger: Trigger,
    event_name: Type.Union([Type.String(), Type.Null()]),
    schedule: Type.Union([Schedule, Type.Null()]),
    conditions: Type.Ref('RuleConditions'),
    effects: Type.Array(Type.Ref('RuleEffect')),
    caps: Type.Ref('RuleCaps'),
    budget_points: Type.Union([Type.Integer(), Type.Null()]),
    budget_spent: Type.Integer(),
    budget_remaining: Type.Union([Type.Integer(), Type.Null()]),
    priority: Type.Integer(),
    stop_processing: Type.Boolean(),
    starts_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    ends_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'EarnRule', title: 'EarnRule' },
);

export const RuleIdParams = Type.Object({ rule_id: Type.String({ pattern: '^rul_[0-9a-f]{32}$' }) }, { additionalProperties: false });

export const ListRulesQuery = Type.Object(
  {
    event_name: Type.Optional(EventName),
    status: Type.Optional(Status),
    trigger: Type.Optional(Trigger),
    limit: Type.Optional(Pagination.limit(100, 50)),
    cursor: Pagination.cursor(),
  },
  { additionalProperties: false },
);

export const RuleList = Type.Object({ rules: Type.Array(Type.Ref('EarnRule')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const SIMULATION_RANGE_DAYS_MAX = 366;

export const SimulateBody = Type.Object(
  {
    rule: Type.Optional(Type.Ref('EarnRuleInput', { description: 'A draft rule (same format as creation). Give this or `rule_id`.' })),
    rule_id: Type.Optional(Type.String({ pattern: '^rul_[0-9a-f]{32}$', description: 'An existing rule to replay. Give this or `rule`.' })),
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    participant_id: Type.Optional(ParticipantId),
  },
  {
    additionalProperties: false,
    examples: [{ rule_id: 'rul_6f1d2c3b4a5e46f7890a1b2c3d4e5f60', from: '2026-10-01T00:00:00.000Z', to: '2026-11-01T00:00:00.000Z' }],
  },
);

export const SimulationResult = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  events_scanned: Type.Integer(),
  events_matched: Type.Integer({ description: 'Events the rule would have applied to.' }),
  participants: Type.Integer({ description: 'Distinct participants it would have applied to.' }),
  points: Type.Integer({ description: 'Points it would have awarded, after multipliers, caps and budget.' }),
  badges_awarded: Type.Integer({ description: 'Badges it would have awarded to participants who do not hold them yet.' }),
  capped_events: Type.Integer({ description: 'Matching events skipped or reduced by a cap or the budget.' }),
  truncated: Type.Boolean({ description: 'True when the range held more events than one simulation scans; the figures cover the earliest ones.' }),
  budget_exhausted_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'The timestamp of the event that would have spent the last point of `budget_points`; null when the rule has no budget or the budget would have lasted the range.',
  }),
});

const FactType = Type.Union(['missing', 'null', 'string', 'number', 'boolean', 'array', 'object'].map((t) => Type.Literal(t)), {
  description: 'The JSON type of the value the event (or participant) had; `missing` when it had none.',
});

const factReading = {
  fact: Type.String({
    description:
      'What was read: `properties.<name>` or a participant attribute. For `participant.segment`, `actual` lists the segments of `expected` the participant is in ' +
      '(an empty list: a member of none of them); membership only, never a personal value.',
  }),
  actual: Type.Optional(
    Type.Unknown({
      description:
        'The value read, when it is a string (cut at 200 characters), number, boolean or a list of up to 20 of those. Left out when missing, null, larger, or personal (see `actual_withheld`).',
    }),
  ),
  actual_type: FactType,
  actual_withheld: Type.Optional(
    Type.Literal('personal', { description: 'The value exists but is personal data (a standard profile field name, or under `custom`), so the outcome never holds it.' }),
  ),
};

const RuleResultKind = Type.Union(
  ['applied', 'condition_failed', 'capped', 'budget_spent', 'rate_unusable', 'outside_window', 'stopped', 'other_variant'].map((r) => Type.Literal(r)),
  {
    description:
      '`applied`: the rule ran and awarded `points` (perhaps cut by `cap` or `budget`). ' +
      '`condition_failed`: `condition` did not hold. ' +
      '`capped`: `cap` kept it from applying (a `times` cap) or left it no points (a `points` cap). ' +
      "`budget_spent`: the rule's `budget_points` are used up. " +
      '`rate_unusable`: its rate reads `rate.fact`, which was not a positive number, so it earned 0. ' +
      "`outside_window`: the event's timestamp falls outside the rule's `window`. " +
      '`stopped`: a rule of higher priority (`stopped_by`) applied with `stop_processing`. ' +
      '`other_variant`: the rule is a variant of a running experiment and the participant is assigned to another variant or the holdout (`experiment`).',
  },
);

export const RuleVerdict = Type.Object(
  {
    rule_id: Type.String(),
    rule_name: Type.String(),
    result: RuleResultKind,
    points: Type.Integer({ description: 'Points it awarded for this event.' }),
    points_wanted: Type.Optional(Type.Integer({ description: 'Points before caps and budget (after the multiplier), when the rule ran.' })),
    multiplier: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    badges_awarded: Type.Optional(Type.Array(Type.String(), { description: 'Set when the rule ran: the badges it awarded now.' })),
    streaks_continued: Type.Optional(Type.Array(Type.String())),
    condition: Type.Optional(
      Type.Object(
        {
          group: Type.Union([Type.Literal('all'), Type.Literal('any')], { description: '`any`: none of the group held; the first of it is shown.' }),
          index: Type.Integer({ description: 'Position of the condition in its group of the rule.' }),
          operator: Operator,
          expected: Type.Optional(Type.Unknown({ description: "The condition's value." })),
          ...factReading,
        },
        { description: 'The condition that failed.' },
      ),
    ),
    cap: Type.Optional(
      Type.Object(
        {
          period: Type.Union([Type.Literal('per_day'), Type.Literal('per_week'), Type.Literal('lifetime')]),
          limit: Type.Union([Type.Literal('times'), Type.Literal('points')]),
          max: Type.Integer({ description: "The cap's value." }),
          used: Type.Integer({ description: "The participant's usage of the rule in the period before this event." }),
        },
        { description: 'The cap that kept the rule from applying or cut its points.' },
      ),
    ),
    budget: Type.Optional(Type.Object({ budget_points: Type.Integer() }, { description: "The rule's budget, when it was used up or cut the points." })),
    rate: Type.Optional(Type.Object(factReading, { description: "The rate's property, which was not a positive number." })),
    window: Type.Optional(
      Type.Object({
        starts_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
        ends_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
        event_is: Type.Union([Type.Literal('before_start'), Type.Literal('after_end')]),
      }),
    ),
    stopped_by: Type.Optional(Type.String({ description: 'The rule that applied with `stop_processing`.' })),
    experiment: Type.Optional(
      Type.Object(
        { experiment_id: Type.String(), variant_key: Type.String({ description: 'The participant\'s variant (`holdout` for the holdout).' }) },
        { description: 'The running experiment the rule is a variant of, and the participant\'s variant in it.' },
      ),
    ),
  },
  {
    $id: 'EventRuleResult',
    title: 'EventRuleResult',
    description: 'One active rule listening to the event, and why it did or did not award.',
    examples: [
      {
        rule_id: 'rul_6f1d2c3b4a5e46f7890a1b2c3d4e5f60',
        rule_name: '10 points per euro on orders over 20 EUR',
        result: 'condition_failed',
        points: 0,
        condition: { group: 'all', index: 0, operator: 'gte', expected: 20, fact: 'properties.order_total', actual: '50', actual_type: 'string' },
      },
    ],
  },
);

export const UnmatchedEventName = Type.Object(
  {
    nearest: Type.Array(Type.String(), {
      maxItems: 3,
      description: 'Event names that active rules listen to and that are close to this one (a typo, another case), nearest first; empty when none is close.',
    }),
  },
  { description: 'Present when no active rule listens to the event name.', examples: [{ nearest: ['purchase_completed'] }] },
);
