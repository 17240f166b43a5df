import type { AuthContext } from '../../platform/auth.js';
import { forbidden } from '../../platform/errors.js';
import { userMay, type Permission, type Role } from '../../platform/permissions.js';
import type { ExportKind, ImportKind, Requester } from './store.js';

/**
 * Who may import or export what. The routes are shared by every kind, so a
 * console user's role is checked here against the permission of the kind:
 * the same permission the module's own routes ask for that data. API keys
 * pass with an admin scope, as on every admin route; personal data stays
 * masked without `read:pii`.
 */
export const IMPORT_PERMISSIONS: Record<ImportKind, Permission> = {
  participants: 'participants:write',
  point_grants: 'participants:write',
  reward_codes: 'programs:write',
};

export const EXPORT_PERMISSIONS: Record<ExportKind, Permission> = {
  participants: 'participants:read',
  ledger: 'participants:read',
  contest_results: 'programs:read',
  webhook_deliveries: 'developers:read',
};

export function requirePermission(auth: AuthContext, permission: Permission, what: string): void {
  if (auth.user && !userMay(auth.user, permission)) {
    throw forbidden(`the ${auth.user.role} role may not ${what}: it needs the permission "${permission}"`);
  }
}

export function requesterOf(auth: AuthContext): Requester {
  return { kind: auth.kind, actor_id: auth.actorId, scopes: [...auth.scopes].sort(), role: auth.user?.role ?? null };
}

/**
 * The credential a background job acts with: the requester's scopes and role
 * as they were when the file was asked for (a later change of the key does
 * not widen what a queued job may read).
 */
export function authOfRequester(tenantId: string, requester: Requester): AuthContext {
  return {
    kind: requester.kind,
    tenantId,
    scopes: new Set(requester.scopes),
    actorId: requester.actor_id,
    // Plan and request limits concern the HTTP edge only; a job is not rate-limited.
    plan: 'enterprise',
    tenantRequestsPerMinute: null,
    keyRequestsPerMinute: null,
    user: requester.role ? { id: requester.actor_id, role: requester.role as Role, canPublish: false, email: '' } : undefined,
  };
}
