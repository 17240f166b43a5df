import type { Tx } from '../../platform/db.js';

/**
 * Every SQL statement of the users module: console users (admin_users), their
 * console sign-ins (console_sessions), invitations (rows of admin_users in
 * status `invited`) and the read of the audit log. Each function takes the
 * transaction and the tenant first and is meant for a transaction opened with
 * `db.tenant(tenantId, …)` on the application role, so row-level security
 * holds every statement to that tenant (the `tenant_id = $1` conditions say the
 * same thing for the reader and for the planner). No function here runs on the
 * owner pool; see README.md for the credential look-ups that do, and why.
 */

export const USER_COLUMNS = 'id, email, name, role, can_publish, status, invite_expires_at, created_at, updated_at';

export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  role: string;
  can_publish: boolean;
  status: 'invited' | 'active' | 'disabled';
  invite_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface TenantSummary {
  id: string;
  slug: string;
  name: string;
  environment: string;
}

// ---- users -------------------------------------------------------------------

export async function readUser(tx: Tx, tenantId: string, userId: string): Promise<UserRow | undefined> {
  const { rows } = await tx.query<UserRow>(`SELECT ${USER_COLUMNS} FROM admin_users WHERE tenant_id = $1 AND id = $2`, [tenantId, userId]);
  return rows[0];
}

/** The tenant as a console sign-in shows it. The tenants table belongs to the access module; its policy lets a tenant read its own row. */
export async function readTenantSummary(tx: Tx, tenantId: string): Promise<TenantSummary | undefined> {
  const { rows } = await tx.query<TenantSummary>('SELECT id, slug, name, environment FROM tenants WHERE id = $1', [tenantId]);
  return rows[0];
}

export async function readPasswordHash(tx: Tx, tenantId: string, userId: string): Promise<string | null> {
  const { rows } = await tx.query<{ password_hash: string | null }>('SELECT password_hash FROM admin_users WHERE tenant_id = $1 AND id = $2', [tenantId, userId]);
  return rows[0]?.password_hash ?? null;
}

export async function setPassword(tx: Tx, tenantId: string, userId: string, passwordHash: string, now: Date): Promise<void> {
  await tx.query('UPDATE admin_users SET password_hash = $3, password_changed_at = $4, updated_at = $4 WHERE tenant_id = $1 AND id = $2', [
    tenantId,
    userId,
    passwordHash,
    now,
  ]);
}

/** Ends the user's admin login tokens: they carry the version they were issued under (migration 1330). */
export async function bumpTokenVersion(tx: Tx, tenantId: string, userId: string): Promise<void> {
  await tx.query('UPDATE admin_users SET token_version = token_version + 1 WHERE tenant_id = $1 AND id = $2', [tenantId, userId]);
}

