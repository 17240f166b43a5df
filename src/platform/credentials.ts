import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Database } from './db.js';
import { rateLimitRefusals } from './metrics.js';
import { ADMIN_SCOPES, requireAnyScope, type Authenticator, type AuthContext } from './auth.js';
import { bindingDecision, type Decision, type RateLimits } from './rate-limit.js';
import { tenantRequestsPerMinute } from './plans.js';
import { clientIp, type AuthMode } from './http.js';
import { AppError, unauthenticated, forbidden } from './errors.js';
import { CONSOLE_COOKIE, checkCsrf } from './console-auth.js';
import { routePermission, userMay } from './permissions.js';
import { INTERNAL_READ_HEADER, INTERNAL_READ_SECRET } from './audit.js';
import { holdToFourEyes } from './publishing.js';

/**
 * Who calls: the credential hooks (API keys, admin tokens, console cookies,
 * participant sessions), the rate limits, scopes, role permissions and the
 * four-eyes hold. `installCredentials` adds the hooks to the app and returns
 * the rate limiting that the app's other parts share.
 */
const BEARER_PATTERN = /^Bearer\s+(\S+)$/i;

const conflictingCredentials = (detail: string) => new AppError('invalid', 'AUTH_CONFLICTING_CREDENTIALS', detail);

/**
 * The credential in the headers: `X-API-Key`, or `Authorization: Bearer`.
 * Several may be sent only when they carry the same credential (the same key
 * in both headers); two different ones are refused before either is looked
 * up, rather than one of them silently preferred. The raw headers are read,
 * because Node keeps only the first of two Authorization headers.
 */
function presentedKey(request: FastifyRequest): { kind: 'key' | 'jwt'; token: string } | null {
  if (request.headers['x-api-key'] === undefined && request.headers.authorization === undefined) return null;
  let presented: { kind: 'key' | 'jwt'; token: string } | null = null;
  const raw = request.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (name !== 'x-api-key' && name !== 'authorization') continue;
    const value = raw[i + 1].trim();
    if (value === '') continue;
    let credential: { kind: 'key' | 'jwt'; token: string };
    if (name === 'x-api-key') {
      credential = { kind: 'key', token: value };
    } else {
      const match = BEARER_PATTERN.exec(value);
      if (!match) throw unauthenticated('the Authorization header must be "Bearer <credential>"');
      credential = { kind: match[1].startsWith('lk_') ? 'key' : 'jwt', token: match[1] };
    }
    if (presented && presented.token !== credential.token) {
      throw conflictingCredentials('the request carries two different credentials (X-API-Key and Authorization, or one of them twice); send one, or the same key in both');
    }
    if (!presented || credential.kind === 'key') presented = credential;
  }
  return presented;
}

function sessionParameters(request: FastifyRequest): { sessionId: unknown; engagementId: unknown } {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const query = (request.query ?? {}) as Record<string, unknown>;
  const pick = (name: string) => (typeof body === 'object' && body !== null && name in body ? body[name] : query[name]);
  return { sessionId: pick('session_id'), engagementId: pick('engagement_id') };
}

function bodyNamesSession(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'session_id' in body;
}

/** A participant session beside an API key or admin token: two callers in one request. */
const sessionBesideCredential = () =>
  conflictingCredentials('the request carries a participant session_id and an API key or admin token; a route acts for one caller, so send one credential');

/**
 * The refusal of a key, admin or token route called with no credential: a
 * participant session (in the body or the query) is the wrong kind of caller,
 * anything else is no caller at all.
 */
function missingCredential(request: FastifyRequest): AppError {
  if (sessionParameters(request).sessionId !== undefined) return forbidden('participant sessions cannot call this route; it needs an API key or an admin token');
  return unauthenticated(request.routeOptions.config?.auth === 'jwt' ? 'this route needs an admin login token (Authorization: Bearer <jwt>)' : 'this route needs an API key (X-API-Key)');
}

