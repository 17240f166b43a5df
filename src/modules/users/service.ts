import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import type { Database, Tx } from '../../platform/db.js';
import { announceCredentialChange, type AuthContext, type Authenticator } from '../../platform/auth.js';
import { AppError, forbidden, notFound, unauthenticated } from '../../platform/errors.js';
import { randomToken, sha256Hex, uuid } from '../../platform/ids.js';
import { clock } from '../../platform/clock.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { CONSOLE_SESSION_TTL_SECONDS, checkPassword, csrfTokenFor, newConsoleToken, type SignInThrottle } from '../../platform/console-auth.js';
import { permissionsOf, type Role } from '../../platform/permissions.js';
import type { ConsoleUserView } from './schemas.js';

/**
 * Console users (the tenant's admin users with a role), their sign-ins and
 * invitations, and the audit log's read. Every change to a user announces a
 * credential change, so that each process drops what it cached of the user's
 * role at once.
 */
const INVITE_TTL_SECONDS = 7 * 24 * 3600;
const USER_COLUMNS = 'id, email, name, role, can_publish, status, invite_expires_at, created_at, updated_at';

function view(row: Record<string, any>): ConsoleUserView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    can_publish: row.can_publish,
    status: row.status,
    invite_expires_at: row.invite_expires_at ? new Date(row.invite_expires_at).toISOString() : null,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** Only people (a console sign-in or an admin login token) have an account to act on. */
export function requirePerson(auth: AuthContext): NonNullable<AuthContext['user']> {
  if (!auth.user) throw forbidden('this route is for people signed in to the console or holding an admin login token, not for API keys');
  return auth.user;
}

async function tenantSummary(db: Database, tenantId: string) {
  const { rows } = await db.system.query('SELECT id, slug, name, environment FROM tenants WHERE id = $1', [tenantId]);
  return rows[0] as { id: string; slug: string; name: string; environment: string };
}

async function sessionView(db: Database, tenantId: string, userId: string, csrfToken: string | null, expiresAt: Date) {
  const { rows } = await db.system.query(`SELECT ${USER_COLUMNS} FROM admin_users WHERE tenant_id = $1 AND id = $2`, [tenantId, userId]);
  if (!rows[0]) throw unauthenticated('the console user no longer exists');
  const user = view(rows[0]);
  return {
    user,
    tenant: await tenantSummary(db, tenantId),
    permissions: permissionsOf({ role: user.role, canPublish: user.can_publish }),
    csrf_token: csrfToken,
    expires_at: expiresAt.toISOString(),
  };
}

export async function signIn(db: Database, signingKey: Uint8Array, throttle: SignInThrottle, email: string, password: string, ipAddress: string | null) {
  const user = await checkPassword(db, throttle, email, password, ipAddress);
  const { token, hash } = newConsoleToken(user.tenantId);
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + CONSOLE_SESSION_TTL_SECONDS * 1000);
  await db.system.query(
    `INSERT INTO console_sessions (tenant_id, id, user_id, token_hash, created_at, last_seen_at, expires_at, ip_address)
     VALUES ($1, $2, $3, $4, $5, $5, $6, $7)`,
    [user.tenantId, uuid(), user.id, hash, now, expiresAt, ipAddress],
  );
  return { cookie: token, body: await sessionView(db, user.tenantId, user.id, csrfTokenFor(signingKey, hash), expiresAt) };
}

export async function currentSession(db: Database, signingKey: Uint8Array, auth: AuthContext) {
  const person = requirePerson(auth);
  const session = auth.consoleSession;
  return sessionView(
    db,
    auth.tenantId,
    person.id,
    session ? csrfTokenFor(signingKey, session.tokenHash) : null,
    session?.expiresAt ?? new Date(clock.nowMs() + CONSOLE_SESSION_TTL_SECONDS * 1000),
  );
}

/**
 * Ends the user's admin login tokens: bumps their token version (the tokens
 * carry the version they were issued under) and tells every process to drop
 * its cached look-up of the user. Review finding 8, issue 32.
 */
async function endTokens(tx: Tx, tenantId: string, userId: string): Promise<void> {
  await tx.query('UPDATE admin_users SET token_version = token_version + 1 WHERE tenant_id = $1 AND id = $2', [tenantId, userId]);
  await announceCredentialChange(tx, `user:${userId}`);
}

