import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const reviewKeys = queryKeysFactory('reviews');

export type Review = Omit<ResponseBody<'getReview'>, 'livemode'>;
export type ReviewKind = Review['kind'];
export type ReviewStatus = Review['status'];

/**
 * The query keys of each kind's own resource: a publication changes the item,
 * so it is invalidated with the reviews (the engagement, challenge and contest
 * hooks use the same resource names with `queryKeysFactory`).
 */
export const ITEM_RESOURCE: Record<ReviewKind, string> = { rule: 'rules', engagement: 'engagements', challenge: 'challenges', contest: 'contests' };

export function useReviews(filters: { status?: ReviewStatus; kind?: ReviewKind; cursor?: string }) {
  return useQuery({
    queryKey: reviewKeys.list(filters),
    queryFn: () => client.publishing.listReviews({ query: { limit: PAGE_SIZE, status: filters.status, kind: filters.kind, cursor: filters.cursor } }),
    placeholderData: keepPreviousData,
  });
}

/** The latest review request of one item (pending, or the last decision), for its publication controls. */
export function useLatestReview(kind: ReviewKind, id: string | undefined) {
  return useQuery({
    queryKey: reviewKeys.detail(`${kind}:${id ?? ''}`, 'latest'),
    queryFn: async () => (await client.publishing.listReviews({ query: { kind, item_id: id!, limit: 1 } })).reviews[0] ?? null,
    enabled: id !== undefined,
  });
}

function useInvalidateReviewed() {
  const queryClient = useQueryClient();
  return (kind: ReviewKind) => {
    void queryClient.invalidateQueries({ queryKey: reviewKeys.all });
    void queryClient.invalidateQueries({ queryKey: [ITEM_RESOURCE[kind]] });
  };
}

export function useSubmitReview() {
  const invalidate = useInvalidateReviewed();
  return useMutation({
    mutationFn: (body: { kind: ReviewKind; id: string; note?: string }) => client.publishing.createReview({ body }),
    onSuccess: (review) => invalidate(review.kind),
  });
}

export function useApproveReview() {
  const invalidate = useInvalidateReviewed();
  return useMutation({
    mutationFn: (id: string) => client.publishing.approveReview({ path: { id } }),
    onSuccess: (review) => invalidate(review.kind),
  });
}

export function useReturnReview() {
  const invalidate = useInvalidateReviewed();
  return useMutation({
    mutationFn: ({ id, note }: { id: string; note: string }) => client.publishing.returnReview({ path: { id }, body: { note } }),
    onSuccess: (review) => invalidate(review.kind),
  });
}

/** The lifecycle moves a publisher makes from the publication controls, each through the item's own route. */
export type PublicationAction = 'publish' | 'pause' | 'resume' | 'unpublish' | 'end';

async function act(kind: ReviewKind, id: string, action: PublicationAction): Promise<unknown> {
  switch (kind) {
    case 'rule':
      // A rule has no publish route: its status is its publication.
      return client.earnRules.update({ path: { rule_id: id }, body: { status: action === 'pause' ? 'paused' : 'active' } });
    case 'engagement':
      return action === 'unpublish' ? client.engagements.unpublish({ path: { id } }) : client.engagements.publish({ path: { id } });
    case 'challenge':
      return action === 'end' ? client.challenges.end({ path: { id } }) : client.challenges.publish({ path: { id } });
    case 'contest':
      return client.contests.publish({ path: { id } });
  }
}

export function usePublicationAction(kind: ReviewKind, id: string) {
  const invalidate = useInvalidateReviewed();
  return useMutation({ mutationFn: (action: PublicationAction) => act(kind, id, action), onSuccess: () => invalidate(kind) });
}
