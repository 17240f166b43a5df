import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Database } from './db.js';
import { sha256Hex, isUuid } from './ids.js';
import { clock } from './clock.js';
import { AppError, forbidden, unauthenticated } from './errors.js';
import type { Plan } from './plans.js';
import type { ConsoleUser } from './permissions.js';
import { consoleSessionFromCookie, findUser, scopesOfRole, type UserRecord } from './console-auth.js';
import { SessionLookups } from './session-lookups.js';

/**
 * Credentials and what they may do.
 *
 * - API keys (`X-API-Key: lk_live_…`, or `Authorization: Bearer lk_live_…`
 *   with an optional `X-Service-Tenant` that must name the key's tenant).
 * - Admin JWTs from `POST /api/v1/auth/login` (`Authorization: Bearer <jwt>`).
 * - Participant sessions (`session_id` in the body or query), issued to the
 *   tenant's server by `POST /api/v1/sessions`.
 */
export const SCOPES = ['admin', 'gamify:admin', 'read:pii', 'ingest'] as const;
export type Scope = (typeof SCOPES)[number];
export const ADMIN_SCOPES: readonly Scope[] = ['admin', 'gamify:admin'];

export interface AuthContext {
  /** `console`: a person signed in to the console (cookie); `jwt`: a person with an admin login token. */
  kind: 'key' | 'jwt' | 'session' | 'console';
  tenantId: string;
  scopes: ReadonlySet<string>;
  /** Key id, admin user id, or session id: who acts, for logs and audit rows. */
  actorId: string;
  plan: Plan;
  tenantRequestsPerMinute: number | null;
  keyRequestsPerMinute: number | null;
  participantId?: string;
  engagementId?: string;
  /** The person behind a `jwt` or `console` credential, held to their role (platform/permissions.ts). */
  user?: ConsoleUser;
  /** The console sign-in (`console` credentials): its id and the hash its CSRF token derives from. */
  consoleSession?: { id: string; tokenHash: string; expiresAt: Date };
  /** The caller's address, set by the app for each request (audit rows such as the personal-data access log). */
  ipAddress?: string;
}

export const KEY_PATTERN = /^lk_(live|test)_[0-9a-f]{32}$/;

export function generateApiKey(environment: 'live' | 'test'): { key: string; prefix: string; hash: string } {
  const key = `lk_${environment}_${randomBytes(16).toString('hex')}`;
  return { key, prefix: key.slice(0, 16), hash: sha256Hex(key) };
}

interface KeyRecord {
  tenantId: string;
  id: string;
  /** Built once per look-up and shared by the requests it serves (read-only). */
  scopes: ReadonlySet<string>;
  keyRequestsPerMinute: number | null;
  revoked: boolean;
  plan: Plan;
  tenantRequestsPerMinute: number | null;
}

/** A tenant that owns an engagement id, and whether that engagement is published (public routes). */
export interface EngagementOwner {
  tenantId: string;
  published: boolean;
}

interface SessionRecord {
  tenantId: string;
  id: string;
  participantId: string;
  engagementId: string;
  expiresAtMs: number;
  revoked: boolean;
  plan: Plan;
  tenantRequestsPerMinute: number | null;
}

const KEY_CACHE_TTL_MS = 10_000;
const KEY_CACHE_ENTRIES_MAX = 10_000;
export const CREDENTIAL_CHANGE_CHANNEL = 'credentials_changed';

/** From this age on, a cached look-up is read again in the background while it is still answered. */
const KEY_CACHE_REFRESH_AHEAD_MS = 0.8 * KEY_CACHE_TTL_MS;

/**
 * Look-ups kept KEY_CACHE_TTL_MS per process; emptied when full and on every
 * credential change. A crowd never reads one key many times at once: the
 * reads of a key share one load in flight, and a key still in use is read
 * again ahead of its expiry (from KEY_CACHE_REFRESH_AHEAD_MS) while its value
 * is still answered. Without both, every request that arrives while a popular
 * key's load runs starts a load of its own, as many as arrive while the
 * database answers the first (test/lookup-crowd.test.ts). A load started
 * before `clear` keeps nothing: a credential change is never undone by a
 * read that raced it.
 */
class LookupCache<T> {
  private readonly entries = new Map<string, { value: T; at: number }>();
  private readonly loading = new Map<string, Promise<T>>();
  private generation = 0;

  /** The cached value (a cached null included) when younger than the TTL; otherwise `load`'s, shared with every read of the key meanwhile. */
  async get(key: string, load: () => Promise<T>): Promise<T> {
    const entry = this.entries.get(key);
    const age = entry ? Date.now() - entry.at : Infinity;
    if (entry && age < KEY_CACHE_REFRESH_AHEAD_MS) return entry.value;
    const pending = this.loading.get(key) ?? this.startLoad(key, load);
    if (entry && age <= KEY_CACHE_TTL_MS) {
      // Read again in the background; a failure there leaves the entry to expire.
      pending.catch(() => undefined);
      return entry.value;
    }
    return pending;
  }

