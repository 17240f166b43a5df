import type { AuthContext } from '../../platform/auth.js';
import type { Database } from '../../platform/db.js';
import { forbidden } from '../../platform/errors.js';
import { userMay, type Permission, type Role } from '../../platform/permissions.js';
import { canReadPii } from '../participants/index.js';
import * as store from './store.js';
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

/**
 * A participants file asked for by someone holding `read:pii`: an export
 * written unmasked, or an import whose rows (and so its error report, which
 * may quote a row that could not be read) carry personal values in clear.
 * `store.UNMASKED_EXPORT_SQL` is the same test in SQL, for listings.
 */
export function holdsPersonalValues(kind: ExportKind | ImportKind, requester: Requester): boolean {
  return kind === 'participants' && requester.scopes.includes('read:pii');
}

/**
 * Whether the caller may know of an export at all: an unmasked one exists
 * only for callers holding `read:pii` (the owner, or a key with the scope);
 * to anyone else it is 404 and left out of listings, as if it did not exist.
 */
export function mayKnowExport(auth: AuthContext, row: { kind: ExportKind; requested_by: Requester }): boolean {
  return !holdsPersonalValues(row.kind, row.requested_by) || mayKnowUnmaskedExports(auth);
}

export function mayKnowUnmaskedExports(auth: AuthContext): boolean {
  return canReadPii(auth);
}

/**
 * The error report of an import whose rows carried personal values is for
 * callers holding `read:pii`: a refused row's detail can quote the row (a
 * JSON line that does not parse is quoted by the parser). The import itself
 * (counts, columns) holds no value and stays readable; the report is 403,
 * since the import's existence is no secret. Another tenant's or an unknown
 * import is left to the import's own read (404).
 */
export async function requireReadableErrorReport(db: Database, auth: AuthContext, importId: string): Promise<void> {
  if (canReadPii(auth)) return;
  const row = await db.tenant(auth.tenantId, (tx) => store.readImport(tx, auth.tenantId, importId));
  if (row && holdsPersonalValues(row.kind, row.requested_by)) {
    throw forbidden('the error report of a participants import sent with "read:pii" may quote personal values: reading it needs the scope "read:pii"');
  }
}

/** The personal-data access log's actor: `api_key:<id>` or `admin_user:<id>` (console user or admin login token). */
export function accessLogActorOf(auth: AuthContext): string {
  return `${auth.kind === 'key' ? 'api_key' : 'admin_user'}:${auth.actorId}`;
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
