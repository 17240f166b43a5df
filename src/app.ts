import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync, type FastifyReply, type FastifyRequest } from 'fastify';
import { Type, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import client from 'prom-client';
import { registry as domainMetrics } from './platform/metrics.js';
import { TRUST_PROXY_EVERY_HOP_WARNING, trustProxyOption, type Config } from './config.js';
import type { Database } from './platform/db.js';
import type { Logger } from './platform/logger.js';
import { Authenticator } from './platform/auth.js';
import { RateLimits } from './platform/rate-limit.js';
import {
  answerClientError,
  cachingSerializerFactory,
  ErrorResponse,
  installErrorHandlers,
  errorContext,
  installValidators,
  PATH_PARAMETER_LENGTH_MAX,
  RequestLogController,
  routerError,
} from './platform/http.js';
import { AppError, errorBody } from './platform/errors.js';
import { uuid } from './platform/ids.js';
import { loadModules, type ServiceModule } from './platform/module.js';
import cookie from '@fastify/cookie';
import { installAudit } from './platform/audit.js';
import { tracingOn } from './platform/tracing.js';
import { traceRequests } from './platform/tracing-http.js';
import { installIdempotencyKeys } from './platform/idempotency-http.js';
import { installLivemode } from './platform/livemode.js';
import { installMasking } from './platform/privacy.js';
import { installOpenApi } from './platform/openapi.js';
import { installCredentials } from './platform/credentials.js';
import { installOverloadGuard } from './platform/overload.js';
import { installApiVersion } from './platform/api-version.js';

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

export async function buildApp(
  ctx: Omit<ServiceContext, 'metrics' | 'rateLimits' | 'authenticator' | 'limitPublicTenant' | 'signingKey'> & { jwtKey: Uint8Array },
  options: BuildOptions = {},
): Promise<App> {
  const { config } = ctx;
  if (config.trustProxy === true) ctx.log.warn(TRUST_PROXY_EVERY_HOP_WARNING);
  const requestLog = new RequestLogController();
  // The rate limiting of the credential hooks, bound by installCredentials below, before the app answers any request.
  let credentials: ReturnType<typeof installCredentials> | undefined;
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
        reply.status(refusal.status).send({ ...errorBody(refusal.code, refusal.message, refusal.extra), ...errorContext(request as FastifyRequest, config.publicBaseUrl) });
      };
      credentials!.limit(request, reply, null).then(
        () => refuse(routerError(error)),
        (limitError: unknown) => refuse(limitError instanceof AppError ? limitError : routerError(error)),
      );
    },
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>();
  // The first hook of all, so that everything a request does runs inside its span.
  if (tracingOn()) traceRequests(app);
  // Before any other work of a request: past the limit, a request is refused before its credential is looked up.
  installOverloadGuard(app, config.maxInFlight);

  const { metrics, requestDuration } = requestSeries();

  const authenticator = new Authenticator(ctx.db, ctx.jwtKey, config.jwtTtlSeconds);
  const rateLimits = new RateLimits(config);
  if (!(await rateLimits.ready())) ctx.log.warn('Redis (REDIS_URL) does not answer; rate limits count in this process until it does');
  const limitPublicTenant: ServiceContext['limitPublicTenant'] = (request, reply, tenantId) => credentials!.limitPublicTenant(request, reply, tenantId);
  const serviceContext: ServiceContext = { ...ctx, signingKey: ctx.jwtKey, authenticator, rateLimits, metrics, limitPublicTenant };
  app.decorate('ctx', serviceContext);
  app.decorateRequest('auth', null);
  app.decorateRequest('rateLimitDecision', null);
  app.decorateRequest('credentialRefusal', null);
  app.decorateRequest('problemBeforeValidation', null);
  await authenticator.listenForKeyChanges(ctx.systemUrl);
  app.addHook('onClose', async () => {
    await authenticator.close();
    await rateLimits.close();
  });

  const modules: ServiceModule[] = await loadModules();
  const sharedSchemas = [ErrorResponse, ...modules.flatMap((m) => m.schemas ?? [])];
  installValidators(app, sharedSchemas);
  for (const schema of sharedSchemas) app.addSchema(schema);
  installErrorHandlers(app, config.publicBaseUrl);
  const customKeysOwner = modules.find((module) => module.personalCustomKeys)?.personalCustomKeys;
  // Programmer error: without the owner of custom field definitions, personal custom fields could not be masked.
  if (!customKeysOwner) throw new Error('no module names the personal custom fields (ServiceModule.personalCustomKeys)');
  const privacy = {
    schemas: sharedSchemas as unknown as Array<Record<string, unknown>>,
    personalCustomKeys: (tenantId: string) => customKeysOwner(ctx.db, tenantId),
  };
  installMasking(app, privacy);
  await app.register(cookie);
  installAudit(app, ctx.db, privacy);
  // Before the idempotency hooks: a stored answer keeps its livemode, and its replay is not marked twice.
  installLivemode(app, ctx.db);
  installIdempotencyKeys(app, ctx.db);
  // Bodies are JSON only: a text/plain body would otherwise reach validation as a string.
  app.removeContentTypeParser('text/plain');

  await installOpenApi(app, config);
  credentials = installCredentials(app, ctx, authenticator, rateLimits);
  installApiVersion(app);

  // A callback hook, not an async one: it runs on every response and needs no promise.
  app.addHook('onResponse', (request, reply, done) => {
    requestDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
    done();
  });

  operationsRoutes(app, ctx.db, metrics);

  for (const module of modules) {
    if (module.routes) await app.register(module.routes, { prefix: '/api/v1' });
    if (module.rootRoutes) await app.register(module.rootRoutes);
  }
  if (options.extraRoutes) await app.register(options.extraRoutes, { prefix: '/api/v1' });
  await app.ready();
  return app;
}

/** This app's request series; the process's default and domain series live in platform/metrics.ts. */
function requestSeries() {
  const metrics = new client.Registry();
  const requestDuration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metrics],
  });
  return { metrics, requestDuration };
}

/** Operations routes, outside /api/v1 and outside the rate limits. */
function operationsRoutes(app: App, db: Database, metrics: client.Registry): void {
  const hidden = { hide: true } as Record<string, unknown>;
  const operations = { rateLimit: 'none', trace: false } as const;
  app.get('/healthz', { config: operations, schema: { ...hidden, response: { 200: Type.Object({ status: Type.Literal('ok') }) } } }, async () => ({ status: 'ok' as const }));
  app.get('/readyz', { config: operations, schema: hidden }, async (_request, reply) => {
    try {
      await db.app.query('SELECT 1');
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
}
