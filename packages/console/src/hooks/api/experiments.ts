import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const experimentKeys = queryKeysFactory('experiments');

/** Until the SDK is regenerated with the experiments routes: the call by operation name. */
const call = client.call.bind(client) as unknown as (name: string, args?: object) => Promise<unknown>;

export type SubjectType = 'rule' | 'multiplier' | 'engagement';
export type GoalType = 'event_count' | 'event_property_sum' | 'redemptions';
export type ExperimentStatus = 'draft' | 'running' | 'stopped' | 'ended';
export interface ExperimentVariant {
  key: string;
  name: string;
  subject_id: string;
  allocation_percent: number;
}
export interface ExperimentGoal {
  type: GoalType;
  event_name?: string;
  property?: string;
  reward_id?: string;
}
export interface ExperimentInput {
  name: string;
  subject_type: SubjectType;
  holdout_percent?: number;
  variants: ExperimentVariant[];
  goal: ExperimentGoal;
  segment_id?: string | null;
}
export interface Experiment extends ExperimentInput {
  id: string;
  description: string | null;
  status: ExperimentStatus;
  holdout_percent: number;
  variants: Array<ExperimentVariant & { control: boolean }>;
  rolled_out_variant: string | null;
  started_at: string | null;
  ended_at: string | null;
  created_at: string;
  updated_at: string;
}
/** A 95% interval [low, high]. */
export type Interval = [number, number];
export interface Difference {
  absolute: number;
  absolute_ci95: Interval;
  relative: number | null;
  relative_ci95: Interval | null;
}
export interface ArmResult {
  key: string;
  name: string;
  exposed: number;
  goal_total: number;
  goal_per_participant: number;
  points_cost: number;
  points_per_participant: number;
  rewards_cost: number;
  difference: Difference | null;
  cost_per_extra_goal: number | null;
  sentence: string;
  warnings: string[];
}
export type VariantResult = ArmResult & { control: boolean };
export interface ExperimentResults {
  experiment_id: string;
  status: string;
  goal: ExperimentGoal;
  subject_type: SubjectType;
  window_end: string;
  computed_at: string;
  confidence: number;
  variants: VariantResult[];
  /** The held-out participants; its difference is the control's against them. */
  holdout: ArmResult | null;
}
export interface Rollout {
  experiment: Experiment;
  variant: string;
  subject_id: string;
  publication: 'published' | 'review_requested' | 'already_live';
  review_id: string | null;
}

export function useExperiments(cursor: string | undefined) {
  return useQuery({
    queryKey: experimentKeys.list({ cursor }),
    queryFn: () => call('listExperiments', { query: { limit: PAGE_SIZE, cursor } }) as Promise<{ experiments: Experiment[]; next_cursor: string | null }>,
    placeholderData: keepPreviousData,
  });
}

export function useExperiment(id: string | undefined) {
  return useQuery({ queryKey: experimentKeys.detail(id ?? ''), queryFn: () => call('getExperiment', { path: { experiment_id: id } }) as Promise<Experiment>, enabled: id !== undefined });
}

export function useExperimentResults(id: string) {
  return useQuery({ queryKey: experimentKeys.detail(id, 'results'), queryFn: () => call('getExperimentResults', { path: { experiment_id: id } }) as Promise<ExperimentResults> });
}

export function useSaveExperiment(id: string | undefined) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ExperimentInput) =>
      (id ? call('updateExperiment', { path: { experiment_id: id }, body }) : call('createExperiment', { body })) as Promise<Experiment>,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: experimentKeys.all }),
  });
}

export function useDeleteExperiment() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => call('deleteExperiment', { path: { experiment_id: id } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: experimentKeys.all }),
  });
}

/** Start, stop, or roll out a variant (its subject goes to the review to publish, so the reviews are stale too). */
export function useExperimentAction(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (action: { type: 'start' } | { type: 'stop' } | { type: 'rollout'; variant: string }) =>
      action.type === 'start'
        ? call('startExperiment', { path: { experiment_id: id } })
        : action.type === 'stop'
          ? call('stopExperiment', { path: { experiment_id: id } })
          : (call('rolloutExperiment', { path: { experiment_id: id }, body: { variant: action.variant } }) as Promise<Rollout>),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: experimentKeys.all });
      await queryClient.invalidateQueries({ queryKey: ['reviews'] });
    },
  });
}
