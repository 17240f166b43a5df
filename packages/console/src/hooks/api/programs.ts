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
      client.earnRules.list({ query: { limit: PAGE_SIZE, status: filters.status, trigger: filters.trigger, event_name: filters.event_name || undefined, cursor: filters.cursor } }),
    placeholderData: keepPreviousData,
  });
}

export function useRule(id: string | undefined) {
  return useQuery({ queryKey: ruleKeys.detail(id ?? ''), queryFn: () => client.earnRules.get({ path: { rule_id: id! } }), enabled: id !== undefined });
}

/** The backtest: what the rule would have done over past events. */
export function useSimulateRule() {
  return useMutation({ mutationFn: (body: RequestBody<'simulateRule'>) => client.earnRules.simulate({ body }) });
}

/** Creates a rule (the whole input) or changes a stored one (a patch: its trigger stays). */
export function useSaveRule(id: string | undefined) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: { input: RuleInput; patch: RulePatch }) =>
      id ? client.earnRules.update({ path: { rule_id: id }, body: body.patch }) : client.earnRules.create({ body: body.input }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ruleKeys.all }),
  });
}

export function useDeleteRule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => client.earnRules.delete({ path: { rule_id: id } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ruleKeys.all }),
  });
}

export function useTiers() {
  return useQuery({ queryKey: tierKeys.lists(), queryFn: () => client.points.listTiers() });
}

export function useCreateTier() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'createTier'>) => client.points.createTier({ body }),
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
    mutationFn: ({ code, body }: { code: string; body: RequestBody<'updateTier'> }) => client.points.updateTier({ path: { code }, body }),
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
    mutationFn: (code: string) => client.points.deleteTier({ path: { code } }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: tierKeys.all });
      void queryClient.invalidateQueries({ queryKey: ['participants'] });
    },
  });
}

export function useBadges(cursor: string | undefined) {
  return useQuery({ queryKey: badgeKeys.list({ cursor }), queryFn: () => client.badges.list({ query: { limit: PAGE_SIZE, cursor } }), placeholderData: keepPreviousData });
}

export function useCreateBadge() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'createBadge'>) => client.badges.create({ body }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: badgeKeys.all }),
  });
}

export function useUpdateBadge() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ code, body }: { code: string; body: RequestBody<'updateBadge'> }) => client.badges.update({ path: { code }, body }),
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
    mutationFn: (code: string) => client.badges.delete({ path: { code } }),
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
    mutationFn: ({ code, participant_id }: { code: string; participant_id: string }) => client.badges.award({ path: { code }, body: { participant_id } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['participants'] }),
  });
}

/** Every badge a picker offers (one page of the API's largest size), by name with its code. */
export function useBadgeChoices() {
  return useQuery({ queryKey: badgeKeys.list({ choices: true }), queryFn: () => client.badges.list({ query: { limit: 100 } }) });
}
