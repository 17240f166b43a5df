import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { notFound } from '../../platform/errors.js';
import { multiplierForExperimentInTx } from '../points/index.js';
import { HOLDOUT } from './assignment.js';
import { ExperimentIdParams, ExperimentStatus, SubjectType } from './schemas.js';
import * as store from './store.js';
import {
  compareToControl,
  costPerExtraGoal,
  MIN_PARTICIPANTS_PER_ARM,
  summarize,
  variantSentence,
  type ArmSummary,
  type Comparison,
  type GoalLabel,
} from './statistics.js';

/**
 * An experiment's results (issue 36): per variant, the participants exposed,
 * their goal from exposure to now (or to the experiment's end), the points
 * and rewards its subject cost, and the difference to the control with 95%
 * intervals (statistics.ts; method and limits: docs/decisions/experiments.md).
 *
 * Everything is aggregated in one statement: per variant the count, sum and
 * sum of squares of the participants' goal totals, never a row per
 * participant into Node.
 */

// ---------------------------------------------------------------------------
// The answer's shape.

const Interval = Type.Tuple([Type.Number(), Type.Number()], { description: 'The 95% confidence interval [low, high].' });

const Difference = Type.Object(
  {
    absolute: Type.Number({ description: 'Goal per participant, this variant minus the control.' }),
    absolute_ci95: Interval,
    relative: Type.Union([Type.Number(), Type.Null()], { description: 'This variant ÷ the control − 1 (0.12 is +12%); null when the control\'s mean is 0 or not distinguishable from 0 (see `warnings`).' }),
    relative_ci95: Type.Union([Interval, Type.Null()], { description: "Fieller's 95% interval of the relative difference." }),
  },
  { description: "Welch's t interval of the difference of means (Welch–Satterthwaite degrees of freedom). Null for the control, and when there is too little data (see `warnings`)." },
);

const WARNINGS_DESCRIPTION =
  `Why a number is missing or to be read with care: \`too_few_participants\` (fewer than ${MIN_PARTICIPANTS_PER_ARM} exposed in this variant or the control: no interval), ` +
  '`no_variation` (every participant has the same goal total: no interval), `control_mean_zero` (no relative difference), ' +
  "`relative_unreliable` (the control's mean is not distinguishable from 0: no relative difference).";

const ArmFields = {
  key: Type.String(),
  name: Type.String(),
  exposed: Type.Integer({ description: 'Participants assigned to it at their first exposure (before the end of the window).' }),
  goal_total: Type.Number({ description: 'The goal summed over its participants, each from their exposure to the end of the window.' }),
  goal_per_participant: Type.Number(),
  points_cost: Type.Number({ description: "Points its subject granted to its participants after their exposure (a multiplier: the points it added). 0 for the holdout." }),
  points_per_participant: Type.Number(),
  rewards_cost: Type.Integer({ description: "Rewards its subject gave its participants after their exposure (an engagement's claims; rules and multipliers give none)." }),
  difference: Type.Union([Difference, Type.Null()]),
  cost_per_extra_goal: Type.Union([Type.Number(), Type.Null()], {
    description: "Extra points per participant ÷ extra goal per participant, against the control. Null unless the variant measurably raised the goal (the difference's interval above 0).",
  }),
  sentence: Type.String({ description: 'The result in one plain sentence.' }),
  warnings: Type.Array(Type.String(), { description: WARNINGS_DESCRIPTION }),
};

const VariantResult = Type.Object({ ...ArmFields, control: Type.Boolean() });

