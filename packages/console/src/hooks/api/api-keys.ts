import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import { queryKeysFactory } from './query-keys';
import { PAGE_SIZE } from './participants';

/** `/events/api-keys`: the tenant's API keys (an owner's; the secret only in a create's or a rotation's answer). */
export const apiKeyKeys = queryKeysFactory('api-keys');
/** The usage figures count active keys: a create or a revoke makes them stale. */
const usageKey = ['tenant', 'usage'] as const;

export function useApiKeys(filters: { includeRevoked: boolean; cursor?: string }) {
  return useQuery({
    queryKey: apiKeyKeys.list(filters),
    queryFn: () => client.access.listApiKeys({ query: { limit: PAGE_SIZE, include_revoked: filters.includeRevoked, cursor: filters.cursor } }),
    placeholderData: keepPreviousData,
  });
}

export function useCreateApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'createApiKey'>) => client.access.createApiKey({ body }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: apiKeyKeys.all });
      void queryClient.invalidateQueries({ queryKey: usageKey });
    },
  });
}

export function useRotateApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => client.access.rotateApiKey({ path: { id } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: apiKeyKeys.all }),
  });
}

export function useRevokeApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => client.access.revokeApiKey({ path: { id } }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: apiKeyKeys.all });
      void queryClient.invalidateQueries({ queryKey: usageKey });
    },
  });
}
