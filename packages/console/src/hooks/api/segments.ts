import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody, ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const segmentKeys = queryKeysFactory('segments');

export type Segment = ResponseBody<'getSegment'>;
export type SegmentInput = RequestBody<'createSegment'>;
export type SegmentFilter = Segment['filter'];
export type SegmentCondition = NonNullable<SegmentFilter['all']>[number];
export type SegmentOperator = SegmentCondition['operator'];
export type SegmentFact = Omit<ResponseBody<'listSegmentFacts'>['facts'][number], 'operators'> & { operators: SegmentOperator[] };
export type SegmentMember = ResponseBody<'listSegmentMembers'>['members'][number];
export type SegmentPreview = ResponseBody<'previewSegment'>;

export function useSegments(cursor: string | undefined) {
  return useQuery({
    queryKey: segmentKeys.list({ cursor }),
    queryFn: () => client.segments.list({ query: { limit: PAGE_SIZE, cursor } }),
    placeholderData: keepPreviousData,
  });
}

/** Every segment a picker offers (one page of the API's largest size). */
export function useSegmentChoices() {
  return useQuery({
    queryKey: segmentKeys.list({ choices: true }),
    queryFn: () => client.segments.list({ query: { limit: 100 } }),
  });
}

export function useSegment(id: string | undefined) {
  return useQuery({ queryKey: segmentKeys.detail(id ?? ''), queryFn: () => client.segments.get({ path: { segment_id: id! } }), enabled: id !== undefined });
}

/** The builder's catalogue: each fact with its type and operators, personal or not, and whether it takes an event name and a window. */
export function useSegmentFacts() {
  return useQuery({ queryKey: segmentKeys.detail('facts'), queryFn: async () => (await client.segments.listFacts()) as { facts: SegmentFact[] }, staleTime: 60_000 });
}

/** The live size and a masked sample of a filter being edited; `null` asks nothing (the filter is not complete yet). */
export function useSegmentPreview(filter: SegmentFilter | null) {
  return useQuery({
    queryKey: segmentKeys.detail('preview', filter),
    queryFn: () => client.segments.preview({ body: { filter: filter! } }),
    enabled: filter !== null,
    placeholderData: keepPreviousData,
    staleTime: 10_000,
    retry: false,
  });
}

export function useSegmentMembers(id: string, cursor: string | undefined) {
  return useQuery({
    queryKey: segmentKeys.detail(id, 'members', cursor),
    queryFn: () => client.segments.listMembers({ path: { segment_id: id }, query: { limit: PAGE_SIZE, cursor } }),
    placeholderData: keepPreviousData,
  });
}

export function useSaveSegment(id: string | undefined) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: SegmentInput): Promise<Segment> => (id ? client.segments.update({ path: { segment_id: id }, body }) : client.segments.create({ body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: segmentKeys.all }),
  });
}

export function useDeleteSegment() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => client.segments.delete({ path: { segment_id: id } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: segmentKeys.all }),
  });
}

/** Recomputes a materialized segment's membership now. */
export function useRefreshSegment(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => client.segments.refresh({ path: { segment_id: id } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: segmentKeys.all }),
  });
}
