import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import type { Database } from './db.js';
import { clock } from './clock.js';
import { isUuid, randomToken, sha256Hex } from './ids.js';
import { AppError, unauthenticated } from './errors.js';
import type { Plan } from './plans.js';
import type { ConsoleUser, Role } from './permissions.js';
import { SIGN_IN_LOCKOUT_MAX_SECONDS, type SignInAttempt, type SignInRefusal } from './rate-limit.js';

/**
 * People: console users (the tenant's admin users with a role) signed in with
 * a cookie, or holding an admin login token. The cookie `lk_console` carries
 * `<tenant id>.<secret>`; the database keeps its SHA-256. It is HttpOnly and
 * SameSite=Strict, and every request that changes something must also carry
 * `X-CSRF-Token`, an HMAC of the session under the service's signing key that
 * a page of another origin cannot read (double protection: the cookie does not
 * travel cross-site, and the token cannot be forged without the key).
 */
export const CONSOLE_COOKIE = 'lk_console';
/** A sign-in lasts at most this long, however active. */
export const CONSOLE_SESSION_TTL_SECONDS = 12 * 3600;
/** A sign-in unused this long has ended. */
export const CONSOLE_IDLE_TIMEOUT_SECONDS = 2 * 3600;
/** last_seen_at is written at most once a minute per session. */
const LAST_SEEN_RESOLUTION_MS = 60_000;
const COOKIE_PATTERN = /^([0-9a-f-]{36})\.([A-Za-z0-9_-]{43})$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const OWNER_SCOPES: ReadonlySet<string> = new Set(['admin', 'gamify:admin', 'read:pii']);
/** Other roles pass the admin routes' scope check and are then held to their role; personal data stays masked. */
export const STAFF_SCOPES: ReadonlySet<string> = new Set(['admin', 'gamify:admin']);

export function scopesOfRole(role: Role): ReadonlySet<string> {
  return role === 'owner' ? OWNER_SCOPES : STAFF_SCOPES;
}

export interface UserRecord extends ConsoleUser {
  tenantId: string;
  name: string | null;
  status: 'invited' | 'active' | 'disabled';
  /** Admin login tokens carry the version they were issued under; a bump ends them (migration 1330). */
  tokenVersion: number;
  plan: Plan;
  tenantRequestsPerMinute: number | null;
}

export interface ConsoleSessionRecord {
  id: string;
  tokenHash: string;
  expiresAt: Date;
  user: UserRecord;
}

const USER_COLUMNS = `u.tenant_id, u.id, u.email, u.name, u.role, u.can_publish, u.status, u.token_version, t.plan, t.rate_limit_per_minute`;

function toUser(row: Record<string, any>): UserRecord {
  return {
    tenantId: row.tenant_id,
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    canPublish: row.can_publish,
    status: row.status,
    tokenVersion: row.token_version,
    plan: row.plan,
    tenantRequestsPerMinute: row.rate_limit_per_minute,
  };
}

/** The user named by an admin login token (any status), or null. */
export async function findUser(db: Database, tenantId: string, userId: string): Promise<UserRecord | null> {
  if (!isUuid(userId)) return null;
  const { rows } = await db.system.query(
    `SELECT ${USER_COLUMNS} FROM admin_users u JOIN tenants t ON t.id = u.tenant_id WHERE u.tenant_id = $1 AND u.id = $2`,
    [tenantId, userId],
  );
  return rows[0] ? toUser(rows[0]) : null;
}

/** The one answer to every refused sign-in, whatever the reason. */
export const SIGN_IN_REFUSED = 'email or password is wrong';

// A hash of no real password, so that an unknown email costs as much time as a wrong password.
let dummyPasswordHash: Promise<string> | null = null;

export interface PasswordHolder {
  tenantId: string;
  id: string;
  tokenVersion: number;
}

/** What checkPassword needs of the rate limits (platform/rate-limit.ts, RateLimits). */
export interface SignInThrottle {
  signInAttempt(email: string, address: string | null): Promise<SignInAttempt | SignInRefusal>;
}

/**
 * A person's email and password, checked for both ways in: the console
 * sign-in (cookie) and the admin login token. An unknown email, a wrong
 * password, a disabled user and an invited one (no password yet) get the same
 * 401 after the same argon2 work, so the answer says nothing about the account
 * (review finding 8, issue 32: a disabled user used to get a token). Each
 * attempt passes the sign-in throttle first (review finding 9): failures are
 * counted per account and per address, and a locked-out one is answered 429
 * with Retry-After before the password is looked at.
 */