/** Signs out of the console: this sign-in ends, and so do the user's admin login tokens. */
export async function signOut(db: Database, authenticator: Authenticator, auth: AuthContext): Promise<void> {
  const person = requirePerson(auth);
  if (!auth.consoleSession) throw new AppError('invalid', 'NOT_A_CONSOLE_SESSION', 'only a console sign-in (cookie) can be signed out; an admin login token is ended with POST /api/v1/auth/logout');
  const session = auth.consoleSession;
  await db.tenant(auth.tenantId, async (tx) => {
    await tx.query('UPDATE console_sessions SET revoked_at = $3 WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL', [auth.tenantId, session.id, clock.now()]);
    await endTokens(tx, auth.tenantId, person.id);
  });
  authenticator.forgetCredentials();
}

/**
 * Logs out an admin login token (POST /auth/logout): every token of the user
 * ends, this one included. Console sign-ins are separate credentials and go on.
 */
export async function logout(db: Database, authenticator: Authenticator, auth: AuthContext): Promise<void> {
  const person = requirePerson(auth);
  if (auth.kind !== 'jwt') throw unauthenticated('this route needs an admin login token (Authorization: Bearer <jwt>); a console sign-in ends with DELETE /api/v1/console/session');
  await db.tenant(auth.tenantId, (tx) => endTokens(tx, auth.tenantId, person.id));
  authenticator.forgetCredentials();
}

/** Changes the password: the user's other console sign-ins and every admin login token end (this console sign-in goes on). */
export async function changePassword(db: Database, authenticator: Authenticator, auth: AuthContext, currentPassword: string, newPassword: string): Promise<void> {
  const person = requirePerson(auth);
  const { rows } = await db.system.query('SELECT password_hash FROM admin_users WHERE tenant_id = $1 AND id = $2', [auth.tenantId, person.id]);
  const ok = rows[0]?.password_hash ? await argonVerify(rows[0].password_hash, currentPassword).catch(() => false) : false;
  if (!ok) throw new AppError('invalid', 'PASSWORD_WRONG', 'current_password is wrong');
  if (currentPassword === newPassword) throw new AppError('invalid', 'PASSWORD_UNCHANGED', 'new_password must differ from the current one');
  const passwordHash = await argonHash(newPassword);
  await db.tenant(auth.tenantId, async (tx) => {
    const now = clock.now();
    await tx.query('UPDATE admin_users SET password_hash = $3, password_changed_at = $4, updated_at = $4 WHERE tenant_id = $1 AND id = $2', [
      auth.tenantId,
      person.id,
      passwordHash,
      now,
    ]);
    // Every other sign-in of this user ends; this one goes on.
    await tx.query('UPDATE console_sessions SET revoked_at = $4 WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL AND id IS DISTINCT FROM $3', [
      auth.tenantId,
      person.id,
      auth.consoleSession?.id ?? null,
      now,
    ]);
    await endTokens(tx, auth.tenantId, person.id);
  });
  authenticator.forgetCredentials();
}

// ---- users -------------------------------------------------------------------

export async function listUsers(db: Database, tenantId: string, query: { limit?: number; cursor?: string }) {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { email: 'text', id: 'uuid' });
  const rows = await db.tenant(tenantId, async (tx) => {
    const { rows: found } = await tx.query(
      `SELECT ${USER_COLUMNS} FROM admin_users WHERE tenant_id = $1 AND ($2::text IS NULL OR (lower(email), id) > (lower($2), $3::uuid))
       ORDER BY lower(email), id LIMIT $4`,
      [tenantId, after?.email ?? null, after?.id ?? null, limit + 1],
    );
    return found;
  });
  const page = rows.slice(0, limit).map(view);
  const last = page[page.length - 1];
  return { users: page, next_cursor: rows.length > limit && last ? encodeCursor({ email: last.email, id: last.id }) : null };
}

export async function readUser(db: Database, tenantId: string, id: string): Promise<ConsoleUserView> {
  const rows = await db.tenant(tenantId, async (tx) => (await tx.query(`SELECT ${USER_COLUMNS} FROM admin_users WHERE tenant_id = $1 AND id = $2`, [tenantId, id])).rows);
  if (!rows[0]) throw notFound('console user');
  return view(rows[0]);
}

