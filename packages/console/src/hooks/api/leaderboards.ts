import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody, ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';

export const leaderboardKeys = queryKeysFactory('leaderboards');

export type Leaderboard = ResponseBody<'getLeaderboardDefinition'>;
export type LeaderboardInput = RequestBody<'createLeaderboard'>;

/** Rows of a board's standings shown at once. */
export const STANDINGS_ROWS = 50;

export function useLeaderboards() {
  return useQuery({ queryKey: leaderboardKeys.lists(), queryFn: () => client.leaderboards.list() });
}

export function useLeaderboard(code: string | undefined) {
  return useQuery({ queryKey: leaderboardKeys.detail(code ?? ''), queryFn: () => client.leaderboards.getDefinition({ path: { code: code! } }), enabled: code !== undefined });
}

export function useStandings(code: string) {
  return useQuery({ queryKey: leaderboardKeys.detail(code, 'standings'), queryFn: () => client.leaderboards.getStandings({ path: { code }, query: { limit: STANDINGS_ROWS } }) });
}

export function useSaveLeaderboard(code: string | undefined) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: LeaderboardInput) => {
      if (!code) return client.leaderboards.create({ body });
      return client.leaderboards.update({ path: { code }, body: { name: body.name, engagement_id: body.engagement_id, refresh_seconds: body.refresh_seconds } });
    },
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: leaderboardKeys.all }),
  });
}

export function useDeleteLeaderboard() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (code: string) => client.leaderboards.delete({ path: { code } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: leaderboardKeys.all }),
  });
}

/** Rebuilds the ranking now; the standings and the definition's last refresh change. */
export function useRefreshLeaderboard() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (code: string) => client.leaderboards.refresh({ path: { code } }),
    onSuccess: (_answer, code) => void queryClient.invalidateQueries({ queryKey: leaderboardKeys.detail(code) }),
  });
}
