import { createContext, useContext, type ReactNode } from 'react';
import type { ConsoleUser, Permission } from '../lib/permissions';

export const UserContext = createContext<{ user: ConsoleUser; permissions: Set<Permission> } | null>(null);

export function useCurrentUser() {
  const value = useContext(UserContext);
  if (!value) throw new Error('useCurrentUser outside a signed-in console');
  return value;
}

export function useCan(permission: Permission): boolean {
  return useCurrentUser().permissions.has(permission);
}

/** Shows its children only to a role the service lets do the thing; the service refuses it anyway. */
export function RoleGuard({ permission, children, fallback = null }: { permission: Permission; children: ReactNode; fallback?: ReactNode }) {
  return useCan(permission) ? <>{children}</> : <>{fallback}</>;
}
