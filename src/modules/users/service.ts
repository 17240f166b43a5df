import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import type { Database, Tx } from '../../platform/db.js';
import { announceCredentialChange, type AuthContext, type Authenticator } from '../../platform/auth.js';
import { AppError, fieldError, forbidden, invalid, notFound, unauthenticated } from '../../platform/errors.js';
import { isUuid, randomToken, sha256Hex, uuid } from '../../platform/ids.js';
import { clock } from '../../platform/clock.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { CONSOLE_SESSION_TTL_SECONDS, checkPassword, csrfTokenFor, newConsoleToken, type SignInThrottle } from '../../platform/console-auth.js';
import { permissionsOf, type Role } from '../../platform/permissions.js';
import type { ConsoleUserView } from './schemas.js';
import * as store from './store.js';

/**
 * Console users (the tenant's admin users with a role), their sign-ins and
 * invitations, and the audit log's read. Every change to a user announces a
 * credential change, so that each process drops what it cached of the user's
 * role at once.
 *
 * Every statement runs through the store on the tenant pool (`db.tenant`), so
 * row-level security holds it to the tenant. The one look-up made before a
 * tenant is known, the sign-in by email, is checkPassword's in
 * platform/console-auth.ts (README.md beside this file).
 */
const INVITE_TTL_SECONDS = 7 * 24 * 3600;

function view(row: store.UserRow): ConsoleUserView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role as Role,
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

async function sessionView(tx: Tx, tenantId: string, userId: string, csrfToken: string | null, expiresAt: Date) {
  const row = await store.readUser(tx, tenantId, userId);
  if (!row) throw unauthenticated('the console user no longer exists');
  const user = view(row);
  const tenant = await store.readTenantSummary(tx, tenantId);
  // A programmer's error, not an operating one: the user's row references its tenant.
  if (!tenant) throw new Error(`the tenant ${tenantId} of a console user is missing`);
  return {
    user,
    tenant,
    permissions: permissionsOf({ role: user.role, canPublish: user.can_publish }),
    csrf_token: csrfToken,
    expires_at: expiresAt.toISOString(),
  };
}

export async function signIn(db: Database, signingKey: Uint8Array, throttle: SignInThrottle, email: string, password: string, ipAddress: string | null) {
  // The look-up by email runs on the owner pool, since no tenant is known before it (platform/console-auth.ts); it returns the tenant.
  const user = await checkPassword(db, throttle, email, password, ipAddress);
  const { token, hash } = newConsoleToken(user.tenantId);
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + CONSOLE_SESSION_TTL_SECONDS * 1000);
  const body = await db.tenant(user.tenantId, async (tx) => {
    await store.insertConsoleSession(tx, user.tenantId, { id: uuid(), userId: user.id, tokenHash: hash, expiresAt, ipAddress }, now);
    return sessionView(tx, user.tenantId, user.id, csrfTokenFor(signingKey, hash), expiresAt);
  });
  return { cookie: token, body };
}

export async function currentSession(db: Database, signingKey: Uint8Array, auth: AuthContext) {
  const person = requirePerson(auth);
  const session = auth.consoleSession;
  const csrfToken = session ? csrfTokenFor(signingKey, session.tokenHash) : null;
  const expiresAt = session?.expiresAt ?? new Date(clock.nowMs() + CONSOLE_SESSION_TTL_SECONDS * 1000);
  return db.tenant(auth.tenantId, (tx) => sessionView(tx, auth.tenantId, person.id, csrfToken, expiresAt));
}

/**
 * Ends the user's admin login tokens: bumps their token version (the tokens
 * carry the version they were issued under) and tells every process to drop
 * its cached look-up of the user. Review finding 8, issue 32.
 */
async function endTokens(tx: Tx, tenantId: string, userId: string): Promise<void> {
  await store.bumpTokenVersion(tx, tenantId, userId);
  await announceCredentialChange(tx, `user:${userId}`);
}

