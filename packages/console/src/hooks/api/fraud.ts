import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';
import { contestKeys } from './contests';

export const reviewKeys = queryKeysFactory('fraud-reviews');

export type Review = ResponseBody<'listFraudReviews'>['reviews'][number];
export type ReviewStatus = Review['status'];

export function useReviews(filters: { status?: ReviewStatus; contest_id?: string; cursor?: string }, enabled = true) {
  return useQuery({
    queryKey: reviewKeys.list(filters),
    queryFn: () => client.contests.listFraudReviews({ query: { limit: PAGE_SIZE, status: filters.status, contest_id: filters.contest_id, cursor: filters.cursor } }),
    placeholderData: keepPreviousData,
    enabled,
  });
}

/** An entry's signals and status history: the contest side of the decision trail. */
export function useEntryTrail(contestId: string, participantId: string, enabled: boolean) {
  return useQuery({
    queryKey: reviewKeys.detail(`${contestId}/${participantId}`),
    queryFn: () => client.contests.getEntry({ path: { id: contestId, participant_id: participantId } }),
    enabled,
  });
}

/** Approve (the prize goes on to verification) or disqualify a held contest entry. */
export function useDecideReview() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ reviewId, decision, reason }: { reviewId: string; decision: 'approve' | 'disqualify'; reason: string }) =>
      client.contests.decideFraudReview({ body: { review_id: reviewId, decision, reason } }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: reviewKeys.all });
      void queryClient.invalidateQueries({ queryKey: contestKeys.all });
    },
  });
}
