import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

export const ruleKeys = queryKeysFactory('rules');
export const tierKeys = queryKeysFactory('tiers');
export const badgeKeys = queryKeysFactory('badges');

export type RuleInput = RequestBody<'createRule'>;
export type RulePatch = RequestBody<'updateRule'>;

export function useRules(filters: { status?: 'draft' | 'active' | 'paused'; trigger?: 'event' | 'birthday' | 'recurring'; event_name?: string; cursor?: string }) {
  return useQuery({
    queryKey: ruleKeys.list(filters),
    queryFn: () =>
      client.listRules({ query: { limit: PAGE_SIZE, status: filters.status, trigger: filters.trigger, event_name: filters.event_name || undefined, cursor: filters.cursor } }),
    placeholderData: keepPreviousData,
  });
}

export function useRule(id: string | undefined) {
  return useQuery({ queryKey: ruleKeys.detail(id ?? ''), queryFn: () => client.getRule({ path: { rule_id: id! } }), enabled: id !== undefined });
}

/** The backtest: what the rule would have done over past events. */
export function useSimulateRule() {
  return useMutation({ mutationFn: (body: RequestBody<'simulateRule'>) => client.simulateRule({ body }) });
}

/** Creates a rule (the whole input) or changes a stored one (a patch: its trigger stays). */
export function useSaveRule(id: string | undefined) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: { input: RuleInput; patch: RulePatch }) =>
      id ? client.updateRule({ path: { rule_id: id }, body: body.patch }) : client.createRule({ body: body.input }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ruleKeys.all }),
  });
}

export function useDeleteRule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => client.deleteRule({ path: { rule_id: id } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ruleKeys.all }),
  });
}

export function useTiers() {
  return useQuery({ queryKey: tierKeys.lists(), queryFn: () => client.listTiers() });
}

export function useCreateTier() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'createTier'>) => client.createTier({ body }),
    // A new threshold moves participants between tiers.
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: tierKeys.all });
      void queryClient.invalidateQueries({ queryKey: ['participants'] });
    },
  });
}

export function useUpdateTier() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ code, body }: { code: string; body: RequestBody<'updateTier'> }) => client.updateTier({ path: { code }, body }),
    // A moved threshold moves participants between tiers.
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: tierKeys.all });
      void queryClient.invalidateQueries({ queryKey: ['participants'] });
    },
  });
}

export function useDeleteTier() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (code: string) => client.deleteTier({ path: { code } }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: tierKeys.all });
      void queryClient.invalidateQueries({ queryKey: ['participants'] });
    },
  });
}

export function useBadges(cursor: string | undefined) {
  return useQuery({ queryKey: badgeKeys.list({ cursor }), queryFn: () => client.listBadges({ query: { limit: PAGE_SIZE, cursor } }), placeholderData: keepPreviousData });
}

export function useCreateBadge() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'createBadge'>) => client.createBadge({ body }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: badgeKeys.all }),
  });
}

export function useUpdateBadge() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ code, body }: { code: string; body: RequestBody<'updateBadge'> }) => client.updateBadge({ path: { code }, body }),
    // Participant pages show the badge's name and image.
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: badgeKeys.all });
      void queryClient.invalidateQueries({ queryKey: ['participants'] });
    },
  });
}

export function useDeleteBadge() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (code: string) => client.deleteBadge({ path: { code } }),
    // Deleting a badge removes every participant's record of it.
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: badgeKeys.all });
      void queryClient.invalidateQueries({ queryKey: ['participants'] });
    },
  });
}

export function useAwardBadge() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ code, participant_id }: { code: string; participant_id: string }) => client.awardBadge({ path: { code }, body: { participant_id } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['participants'] }),
  });
}
