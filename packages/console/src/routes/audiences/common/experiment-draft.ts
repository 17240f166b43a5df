import type { Experiment, ExperimentInput, GoalType, SubjectType } from '../../../hooks/api/experiments';

/**
 * The experiment setup's form and its body. Percentages are numbers as typed
 * (never clamped); that the variants and the holdout make 100 is shown while
 * they are typed and checked before anything is sent.
 */
export interface VariantDraft {
  key: string;
  name: string;
  subject_id: string;
  allocation_percent: number | undefined;
}

export interface ExperimentDraft {
  name: string;
  description: string;
  subject_type: SubjectType;
  holdout_percent: number | undefined;
  variants: VariantDraft[];
  goal: { type: GoalType; event_name: string; property: string; reward_id: string };
  segment_id: string;
}

export const SUBJECT_TYPES: readonly SubjectType[] = ['rule', 'multiplier', 'engagement'];
export const GOAL_TYPES: readonly GoalType[] = ['event_count', 'event_property_sum', 'redemptions'];
export const VARIANTS_MIN = 2;
export const VARIANTS_MAX = 5;

/** A new experiment: a control and one variant sharing everyone; `names` are the two variants' names in the console's language. */
export function emptyExperimentDraft(names: [string, string]): ExperimentDraft {
  return {
    name: '',
    description: '',
    subject_type: 'rule',
    holdout_percent: 0,
    variants: [
      { key: 'control', name: names[0], subject_id: '', allocation_percent: 50 },
      { key: 'b', name: names[1], subject_id: '', allocation_percent: 50 },
    ],
    goal: { type: 'event_count', event_name: '', property: '', reward_id: '' },
    segment_id: '',
  };
}

/** The next variant's key: c, d, e … after those taken. */
export function nextVariant(taken: VariantDraft[]): VariantDraft {
  const keys = new Set(taken.map((v) => v.key));
  const letter = 'bcdefgh'.split('').find((l) => !keys.has(l)) ?? `v${taken.length + 1}`;
  return { key: letter, name: letter.toUpperCase(), subject_id: '', allocation_percent: undefined };
}

/** What the variants and the holdout add up to (an empty or unreadable percentage counts 0). */
export function allocated(draft: Pick<ExperimentDraft, 'holdout_percent' | 'variants'>): number {
  const n = (value: number | undefined) => (typeof value === 'number' && !Number.isNaN(value) ? value : 0);
  return Math.round((n(draft.holdout_percent) + draft.variants.reduce((sum, v) => sum + n(v.allocation_percent), 0)) * 100) / 100;
}

export function toInput(draft: ExperimentDraft): ExperimentInput {
  const goal = draft.goal;
  return {
    name: draft.name.trim(),
    ...(draft.description.trim() ? { description: draft.description.trim() } : {}),
    subject_type: draft.subject_type,
    holdout_percent: draft.holdout_percent ?? 0,
    variants: draft.variants.map((v) => ({ key: v.key.trim(), name: v.name.trim(), subject_id: v.subject_id, allocation_percent: v.allocation_percent as number })),
    goal: {
      type: goal.type,
      ...(goal.type !== 'redemptions' ? { event_name: goal.event_name.trim() } : {}),
      ...(goal.type === 'event_property_sum' ? { property: goal.property.trim() } : {}),
      ...(goal.type === 'redemptions' && goal.reward_id ? { reward_id: goal.reward_id } : {}),
    },
    ...(draft.segment_id ? { segment_id: draft.segment_id } : {}),
  };
}

export function fromExperiment(experiment: Experiment): ExperimentDraft {
  return {
    name: experiment.name,
    description: experiment.description ?? '',
    subject_type: experiment.subject_type,
    holdout_percent: experiment.holdout_percent,
    variants: experiment.variants.map((v) => ({ key: v.key, name: v.name, subject_id: v.subject_id, allocation_percent: v.allocation_percent })),
    goal: { type: experiment.goal.type, event_name: experiment.goal.event_name ?? '', property: experiment.goal.property ?? '', reward_id: experiment.goal.reward_id ?? '' },
    segment_id: experiment.segment_id ?? '',
  };
}
