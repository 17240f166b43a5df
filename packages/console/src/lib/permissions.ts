import type { ResponseBody } from '@loyalty/sdk';

/**
 * Who may do what is the service's word: the session names the signed-in
 * person's permissions (src/platform/permissions.ts decides them, and the
 * server enforces the same list on every route). The console only reads that
 * list to hide what the service would refuse anyway; it keeps no table of its
 * own. The types come from the service's OpenAPI document through the SDK.
 */
type Session = ResponseBody<'getConsoleSession'>;
export type Permission = Session['permissions'][number];
export type ConsoleUser = Session['user'];
export type Role = ConsoleUser['role'];

/** The roles, in the order a role picker offers them (the compiler checks the list against the service's). */
export const ROLES = ['owner', 'marketer', 'support', 'reviewer', 'analyst'] as const satisfies readonly Role[];
type Unlisted = Exclude<Role, (typeof ROLES)[number]>;
const everyRoleListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyRoleListed;

/** The session's permissions as a set to ask. */
export function permissionsOf(session: Pick<Session, 'permissions'>): Set<Permission> {
  return new Set(session.permissions);
}
