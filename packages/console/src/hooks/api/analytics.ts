import { useQuery } from '@tanstack/react-query';
import { client } from '../../api/client';

/** `GET /admin/analytics/overview`: figures per day of the tenant's time zone. */
export interface OverviewDay {
  date: string;
  points_issued: number;
  points_redeemed: number;
  points_expired: number;
  active_participants: number;
  events_ingested: number;
  events_rejected: number;
  webhooks_succeeded: number;
  webhooks_failed: number;
}

export interface Overview {
  from: string;
  to: string;
  timezone: string;
  days: OverviewDay[];
  totals: Omit<OverviewDay, 'date'>;
  liability: { outstanding_points: number; participants_with_balance: number; as_of: string };
  top_rules: Array<{ rule_id: string; name: string; points: number; events: number }>;
}

export function useOverview(range: { from: string; to: string }) {
  return useQuery({
    queryKey: ['analytics', 'overview', range],
    queryFn: async () => (await client.analytics.getOverview({ query: range })) as Overview,
  });
}
