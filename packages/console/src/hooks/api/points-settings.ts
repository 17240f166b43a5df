import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';
import { analyticsKeys } from './analytics';

export const pointsSettingsKeys = queryKeysFactory('points-settings');
export const multiplierKeys = queryKeysFactory('multipliers');

/** The expiry policy, default lifetime of a lot, expiry reminder days, the points' name and what a point is worth. */
export function usePointsSettings() {
  return useQuery({ queryKey: pointsSettingsKeys.all, queryFn: () => client.points.getSettings() });
}

export function useUpdatePointsSettings() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'updatePointsSettings'>) => client.points.updateSettings({ body }),
    // The overview values points at the point value: its money figures are stale with a new one.
    onSuccess: async (settings) => {
      queryClient.setQueryData(pointsSettingsKeys.all, settings);
      await queryClient.invalidateQueries({ queryKey: analyticsKeys.all });
    },
  });
}

/** Multipliers, newest first; `active_at` keeps those whose window holds that instant. */
export function useMultipliers(filters: { active_at?: string; cursor?: string }) {
  return useQuery({
    queryKey: multiplierKeys.list(filters),
    queryFn: () => client.points.listMultipliers({ query: { limit: PAGE_SIZE, cursor: filters.cursor, active_at: filters.active_at } }),
    placeholderData: keepPreviousData,
  });
}

export function useCreateMultiplier() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'createMultiplier'>) => client.points.createMultiplier({ body }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: multiplierKeys.all }),
  });
}

export function useDeleteMultiplier() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => client.points.deleteMultiplier({ path: { id } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: multiplierKeys.all }),
  });
}