  private startLoad(key: string, load: () => Promise<T>): Promise<T> {
    const generation = this.generation;
    const pending = load().then((value) => {
      if (generation === this.generation) this.put(key, value);
      return value;
    });
    this.loading.set(key, pending);
    const forget = () => {
      if (this.loading.get(key) === pending) this.loading.delete(key);
    };
    pending.then(forget, forget);
    return pending;
  }

  /** Keeps a value this process just wrote (a session it issued), as a load of it would have read it. */
  remember(key: string, value: T): void {
    this.put(key, value);
  }

  private put(key: string, value: T): void {
    if (this.entries.size >= KEY_CACHE_ENTRIES_MAX) this.entries.clear();
    this.entries.set(key, { value, at: Date.now() });
  }

  clear(): void {
    this.generation += 1;
    this.entries.clear();
    this.loading.clear();
  }
}

/**
 * Announces, inside the transaction that changes them, that credentials
 * changed (a key revoked or edited, a participant and their sessions deleted):
 * on commit every process drops its cached look-ups.
 */
export async function announceCredentialChange(tx: { query: (sql: string, values: unknown[]) => Promise<unknown> }, what: string): Promise<void> {
  await tx.query(`SELECT pg_notify('${CREDENTIAL_CHANGE_CHANNEL}', $1)`, [what]);
}

/**
 * Key and session look-ups are cached for a few seconds. A change to a key
 * (revoke, new scopes, new limit) or the deletion of a participant drops the
 * cache in this process at once and in every other process through NOTIFY,
 * so a revoked key or an erased participant's session fails on the next
 * request. A session's expiry is checked on every use.
 */
export class Authenticator {
  private readonly keyCache = new LookupCache<KeyRecord | null>();
  private readonly sessionCache = new LookupCache<SessionRecord | null>();
  private readonly tenantCache = new LookupCache<{ plan: Plan; requestsPerMinute: number | null } | null>();
  private readonly engagementOwnerCache = new LookupCache<readonly EngagementOwner[]>();
  private readonly challengeOwnerCache = new LookupCache<readonly string[]>();
  private readonly userCache = new LookupCache<UserRecord | null>();
  private listener: pg.Client | null = null;
  private readonly sessionLookups: SessionLookups;

  constructor(
    private readonly db: Database,
    private readonly jwtKey: Uint8Array,
    private readonly jwtTtlSeconds: number,
  ) {
    this.sessionLookups = new SessionLookups(db.system);
  }

  async listenForKeyChanges(systemUrl: string): Promise<void> {
    const client = new pg.Client({ connectionString: systemUrl });
    client.on('error', () => undefined);
    await client.connect();
    client.on('notification', () => this.forgetCredentials());
    await client.query(`LISTEN ${CREDENTIAL_CHANGE_CHANNEL}`);
    this.listener = client;
  }

  forgetCredentials(): void {
    this.keyCache.clear();
    this.tenantCache.clear();
    this.sessionCache.clear();
    this.engagementOwnerCache.clear();
    this.challengeOwnerCache.clear();
    this.userCache.clear();
  }

  async close(): Promise<void> {
    await this.listener?.end().catch(() => undefined);
  }

  async fromApiKey(key: string): Promise<AuthContext> {
    if (!KEY_PATTERN.test(key)) throw unauthenticated('the API key is malformed');
    const hash = sha256Hex(key);
    const record = await this.keyCache.get(hash, async () => {
      const { rows } = await this.db.system.query('SELECT * FROM auth_find_api_key($1)', [hash]);
      const row = rows[0];
      const loaded: KeyRecord | null = row
        ? {
            tenantId: row.tenant_id,
            id: row.id,
            scopes: new Set<string>(row.scopes),
            keyRequestsPerMinute: row.rate_limit_per_minute,
            revoked: row.revoked_at !== null,
            plan: row.plan,
            tenantRequestsPerMinute: row.tenant_rate_limit_per_minute,
          }
        : null;
      if (loaded && !loaded.revoked) this.noteKeyUse(loaded);
      return loaded;
    });
    if (!record) throw unauthenticated('the API key is not valid');
    if (record.revoked) throw unauthenticated('the API key has been revoked');
    return {
      kind: 'key',
      tenantId: record.tenantId,
      scopes: record.scopes,
      actorId: record.id,
      plan: record.plan,
      tenantRequestsPerMinute: record.tenantRequestsPerMinute,
      keyRequestsPerMinute: record.keyRequestsPerMinute,
    };
  }