export const ExperimentResults = Type.Object(
  {
    experiment_id: Type.String(),
    status: ExperimentStatus,
    goal: Type.Ref('ExperimentGoal'),
    subject_type: SubjectType,
    window_end: Type.String({ format: 'date-time', description: 'Goals and costs count up to this instant: the end of the experiment, or now while it runs.' }),
    computed_at: Type.String({ format: 'date-time' }),
    method: Type.Literal('welch', { description: "Welch's t interval for the difference of means, Fieller's for the ratio; docs/decisions/experiments.md." }),
    confidence: Type.Number({ description: 'The intervals\' confidence level: 0.95.' }),
    variants: Type.Array(VariantResult, { description: 'In the experiment\'s order; the first is the control.' }),
    holdout: Type.Union([Type.Object({ ...ArmFields, key: Type.Literal(HOLDOUT) }), Type.Null()], {
      description: "Participants held out (none of the subjects applied to them). `difference` is the CONTROL against the holdout: what the control's program does at all. Null when the experiment has no holdout.",
    }),
  },
  {
    title: 'ExperimentResults',
    examples: [
      {
        experiment_id: 'exp_3c9f0a7e1b2d4c5f8a6e9d0b1c2a3f4e',
        status: 'running',
        goal: { type: 'event_count', event_name: 'purchase' },
        subject_type: 'rule',
        window_end: '2026-11-26T09:30:00.000Z',
        computed_at: '2026-11-26T09:30:00.000Z',
        method: 'welch',
        confidence: 0.95,
        variants: [
          {
            key: 'control',
            name: '10 points per purchase',
            control: true,
            exposed: 4210,
            goal_total: 8420,
            goal_per_participant: 2,
            points_cost: 84200,
            points_per_participant: 20,
            rewards_cost: 0,
            difference: null,
            cost_per_extra_goal: null,
            sentence: '10 points per purchase: the control',
            warnings: [],
          },
          {
            key: 'double',
            name: 'variant B',
            control: false,
            exposed: 4188,
            goal_total: 9381,
            goal_per_participant: 2.24,
            points_cost: 187620,
            points_per_participant: 44.8,
            rewards_cost: 0,
            difference: { absolute: 0.24, absolute_ci95: [0.08, 0.4], relative: 0.12, relative_ci95: [0.04, 0.2] },
            cost_per_extra_goal: 103.33,
            sentence: 'variant B: +12% purchases per participant, 95% CI +4% to +20%, costs 103 points per extra purchase',
            warnings: [],
          },
        ],
        holdout: null,
        livemode: true,
      },
    ],
  },
);
export type ExperimentResults = Static<typeof ExperimentResults>;

// ---------------------------------------------------------------------------
// The query.

interface ArmRow {
  variant_key: string;
  n: number;
  goal_sum: string;
  goal_squares: string;
  points: string;
  rewards: number;
}

/**
 * Each participant's goal total over their window [exposed_at, window end], by
 * goal type: one row per participant who has any. Its parameters are $4 on;
 * $1 is the tenant, $3 the window's end.
 */
function goalSql(goal: store.ExperimentRow['goal']): { sql: string; params: unknown[] } {
  if (goal.type === 'redemptions') {
    return {
      sql: `SELECT a.participant_id, count(*)::numeric AS value
            FROM a JOIN reward_claims c ON c.tenant_id = $1 AND c.participant_id = a.participant_id
             AND c.claimed_at >= a.exposed_at AND c.claimed_at <= $3 AND ($4::text IS NULL OR c.reward_id = $4)
            GROUP BY a.participant_id`,
      params: [goal.reward_id ?? null],
    };
  }
  const events = `FROM a JOIN ingested_events e ON e.tenant_id = $1 AND e.participant_id = a.participant_id AND e.event_name = $4
           AND e.status = 'processed' AND e.occurred_at >= a.exposed_at AND e.occurred_at <= $3
          GROUP BY a.participant_id`;
  if (goal.type === 'event_count') return { sql: `SELECT a.participant_id, count(*)::numeric AS value ${events}`, params: [goal.event_name] };
  // A property path `properties.order.total` is the JSON path {order,total} of the event's properties; only JSON numbers count.
  const path = (goal.property ?? '').split('.').slice(1);
  return {
    sql: `SELECT a.participant_id,
                 coalesce(sum(CASE WHEN jsonb_typeof(e.properties #> $5::text[]) = 'number' THEN (e.properties #>> $5::text[])::numeric END), 0) AS value
          ${events}`,
    params: [goal.event_name, path],
  };
}

/**
 * The points each participant's own variant's subject granted them after
 * exposure: a rule's entries (source_kind 'rule', source_id the rule), an
 * engagement's (engagement_id), a multiplier's share of the rule entries it
 * raised (the ledger keeps the multiplier applied, not which one: entries
 * raised by exactly this variant's multiplier value, delta − delta ÷ multiplier).
 * CTE v holds the variants' keys, subjects and multiplier values.
 */
function pointsSql(subjectType: store.ExperimentRow['subject_type']): string {
  const caused = {
    rule: `l.source_kind = 'rule' AND l.source_id = v.subject_id`,
    engagement: `l.engagement_id = v.subject_id`,
    multiplier: `l.source_kind = 'rule' AND l.multiplier = v.multiplier`,
  }[subjectType];
  const amount = subjectType === 'multiplier' ? 'l.delta - l.delta / l.multiplier' : 'l.delta';
  return `SELECT a.participant_id, sum(${amount}) AS value
          FROM a JOIN v ON v.variant_key = a.variant_key
          JOIN points_ledger l ON l.tenant_id = $1 AND l.participant_id = a.participant_id
           AND l.created_at >= a.exposed_at AND l.created_at <= $3 AND l.delta > 0 AND ${caused}
          GROUP BY a.participant_id`;
}

