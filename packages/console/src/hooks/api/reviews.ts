import { keepPreviousData, useMutation, useMutationState, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const reviewKeys = queryKeysFactory('reviews');

export type Review = Omit<ResponseBody<'getReview'>, 'livemode'>;
export type ReviewKind = Review['kind'];
export type ReviewStatus = Review['status'];
export type ReviewBacktest = NonNullable<Review['backtest']>;

/** The fields of a backtest a review request carries (the simulation's answer has `livemode` besides). */
const BACKTEST_FIELDS = ['from', 'to', 'events_scanned', 'events_matched', 'participants', 'points', 'badges_awarded', 'capped_events', 'truncated', 'budget_exhausted_at'] as const;

/**
 * The query keys of each kind's own resource: a publication changes the item,
 * so it is invalidated with the reviews (the engagement, challenge and contest
 * hooks use the same resource names with `queryKeysFactory`).
 */
export const ITEM_RESOURCE: Record<ReviewKind, string> = { rule: 'rules', engagement: 'engagements', challenge: 'challenges', contest: 'contests', segment: 'segments' };

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

/**
 * The review requests waiting for the signed-in person: pending ones they may
 * decide (they hold the publishing permission) and did not submit themselves.
 * Counted from the first 100; the navigation shows "99+" beyond.
 */
export function useWaitingReviews(me: string, enabled: boolean) {
  return useQuery({
    queryKey: reviewKeys.list({ status: 'pending', waitingFor: me }),
    queryFn: async () => {
      const page = await client.publishing.listReviews({ query: { status: 'pending', limit: 100 } });
      return { count: page.reviews.filter((review) => review.submitted_by.id !== me).length, more: page.next_cursor !== null };
    },
    enabled,
    refetchInterval: 60_000,
  });
}

/**
 * The signed-in author's latest backtest of a rule in this console session:
 * the last successful `simulateRule` of that rule (by id, or by the draft's
 * name as the rule editor sends it), for its review request.
 */
export function useLatestBacktest(ruleId: string, ruleName: string): ReviewBacktest | null {
  const results = useMutationState({
    filters: {
      status: 'success',
      predicate: (mutation) => {
        const variables = mutation.state.variables as { rule_id?: string; rule?: { name?: string }; from?: string } | undefined;
        const data = mutation.state.data as { events_scanned?: unknown } | undefined;
        if (!variables?.from || typeof data?.events_scanned !== 'number') return false;
        return variables.rule_id === ruleId || (variables.rule_id === undefined && variables.rule?.name === ruleName);
      },
    },
    select: (mutation) => ({ at: mutation.state.submittedAt, data: mutation.state.data as Record<string, unknown> }),
  });
  const latest = results.reduce<(typeof results)[number] | null>((best, result) => (best === null || result.at > best.at ? result : best), null);
  if (!latest) return null;
  return Object.fromEntries(BACKTEST_FIELDS.map((field) => [field, latest.data[field] ?? null])) as ReviewBacktest;
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
    mutationFn: (body: { kind: ReviewKind; id: string; note?: string; backtest?: ReviewBacktest }) => client.publishing.createReview({ body }),
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
    case 'segment': {
      // A segment has no publish route: a publisher's change applies at once, so publishing its draft is saving the draft.
      const segment = await client.segments.get({ path: { segment_id: id } });
      if (!segment.draft) return segment;
      return client.segments.update({ path: { segment_id: id }, body: { filter: segment.draft.filter, materialized: segment.draft.materialized } });
    }
  }
}

export function usePublicationAction(kind: ReviewKind, id: string) {
  const invalidate = useInvalidateReviewed();
  return useMutation({ mutationFn: (action: PublicationAction) => act(kind, id, action), onSuccess: () => invalidate(kind) });
}