  /**
   * Records when a key was last used. It runs on cache misses only (at most
   * every KEY_CACHE_TTL_MS per key and process), outside the request's path,
   * so `last_used_at` is accurate to a few seconds and costs no round trip.
   */
  private noteKeyUse(record: KeyRecord): void {
    this.db.system
      .query('UPDATE api_keys SET last_used_at = now() WHERE tenant_id = $1 AND id = $2', [record.tenantId, record.id])
      .catch(() => undefined);
  }

  /** The plan and request limit of a tenant named by a public route (cached like keys). */
  async tenantLimits(tenantId: string): Promise<{ plan: Plan; requestsPerMinute: number | null } | null> {
    return this.tenantCache.get(tenantId, async () => {
      const { rows } = await this.db.system.query('SELECT plan, rate_limit_per_minute FROM auth_find_tenant($1)', [tenantId]);
      return rows[0] ? { plan: rows[0].plan as Plan, requestsPerMinute: rows[0].rate_limit_per_minute as number | null } : null;
    });
  }

  /**
   * The tenants that own an engagement id, for public routes that name no
   * other tenant. Engagement ids are UUIDs the service generates, so there is
   * one owner (none for an unknown id; two only for rows written by hand).
   * Cached like keys; publication and unpublication announce a credential
   * change, so `published` is never staler than that notice.
   */
  async engagementOwners(engagementId: string): Promise<readonly EngagementOwner[]> {
    if (!isUuid(engagementId)) return NO_OWNERS;
    const id = engagementId.toLowerCase();
    return this.engagementOwnerCache.get(id, async () => {
      const { rows } = await this.db.system.query('SELECT tenant_id, published FROM public_find_engagement_tenants($1)', [id]);
      return rows.map((row) => ({ tenantId: row.tenant_id as string, published: row.published as boolean }));
    });
  }

  /** The tenants that own a challenge id (generated like engagement ids); a challenge never changes tenant. */
  async challengeOwners(challengeId: string): Promise<readonly string[]> {
    if (!isUuid(challengeId)) return NO_OWNERS;
    const id = challengeId.toLowerCase();
    return this.challengeOwnerCache.get(id, async () => {
      const { rows } = await this.db.system.query('SELECT tenant_id FROM public_find_challenge_tenants($1)', [id]);
      return rows.map((row) => row.tenant_id as string);
    });
  }

