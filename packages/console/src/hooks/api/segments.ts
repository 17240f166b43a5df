import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const segmentKeys = queryKeysFactory('segments');

/** Until the SDK is regenerated with the segments routes: the call by operation name. */
const call = client.call.bind(client) as unknown as (name: string, args?: object) => Promise<unknown>;

export type SegmentOperator = 'equals' | 'not_equals' | 'in' | 'not_in' | 'gt' | 'gte' | 'lt' | 'lte' | 'exists' | 'not_exists' | 'contains' | 'not_contains';
export interface SegmentCondition {
  fact: string;
  operator: SegmentOperator;
  value?: unknown;
  event_name?: string;
  within_days?: number;
}
export interface SegmentFilter {
  all?: SegmentCondition[];
  any?: SegmentCondition[];
}
export interface Segment {
  id: string;
  name: string;
  description: string | null;
  filter: SegmentFilter;
  materialized: boolean;
  size: number | null;
  refreshed_at: string | null;
  created_at: string;
  updated_at: string;
  used_by: Array<{ type: string; id: string; name: string | null }>;
}
export interface SegmentInput {
  name: string;
  description?: string;
  filter: SegmentFilter;
  materialized?: boolean;
}
export interface SegmentFact {
  fact: string;
  type: 'string' | 'number' | 'boolean' | 'date' | 'code';
  operators: SegmentOperator[];
  personal: boolean;
  /** Takes `event_name` and `within_days` (event_count). */
  needs_event: boolean;
  allowed_values?: string[];
  description: string;
}
export type SegmentMember = ResponseBody<'searchParticipants'>['participants'][number];
export interface SegmentPreview {
  size: number;
  sample: SegmentMember[];
  took_ms: number;
}

export function useSegments(cursor: string | undefined) {
  return useQuery({
    queryKey: segmentKeys.list({ cursor }),
    queryFn: () => call('listSegments', { query: { limit: PAGE_SIZE, cursor } }) as Promise<{ segments: Segment[]; next_cursor: string | null }>,
    placeholderData: keepPreviousData,
  });
}

/** Every segment a picker offers (one page of the API's largest size). */
export function useSegmentChoices() {
  return useQuery({
    queryKey: segmentKeys.list({ choices: true }),
    queryFn: () => call('listSegments', { query: { limit: 100 } }) as Promise<{ segments: Segment[]; next_cursor: string | null }>,
  });
}

export function useSegment(id: string | undefined) {
  return useQuery({ queryKey: segmentKeys.detail(id ?? ''), queryFn: () => call('getSegment', { path: { segment_id: id } }) as Promise<Segment>, enabled: id !== undefined });
}

/** The builder's catalogue: each fact with its type and operators, personal or not, and whether it takes an event name and a window. */
export function useSegmentFacts() {
  return useQuery({ queryKey: segmentKeys.detail('facts'), queryFn: () => call('listSegmentFacts') as Promise<{ facts: SegmentFact[] }>, staleTime: 60_000 });
}

/** The live size and a masked sample of a filter being edited; `null` asks nothing (the filter is not complete yet). */
export function useSegmentPreview(filter: SegmentFilter | null) {
  return useQuery({
    queryKey: segmentKeys.detail('preview', filter),
    queryFn: () => call('previewSegment', { body: { filter } }) as Promise<SegmentPreview>,
    enabled: filter !== null,
    placeholderData: keepPreviousData,
    staleTime: 10_000,
    retry: false,
  });
}

export function useSegmentMembers(id: string, cursor: string | undefined) {
  return useQuery({
    queryKey: segmentKeys.detail(id, 'members', cursor),
    queryFn: () => call('listSegmentMembers', { path: { segment_id: id }, query: { limit: PAGE_SIZE, cursor } }) as Promise<{ members: SegmentMember[]; next_cursor: string | null }>,
    placeholderData: keepPreviousData,
  });
}

export function useSaveSegment(id: string | undefined) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: SegmentInput) =>
      (id ? call('updateSegment', { path: { segment_id: id }, body }) : call('createSegment', { body })) as Promise<Segment>,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: segmentKeys.all }),
  });
}

export function useDeleteSegment() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => call('deleteSegment', { path: { segment_id: id } }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: segmentKeys.all }),
  });
}

/** Recomputes a materialized segment's membership now. */
export function useRefreshSegment(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => call('refreshSegment', { path: { segment_id: id } }) as Promise<{ entered: number; left: number; size: number }>,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: segmentKeys.all }),
  });
}
