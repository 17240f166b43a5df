import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody, ResponseBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const referralSettingsKeys = queryKeysFactory('referral-settings');
export const conversionKeys = queryKeysFactory('referral-conversions');

export type ReferralSettings = ResponseBody<'getReferralSettings'>;
export type Conversion = Omit<ResponseBody<'approveReferralConversion'>, 'livemode'>;
export type ConversionStatus = Conversion['status'];

export function useReferralSettings() {
  return useQuery({ queryKey: referralSettingsKeys.all, queryFn: () => client.referrals.getSettings() });
}

export function useSaveReferralSettings() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'updateReferralSettings'>) => client.referrals.updateSettings({ body }),
    onSuccess: (settings) => queryClient.setQueryData(referralSettingsKeys.all, settings),
  });
}

export function useConversions(filters: { status?: ConversionStatus; cursor?: string }, enabled = true) {
  return useQuery({
    queryKey: conversionKeys.list(filters),
    queryFn: () => client.referrals.listConversions({ query: { limit: PAGE_SIZE, status: filters.status, cursor: filters.cursor } }),
    placeholderData: keepPreviousData,
    enabled,
  });
}

/** Approve or reject a held conversion; an approval counts it (the referrer's stats and milestones move). */
export function useDecideConversion() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, decision, note }: { id: string; decision: 'approve' | 'reject'; note?: string }) => {
      const body = note ? { note } : undefined;
      return decision === 'approve' ? client.referrals.approveConversion({ path: { id }, body }) : client.referrals.rejectConversion({ path: { id }, body });
    },
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: conversionKeys.all });
      void queryClient.invalidateQueries({ queryKey: ['participants'] });
    },
  });
}