  /**
   * An admin login token for the user, carrying the user's token version
   * (`ver`): a password change, a sign-out, a logout, a role change or a
   * disable bumps the version and so ends every token issued before it.
   */
  async issueJwt(tenantId: string, userId: string, tokenVersion: number): Promise<{ token: string; expiresAt: Date }> {
    const issuedAt = Math.floor(clock.nowMs() / 1000);
    const expiresAt = new Date((issuedAt + this.jwtTtlSeconds) * 1000);
    const token = await new SignJWT({ tid: tenantId, ver: tokenVersion, scopes: ['admin', 'gamify:admin', 'read:pii'] })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userId)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + this.jwtTtlSeconds)
      .setIssuer('loyalty-service')
      .setAudience('loyalty-admin')
      .sign(this.jwtKey);
    return { token, expiresAt };
  }

  async fromJwt(token: string): Promise<AuthContext> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.jwtKey, {
        issuer: 'loyalty-service',
        audience: 'loyalty-admin',
        algorithms: ['HS256'],
        currentDate: clock.now(),
      }));
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw unauthenticated('the admin token has expired; log in again');
      throw unauthenticated('the admin token is not valid');
    }
    const tenantId = payload.tid;
    // A token issued before token versions existed (migration 1330) carries none: version 0, ended by the user's first bump.
    const version = payload.ver ?? 0;
    if (typeof tenantId !== 'string' || !isUuid(tenantId) || typeof payload.sub !== 'string' || !Number.isInteger(version)) {
      throw unauthenticated('the admin token is not valid');
    }
    // The person's role, status and token version are read (cached like keys, dropped on every credential change), not taken
    // from the token: a demotion, a disabled user or an ended token takes effect at once.
    const userId = payload.sub;
    const user = await this.userCache.get(`${tenantId}/${userId}`, () => findUser(this.db, tenantId, userId));
    if (!user) throw unauthenticated('the admin token names a user or tenant that no longer exists');
    if (user.status !== 'active') throw unauthenticated('this console user is disabled');
    if (version !== user.tokenVersion) {
      throw unauthenticated('the admin token was ended by a password change, a sign-out, a logout or a change to the user since it was issued; log in again');
    }
    return {
      kind: 'jwt',
      tenantId,
      scopes: scopesOfRole(user.role),
      actorId: payload.sub,
      plan: user.plan,
      tenantRequestsPerMinute: user.tenantRequestsPerMinute,
      keyRequestsPerMinute: null,
      user: { id: user.id, role: user.role, canPublish: user.canPublish, email: user.email },
    };
  }

  /** A person signed in to the console: the `lk_console` cookie. */
  async fromConsoleCookie(cookie: string): Promise<AuthContext> {
    const session = await consoleSessionFromCookie(this.db, cookie);
    const { user } = session;
    return {
      kind: 'console',
      tenantId: user.tenantId,
      scopes: scopesOfRole(user.role),
      actorId: user.id,
      plan: user.plan,
      tenantRequestsPerMinute: user.tenantRequestsPerMinute,
      keyRequestsPerMinute: null,
      user: { id: user.id, role: user.role, canPublish: user.canPublish, email: user.email },
      consoleSession: { id: session.id, tokenHash: session.tokenHash, expiresAt: session.expiresAt },
    };
  }

  async fromSession(sessionToken: string, engagementId: string | undefined): Promise<AuthContext> {
    if (typeof sessionToken !== 'string' || !/^ses_[A-Za-z0-9_-]{32}$/.test(sessionToken)) {
      throw unauthenticated('session_id is not a valid session');
    }
    const record = await this.sessionRecord(sha256Hex(sessionToken));
    if (!record || record.revoked) throw unauthenticated('session_id is not a valid session');
    if (record.expiresAtMs <= clock.nowMs()) throw unauthenticated('the session has expired; ask the tenant server for a new one');
    if (engagementId !== undefined && engagementId !== record.engagementId) {
      throw new AppError('forbidden', 'SESSION_ENGAGEMENT_MISMATCH', 'the session belongs to another engagement');
    }
    return {
      kind: 'session',
      tenantId: record.tenantId,
      scopes: NO_SCOPES,
      actorId: record.id,
      plan: record.plan,
      tenantRequestsPerMinute: record.tenantRequestsPerMinute,
      keyRequestsPerMinute: null,
      participantId: record.participantId,
      engagementId: record.engagementId,
    };
  }

  /**
   * Remembers a session this process has just issued (after its commit), so
   * that the participant's first request needs no look-up: in a flash crowd
   * the tenant's server issues each session moments before its first use.
   * Another process looks it up as usual.
   */
  rememberIssuedSession(issued: { token: string; id: string; participantId: string; engagementId: string; expiresAt: Date }, issuer: AuthContext): void {
    this.sessionCache.remember(sha256Hex(issued.token), {
      tenantId: issuer.tenantId,
      id: issued.id,
      participantId: issued.participantId,
      engagementId: issued.engagementId,
      expiresAtMs: issued.expiresAt.getTime(),
      revoked: false,
      plan: issuer.plan,
      tenantRequestsPerMinute: issuer.tenantRequestsPerMinute,
    });
  }

  private async sessionRecord(hash: string): Promise<SessionRecord | null> {
    return this.sessionCache.get(hash, async () => {
      const rows = await this.sessionLookups.find(hash);
      // A hash that two tenants share (rows written by hand; see migration 1110) authenticates neither.
      const row = rows.length === 1 ? rows[0] : undefined;
      return row
        ? {
            tenantId: row.tenant_id,
            id: row.id,
            participantId: row.participant_id,
            engagementId: row.engagement_id,
            expiresAtMs: new Date(row.expires_at).getTime(),
            revoked: row.revoked_at !== null,
            plan: row.plan,
            tenantRequestsPerMinute: row.tenant_rate_limit_per_minute,
          }
        : null;
    });
  }

  /** Resolves `X-Service-Tenant` (a tenant id or slug) and checks it names the credential's tenant. */
  async checkTenantHeader(auth: AuthContext, header: string | undefined): Promise<void> {
    if (header === undefined || header === '') return;
    if (isUuid(header)) {
      if (header.toLowerCase() !== auth.tenantId) throw new AppError('forbidden', 'AUTH_TENANT_MISMATCH', 'X-Service-Tenant names another tenant than the credential');
      return;
    }
    const { rows } = await this.db.system.query('SELECT id FROM auth_find_tenant_by_slug($1)', [header]);
    if (rows[0]?.id !== auth.tenantId) throw new AppError('forbidden', 'AUTH_TENANT_MISMATCH', 'X-Service-Tenant names another tenant than the credential');
  }
}

const NO_SCOPES: ReadonlySet<string> = new Set();
const NO_OWNERS: readonly never[] = [];

export function requireAnyScope(auth: AuthContext, scopes: readonly string[]): void {
  if (scopes.length === 0) return;
  if (!scopes.some((scope) => auth.scopes.has(scope))) {
    throw forbidden(`this route needs one of the scopes ${scopes.map((s) => `"${s}"`).join(', ')}`);
  }
}