/** Signs out of the console: this sign-in ends, and so do the user's admin login tokens. */
export async function signOut(db: Database, authenticator: Authenticator, auth: AuthContext): Promise<void> {
  const person = requirePerson(auth);
  if (!auth.consoleSession) throw new AppError('invalid', 'NOT_A_CONSOLE_SESSION', 'only a console sign-in (cookie) can be signed out; an admin login token is ended with POST /api/v1/auth/logout');
  const session = auth.consoleSession;
  await db.tenant(auth.tenantId, async (tx) => {
    await store.revokeConsoleSession(tx, auth.tenantId, session.id, clock.now());
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
  const currentHash = await db.tenant(auth.tenantId, (tx) => store.readPasswordHash(tx, auth.tenantId, person.id));
  const ok = currentHash ? await argonVerify(currentHash, currentPassword).catch(() => false) : false;
  if (!ok) throw new AppError('invalid', 'PASSWORD_WRONG', 'current_password is wrong');
  if (currentPassword === newPassword) throw new AppError('invalid', 'PASSWORD_UNCHANGED', 'new_password must differ from the current one');
  const passwordHash = await argonHash(newPassword);
  await db.tenant(auth.tenantId, async (tx) => {
    const now = clock.now();
    await store.setPassword(tx, auth.tenantId, person.id, passwordHash, now);
    // Every other sign-in of this user ends; this one goes on.
    await store.revokeConsoleSessionsOfUser(tx, auth.tenantId, person.id, auth.consoleSession?.id ?? null, now);
    await endTokens(tx, auth.tenantId, person.id);
  });
  authenticator.forgetCredentials();
}

// ---- users -------------------------------------------------------------------

export async function listUsers(db: Database, tenantId: string, query: { limit?: number; cursor?: string }) {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { email: 'text', id: 'uuid' });
  const rows = await db.tenant(tenantId, (tx) => store.listUsers(tx, tenantId, after, limit + 1));
  const page = rows.slice(0, limit).map(view);
  const last = page[page.length - 1];
  return { users: page, next_cursor: rows.length > limit && last ? encodeCursor({ email: last.email, id: last.id }) : null };
}

export async function readUser(db: Database, tenantId: string, id: string): Promise<ConsoleUserView> {
  const row = await db.tenant(tenantId, (tx) => store.readUser(tx, tenantId, id));
  if (!row) throw notFound('console user');
  return view(row);
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
    if (await store.emailTaken(tx, tenantId, input.email)) throw new AppError('conflict', 'USER_EMAIL_TAKEN', `a console user with the email "${input.email}" already exists`);
    // The email is unique across tenants (sign-in names no tenant): the owner's tenant cannot see another's user, so the index says it.
    try {
      return await store.insertInvitedUser(
        tx,
        tenantId,
        {
          id: uuid(),
          email: input.email,
          role: input.role,
          canPublish: input.can_publish ?? input.role === 'owner',
          name: input.name ?? null,
          inviteTokenHash: sha256Hex(token),
          inviteExpiresAt: expiresAt,
          invitedBy: inviterId,
        },
        now,
      );
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw new AppError('conflict', 'USER_EMAIL_TAKEN', `a console user with the email "${input.email}" already exists`);
      throw error;
    }
  });
  return { user: view(row), invite_url: `${baseUrl}/console/accept-invite#token=${encodeURIComponent(token)}` };
}

/**
 * Accepts an invitation by its token, `<tenant id>.<secret>`. The tenant comes
 * from the token itself, so no look-up across tenants is needed: the tenant pool
 * runs the update under the tenant the token names, and the token's hash (which
 * covers that tenant id) decides whether it matches. A token naming another
 * tenant finds nothing there.
 */
export async function acceptInvitation(db: Database, input: { token: string; password: string; name?: string }) {
  const match = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]+)$/.exec(input.token);
  const refused = () => new AppError('invalid', 'INVITATION_INVALID', 'the invitation is not valid, was already used or has expired; ask an owner for a new one');
  if (!match || !isUuid(match[1])) throw refused();
  const tenantId = match[1];
  const passwordHash = await argonHash(input.password);
  const now = clock.now();
  const row = await db.tenant(tenantId, (tx) =>
    store.acceptInvitation(tx, tenantId, { inviteTokenHash: sha256Hex(input.token), passwordHash, name: input.name ?? null }, now),
  );
  if (!row) throw refused();
  return { user: view(row) };
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
async function lockForChange(tx: Tx, tenantId: string, userId: string, withOwners: boolean): Promise<store.UserRow | undefined> {
  const rows = await store.lockUserAndOwners(tx, tenantId, userId, withOwners);
  return rows.find((row) => row.id === userId);
}

/** The last active owner may not be demoted, disabled or removed: someone must be able to manage the tenant. Runs after lockForChange with the owners. */
async function assertOwnerRemains(tx: Tx, tenantId: string, userId: string): Promise<void> {
  if ((await store.countOtherActiveOwners(tx, tenantId, userId)) === 0) throw new AppError('conflict', 'LAST_OWNER', 'the tenant needs at least one active owner; make another user an owner first');
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
    const updated = await store.updateUser(
      tx,
      tenantId,
      id,
      { role: changes.role ?? null, canPublish: changes.can_publish ?? null, name: changes.name ?? null, status: changes.status ?? null },
      endsTokens,
      now,
    );
    // The row is locked above, so the update finds it; anything else is a programmer's error.
    if (!updated) throw new Error(`console user ${id}, locked in this transaction, was not updated`);
    if (changes.status === 'disabled') await store.revokeConsoleSessionsOfUser(tx, tenantId, id, null, now);
    await announceCredentialChange(tx, `user:${id}`);
    return updated;
  });
  authenticator.forgetCredentials();
  return view(row);
}

export async function deleteUser(db: Database, authenticator: Authenticator, tenantId: string, id: string): Promise<void> {
  await db.tenant(tenantId, async (tx) => {
    const user = await lockForChange(tx, tenantId, id, true);
    if (!user) throw notFound('console user');
    if (user.role === 'owner' && user.status === 'active') await assertOwnerRemains(tx, tenantId, id);
    await store.deleteUser(tx, tenantId, id);
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
  if (query.from && query.to && Date.parse(query.from) >= Date.parse(query.to)) {
    throw invalid('"from" must be before "to"', 'VALIDATION_INVALID_VALUE', { errors: [fieldError('/to', 'range', 'must be after "from"', { in: 'query' })] });
  }
  const after = decodeCursor(query.cursor, { at: 'timestamp', id: 'digits' });
  const filter: store.AuditQuery = {
    resourceType: query.resource_type ?? null,
    resourceId: query.resource_id ?? null,
    actorId: query.actor_id ?? null,
    from: query.from ?? null,
    to: query.to ?? null,
  };
  const rows = await db.tenant(tenantId, (tx) => store.readAuditLog(tx, tenantId, filter, after, limit + 1));
  const page = rows.slice(0, limit).map((row) => ({ ...row, occurred_at: new Date(row.occurred_at).toISOString() }));
  const last = page[page.length - 1];
  return { entries: page, next_cursor: rows.length > limit && last ? encodeCursor({ at: last.occurred_at, id: last.id }) : null };
}
