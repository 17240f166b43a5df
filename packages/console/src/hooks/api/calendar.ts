import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';

/** The campaign calendar: read fresh on each visit (rules, multipliers, engagements, challenges and contests all change it). */
export const calendarKeys = queryKeysFactory('calendar');

export type Calendar = ResponseBody<'getCampaignCalendar'>;
export type CalendarItem = Calendar['items'][number];

/** `GET /admin/calendar`: the items whose window meets the tenant's days `from` to `to`. */
export function useCalendar(window: { from: string; to: string }) {
  return useQuery({
    queryKey: calendarKeys.list(window),
    queryFn: () => client.analytics.getCampaignCalendar({ query: window }),
    placeholderData: keepPreviousData,
  });
}