export async function listUsers(tx: Tx, tenantId: string, after: { email: string; id: string } | null, limit: number): Promise<UserRow[]> {
  const { rows } = await tx.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM admin_users WHERE tenant_id = $1 AND ($2::text IS NULL OR (lower(email), id) > (lower($2), $3::uuid))
     ORDER BY lower(email), id LIMIT $4`,
    [tenantId, after?.email ?? null, after?.id ?? null, limit],
  );
  return rows;
}

/**
 * Whether the tenant has a user with this email already. Emails are unique
 * across tenants too (sign-in names no tenant), but another tenant's users are
 * out of sight here: the unique index `admin_users_email` refuses those.
 */
export async function emailTaken(tx: Tx, tenantId: string, email: string): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM admin_users WHERE tenant_id = $1 AND lower(email) = lower($2)', [tenantId, email]);
  return (rowCount ?? 0) > 0;
}

export async function insertInvitedUser(
  tx: Tx,
  tenantId: string,
  user: { id: string; email: string; role: string; canPublish: boolean; name: string | null; inviteTokenHash: string; inviteExpiresAt: Date; invitedBy: string | null },
  now: Date,
): Promise<UserRow> {
  const { rows } = await tx.query<UserRow>(
    `INSERT INTO admin_users (tenant_id, id, email, password_hash, role, can_publish, name, status, invite_token_hash, invite_expires_at, invited_by, created_at, updated_at)
     VALUES ($1, $2, $3, NULL, $4, $5, $6, 'invited', $7, $8, $9, $10, $10) RETURNING ${USER_COLUMNS}`,
    [tenantId, user.id, user.email, user.role, user.canPublish, user.name, user.inviteTokenHash, user.inviteExpiresAt, user.invitedBy, now],
  );
  return rows[0];
}

/** Turns the invited user whose invitation hashes to `inviteTokenHash` into an active one, while the invitation lasts; the user, or undefined. */
export async function acceptInvitation(
  tx: Tx,
  tenantId: string,
  invitation: { inviteTokenHash: string; passwordHash: string; name: string | null },
  now: Date,
): Promise<UserRow | undefined> {
  const { rows } = await tx.query<UserRow>(
    `UPDATE admin_users SET status = 'active', password_hash = $3, invite_token_hash = NULL, invite_expires_at = NULL,
            name = coalesce($4, name), password_changed_at = $5, updated_at = $5
     WHERE tenant_id = $1 AND invite_token_hash = $2 AND status = 'invited' AND invite_expires_at > $5
     RETURNING ${USER_COLUMNS}`,
    [tenantId, invitation.inviteTokenHash, invitation.passwordHash, invitation.name, now],
  );
  return rows[0];
}

/**
 * Locks the user a change is about and, when `withOwners`, the tenant's active
 * owners too, in one statement and in id order (see the service's lockForChange
 * for why one statement); the rows locked.
 */
export async function lockUserAndOwners(tx: Tx, tenantId: string, userId: string, withOwners: boolean): Promise<UserRow[]> {
  const { rows } = await tx.query<UserRow>(
    `SELECT ${USER_COLUMNS} FROM admin_users
     WHERE tenant_id = $1 AND (id = $2 OR ($3 AND role = 'owner' AND status = 'active'))
     ORDER BY id FOR UPDATE`,
    [tenantId, userId, withOwners],
  );
  return rows;
}

/** The tenant's active owners other than `userId`. */
export async function countOtherActiveOwners(tx: Tx, tenantId: string, userId: string): Promise<number> {
  const { rows } = await tx.query<{ owners: number }>(
    `SELECT count(*)::int AS owners FROM admin_users WHERE tenant_id = $1 AND role = 'owner' AND status = 'active' AND id <> $2`,
    [tenantId, userId],
  );
  return rows[0].owners;
}

/** Applies the changes given (null keeps a field); `endsTokens` bumps the token version in the same statement. The user, or undefined. */
export async function updateUser(
  tx: Tx,
  tenantId: string,
  userId: string,
  changes: { role: string | null; canPublish: boolean | null; name: string | null; status: string | null },
  endsTokens: boolean,
  now: Date,
): Promise<UserRow | undefined> {
  const { rows } = await tx.query<UserRow>(
    `UPDATE admin_users SET role = coalesce($3, role), can_publish = coalesce($4, can_publish), name = coalesce($5, name),
            status = coalesce($6, status), updated_at = $7, token_version = token_version + $8::int
     WHERE tenant_id = $1 AND id = $2 RETURNING ${USER_COLUMNS}`,
    [tenantId, userId, changes.role, changes.canPublish, changes.name, changes.status, now, endsTokens ? 1 : 0],
  );
  return rows[0];
}

/** Removes the user (their console sign-ins go with them, by the foreign key); whether a row went. */
export async function deleteUser(tx: Tx, tenantId: string, userId: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM admin_users WHERE tenant_id = $1 AND id = $2', [tenantId, userId]);
  return (rowCount ?? 0) > 0;
}

// ---- console sign-ins ------------------------------------------------------------

export async function insertConsoleSession(
  tx: Tx,
  tenantId: string,
  session: { id: string; userId: string; tokenHash: string; expiresAt: Date; ipAddress: string | null },
  now: Date,
): Promise<void> {
  await tx.query(
    `INSERT INTO console_sessions (tenant_id, id, user_id, token_hash, created_at, last_seen_at, expires_at, ip_address)
     VALUES ($1, $2, $3, $4, $5, $5, $6, $7)`,
    [tenantId, session.id, session.userId, session.tokenHash, now, session.expiresAt, session.ipAddress],
  );
}

export async function revokeConsoleSession(tx: Tx, tenantId: string, sessionId: string, now: Date): Promise<void> {
  await tx.query('UPDATE console_sessions SET revoked_at = $3 WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL', [tenantId, sessionId, now]);
}

/** Ends every live console sign-in of the user but `keepSessionId` (null: every one). */
export async function revokeConsoleSessionsOfUser(tx: Tx, tenantId: string, userId: string, keepSessionId: string | null, now: Date): Promise<void> {
  await tx.query('UPDATE console_sessions SET revoked_at = $4 WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL AND id IS DISTINCT FROM $3', [
    tenantId,
    userId,
    keepSessionId,
    now,
  ]);
}

// ---- the audit log (written by platform/audit.ts, read here) ----------------------

export interface AuditQuery {
  resourceType: string | null;
  resourceId: string | null;
  actorId: string | null;
  from: string | null;
  to: string | null;
}

export interface AuditRow {
  id: string;
  occurred_at: Date;
  actor_type: 'user' | 'api_key' | 'system';
  actor_id: string;
  actor_label: string | null;
  actor_name: string | null;
  action: string;
  method: string;
  route: string;
  resource_type: string;
  resource_id: string | null;
  resource_name: string | null;
  status: number;
  before: unknown;
  after: unknown;
  details: unknown;
  request_id: string | null;
}

export async function readAuditLog(tx: Tx, tenantId: string, query: AuditQuery, after: { at: string; id: string } | null, limit: number): Promise<AuditRow[]> {
  const { rows } = await tx.query<AuditRow>(
    // Names instead of ids: the person's name (or email) as the users list shows it, the key's name, and the
    // resource's name or title as its snapshots hold it (already redacted where personal), or the draft a backtest ran.
    `SELECT a.id::text, a.occurred_at, a.actor_type, a.actor_id, a.actor_label,
            CASE a.actor_type WHEN 'user' THEN COALESCE(u.name, u.email) WHEN 'api_key' THEN k.name END AS actor_name,
            a.action, a.method, a.route, a.resource_type, a.resource_id,
            COALESCE(a.after->>'name', a.after->>'title', a.before->>'name', a.before->>'title', a.after->>'email', a.before->>'email',
                     a.after->'user'->>'name', a.after->'user'->>'email', a.details->'body'->'rule'->>'name') AS resource_name,
            a.status, a.before, a.after, a.details, a.request_id
     FROM audit_log a
     LEFT JOIN admin_users u ON a.actor_type = 'user' AND u.tenant_id = a.tenant_id AND u.id::text = a.actor_id
     LEFT JOIN api_keys k ON a.actor_type = 'api_key' AND k.tenant_id = a.tenant_id AND k.id::text = a.actor_id
     WHERE a.tenant_id = $1
       AND ($2::text IS NULL OR a.resource_type = $2) AND ($3::text IS NULL OR a.resource_id = $3) AND ($4::text IS NULL OR a.actor_id = $4)
       AND ($5::timestamptz IS NULL OR a.occurred_at >= $5) AND ($6::timestamptz IS NULL OR a.occurred_at < $6)
       AND ($7::timestamptz IS NULL OR (a.occurred_at, a.id) < ($7, $8::bigint))
     ORDER BY a.occurred_at DESC, a.id DESC LIMIT $9`,
    [tenantId, query.resourceType, query.resourceId, query.actorId, query.from, query.to, after?.at ?? null, after?.id ?? null, limit],
  );
  return rows;
}
