import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody, ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const challengeKeys = queryKeysFactory('challenges');

export type Challenge = ResponseBody<'getChallenge'>;
export type ChallengeStatus = Challenge['status'];
export type ChallengeInput = RequestBody<'createChallenge'>;
export type ChallengeAction = 'publish' | 'end' | 'archive';

export function useChallenges(filters: { status?: ChallengeStatus; cursor?: string }) {
  return useQuery({
    queryKey: challengeKeys.list(filters),
    queryFn: () => client.challenges.list({ query: { limit: PAGE_SIZE, status: filters.status, cursor: filters.cursor } }),
    placeholderData: keepPreviousData,
  });
}

export function useChallenge(id: string | undefined) {
  return useQuery({ queryKey: challengeKeys.detail(id ?? ''), queryFn: () => client.challenges.get({ path: { id: id! } }), enabled: id !== undefined });
}

export function useSaveChallenge(id: string | undefined) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ChallengeInput) => {
      if (!id) return client.challenges.create({ body });
      // The status is moved by its own actions (publish, end, archive), never by an edit.
      const { status: _status, ...changes } = body;
      return client.challenges.update({ path: { id }, body: changes });
    },
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: challengeKeys.all }),
  });
}

/** Publish, end or archive: a move of the challenge's status. */
export function useChallengeAction() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, action }: { id: string; action: ChallengeAction }) => {
      if (action === 'publish') return client.challenges.publish({ path: { id } });
      if (action === 'end') return client.challenges.end({ path: { id } });
      return client.challenges.archive({ path: { id } });
    },
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: challengeKeys.all }),
  });
}
