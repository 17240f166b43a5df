import type { FastifyInstance, onSendHookHandler, preValidationHookHandler } from 'fastify';
import swagger from '@fastify/swagger';
import type { Config } from '../config.js';
import { markDeprecated, withErrorResponses, type AuthMode } from './http.js';
import { routePermission } from './permissions.js';
import { documentLivemode } from './livemode.js';
import { addExamples } from './openapi-examples.js';
import { docsUi } from './docs.js';

const SECURITY_BY_MODE: Record<AuthMode, Array<Record<string, string[]>>> = {
  public: [],
  key: [{ ApiKey: [] }, { Bearer: [] }],
  admin: [{ ApiKey: [] }, { Bearer: [] }],
  jwt: [{ AdminToken: [] }],
  session: [{ Session: [] }],
};

/**
 * The OpenAPI document (`app.swagger()`), the docs UI at /docs, and the
 * onRoute hook by which every route documents its credential and its errors.
 * Installed before any module registers a route.
 */
export async function installOpenApi(app: FastifyInstance, config: Config): Promise<void> {
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
          'create a sandbox tenant (`npm run -s tenant:create -- --name Acme --slug acme --sandbox --json`), define an earn rule (`createRule`), ' +
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
        ? addExamples(documentLivemode(markDefaultsOptional(markOptionalBodies(document.openapiObject as Parameters<typeof addExamples>[0], optionalBodies))))
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
    withErrorResponses(schema, auth, route.url);
    if (auth) schema.security = SECURITY_BY_MODE[auth];
    // What a console user's role needs for the route, as the onRequest hook of platform/credentials.ts decides it (test/access-matrix.test.ts reads it).
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

type Schema = { required?: string[]; properties?: Record<string, Schema>; default?: unknown; $ref?: string };
type Operation = { parameters?: Array<{ required?: boolean; schema?: Schema; in?: string }>; requestBody?: { content?: Record<string, { schema?: Schema }> } };

/**
 * A request field with a default may be left out: the service fills it in
 * (`limit` is 50 unless sent). TypeBox writes such a field as required (the
 * handler's type has it), and fastify-swagger copies that into the document,
 * so generated clients would force callers to send it. This marks parameters
 * with a default optional, and takes fields with a default out of the
 * `required` list of inline request bodies (shared component schemas also
 * describe answers, which always carry the field).
 */
function markDefaultsOptional<T extends { paths?: Record<string, Record<string, unknown>> }>(document: T): T {
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item) as Operation[]) {
      if (typeof operation !== 'object' || operation === null) continue;
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'path' && parameter.required && parameter.schema && 'default' in parameter.schema) parameter.required = false;
      }
      for (const media of Object.values(operation.requestBody?.content ?? {})) {
        const schema = media.schema;
        if (!schema || schema.$ref || !schema.required || !schema.properties) continue;
        const properties = schema.properties;
        schema.required = schema.required.filter((name) => !(properties[name] && 'default' in properties[name]));
        if (schema.required.length === 0) delete schema.required;
      }
    }
  }
  return document;
}
