import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';

/** Everything the analytics routes answer; a change of the tenant's zone or point value makes it stale (`analyticsKeys.all`). */
export const analyticsKeys = queryKeysFactory('analytics');

/** `GET /admin/analytics/overview`: figures per day of the tenant's time zone, the liability (in money with a point value), the expiry forecast and breakage. */
export type Overview = ResponseBody<'getAnalyticsOverview'>;
export type OverviewDay = Overview['days'][number];

export function useOverview(range: { from: string; to: string }) {
  return useQuery({
    queryKey: analyticsKeys.detail('overview', range),
    queryFn: () => client.analytics.getOverview({ query: range }),
    placeholderData: keepPreviousData,
  });
}
