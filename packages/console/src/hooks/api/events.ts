import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { QueryParameters, ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

/** The event store (`/events/search`, `/admin/events/{id}`): what the ingestion routes accepted and what processing made of it. */
export const eventKeys = queryKeysFactory('ingested-events');

export type EventFilters = Pick<NonNullable<QueryParameters<'searchEvents'>>, 'status' | 'event_name' | 'participant_id' | 'from' | 'to'> & { cursor?: string };
export type EventStatus = NonNullable<EventFilters['status']>;
/** What processing made of an event: each rule listening to its name with why it did or did not award. */
export type EventOutcome = NonNullable<ResponseBody<'getStoredEvent'>['outcome']>;
export type RuleResult = EventOutcome['rules'][number];

export function useIngestedEvents(filters: EventFilters) {
  return useQuery({
    queryKey: eventKeys.list(filters),
    queryFn: () =>
      client.eventIngestion.search({
        query: {
          limit: PAGE_SIZE,
          status: filters.status,
          event_name: filters.event_name || undefined,
          participant_id: filters.participant_id || undefined,
          from: filters.from,
          to: filters.to,
          cursor: filters.cursor,
        },
      }),
    placeholderData: keepPreviousData,
  });
}

export function useIngestedEvent(id: string) {
  return useQuery({ queryKey: eventKeys.detail(id), queryFn: () => client.eventIngestion.getStored({ path: { event_id: id } }) });
}

export function useRetryEvent(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => client.eventIngestion.retryStored({ path: { event_id: id } }),
    // The retry's outcome lands in the participant's balance and badges too, but later (a job): the event itself is what is stale now.
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: eventKeys.all }),
  });
}
