import { Type, type Static } from '@sinclair/typebox';
import { Pagination } from '../../platform/http.js';
import { SEGMENT_ID_PATTERN } from '../segments/index.js';

/** Experiments (issue 36): the request and answer shapes. */
export const VARIANTS_MIN = 2;
export const VARIANTS_MAX = 5;
export const HOLDOUT_PERCENT_MAX = 50;

export const SubjectType = Type.Union([Type.Literal('rule'), Type.Literal('multiplier'), Type.Literal('engagement')], {
  description: 'What the variants are: earn rules (`rul_…`), points multipliers (`mul_…`) or engagements (their uuid).',
});
export type SubjectType = Static<typeof SubjectType>;

export const ExperimentStatus = Type.Union(['draft', 'running', 'stopped', 'ended'].map((s) => Type.Literal(s)), {
  description:
    '`draft`: being set up, nobody is assigned. `running`: participants are assigned at first exposure and each gets only their variant. ' +
    '`stopped`: paused; the subjects behave as without the experiment (drafts serve nobody), assignments are kept and it may start again. ' +
    '`ended`: a variant was rolled out (`rolled_out_variant`).',
});
export type ExperimentStatus = 'draft' | 'running' | 'stopped' | 'ended';

const Name = Type.String({ minLength: 1, maxLength: 120, description: 'A name people read, 1 to 120 characters.' });
const Description = Type.String({ maxLength: 500 });
const HoldoutPercent = Type.Integer({
  minimum: 0,
  maximum: HOLDOUT_PERCENT_MAX,
  description: `Percent of participants held out: they get none of the experiment's subjects (0 to ${HOLDOUT_PERCENT_MAX}, default 0).`,
});
const VariantKey = Type.String({ minLength: 1, maxLength: 40, pattern: '^[a-z0-9_-]+$', description: 'A key of 1 to 40 lower-case letters, digits, `_` or `-`, unique in the experiment; `holdout` is reserved.' });

export const VariantInput = Type.Object(
  {
    key: VariantKey,
    name: Name,
    subject_id: Type.String({ minLength: 1, maxLength: 128, description: 'The rule, multiplier or engagement this variant serves (of `subject_type`).' }),
    allocation_percent: Type.Integer({ minimum: 0, maximum: 100, description: 'Percent of participants assigned to the variant; the variants and the holdout sum to 100.' }),
  },
  { additionalProperties: false },
);
export type VariantInput = Static<typeof VariantInput>;

export const Goal = Type.Object(
  {
    type: Type.Union([Type.Literal('event_count'), Type.Literal('event_property_sum'), Type.Literal('redemptions')], {
      description: '`event_count`: how many `event_name` events a participant sends; `event_property_sum`: the sum of a numeric `property` of them; `redemptions`: reward claims (of `reward_id`, or any).',
    }),
    event_name: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:/-]+$' })),
    property: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^properties(\\.[A-Za-z0-9_-]+)+$', description: 'A numeric event property, e.g. `properties.amount`.', examples: ['properties.amount'] })),
    reward_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: false, $id: 'ExperimentGoal', title: 'ExperimentGoal', description: 'What the results measure per participant.' },
);
export type Goal = Static<typeof Goal>;

const SegmentIdField = Type.String({ pattern: SEGMENT_ID_PATTERN, description: 'Only members of this segment take part; others get the control and are not recorded.' });

const RULE_A = 'rul_6f1d2c3b4a5e46f7890a1b2c3d4e5f60';
const RULE_B = 'rul_7a2e3d4c5b6f47a8901b2c3d4e5f6071';

export const CreateExperimentBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    subject_type: SubjectType,
    holdout_percent: Type.Optional(HoldoutPercent),
    variants: Type.Array(VariantInput, { minItems: VARIANTS_MIN, maxItems: VARIANTS_MAX, description: `${VARIANTS_MIN} to ${VARIANTS_MAX} variants; the first is the control.` }),
    goal: Type.Ref('ExperimentGoal'),
    segment_id: Type.Optional(Type.Union([SegmentIdField, Type.Null()])),
  },
  {
    additionalProperties: false,
    $id: 'ExperimentInput',
    title: 'ExperimentInput',
    examples: [
      {
        name: 'Double points on purchases',
        subject_type: 'rule',
        holdout_percent: 10,
        variants: [
          { key: 'control', name: '10 points per purchase', subject_id: RULE_A, allocation_percent: 45 },
          { key: 'double', name: '20 points per purchase', subject_id: RULE_B, allocation_percent: 45 },
        ],
        goal: { type: 'event_count', event_name: 'purchase_completed' },
      },
    ],
  },
);
export type CreateExperimentBody = Omit<Static<typeof CreateExperimentBody>, 'goal'> & { goal: Goal };

