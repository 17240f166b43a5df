import type { FastifyInstance, RouteOptions } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AppError, fieldError } from './errors.js';

/**
 * API versions by date (Stripe's convention): a request names the behaviour
 * it was written against in the `Loyalty-Version` header, and every answer
 * says which version answered it. A request without the header gets the
 * current version (docs/decisions.md says why not a per-tenant pin yet). A
 * version that changes behaviour is added to the end of API_VERSIONS, and
 * the code that differs reads `request.apiVersion`.
 */
export const API_VERSIONS = ['2026-11-27'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
export const CURRENT_API_VERSION: ApiVersion = API_VERSIONS[API_VERSIONS.length - 1];

const HEADER = 'loyalty-version';
const ANSWER_HEADER = 'Loyalty-Version';

declare module 'fastify' {
  interface FastifyRequest {
    /** The API version this request is answered with. */
    apiVersion: ApiVersion;
  }
}

export const LoyaltyVersionHeaderSchema = Type.Optional(
  Type.String({
    enum: [...API_VERSIONS],
    description:
      `The API version (a date, YYYY-MM-DD) the request was written against; the answer's \`Loyalty-Version\` header names the version used. ` +
      `Left out: the current version, ${CURRENT_API_VERSION}. An unknown version is refused (400, a field error with the versions \`allowed\`).`,
    examples: [CURRENT_API_VERSION],
  }),
);

function refuse(detail: string): AppError {
  return new AppError('invalid', 'VALIDATION_INVALID_VALUE', detail, {
    errors: [fieldError('/loyalty-version', 'enum', `must be one of ${API_VERSIONS.join(', ')}`, { in: 'headers', allowed: [...API_VERSIONS] })],
  });
}

function versionOf(given: string | string[] | undefined): ApiVersion {
  if (given === undefined) return CURRENT_API_VERSION;
  if (Array.isArray(given)) throw refuse('send one Loyalty-Version header');
  const version = API_VERSIONS.find((known) => known === given.trim());
  if (!version) throw refuse(`Loyalty-Version ${JSON.stringify(given)} is not an API version of this service`);
  return version;
}

/**
 * The `Loyalty-Version` header on every route: checked on each request (after
 * the credential hooks, so a refusal still counts against the caller's rate
 * limit), answered on each response, documented on each operation.
 */
export function installApiVersion(app: FastifyInstance): void {
  app.decorateRequest('apiVersion', CURRENT_API_VERSION);
  // A callback hook, not an async one: it runs on every request and needs no promise. The answer's
  // header is set here, before anything can answer, rather than in an onSend hook, which would put
  // every response through the hook runner (a refused version is answered by the current one).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(ANSWER_HEADER, CURRENT_API_VERSION);
    try {
      request.apiVersion = versionOf(request.headers[HEADER]);
      reply.header(ANSWER_HEADER, request.apiVersion);
      done();
    } catch (error) {
      done(error as AppError);
    }
  });
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.url.startsWith('/docs')) return;
    const schema = (route.schema ??= {}) as { headers?: { properties?: Record<string, unknown> } };
    // A copy: a route's own header schema may be shared with other routes.
    schema.headers = schema.headers
      ? { ...schema.headers, properties: { ...schema.headers.properties, [HEADER]: LoyaltyVersionHeaderSchema } }
      : Type.Object({ [HEADER]: LoyaltyVersionHeaderSchema });
  });
}
