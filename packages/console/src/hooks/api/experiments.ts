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
  status: ExperimentStatus;
  holdout_percent: number;
  rolled_out_variant: string | null;
  started_at: string | null;
  stopped_at: string | null;
  created_at: string;
  updated_at: string;
}
export interface Interval {
  estimate: number;
  low: number;
  high: number;
}
export interface VariantResult {
  key: string;
  name: string;
  control: boolean;
  exposed: number;
  goal_total: number;
  goal_per_participant: number;
  points_cost: number;
  rewards_cost: number;
  difference: { absolute: Interval; relative: Interval | null } | null;
  cost_per_extra_goal: number | null;
  sentence: string | null;
}
export interface ExperimentResults {
  experiment_id: string;
  as_of: string;
  variants: VariantResult[];
  warnings: string[];
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
          : call('rolloutExperiment', { path: { experiment_id: id }, body: { variant: action.variant } }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: experimentKeys.all });
      await queryClient.invalidateQueries({ queryKey: ['reviews'] });
    },
  });
}
