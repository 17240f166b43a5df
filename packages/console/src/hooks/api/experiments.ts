import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody, ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const experimentKeys = queryKeysFactory('experiments');

export type Experiment = ResponseBody<'getExperiment'>;
export type ExperimentInput = RequestBody<'createExperiment'>;
export type ExperimentChanges = RequestBody<'updateExperiment'>;
export type ExperimentStatus = Experiment['status'];
export type SubjectType = Experiment['subject_type'];
export type ExperimentGoal = Experiment['goal'];
export type GoalType = ExperimentGoal['type'];
export type ExperimentResults = ResponseBody<'getExperimentResults'>;
export type VariantResult = ExperimentResults['variants'][number];
/** An arm of the results: a variant, or the holdout. */
export type ArmResult = Omit<VariantResult, 'control' | 'key'> & { key: string };
export type Difference = NonNullable<VariantResult['difference']>;
export type Rollout = ResponseBody<'rolloutExperiment'>;

export function useExperiments(cursor: string | undefined) {
  return useQuery({
    queryKey: experimentKeys.list({ cursor }),
    queryFn: () => client.experiments.list({ query: { limit: PAGE_SIZE, cursor } }),
    placeholderData: keepPreviousData,
  });
}

export function useExperiment(id: string | undefined) {
  return useQuery({ queryKey: experimentKeys.detail(id ?? ''), queryFn: () => client.experiments.get({ path: { experiment_id: id! } }), enabled: id !== undefined });
}

export function useExperimentResults(id: string) {
  return useQuery({ queryKey: experimentKeys.detail(id, 'results'), queryFn: () => client.experiments.getResults({ path: { experiment_id: id } }) });
}

export function useSaveExperiment(id: string | undefined) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ExperimentInput | ExperimentChanges): Promise<Experiment> =>
      id ? client.experiments.update({ path: { experiment_id: id }, body: body as ExperimentChanges }) : client.experiments.create({ body: body as ExperimentInput }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: experimentKeys.all }),
  });
}

export function useDeleteExperiment() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => client.experiments.delete({ path: { experiment_id: id } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: experimentKeys.all }),
  });
}

/** Start, stop, or roll out a variant (its subject goes to the review to publish, so the reviews are stale too). */
export function useExperimentAction(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (action: { type: 'start' } | { type: 'stop' } | { type: 'rollout'; variant: string }): Promise<Experiment | Rollout> =>
      action.type === 'start'
        ? client.experiments.start({ path: { experiment_id: id } })
        : action.type === 'stop'
          ? client.experiments.stop({ path: { experiment_id: id } })
          : client.experiments.rollout({ path: { experiment_id: id }, body: { variant: action.variant } }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: experimentKeys.all });
      await queryClient.invalidateQueries({ queryKey: ['reviews'] });
    },
  });
}