/**
 * Whether the refusal of a caller without a credential may wait for the body,
 * to look for a participant session in it: only when the body is no larger
 * than the service-wide limit, which public and session routes read without a
 * credential anyway. The bulk routes' larger limits (up to 16 MiB) are never
 * read for a caller that has no credential.
 */
function mayReadBodyWithoutCredential(request: FastifyRequest, bodyLimitBytes: number): boolean {
  const declared = request.headers['content-length'];
  return request.headers['transfer-encoding'] === undefined && (declared === undefined || Number(declared) <= bodyLimitBytes);
}

function applyRateLimitHeaders(reply: { header(name: string, value: string | number): unknown }, decision: Decision): void {
  reply.header('X-RateLimit-Limit', decision.limit);
  reply.header('X-RateLimit-Remaining', decision.remaining);
  reply.header('X-RateLimit-Reset', decision.resetAtSeconds);
}

function enforce(request: FastifyRequest, reply: FastifyReply, decision: Decision): void {
  const earlier = request.rateLimitDecision;
  const binding = earlier ? bindingDecision([earlier, decision]) : decision;
  request.rateLimitDecision = binding;
  applyRateLimitHeaders(reply, binding);
  if (!binding.allowed) {
    rateLimitRefusals.inc({ scope: binding.scope });
    throw new AppError('rate_limited', 'RATE_LIMITED', `rate limit exceeded (${binding.scope}: ${binding.limit} requests per window); retry after ${binding.retryAfterSeconds} s`, {}, {
      'Retry-After': String(binding.retryAfterSeconds),
    });
  }
}

interface Credentials {
  /** Counts the request against its rate limits (per address, and per key and tenant once `auth` is known), sets the headers and throws 429 when one is used up. */
  limit(request: FastifyRequest, reply: FastifyReply, auth: AuthContext | null, countAddress?: boolean): Promise<void>;
  /** `ServiceContext.limitPublicTenant`: a public route's count against the tenant it names. */
  limitPublicTenant(request: FastifyRequest, reply: FastifyReply, tenantId: string): Promise<void>;
}

/**
 * Adds the onRequest hook (credentials from headers or the console cookie,
 * rate limits, scopes, role permissions, the four-eyes hold) and the
 * preValidation hook (participant sessions, and the refusal of a request with
 * no credential once its body may name a session).
 */
