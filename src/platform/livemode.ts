import type { FastifyInstance, RouteOptions, onSendHookHandler } from 'fastify';
import type { Database } from './db.js';
import { cachedTenantEnvironment, tenantEnvironment } from './environments.js';

/**
 * `livemode` on every answer to a tenant credential: a JSON object answered
 * with a 2xx status to an API key, an admin token, a console sign-in or a
 * participant session carries `"livemode": true` from a live tenant and
 * `"livemode": false` from a sandbox, so that an integrator (and a support
 * person reading a log) can tell test data from real data in any answer that
 * carries a participant's state. Webhooks carry the same field
 * (modules/webhooks). Public routes and the operator's routes answer for no
 * credential's tenant and carry none.
 *
 * The field is added to the serialized answer, so no route's schema or
 * service has to know about it; the OpenAPI document declares it on every
 * such answer (`documentLivemode`).
 */
export const LIVEMODE_DESCRIPTION =
  'True when the answer comes from a live tenant, false from a sandbox (a `lk_test_` key, or a sandbox tenant\'s session or sign-in). Present on every JSON object answered with a 2xx status to a credential.';

const OBJECT_OPEN = 123; // '{'

function withLivemode(payload: string, live: boolean): string {
  const field = `"livemode":${live}`;
  return payload === '{}' ? `{${field}}` : `${payload.slice(0, -1)},${field}}`;
}

function marksLivemode(db: Database): onSendHookHandler {
  return function markLivemode(request, reply, payload, done) {
    const tenantId = request.auth?.tenantId;
    if (
      !tenantId ||
      reply.statusCode >= 300 ||
      typeof payload !== 'string' ||
      payload.charCodeAt(0) !== OBJECT_OPEN ||
      // An answer stored by the generic idempotency keys, replayed as stored: its livemode is in it. (A route that
      // keeps its keys with its change, such as a grant, stores its answer without, and gets it here like a first answer.)
      request.answerReplayed ||
      !String(reply.getHeader('content-type') ?? '').startsWith('application/json')
    ) {
      return done(null, payload);
    }
    const environment = cachedTenantEnvironment(tenantId);
    if (environment) return done(null, withLivemode(payload, environment === 'live'));
    tenantEnvironment(db, tenantId).then(
      (found) => done(null, withLivemode(payload, found !== 'sandbox')),
      (error: Error) => done(error),
    );
  };
}

/** Adds the livemode hook to every route that takes a tenant credential. */
export function installLivemode(app: FastifyInstance, db: Database): void {
  const mark = marksLivemode(db);
  app.addHook('onRoute', (route: RouteOptions) => {
    const auth = route.config?.auth ?? 'public';
    if (auth === 'public' || route.url.startsWith('/docs')) return;
    const existing = route.onSend;
    route.onSend = existing ? [...(Array.isArray(existing) ? existing : [existing]), mark] : mark;
  });
}

type Schema = Record<string, any>;
type Document = { paths: Record<string, Record<string, any>>; components?: { schemas?: Record<string, Schema> } };
const TENANT_SECURITY = new Set(['ApiKey', 'Bearer', 'AdminToken', 'Session']);

/**
 * Declares `livemode` on every 2xx JSON object answer of an operation that
 * takes a tenant credential: added to an answer's own object schema, or
 * joined (`allOf`) to a shared one, which other answers may nest without it.
 */
export function documentLivemode<T extends Document>(document: T): T {
  const livemode = { type: 'boolean', description: LIVEMODE_DESCRIPTION };
  const resolve = (schema: Schema): Schema => {
    const name = typeof schema.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : null;
    return name ? (document.components?.schemas?.[name] ?? {}) : schema;
  };
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      const security: Array<Record<string, unknown>> | undefined = operation?.security;
      if (!security?.some((entry) => Object.keys(entry).some((name) => TENANT_SECURITY.has(name)))) continue;
      for (const [status, answer] of Object.entries<Schema>(operation.responses ?? {})) {
        const media = status.startsWith('2') ? answer?.content?.['application/json'] : undefined;
        if (!media?.schema) continue;
        const schema: Schema = media.schema;
        if (schema.$ref || Array.isArray(schema.allOf)) {
          if (resolve(schema).type !== 'object' && !Array.isArray(schema.allOf)) continue;
          const parts = Array.isArray(schema.allOf) ? schema.allOf : [{ $ref: schema.$ref }];
          const { $ref: _ref, allOf: _allOf, ...rest } = schema;
          media.schema = { ...rest, allOf: [...parts, { type: 'object', required: ['livemode'], properties: { livemode } }] };
        } else if (schema.type === 'object' && schema.properties) {
          media.schema = { ...schema, required: [...(schema.required ?? []), 'livemode'], properties: { ...schema.properties, livemode } };
        }
      }
    }
  }
  return document;
}
