import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody, ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const contestKeys = queryKeysFactory('contests');

export type Contest = ResponseBody<'getAdminContest'>;
export type ContestStatus = Contest['status'];
export type ContestInput = RequestBody<'createContest'>;
export type ContestLeaderboard = ResponseBody<'getContestLeaderboard'>;

/** Rows of the admin leaderboard read at once: the leaderboard screen and the prize fulfilment list. */
export const CONTEST_LEADERBOARD_ROWS = 100;

export function useContests(filters: { status?: ContestStatus; cursor?: string }) {
  return useQuery({
    queryKey: contestKeys.list(filters),
    queryFn: () => client.contests.list({ query: { limit: PAGE_SIZE, status: filters.status, cursor: filters.cursor } }),
    placeholderData: keepPreviousData,
  });
}

export function useContest(id: string | undefined) {
  return useQuery({ queryKey: contestKeys.detail(id ?? ''), queryFn: () => client.contests.getAdmin({ path: { id: id! } }), enabled: id !== undefined });
}

export function useContestLeaderboard(id: string, enabled: boolean) {
  return useQuery({
    queryKey: contestKeys.detail(id, 'leaderboard'),
    queryFn: () => client.contests.getLeaderboard({ path: { id }, query: { limit: CONTEST_LEADERBOARD_ROWS } }),
    enabled,
  });
}

export function useSaveContest(id: string | undefined) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ContestInput) => {
      if (!id) return client.contests.create({ body });
      const { id: _id, ...changes } = body;
      return client.contests.update({ path: { id }, body: changes });
    },
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: contestKeys.all }),
  });
}

/** Publication: draft → scheduled. Every later move is the server's, by time. */
export function usePublishContest() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => client.contests.publish({ path: { id } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: contestKeys.all }),
  });
}

export type FileExport = ResponseBody<'getExport'>;

/**
 * A contest's results as a CSV file: the files API's `contest_results` export
 * (every entry in leaderboard order, disqualified ones last), written by a
 * background job. The export is started here and followed until its file can
 * be downloaded from `file_url`.
 */
export function useStartResultsExport(contestId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => client.files.createExport({ body: { kind: 'contest_results', format: 'csv', contest_id: contestId } }),
    onSuccess: (started) => queryClient.setQueryData(contestKeys.detail(contestId, 'export', started.export_id), started),
  });
}

/** The export's progress, asked again every second until it is completed. */
export function useResultsExport(contestId: string, exportId: string | undefined) {
  return useQuery({
    queryKey: contestKeys.detail(contestId, 'export', exportId ?? ''),
    queryFn: () => client.files.getExport({ path: { export_id: exportId! } }),
    enabled: exportId !== undefined,
    refetchInterval: (query) => (query.state.data?.status === 'completed' ? false : 1_000),
  });
}
