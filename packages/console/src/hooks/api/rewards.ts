import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody, ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const rewardKeys = queryKeysFactory('rewards');

// A reward as lists hold it: the answer's own `livemode` is not part of the resource.
export type Reward = Omit<ResponseBody<'getReward'>, 'livemode'>;
export type RewardInput = RequestBody<'createReward'>;
export type RewardChanges = RequestBody<'updateReward'>;

export function useRewards(cursor: string | undefined) {
  return useQuery({ queryKey: rewardKeys.list({ cursor }), queryFn: () => client.rewards.list({ query: { limit: PAGE_SIZE, cursor } }), placeholderData: keepPreviousData });
}

/** Every reward of the catalogue a picker needs (one page of the API's largest size). */
export function useRewardChoices() {
  return useQuery({ queryKey: rewardKeys.list({ choices: true }), queryFn: () => client.rewards.list({ query: { limit: 100 } }) });
}

export function useReward(id: string | undefined) {
  return useQuery({ queryKey: rewardKeys.detail(id ?? ''), queryFn: () => client.rewards.get({ path: { id: id! } }), enabled: id !== undefined });
}

export function useCreateReward() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RewardInput) => client.rewards.create({ body }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: rewardKeys.all }),
  });
}

export function useUpdateReward(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RewardChanges) => client.rewards.update({ path: { id }, body }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: rewardKeys.all }),
  });
}

/** One chunk of codes; the caller refreshes the reward (its `codes_available`) when the whole file is sent. */
export function useUploadCodes(id: string) {
  const queryClient = useQueryClient();
  return {
    upload: (codes: string[]) => client.rewards.uploadCodes({ path: { id }, body: { codes } }),
    done: () => void queryClient.invalidateQueries({ queryKey: rewardKeys.all }),
  };
}

export type RewardMetadataField = ResponseBody<'listRewardMetadataFields'>['types'][number]['fields'][number];

/** Each reward type's metadata fields and their limits, as the service checks them (they change only with the service). */
export function useRewardMetadataFields() {
  return useQuery({ queryKey: [...rewardKeys.all, 'metadata-fields'], queryFn: () => client.rewards.listMetadataFields(), staleTime: Infinity });
}
