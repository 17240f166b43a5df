import Fastify, { type onSendHookHandler, type preValidationHookHandler, type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import client from 'prom-client';
import { registry as domainMetrics, rateLimitRefusals } from './platform/metrics.js';
import { TRUST_PROXY_EVERY_HOP_WARNING, trustProxyOption, type Config } from './config.js';
import type { Database } from './platform/db.js';
import type { Logger } from './platform/logger.js';
import { ADMIN_SCOPES, Authenticator, requireAnyScope, type AuthContext } from './platform/auth.js';
import { RateLimits, bindingDecision, type Decision } from './platform/rate-limit.js';
import { tenantRequestsPerMinute } from './platform/plans.js';
import {
  answerClientError,
  cachingSerializerFactory,
  ErrorResponse,
  installErrorHandlers,
  installValidators,
  markDeprecated,
  withErrorResponses,
  clientIp,
  PATH_PARAMETER_LENGTH_MAX,
  RequestLogController,
  routerError,
  type AuthMode,
} from './platform/http.js';
import { AppError, errorBody, unauthenticated, forbidden } from './platform/errors.js';
import { uuid } from './platform/ids.js';
import { loadModules, type ServiceModule } from './platform/module.js';
import cookie from '@fastify/cookie';
import { CONSOLE_COOKIE, checkCsrf } from './platform/console-auth.js';
import { routePermission, userMay } from './platform/permissions.js';
import { INTERNAL_READ_HEADER, INTERNAL_READ_SECRET, installAudit } from './platform/audit.js';
import { tracingOn } from './platform/tracing.js';
import { traceRequests } from './platform/tracing-http.js';
import { installIdempotencyKeys } from './platform/idempotency-http.js';
import { documentLivemode, installLivemode } from './platform/livemode.js';
import { addExamples } from './platform/openapi-examples.js';
import { docsUi } from './platform/docs.js';
import { holdToFourEyes } from './platform/publishing.js';
import { installMasking } from './platform/privacy.js';

/**
 * Builds the Fastify application: external plugins first, then the shared
 * hooks (credentials, rate limits, deprecation, metrics), then every module's
 * routes. `main.ts` and the tests both build it through here.
 */
export interface ServiceContext {
  config: Config;
  db: Database;
  log: Logger;
  authenticator: Authenticator;
  rateLimits: RateLimits;
  /** Signs admin login tokens and derives console CSRF tokens. */
  signingKey: Uint8Array;
  /** The owner connection URL, for LISTEN connections (live stream, key-change notices). */
  systemUrl: string;
  metrics: client.Registry;
  /**
   * For public routes that name a tenant (a site slug, a referral code): counts
   * the request against the tenant's public-route limit, sets the headers and
   * throws 429 when it is used up. Unknown tenants are not counted.
   */
  limitPublicTenant(request: FastifyRequest, reply: FastifyReply, tenantId: string): Promise<void>;
}

export interface BuildOptions {
  /** Extra routes under `/api/v1`; tests use them to exercise hooks that no module route needs yet. */
  extraRoutes?: FastifyPluginAsync;
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: ServiceContext;
  }
}

export type App = FastifyInstance;

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

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

const SECURITY_BY_MODE: Record<AuthMode, Array<Record<string, string[]>>> = {
  public: [],
  key: [{ ApiKey: [] }, { Bearer: [] }],
  admin: [{ ApiKey: [] }, { Bearer: [] }],
  jwt: [{ AdminToken: [] }],
  session: [{ Session: [] }],
};