export async function inviteUser(
  db: Database,
  tenantId: string,
  inviterId: string | null,
  input: { email: string; role: Role; can_publish?: boolean; name?: string },
  baseUrl: string,
) {
  const secret = randomToken(24);
  const token = `${tenantId}.${secret}`;
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + INVITE_TTL_SECONDS * 1000);
  const row = await db.tenant(tenantId, async (tx) => {
    const taken = await tx.query('SELECT 1 FROM admin_users WHERE lower(email) = lower($1)', [input.email]);
    if (taken.rowCount) throw new AppError('conflict', 'USER_EMAIL_TAKEN', `a console user with the email "${input.email}" already exists`);
    // The email is unique across tenants (sign-in names no tenant): the owner's tenant cannot see another's user, so the index says it.
    try {
      const { rows } = await tx.query(
        `INSERT INTO admin_users (tenant_id, id, email, password_hash, role, can_publish, name, status, invite_token_hash, invite_expires_at, invited_by, created_at, updated_at)
         VALUES ($1, $2, $3, NULL, $4, $5, $6, 'invited', $7, $8, $9, $10, $10) RETURNING ${USER_COLUMNS}`,
        [tenantId, uuid(), input.email, input.role, input.can_publish ?? input.role === 'owner', input.name ?? null, sha256Hex(token), expiresAt, inviterId, now],
      );
      return rows[0];
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw new AppError('conflict', 'USER_EMAIL_TAKEN', `a console user with the email "${input.email}" already exists`);
      throw error;
    }
  });
  return { user: view(row), invite_url: `${baseUrl}/console/accept-invite#token=${encodeURIComponent(token)}` };
}

export async function acceptInvitation(db: Database, input: { token: string; password: string; name?: string }) {
  const match = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]+)$/.exec(input.token);
  const refused = () => new AppError('invalid', 'INVITATION_INVALID', 'the invitation is not valid, was already used or has expired; ask an owner for a new one');
  if (!match) throw refused();
  const tenantId = match[1];
  const passwordHash = await argonHash(input.password);
  const now = clock.now();
  const { rows } = await db.system.query(
    `UPDATE admin_users SET status = 'active', password_hash = $3, invite_token_hash = NULL, invite_expires_at = NULL,
            name = coalesce($4, name), password_changed_at = $5, updated_at = $5
     WHERE tenant_id = $1 AND invite_token_hash = $2 AND status = 'invited' AND invite_expires_at > $5
     RETURNING ${USER_COLUMNS}`,
    [tenantId, sha256Hex(input.token), passwordHash, input.name ?? null, now],
  );
  if (!rows[0]) throw refused();
  return { user: view(rows[0]) };
}

/**
 * Locks the user a change is about and, when the change may take an owner
 * away, the tenant's active owners too, in one statement and in id order; the
 * user's row, or undefined. Two owners demoting each other at once would
 * otherwise each count the other as remaining and both commit, leaving none
 * (review finding 5, issue 32). With the owners locked, the second change
 * waits for the first, and its count (a later statement, so a later snapshot)
 * sees the first one's result. One statement in one order: a row that a
 * concurrent change has just demoted can stay locked although it no longer
 * matches, and a second statement locking the user on its own would then
 * wait on it out of order (a deadlock the test met).
 */
async function lockForChange(tx: Tx, tenantId: string, userId: string, withOwners: boolean): Promise<Record<string, any> | undefined> {
  const { rows } = await tx.query(
    `SELECT ${USER_COLUMNS} FROM admin_users
     WHERE tenant_id = $1 AND (id = $2 OR ($3 AND role = 'owner' AND status = 'active'))
     ORDER BY id FOR UPDATE`,
    [tenantId, userId, withOwners],
  );
  return rows.find((row) => row.id === userId);
}

/** The last active owner may not be demoted, disabled or removed: someone must be able to manage the tenant. Runs after lockForChange with the owners. */
async function assertOwnerRemains(tx: Tx, tenantId: string, userId: string): Promise<void> {
  const { rows } = await tx.query(
    `SELECT count(*)::int AS owners FROM admin_users WHERE tenant_id = $1 AND role = 'owner' AND status = 'active' AND id <> $2`,
    [tenantId, userId],
  );
  if (rows[0].owners === 0) throw new AppError('conflict', 'LAST_OWNER', 'the tenant needs at least one active owner; make another user an owner first');
}

