/**
 * What each console role may do, as the service decides it
 * (src/platform/permissions.ts on the server). The console only uses it to
 * hide what the service would refuse anyway; when the session names the
 * user's `permissions`, those are used instead.
 */
export const ROLES = ['owner', 'marketer', 'support', 'reviewer', 'analyst'] as const;
export type Role = (typeof ROLES)[number];

export type Permission =
  | 'programs:read'
  | 'programs:write'
  | 'programs:publish'
  | 'participants:read'
  | 'participants:write'
  | 'participants:erase'
  | 'pii:reveal'
  | 'fraud:read'
  | 'fraud:decide'
  | 'developers:read'
  | 'developers:write'
  | 'analytics:read'
  | 'audit:read'
  | 'settings:read'
  | 'settings:write'
  | 'access:manage';

const ALL: Permission[] = [
  'programs:read', 'programs:write', 'programs:publish', 'participants:read', 'participants:write', 'participants:erase', 'pii:reveal',
  'fraud:read', 'fraud:decide', 'developers:read', 'developers:write', 'analytics:read', 'audit:read', 'settings:read', 'settings:write', 'access:manage',
];

export const ROLE_PERMISSIONS: Record<Role, Permission[]> = {
  owner: ALL,
  marketer: ['programs:read', 'programs:write', 'programs:publish', 'participants:read', 'analytics:read', 'settings:read'],
  support: ['participants:read', 'participants:write', 'participants:erase', 'pii:reveal', 'programs:read', 'analytics:read', 'settings:read'],
  reviewer: ['fraud:read', 'fraud:decide', 'participants:read', 'programs:read', 'settings:read'],
  analyst: ['programs:read', 'participants:read', 'fraud:read', 'developers:read', 'analytics:read', 'audit:read', 'settings:read'],
};

export interface ConsoleUser {
  id: string;
  email: string;
  name: string | null;
  role: Role;
  can_publish: boolean;
  status?: 'invited' | 'active' | 'disabled';
}

/** The session's own list when it has one (the server's word), else the role's. */
export function permissionsOf(user: ConsoleUser, fromSession?: Permission[]): Set<Permission> {
  if (fromSession) return new Set(fromSession);
  const granted = new Set<Permission>(ROLE_PERMISSIONS[user.role] ?? []);
  if (!user.can_publish) granted.delete('programs:publish');
  return granted;
}
