import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { RequestBody, ResponseBody } from '@loyalty/sdk';
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
  status?: 'invited' | 'active' | 'disabled';
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
    mutationFn: async (body: { email: string; role: Role; can_publish?: boolean; name?: string }) => (await client.console.inviteUser({ body })) as { user: ConsoleUserRow; invite_url: string },
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: userKeys.all }),
  });
}

export function useUpdateUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (input: { id: string; role?: Role; can_publish?: boolean; name?: string }) =>
      (await client.console.updateUser({ path: { id: input.id }, body: { role: input.role, can_publish: input.can_publish, name: input.name } })) as ConsoleUserRow,
    // A changed person shows in the audit log, and a publisher more or less changes who reviews wait for.
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: userKeys.all });
      void queryClient.invalidateQueries({ queryKey: ['audit-log'] });
    },
  });
}

export function useRemoveUser() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => client.console.deleteUser({ path: { id } }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: userKeys.all }),
  });
}

/** `GET /admin/audit-log`: who changed what, newest first, with the resource before and after. */
export type AuditEntry = ResponseBody<'listAuditLog'>['entries'][number];

export interface AuditFilters {
  actor_id?: string;
  resource_type?: string;
  resource_id?: string;
  from?: string;
  to?: string;
  cursor?: string;
}

export function useAuditLog(filters: AuditFilters) {
  return useQuery({
    queryKey: ['audit-log', filters],
    queryFn: () =>
      client.console.listAuditLog({
        query: {
          limit: 50,
          actor_id: filters.actor_id || undefined,
          resource_type: filters.resource_type || undefined,
          resource_id: filters.resource_id || undefined,
          from: filters.from || undefined,
          to: filters.to || undefined,
          cursor: filters.cursor,
        },
      }),
    placeholderData: keepPreviousData,
  });
}