export async function checkPassword(db: Database, throttle: SignInThrottle, email: string, password: string, address: string | null): Promise<PasswordHolder> {
  const attempt = await throttle.signInAttempt(email, address);
  if ('retryAfterSeconds' in attempt) throw signInLockedOut(attempt);
  // The attempt is counted as a failure already: should the look-up fail, it stays counted (the safe side).
  const { rows } = await db.system.query('SELECT tenant_id, id, password_hash, status, token_version FROM admin_users WHERE lower(email) = lower($1)', [email]);
  const user = rows[0];
  dummyPasswordHash ??= argonHash(randomToken(18));
  const passwordOk = await argonVerify(user?.password_hash ?? (await dummyPasswordHash), password).catch(() => false);
  if (!user || !passwordOk || user.status !== 'active') {
    await attempt.failed();
    throw unauthenticated(SIGN_IN_REFUSED);
  }
  await attempt.succeeded();
  return { tenantId: user.tenant_id, id: user.id, tokenVersion: user.token_version };
}

function signInLockedOut(refusal: SignInRefusal): AppError {
  const retryAt = new Date(Date.now() + refusal.retryAfterSeconds * 1000).toISOString();
  const what = refusal.scope === 'account' ? 'with this email' : 'from this address';
  return new AppError(
    'rate_limited',
    'RATE_LIMITED',
    `too many failed sign-ins ${what}; try again in ${refusal.retryAfterSeconds} s (at ${retryAt}); each further failure doubles the wait, up to ${SIGN_IN_LOCKOUT_MAX_SECONDS / 60} minutes`,
    {},
    { 'Retry-After': String(refusal.retryAfterSeconds) },
  );
}

export function newConsoleToken(tenantId: string): { token: string; hash: string } {
  const token = `${tenantId}.${randomBytes(32).toString('base64url')}`;
  return { token, hash: sha256Hex(token) };
}

export function csrfTokenFor(signingKey: Uint8Array, tokenHash: string): string {
  return createHmac('sha256', signingKey).update(`csrf:${tokenHash}`).digest('base64url');
}

/** The live session a cookie names, or a 401 that says why not. Touches last_seen_at (at most once a minute). */
export async function consoleSessionFromCookie(db: Database, cookie: string): Promise<ConsoleSessionRecord> {
  const match = COOKIE_PATTERN.exec(cookie);
  if (!match || !isUuid(match[1])) throw unauthenticated('the console session is not valid; sign in again');
  const hash = sha256Hex(cookie);
  const { rows } = await db.system.query(
    `SELECT s.id AS session_id, s.expires_at, s.last_seen_at, s.revoked_at, ${USER_COLUMNS}
     FROM console_sessions s JOIN admin_users u ON u.tenant_id = s.tenant_id AND u.id = s.user_id JOIN tenants t ON t.id = s.tenant_id
     WHERE s.tenant_id = $1 AND s.token_hash = $2`,
    [match[1], hash],
  );
  const row = rows[0];
  if (!row || row.revoked_at !== null) throw unauthenticated('the console session has ended; sign in again');
  const now = clock.nowMs();
  const lastSeen = new Date(row.last_seen_at).getTime();
  if (new Date(row.expires_at).getTime() <= now || lastSeen + CONSOLE_IDLE_TIMEOUT_SECONDS * 1000 <= now) {
    throw unauthenticated('the console session has expired; sign in again');
  }
  const user = toUser(row);
  if (user.status !== 'active') throw unauthenticated('this console user is disabled');
  if (now - lastSeen >= LAST_SEEN_RESOLUTION_MS) {
    await db.system.query('UPDATE console_sessions SET last_seen_at = $3 WHERE tenant_id = $1 AND id = $2', [user.tenantId, row.session_id, new Date(now)]);
  }
  return { id: row.session_id, tokenHash: hash, expiresAt: new Date(row.expires_at), user };
}

/** Requests that change something with a cookie session must carry its CSRF token. */
export function checkCsrf(method: string, signingKey: Uint8Array, tokenHash: string, presented: unknown): void {
  if (SAFE_METHODS.has(method)) return;
  const expected = Buffer.from(csrfTokenFor(signingKey, tokenHash));
  const given = Buffer.from(typeof presented === 'string' ? presented : '');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new AppError('forbidden', 'AUTH_CSRF_INVALID', 'this request needs the X-CSRF-Token header of the console session (from POST or GET /api/v1/console/session)');
  }
}
