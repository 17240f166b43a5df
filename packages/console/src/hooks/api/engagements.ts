import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody, ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const engagementKeys = queryKeysFactory('engagements');

export type Engagement = ResponseBody<'getEngagement'>;
export type EngagementInput = RequestBody<'createEngagement'>;
export type EngagementStatus = Engagement['status'];

export function useEngagements(filters: { status?: EngagementStatus; cursor?: string }) {
  return useQuery({
    queryKey: engagementKeys.list(filters),
    queryFn: () => client.engagements.list({ query: { limit: PAGE_SIZE, status: filters.status, cursor: filters.cursor } }),
    placeholderData: keepPreviousData,
  });
}

export function useEngagement(id: string | undefined) {
  return useQuery({ queryKey: engagementKeys.detail(id ?? ''), queryFn: () => client.engagements.get({ path: { id: id! } }), enabled: id !== undefined });
}

/** Where the runtime serves the engagement: its tenant and site slugs (the preview builds a same-origin address from them). */
export function useEmbedUrl(id: string | undefined) {
  return useQuery({ queryKey: engagementKeys.detail(id ?? '', 'embed-url'), queryFn: () => client.engagements.getEmbedUrl({ path: { id: id! } }), enabled: id !== undefined });
}

export function useSaveEngagement(id: string | undefined) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: EngagementInput) => (id ? client.engagements.update({ path: { id }, body }) : client.engagements.create({ body })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: engagementKeys.all }),
  });
}

/** Publishing and unpublishing change what the site serves: the engagement and its embed address are stale. */
export function usePublication(id: string) {
  const queryClient = useQueryClient();
  const settle = () => void queryClient.invalidateQueries({ queryKey: engagementKeys.all });
  return {
    publish: useMutation({ mutationFn: () => client.engagements.publish({ path: { id } }), onSuccess: settle }),
    unpublish: useMutation({ mutationFn: () => client.engagements.unpublish({ path: { id } }), onSuccess: settle }),
  };
}

export type EngagementPreview = ResponseBody<'startEngagementPreview'>;

/**
 * A draft's preview: each start makes a new test participant (the earlier ones go), with a session
 * for this engagement only. Nothing else becomes stale: test participants are in no list or figure.
 */
export function usePreview(id: string) {
  return {
    start: useMutation({ mutationFn: () => client.engagements.startPreview({ path: { id } }) }),
    reset: useMutation({ mutationFn: () => client.engagements.resetPreview({ path: { id } }) }),
  };
}