export const UpdateExperimentBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    holdout_percent: Type.Optional(HoldoutPercent),
    variants: Type.Optional(Type.Array(VariantInput, { minItems: VARIANTS_MIN, maxItems: VARIANTS_MAX })),
    goal: Type.Optional(Type.Ref('ExperimentGoal')),
    segment_id: Type.Optional(Type.Union([SegmentIdField, Type.Null()])),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'A draft changes in everything. A running or stopped experiment changes only its name, description and allocation (`holdout_percent` and each variant\'s `allocation_percent`, ' +
      'the variants given with the same keys and subjects in the same order): the new split applies to participants exposed from now on; nobody already assigned moves.',
    examples: [{ name: 'Double points on purchases (autumn)' }],
  },
);
export type UpdateExperimentBody = Omit<Static<typeof UpdateExperimentBody>, 'goal'> & { goal?: Goal };

export const Variant = Type.Object({
  key: Type.String(),
  name: Type.String(),
  subject_id: Type.String(),
  allocation_percent: Type.Integer(),
  control: Type.Boolean({ description: 'The first variant is the control.' }),
});

export const Experiment = Type.Object(
  {
    id: Type.String({ description: '`exp_` and 32 hex digits.' }),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    subject_type: SubjectType,
    status: ExperimentStatus,
    holdout_percent: Type.Integer(),
    variants: Type.Array(Variant),
    goal: Type.Ref('ExperimentGoal'),
    segment_id: Type.Union([Type.String(), Type.Null()]),
    started_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    ended_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    rolled_out_variant: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Experiment', title: 'Experiment' },
);

export const ExperimentIdParams = Type.Object({ experiment_id: Type.String({ pattern: '^exp_[0-9a-f]{32}$' }) }, { additionalProperties: false });

export const ListExperimentsQuery = Type.Object(
  {
    status: Type.Optional(ExperimentStatus),
    subject_type: Type.Optional(SubjectType),
    limit: Type.Optional(Pagination.limit(100, 50)),
    cursor: Pagination.cursor(),
  },
  { additionalProperties: false },
);
export type ListExperimentsQuery = Static<typeof ListExperimentsQuery>;

export const ExperimentList = Type.Object({ experiments: Type.Array(Type.Ref('Experiment')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const RolloutBody = Type.Object(
  { variant: Type.String({ minLength: 1, maxLength: 40, description: 'The key of the variant to roll out to everyone.' }) },
  { additionalProperties: false, examples: [{ variant: 'double' }] },
);

export const Rollout = Type.Object(
  {
    experiment: Type.Ref('Experiment'),
    variant: Type.String(),
    subject_id: Type.String(),
    publication: Type.Union([Type.Literal('published'), Type.Literal('review_requested'), Type.Literal('already_live')], {
      description:
        "What became of the rolled-out variant's subject: `published` now (the caller may publish directly), `review_requested` (a review request `review_id` waits for a publisher, as for any draft), " +
        'or `already_live` (an active rule, a published engagement, a multiplier).',
    }),
    review_id: Type.Union([Type.String(), Type.Null()]),
    stopped: Type.Array(
      Type.Object({
        variant: Type.String(),
        subject_id: Type.String(),
        action: Type.Union([Type.Literal('paused'), Type.Literal('unpublished'), Type.Literal('ended'), Type.Literal('left_draft')], {
          description:
            '`paused` (an active rule), `unpublished` (a published engagement), `ended` (a multiplier ends now), `left_draft` (a draft that served only the experiment).',
        }),
      }),
      { description: 'The other variants\' subjects, and how each stopped.' },
    ),
  },
  { $id: 'ExperimentRollout', title: 'ExperimentRollout' },
);
