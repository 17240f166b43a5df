import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody } from '@loyalty/sdk';
import { client } from '../../api/client';
import type { Role } from '../../lib/permissions';
import { queryKeysFactory } from './query-keys';

export const userKeys = queryKeysFactory('console-users');

export function useTenant() {
  return useQuery({ queryKey: ['tenant'], queryFn: () => client.access.getTenant(), staleTime: 300_000 });
}

/** A new time zone moves the tenant's calendar days: the overview's per-day figures are stale with it. */
export function useUpdateTenant() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: RequestBody<'updateTenant'>) => client.access.updateTenant({ body }),
    onSuccess: (tenant) => {
      queryClient.setQueryData(['tenant'], tenant);
      void queryClient.invalidateQueries({ queryKey: ['analytics'] });
      void queryClient.invalidateQueries({ queryKey: ['audit-log'] });
    },
  });
}

export function useUsage() {
  return useQuery({ queryKey: ['tenant', 'usage'], queryFn: () => client.access.getTenantUsage() });
}

export interface ConsoleUserRow {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  can_publish: boolean;
  status?: string;
  created_at?: string;
}

export function useConsoleUsers() {
  return useQuery({
    queryKey: userKeys.lists(),
    queryFn: async () => {
      const answer = (await client.console.listUsers()) as { users?: ConsoleUserRow[] } | ConsoleUserRow[];
      return Array.isArray(answer) ? answer : (answer.users ?? []);
    },
  });
}

export function useInviteUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (body: { email: string; role: Role; can_publish?: boolean }) => (await client.console.inviteUser({ body })) as { user: ConsoleUserRow; invite_url: string },
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: userKeys.all }),
  });
}

export function useUpdateUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: { id: string; role?: Role; can_publish?: boolean }) => client.console.updateUser({ path: { id: input.id }, body: { role: input.role, can_publish: input.can_publish } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: userKeys.all }),
  });
}

export function useRemoveUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => client.console.deleteUser({ path: { id } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: userKeys.all }),
  });
}

/** `GET /admin/audit-log`: who changed what, newest first. */
export interface AuditEntry {
  id: string;
  occurred_at: string;
  actor_type: 'user' | 'api_key' | 'system';
  actor_id: string;
  actor_label: string | null;
  action: string;
  method: string;
  route: string;
  resource_type: string;
  resource_id: string | null;
  status: number;
}

export function useAuditLog(filters: { resource_type?: string; cursor?: string }) {
  return useQuery({
    queryKey: ['audit-log', filters],
    queryFn: async () =>
      (await client.console.listAuditLog({ query: { limit: 50, resource_type: filters.resource_type || undefined, cursor: filters.cursor } })) as { entries: AuditEntry[]; next_cursor: string | null },
    placeholderData: keepPreviousData,
  });
}