export async function buildApp(
  ctx: Omit<ServiceContext, 'metrics' | 'rateLimits' | 'authenticator' | 'limitPublicTenant' | 'signingKey'> & { jwtKey: Uint8Array },
  options: BuildOptions = {},
): Promise<App> {
  const { config } = ctx;
  if (config.trustProxy === true) ctx.log.warn(TRUST_PROXY_EVERY_HOP_WARNING);
  const requestLog = new RequestLogController();
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    bodyLimit: config.bodyLimitBytes,
    trustProxy: trustProxyOption(config.trustProxy),
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : uuid();
    },
    ajv: { customOptions: { removeAdditional: false } },
    schemaController: { compilersFactory: { buildSerializer: cachingSerializerFactory() } },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: PATH_PARAMETER_LENGTH_MAX },
    logController: requestLog,
    // Router errors arrive before any hook, and Fastify does not log their
    // completion: the request id, the rate limit and the log line are added here.
    frameworkErrors: (error, request, routerReply) => {
      const reply = routerReply as FastifyReply;
      reply.raw.once('finish', () => requestLog.requestCompleted(null, request, reply));
      reply.header('X-Request-Id', request.id);
      const refuse = (refusal: AppError) => {
        for (const [name, value] of Object.entries(refusal.headers)) reply.header(name, value);
        reply.status(refusal.status).send(errorBody(refusal.code, refusal.message, refusal.extra));
      };
      limit(request, reply, null).then(
        () => refuse(routerError(error)),
        (limitError: unknown) => refuse(limitError instanceof AppError ? limitError : routerError(error)),
      );
    },
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();
  // The first hook of all, so that everything a request does runs inside its span.
  if (tracingOn()) traceRequests(app);

  // This app's request series; the process's default and domain series live in platform/metrics.ts.
  const metrics = new client.Registry();
  const requestDuration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metrics],
  });

  const authenticator = new Authenticator(ctx.db, ctx.jwtKey, config.jwtTtlSeconds);
  const rateLimits = new RateLimits(config);
  if (!(await rateLimits.ready())) ctx.log.warn('Redis (REDIS_URL) does not answer; rate limits count in this process until it does');
  const serviceContext: ServiceContext = { ...ctx, signingKey: ctx.jwtKey, authenticator, rateLimits, metrics, limitPublicTenant };
  app.decorate('ctx', serviceContext);
  app.decorateRequest('auth', null);
  app.decorateRequest('rateLimitDecision', null);
  app.decorateRequest('credentialRefusal', null);
  await authenticator.listenForKeyChanges(ctx.systemUrl);
  app.addHook('onClose', async () => {
    await authenticator.close();
    await rateLimits.close();
  });

  const modules: ServiceModule[] = await loadModules();
  const sharedSchemas = [ErrorResponse, ...modules.flatMap((m) => m.schemas ?? [])];
  installValidators(app, sharedSchemas);
  for (const schema of sharedSchemas) app.addSchema(schema);
  installErrorHandlers(app);
  const customKeysOwner = modules.find((module) => module.personalCustomKeys)?.personalCustomKeys;
  const privacy = {
    schemas: sharedSchemas as unknown as Array<Record<string, unknown>>,
    personalCustomKeys: customKeysOwner ? (tenantId: string) => customKeysOwner(ctx.db, tenantId) : async () => new Set<string>(),
  };
  installMasking(app, privacy);
  await app.register(cookie);
  installAudit(app, ctx.db, privacy);
  // Before the idempotency hooks: a stored answer keeps its livemode, and its replay is not marked twice.
  installLivemode(app, ctx.db);
  installIdempotencyKeys(app, ctx.db);
  // Bodies are JSON only: a text/plain body would otherwise reach validation as a string.
  app.removeContentTypeParser('text/plain');

  // Operations whose body may be left out (route config `optionalBody`), filled in by the onRoute hook below.
  const optionalBodies = new Set<string>();
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Engagement and Loyalty Service',
        version: '1.0.0',
        description:
          'Multi-tenant engagement and loyalty backend. Every path is under `/api/v1` unless shown otherwise. ' +
          'Errors share one body: `detail`, `code` and `error_version: 1`; each error answer below lists its codes. ' +
          'Every creating or money-moving POST takes an `Idempotency-Key` header. ' +
          'New here? docs/getting-started.md walks from a key to a first event and a first signed webhook in 10 minutes: ' +
          'create a sandbox tenant (`npm run tenant:create -- --name Acme --slug acme --sandbox --json`), define an earn rule (`createRule`), ' +
          'send an event (`ingestEvent`), read the participant (`getParticipantState`), then receive webhooks (`createWebhook`, `sendWebhookTestEvent`). ' +
          'See docs/decisions.md for the choices made where the specification is silent.',
      },
      servers: [{ url: config.publicBaseUrl ?? '/' }],
      components: {
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key: `lk_live_` or `lk_test_` followed by 32 hex characters.' },
          Bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key as a bearer credential, optionally with `X-Service-Tenant: <tenant id or slug>`, which must name the key\'s tenant.',
          },
          AdminToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An admin login token from `POST /api/v1/auth/login`.' },
          OperatorToken: { type: 'http', scheme: 'bearer', description: 'The platform operator\'s token (`OPERATOR_TOKEN`), for the `/api/v1/operator/` routes only; tenant credentials are refused there.' },
          Session: {
            type: 'apiKey',
            in: 'query',
            name: 'session_id',
            description: 'A participant session from `POST /api/v1/sessions`, passed as `session_id` in the body or the query, with the `engagement_id` it was issued for.',
          },
        },
      },
    },
    transformObject: (document) =>
      'openapiObject' in document
        ? addExamples(documentLivemode(markOptionalBodies(document.openapiObject as Parameters<typeof addExamples>[0], optionalBodies)))
        : document.swaggerObject,
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  // Swagger UI at /docs, with its Content-Security-Policy and frame headers (platform/docs.ts).
  await app.register(docsUi, { publicBaseUrl: config.publicBaseUrl });

  // Every route documents its credential and its errors.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) return;
    const auth = route.config?.auth;
    if (route.config?.rateLimit === 'none' && (auth ?? 'public') !== 'public') {
      throw new Error(`${route.method} ${route.url}: only public routes may opt out of rate limits; a credentialed route counts against its key and tenant`);
    }
    const schema = (route.schema ??= {}) as Record<string, unknown> & { response?: Record<string | number, unknown> };
    if (route.config?.optionalBody) {
      // Before validation: a request without a body is validated (and handled) as `{}`.
      const emptyBody: preValidationHookHandler = (request, _reply, done) => {
        if (request.body === undefined || request.body === null) request.body = {};
        done();
      };
      route.preValidation = route.preValidation ? [emptyBody, ...(Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation])] : emptyBody;
      if (typeof schema.operationId === 'string') optionalBodies.add(schema.operationId);
    }
    if (schema.hide) return;
    withErrorResponses(schema, auth);
    if (auth) schema.security = SECURITY_BY_MODE[auth];
    // What a console user's role needs for the route, as the onRequest hook below decides it (test/access-matrix.test.ts reads it).
    if (auth && auth !== 'public' && auth !== 'session') {
      const method = [route.method].flat().find((candidate) => candidate !== 'HEAD') ?? 'GET';
      schema['x-permission'] = route.config?.permission ?? routePermission(method, route.url) ?? 'owner';
    }
    const deprecation = route.config?.deprecated;
    if (deprecation) {
      schema.deprecated = true;
      // Only deprecated routes pay for an onSend hook; every other response skips the hook runner.
      const markThis: onSendHookHandler = (_request, reply, payload, done) => {
        markDeprecated(reply, deprecation);
        done(null, payload);
      };
      route.onSend = route.onSend ? [...(Array.isArray(route.onSend) ? route.onSend : [route.onSend]), markThis] : markThis;
    }
  });

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

  // A callback hook, not an async one: it runs on every response and needs no promise.
  app.addHook('onResponse', (request, reply, done) => {
    requestDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });

  // Operations routes, outside /api/v1 and outside the rate limits.
  const hidden = { hide: true } as Record<string, unknown>;
  const operations = { rateLimit: 'none', trace: false } as const;
  app.get('/healthz', { config: operations, schema: { ...hidden, response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({ status: 'ok' as const }));
  app.get('/readyz', { config: operations, schema: hidden }, async (_request, reply) => {
    try {
      await ctx.db.app.query('SELECT 1');
      return { status: 'ready' };
    } catch {
      return reply.status(503).send({ status: 'unavailable', detail: 'the database does not answer', code: 'DATABASE_UNAVAILABLE', error_version: 1 });
    }
  });
  app.get('/metrics', { config: operations, schema: hidden }, async (_request, reply) => {
    const all = client.Registry.merge([domainMetrics, metrics]);
    reply.header('Content-Type', all.contentType);
    return all.metrics();
  });
  app.get('/openapi.json', { schema: hidden }, async () => app.swagger());

  for (const module of modules) {
    if (module.routes) await app.register(module.routes, { prefix: '/api/v1' });
    if (module.rootRoutes) await app.register(module.rootRoutes);
  }
  if (options.extraRoutes) await app.register(options.extraRoutes, { prefix: '/api/v1' });
  await app.ready();
  return app;
}

/** fastify-swagger marks every declared body required; the operations in `operationIds` take none. */
function markOptionalBodies<T extends { paths?: Record<string, Record<string, unknown>> }>(document: T, operationIds: ReadonlySet<string>): T {
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item) as Array<{ operationId?: string; requestBody?: { required?: boolean } }>) {
      if (operation?.operationId && operationIds.has(operation.operationId) && operation.requestBody) operation.requestBody.required = false;
    }
  }
  return document;
}