export function installCredentials(
  app: FastifyInstance,
  ctx: { config: Config; db: Database; jwtKey: Uint8Array },
  authenticator: Authenticator,
  rateLimits: RateLimits,
): Credentials {
  const { config } = ctx;

  async function limit(request: FastifyRequest, reply: FastifyReply, auth: AuthContext | null, countAddress = true): Promise<void> {
    const group = request.routeOptions.config?.rateLimit ?? 'default';
    // Load balancers and orchestrators poll the operations routes from a few
    // addresses, with counters shared across processes under REDIS_URL: a 429
    // there would take a healthy instance out of service.
    if (group === 'none') return;
    // The audit log's own before/after reads of a change the caller was already counted for.
    if (request.headers[INTERNAL_READ_HEADER] === INTERNAL_READ_SECRET) return;
    enforce(request, reply, await rateLimits.check(countAddress ? clientIp(request) : null, auth, group));
  }

  async function limitPublicTenant(request: FastifyRequest, reply: FastifyReply, tenantId: string): Promise<void> {
    const limits = await authenticator.tenantLimits(tenantId);
    if (!limits) return;
    enforce(request, reply, await rateLimits.checkPublicTenant(tenantId, tenantRequestsPerMinute(limits.plan, limits.requestsPerMinute)));
  }

  // Credentials from headers, then rate limits, before the body is even read. Only the refusal of
  // a request that presents no credential at all waits for the body (preValidation, below).
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    const routeConfig = request.routeOptions.config ?? {};
    const mode: AuthMode = routeConfig.auth ?? 'public';
    if (mode === 'public' || mode === 'session') {
      // Session callers are counted per address before the body is read (so
      // that even a 413 carries the headers), and per tenant once the session
      // is known.
      await limit(request, reply, null);
      return;
    }
    let auth: AuthContext | null = null;
    try {
      const presented = presentedKey(request);
      if (presented) {
        if (sessionParameters(request).sessionId !== undefined) throw sessionBesideCredential();
        if (mode === 'jwt' && presented.kind !== 'jwt') throw unauthenticated('this route needs an admin login token, not an API key');
        auth = presented.kind === 'key' ? await authenticator.fromApiKey(presented.token) : await authenticator.fromJwt(presented.token);
      } else {
        // A person signed in to the console: the cookie counts only when no header credential is given.
        const consoleCookie = request.cookies[CONSOLE_COOKIE];
        if (consoleCookie) {
          auth = await authenticator.fromConsoleCookie(consoleCookie);
          checkCsrf(request.method, ctx.jwtKey, auth.consoleSession!.tokenHash, request.headers['x-csrf-token']);
        }
      }
    } catch (error) {
      await limit(request, reply, null);
      throw error;
    }
    if (!auth) {
      // No credential at all: counted per address like a failed one now, and
      // refused once the body is parsed, so that a participant session sent in
      // the body gets the same 403 as one sent in the query.
      await limit(request, reply, null);
      if (!mayReadBodyWithoutCredential(request, config.bodyLimitBytes)) throw missingCredential(request);
      request.credentialRefusal = missingCredential(request);
      return;
    }
    auth.ipAddress = clientIp(request);
    request.auth = auth;
    await limit(request, reply, auth);
    const tenantHeader = request.headers['x-service-tenant'];
    await authenticator.checkTenantHeader(auth, typeof tenantHeader === 'string' ? tenantHeader : undefined);
    const scopes = routeConfig.scopes ?? (mode === 'admin' ? ADMIN_SCOPES : []);
    requireAnyScope(auth, scopes);
    if (auth.user) {
      // People act through their role; a route no rule classifies is the owner's alone.
      const permission = routeConfig.permission ?? routePermission(request.method, request.routeOptions.url ?? '');
      const allowed = permission ? userMay(auth.user, permission) : auth.user.role === 'owner';
      if (!allowed) {
        const need = permission === 'programs:publish' && auth.user.role !== 'owner' ? 'the publishing permission (can_publish)' : `the permission "${permission ?? 'owner'}"`;
        throw forbidden(`the ${auth.user.role} role may not do this: it needs ${need}`);
      }
    }
    // A tenant that requires four-eyes publishing holds every caller to drafts (platform/publishing.ts).
    await holdToFourEyes(ctx.db, auth, request.method, request.routeOptions.url ?? '');
  });

  // Sessions travel in the body or the query, so they are resolved once the body is parsed; so is
  // the refusal of a key route called without a credential, whose body may carry a session.
  app.addHook('preValidation', async (request, reply) => {
    if (request.credentialRefusal) throw missingCredential(request);
    const mode = request.routeOptions.config?.auth ?? 'public';
    // A key or token route whose body also names a participant session: the query was checked before the body was read.
    if (request.auth && mode !== 'session' && mode !== 'public' && bodyNamesSession(request.body)) throw sessionBesideCredential();
    if (mode !== 'session') return;
    if (presentedKey(request)) {
      throw forbidden('API keys and admin tokens cannot act as a participant; use a session_id');
    }
    const { sessionId, engagementId } = sessionParameters(request);
    if (sessionId === undefined || sessionId === null || sessionId === '') {
      throw unauthenticated(
        "session_id is required: this participant route acts for the participant of a session that the tenant's server issues (POST /api/v1/sessions with its API key); send it with the engagement_id it was issued for",
      );
    }
    if (typeof sessionId !== 'string') throw unauthenticated('session_id must be a string');
    const auth = await authenticator.fromSession(sessionId, typeof engagementId === 'string' ? engagementId : undefined);
    auth.ipAddress = clientIp(request);
    request.auth = auth;
    await limit(request, reply, auth, false);
  });

  return { limit, limitPublicTenant };
}