export async function updateUser(
  db: Database,
  authenticator: Authenticator,
  tenantId: string,
  id: string,
  changes: { role?: Role; can_publish?: boolean; name?: string; status?: 'active' | 'disabled' },
) {
  const row = await db.tenant(tenantId, async (tx) => {
    const user = await lockForChange(tx, tenantId, id, changes.role !== undefined || changes.status !== undefined);
    if (!user) throw notFound('console user');
    if (changes.status === 'active' && user.status === 'invited') {
      throw new AppError('conflict', 'USER_INVITED', 'an invited user becomes active by accepting the invitation');
    }
    const losesOwner = user.role === 'owner' && user.status === 'active' && ((changes.role && changes.role !== 'owner') || changes.status === 'disabled');
    if (losesOwner) await assertOwnerRemains(tx, tenantId, id);
    // A new role or a disable ends the user's admin login tokens (their role and status are read live anyway; a new token is cheap).
    const endsTokens = (changes.role !== undefined && changes.role !== user.role) || (changes.status === 'disabled' && user.status !== 'disabled');
    const now = clock.now();
    const { rows } = await tx.query(
      `UPDATE admin_users SET role = coalesce($3, role), can_publish = coalesce($4, can_publish), name = coalesce($5, name),
              status = coalesce($6, status), updated_at = $7, token_version = token_version + $8::int
       WHERE tenant_id = $1 AND id = $2 RETURNING ${USER_COLUMNS}`,
      [tenantId, id, changes.role ?? null, changes.can_publish ?? null, changes.name ?? null, changes.status ?? null, now, endsTokens ? 1 : 0],
    );
    if (changes.status === 'disabled') {
      await tx.query('UPDATE console_sessions SET revoked_at = $3 WHERE tenant_id = $1 AND user_id = $2 AND revoked_at IS NULL', [tenantId, id, now]);
    }
    await announceCredentialChange(tx, `user:${id}`);
    return rows[0];
  });
  authenticator.forgetCredentials();
  return view(row);
}

export async function deleteUser(db: Database, authenticator: Authenticator, tenantId: string, id: string): Promise<void> {
  await db.tenant(tenantId, async (tx) => {
    const user = await lockForChange(tx, tenantId, id, true);
    if (!user) throw notFound('console user');
    if (user.role === 'owner' && user.status === 'active') await assertOwnerRemains(tx, tenantId, id);
    await tx.query('DELETE FROM admin_users WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    await announceCredentialChange(tx, `user:${id}`);
  });
  authenticator.forgetCredentials();
}

// ---- the audit log -------------------------------------------------------------

export async function readAuditLog(
  db: Database,
  tenantId: string,
  query: { resource_type?: string; resource_id?: string; actor_id?: string; from?: string; to?: string; limit?: number; cursor?: string },
) {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { at: 'timestamp', id: 'digits' });
  const rows = await db.tenant(tenantId, async (tx) => {
    const { rows: found } = await tx.query(
      `SELECT id::text, occurred_at, actor_type, actor_id, actor_label, action, method, route, resource_type, resource_id, status, before, after, details, request_id
       FROM audit_log
       WHERE tenant_id = $1
         AND ($2::text IS NULL OR resource_type = $2) AND ($3::text IS NULL OR resource_id = $3) AND ($4::text IS NULL OR actor_id = $4)
         AND ($5::timestamptz IS NULL OR occurred_at >= $5) AND ($6::timestamptz IS NULL OR occurred_at < $6)
         AND ($7::timestamptz IS NULL OR (occurred_at, id) < ($7, $8::bigint))
       ORDER BY occurred_at DESC, id DESC LIMIT $9`,
      [tenantId, query.resource_type ?? null, query.resource_id ?? null, query.actor_id ?? null, query.from ?? null, query.to ?? null, after?.at ?? null, after?.id ?? null, limit + 1],
    );
    return found;
  });
  const page = rows.slice(0, limit).map((row) => ({ ...row, occurred_at: new Date(row.occurred_at).toISOString() }));
  const last = page[page.length - 1];
  return { entries: page, next_cursor: rows.length > limit && last ? encodeCursor({ at: last.occurred_at, id: last.id }) : null };
}
