import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const streakKeys = queryKeysFactory('streaks');

export function useStreaks(cursor: string | undefined) {
  return useQuery({ queryKey: streakKeys.list({ cursor }), queryFn: () => client.streaks.list({ query: { limit: PAGE_SIZE, cursor } }), placeholderData: keepPreviousData });
}

export function useCreateStreak() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'createStreak'>) => client.streaks.create({ body }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: streakKeys.all }),
  });
}

export function useUpdateStreak() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ code, body }: { code: string; body: RequestBody<'updateStreak'> }) => client.streaks.update({ path: { code }, body }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: streakKeys.all }),
  });
}

export function useDeleteStreak() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (code: string) => client.streaks.delete({ path: { code } }),
    // Deleting a definition deletes every participant's streak of it.
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: streakKeys.all });
      void queryClient.invalidateQueries({ queryKey: ['participants'] });
    },
  });
}

/** Every streak a picker offers (one page of the API's largest size), by name with its code. */
export function useStreakChoices() {
  return useQuery({ queryKey: streakKeys.list({ choices: true }), queryFn: () => client.streaks.list({ query: { limit: 100 } }) });
}
