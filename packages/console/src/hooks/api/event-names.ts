import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';

/** The event names the tenant has sent (with counts and when last seen) and the properties seen on one of them. */
export const eventNameKeys = queryKeysFactory('event-names');

export type EventNameSeen = ResponseBody<'listEventNames'>['names'][number];
export type EventProperty = ResponseBody<'listEventNameProperties'>['properties'][number];

/** What the API accepts as an event name; anything else is not looked up (the form says what is wrong). */
const EVENT_NAME = /^[A-Za-z0-9_.:/-]{1,128}$/;

/** The names containing `q` (all of them when empty), one page of the API's largest size: a picker filters as the person types. */
export function useEventNames(q: string) {
  const text = q.trim();
  return useQuery({
    queryKey: eventNameKeys.list({ q: text }),
    queryFn: () => client.eventIngestion.listNames({ query: { q: text || undefined, limit: 200 } }),
    placeholderData: keepPreviousData,
    staleTime: 60_000,
  });
}

/** The properties seen on the latest events of a name, each with its JSON types; nothing is asked for a name the API would refuse. */
export function useEventProperties(eventName: string) {
  const name = eventName.trim();
  return useQuery({
    queryKey: eventNameKeys.detail(name, 'properties'),
    queryFn: () => client.eventIngestion.listNameProperties({ path: { event_name: name } }),
    enabled: EVENT_NAME.test(name),
    staleTime: 60_000,
  });
}