function rewardsSql(subjectType: store.ExperimentRow['subject_type']): string {
  if (subjectType !== 'engagement') return `SELECT NULL::text AS participant_id, 0::bigint AS value WHERE false`;
  return `SELECT a.participant_id, count(*) AS value
          FROM a JOIN v ON v.variant_key = a.variant_key
          JOIN reward_claims c ON c.tenant_id = $1 AND c.participant_id = a.participant_id
           AND c.engagement_id::text = v.subject_id AND c.claimed_at >= a.exposed_at AND c.claimed_at <= $3
          GROUP BY a.participant_id`;
}

async function armTotalsInTx(tx: Tx, tenantId: string, experiment: store.ExperimentRow, windowEnd: Date, multipliers: Array<number | null>): Promise<ArmRow[]> {
  const goal = goalSql(experiment.goal);
  const first = 4 + goal.params.length;
  const { rows } = await tx.query<ArmRow>(
    `WITH a AS (
       SELECT participant_id, variant_key, exposed_at FROM experiment_assignments
       WHERE tenant_id = $1 AND experiment_id = $2 AND exposed_at <= $3
     ),
     v AS (SELECT * FROM unnest($${first}::text[], $${first + 1}::text[], $${first + 2}::numeric[]) AS v (variant_key, subject_id, multiplier)),
     goal AS (${goal.sql}),
     points AS (${pointsSql(experiment.subject_type)}),
     rewards AS (${rewardsSql(experiment.subject_type)})
     SELECT a.variant_key, count(*)::int AS n,
            coalesce(sum(goal.value), 0)::text AS goal_sum,
            coalesce(sum(goal.value * goal.value), 0)::text AS goal_squares,
            coalesce(sum(points.value), 0)::text AS points,
            coalesce(sum(rewards.value), 0)::int AS rewards
     FROM a
     LEFT JOIN goal ON goal.participant_id = a.participant_id
     LEFT JOIN points ON points.participant_id = a.participant_id
     LEFT JOIN rewards ON rewards.participant_id = a.participant_id
     GROUP BY a.variant_key`,
    [
      tenantId,
      experiment.id,
      windowEnd,
      ...goal.params,
      experiment.variants.map((v) => v.key),
      experiment.variants.map((v) => v.subject_id),
      multipliers,
    ],
  );
  return rows;
}

// ---------------------------------------------------------------------------
// Presenting.

function pluralOf(word: string): string {
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  return `${word}s`;
}

/** How the sentence names the goal: "purchases per participant", "per extra purchase". */
export function goalLabel(goal: store.ExperimentRow['goal']): GoalLabel {
  if (goal.type === 'redemptions') {
    return goal.reward_id ? { singular: `redemption of ${goal.reward_id}`, plural: `redemptions of ${goal.reward_id}` } : { singular: 'redemption', plural: 'redemptions' };
  }
  const name = goal.event_name ?? 'event';
  if (goal.type === 'event_property_sum') {
    const property = (goal.property ?? '').replace(/^properties\./, '');
    return { singular: `unit of ${name} ${property}`, plural: `${name} ${property}` };
  }
  // A plain word is made plural ("purchase" → "purchases"); any other name is quoted as the events' name.
  return /^[a-z]+$/.test(name) ? { singular: name, plural: pluralOf(name) } : { singular: `${name} event`, plural: `${name} events` };
}

interface Arm {
  key: string;
  name: string;
  totals: ArmSummary;
  goalTotal: number;
  points: number;
  rewards: number;
}

function armOf(key: string, name: string, row: ArmRow | undefined): Arm {
  const n = row?.n ?? 0;
  const goalTotal = Number(row?.goal_sum ?? 0);
  return {
    key,
    name,
    totals: summarize({ n, sum: goalTotal, sum_squares: Number(row?.goal_squares ?? 0) }),
    goalTotal,
    points: Number(row?.points ?? 0),
    rewards: row?.rewards ?? 0,
  };
}

const perParticipant = (total: number, n: number) => (n > 0 ? total / n : 0);

function comparedArm(arm: Arm, control: Arm | null, label: GoalLabel) {
  const base = {
    key: arm.key,
    name: arm.name,
    exposed: arm.totals.n,
    goal_total: arm.goalTotal,
    goal_per_participant: arm.totals.mean,
    points_cost: arm.points,
    points_per_participant: perParticipant(arm.points, arm.totals.n),
    rewards_cost: arm.rewards,
  };
  if (control === null) {
    return { ...base, difference: null, cost_per_extra_goal: null, sentence: `${arm.name}: the control`, warnings: [] as string[] };
  }
  const result = compareToControl(arm.totals, control.totals);
  const extraPoints = base.points_per_participant - perParticipant(control.points, control.totals.n);
  const cost = costPerExtraGoal(result.comparison, extraPoints);
  return {
    ...base,
    difference: differenceOf(result.comparison),
    cost_per_extra_goal: cost,
    sentence: variantSentence({ name: arm.name, exposed: arm.totals.n, controlExposed: control.totals.n, result, label, extraPointsPerParticipant: extraPoints, costPerExtraGoal: cost }),
    warnings: result.warnings as string[],
  };
}

function differenceOf(comparison: Comparison | null) {
  if (!comparison) return null;
  return { absolute: comparison.absolute, absolute_ci95: comparison.absolute_ci95, relative: comparison.relative, relative_ci95: comparison.relative_ci95 };
}

export async function experimentResults(db: Database, tenantId: string, experimentId: string): Promise<ExperimentResults> {
  return db.tenant(tenantId, async (tx) => {
    const experiment = await store.findExperiment(tx, tenantId, experimentId);
    if (!experiment) throw notFound(`experiment "${experimentId}"`, 'EXPERIMENT_NOT_FOUND');
    const now = clock.now(tenantId);
    const windowEnd = experiment.ended_at !== null && experiment.ended_at < now ? experiment.ended_at : now;
    const multipliers: Array<number | null> = [];
    for (const variant of experiment.variants) {
      multipliers.push(experiment.subject_type === 'multiplier' ? ((await multiplierForExperimentInTx(tx, tenantId, variant.subject_id))?.multiplier ?? null) : null);
    }
    const rows = new Map((await armTotalsInTx(tx, tenantId, experiment, windowEnd, multipliers)).map((row) => [row.variant_key, row]));
    const label = goalLabel(experiment.goal);
    const arms = experiment.variants.map((v) => armOf(v.key, v.name, rows.get(v.key)));
    const control = arms[0];
    const holdoutArm = experiment.holdout_percent > 0 || rows.has(HOLDOUT) ? armOf(HOLDOUT, 'holdout', rows.get(HOLDOUT)) : null;
    let holdout = null;
    if (holdoutArm) {
      // The holdout's own line compares the control with it: "does the control's program do anything at all".
      const versus = comparedArm({ ...control, name: `${control.name} against the holdout` }, holdoutArm, label);
      holdout = {
        ...comparedArm(holdoutArm, null, label),
        key: HOLDOUT,
        difference: versus.difference,
        cost_per_extra_goal: versus.cost_per_extra_goal,
        sentence: versus.sentence,
        warnings: versus.warnings,
      } as const;
    }
    return {
      experiment_id: experiment.id,
      status: experiment.status,
      goal: experiment.goal,
      subject_type: experiment.subject_type,
      window_end: windowEnd.toISOString(),
      computed_at: now.toISOString(),
      method: 'welch' as const,
      confidence: 0.95,
      variants: arms.map((arm, index) => ({ ...comparedArm(arm, index === 0 ? null : control, label), control: index === 0 })),
      holdout,
    };
  });
}

// ---------------------------------------------------------------------------
// The route.

export const resultsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;
  app.get(
    '/admin/experiments/:experiment_id/results',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['experiments'],
        operationId: 'getExperimentResults',
        summary: "An experiment's results: each variant against the control, with 95% intervals",
        description:
          "Per variant: participants exposed, the goal per participant from each one's first exposure to now (or to the experiment's end), the points and rewards its subject cost, " +
          "the difference to the control with Welch's 95% interval (absolute) and Fieller's (relative), the points per extra goal unit and a plain sentence. " +
          `Below ${MIN_PARTICIPANTS_PER_ARM} participants in a variant or the control no interval is given and \`warnings\` says why. ` +
          'Intervals are not corrected for looking at results repeatedly or for comparing several variants: docs/decisions/experiments.md says what to do instead.',
        params: ExperimentIdParams,
        response: { 200: ExperimentResults },
      },
    },
    async (request) => experimentResults(db, request.auth!.tenantId, request.params.experiment_id),
  );
};
