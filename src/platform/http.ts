import type { Permission } from './permissions.js';
import { Type, type TSchema } from '@sinclair/typebox';
import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import http from 'node:http';
import type { Socket } from 'node:net';
import { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AppError, errorBody, ERROR_VERSION_FIELD } from './errors.js';
import { uuid } from './ids.js';
import type { AuthContext } from './auth.js';
import type { Decision, RateLimitGroup } from './rate-limit.js';

/**
 * HTTP plumbing shared by every route: how a route declares its credential,
 * the error schema, the validators, and the one error handler.
 */
export type AuthMode = 'public' | 'key' | 'admin' | 'jwt' | 'session';

export interface Deprecation {
  /** When the route stops answering (the `Sunset` header). */
  sunset: Date;
  /** Where to go instead (a `Link` header with rel="successor-version"). */
  successor?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** Any one of these scopes is enough. `admin` routes default to `admin` or `gamify:admin`. */
    scopes?: readonly string[];
    /**
     * The rate-limit group the route counts in (`default` when unset). `none`
     * is for the unauthenticated operations routes only (probes and metrics):
     * they are not counted and carry no X-RateLimit-* headers.
     */
    rateLimit?: RateLimitGroup | 'none';
    /** False for the operations routes (probes and metrics): polled every few seconds, their traces would bury the rest. */
    trace?: boolean;
    deprecated?: Deprecation;
    /** The body may be left out: the handler then sees `{}`, and the OpenAPI document marks the body optional. */
    optionalBody?: boolean;
    /** What a console user's role needs for this route, when ROUTE_PERMISSIONS (platform/permissions.ts) does not say. */
    permission?: Permission;
  }
  interface FastifyRequest {
    auth: AuthContext | null;
    /**
     * The rate-limit decision already applied to this request, so that a later
     * scope (a session resolved after the body) only replaces the headers when it
     * binds tighter. A request property rather than a WeakMap: a WeakMap keyed by
     * every request costs the garbage collector on each scavenge.
     */
    rateLimitDecision: Decision | null;
    /**
     * Set when a key, admin or token route is called with no credential at
     * all: the refusal as the headers and the query tell it. The request is
     * refused once its body is parsed, where a participant session in the body
     * is told apart from no caller; a body that cannot be parsed gets this
     * refusal instead of a body error.
     */
    credentialRefusal: AppError | null;
  }
}

export const ErrorResponse = Type.Object(
  {
    detail: Type.String({ description: 'What is wrong, for a human.' }),
    code: Type.String({ description: 'A stable machine-readable code. New codes may appear; tolerate unknown ones.' }),
    [ERROR_VERSION_FIELD]: Type.Literal(1, { description: 'Version of the coded error envelope.' }),
  },
  { additionalProperties: true, $id: 'ErrorResponse', title: 'Error' },
);

export const errorRef = Type.Ref('ErrorResponse');

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid parameters or request body.',
  401: 'Missing or invalid credential.',
  403: 'The credential lacks the required scope, or belongs to another kind of caller.',
  404: 'The resource does not exist (or belongs to another tenant).',
  409: 'Duplicate action or a conflicting request in progress.',
  413: 'The request body is larger than the limit.',
  415: 'The request body is not JSON.',
  422: 'Validation failure or guarded operation failure.',
  429: 'Rate limit exceeded; see Retry-After.',
  500: 'Server error.',
};

/** Adds the standard error responses to a route's schema so that OpenAPI documents every error. */
export function withErrorResponses(schema: { response?: Record<string | number, unknown> }, auth: AuthMode | undefined): void {
  schema.response ??= {};
  const statuses = [400, 404, 409, 413, 415, 422, 429, 500];
  if (auth && auth !== 'public') statuses.push(401, 403);
  for (const status of statuses) {
    if (!(status in schema.response)) {
      schema.response[status] = { ...Type.Ref('ErrorResponse'), description: ERROR_DESCRIPTIONS[status] };
    }
  }
}

/**
 * Bodies are validated strictly: no type coercion, no silently removed
 * properties. Query strings, params and headers arrive as text, so those are
 * coerced to the declared types.
 */
export function installValidators(app: FastifyInstance, schemas: TSchema[]): void {
  const base = { allErrors: false, useDefaults: true, removeAdditional: false as const, strict: false, allowUnionTypes: true };
  const bodyAjv = new Ajv.default({ ...base, coerceTypes: false });
  const textAjv = new Ajv.default({ ...base, coerceTypes: 'array' });
  for (const ajv of [bodyAjv, textAjv]) {
    addFormats.default(ajv);
    for (const schema of schemas) ajv.addSchema(schema);
  }
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    return ajv.compile(schema);
  });
}

/**
 * Response serializers, compiled once per distinct schema instead of once per
 * route and status. Every route documents the same ten error responses, so
 * without this fast-json-stringify would build (and keep) about 1,400
 * identical error serializers, each with its own copy of the shared schemas:
 * most of the start-up time and of the process's resident memory.
 */
export function cachingSerializerFactory() {
  const build = SerializerSelector();
  return (...factoryArguments: Parameters<typeof build>) => {
    const compile = build(...factoryArguments);
    const compiled = new Map<string, ReturnType<typeof compile>>();
    return (route: Parameters<typeof compile>[0]) => {
      const key = JSON.stringify(route.schema);
      let serialize = compiled.get(key);
      if (!serialize) {
        serialize = compile(route);
        compiled.set(key, serialize);
      }
      return serialize;
    };
  };
}

function describeValidationError(error: ErrorObject, part: string): string {
  const where = `${part}${error.instancePath.replaceAll('/', '.')}`;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${where} has a property that is not allowed: "${(error.params as { additionalProperty: string }).additionalProperty}"`;
    case 'required':
      return `${where} is missing the required property "${(error.params as { missingProperty: string }).missingProperty}"`;
    case 'type':
      return `${where} must be of type ${(error.params as { type: string }).type}`;
    case 'enum':
      return `${where} must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    default:
      return `${where} ${error.message ?? 'is invalid'}`;
  }
}

const PG_INPUT_ERRORS = new Set(['22P02', '22003', '22007', '22008', '22023', '22001', '22021', '22P05', '2201X', '2201W', '22004']);

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & { validation?: ErrorObject[]; validationContext?: string }, request, reply) => {
    // A caller without a credential is refused whatever is wrong with its body:
    // the body was read only to look for a participant session in it.
    const appError = error instanceof AppError ? error : request.credentialRefusal;
    if (appError) {
      for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
      return reply.status(appError.status).send(errorBody(appError.code, appError.message, appError.extra));
    }
    if (error.validation) {
      const detail = error.validation.map((e) => describeValidationError(e, error.validationContext ?? 'request')).join('; ');
      return reply.status(400).send(errorBody('VALIDATION_INVALID_REQUEST', detail));
    }
    const pgCode = (error as { code?: string }).code;
    if (pgCode && PG_INPUT_ERRORS.has(pgCode)) {
      return reply.status(400).send(errorBody('VALIDATION_INVALID_REQUEST', `a value in the request cannot be stored: ${error.message}`));
    }
    switch (error.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return reply.status(400).send(errorBody('INVALID_JSON', `the request body is not valid JSON: ${error.message}`));
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.status(413).send(errorBody('PAYLOAD_TOO_LARGE', `the request body is larger than ${request.routeOptions.bodyLimit} bytes`));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.status(415).send(errorBody('UNSUPPORTED_MEDIA_TYPE', request.headers['content-type'] === undefined
          ? 'the request has a body but no Content-Type; send it as application/json'
          : 'send the request body as application/json'));
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return reply.status(400).send(errorBody('INVALID_CONTENT_LENGTH', 'the request body is not as long as its Content-Length says'));
      default:
        break;
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      // Fastify's own codes (FST_ERR_…) name its internals; the client gets a code of ours.
      const code = error.code && !error.code.startsWith('FST_') ? error.code : (CODE_OF_STATUS[error.statusCode] ?? 'BAD_REQUEST');
      return reply.status(error.statusCode).send(errorBody(code, error.message));
    }
    request.log.error({ err: error, req: request, tenantId: request.auth?.tenantId }, 'unhandled error');
    return reply.status(500).send(errorBody('INTERNAL_ERROR', 'internal server error'));
  });

  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(errorBody('ROUTE_NOT_FOUND', `no route ${request.method} ${shortened(request.url.split('?')[0], ECHOED_PATH_LENGTH_MAX)}`));
  });
}

/** The longest path a 404's detail repeats; a longer one is cut. */
const ECHOED_PATH_LENGTH_MAX = 200;

function shortened(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length)}…`;
}

const CODE_OF_STATUS: Record<number, string> = {
  400: 'BAD_REQUEST',
  404: 'ROUTE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  431: 'REQUEST_HEADERS_TOO_LARGE',
};

/** The longest path parameter the router accepts; no id or code of ours comes near it. */
export const PATH_PARAMETER_LENGTH_MAX = 500;

/**
 * The errors Fastify's router raises before any route or hook runs (a path
 * that is not valid percent-encoding, a path parameter over
 * PATH_PARAMETER_LENGTH_MAX, a failing route constraint), as ours. Fastify's
 * own answers have another shape and repeat the whole URL.
 */
export function routerError(error: FastifyError): AppError {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return new AppError('invalid', 'INVALID_URL', 'the URL path is not valid: a percent-encoded sequence does not decode to UTF-8');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('uri_too_long', 'URI_TOO_LONG', `a path parameter is longer than ${PATH_PARAMETER_LENGTH_MAX} characters`);
    default:
      return new AppError('invalid', 'BAD_REQUEST', 'the request cannot be routed');
  }
}

/**
 * Requests that Node's HTTP parser refuses never become Fastify requests:
 * malformed HTTP, a request line and headers over the header size limit
 * (16 KiB, which is also the longest URL), a request that does not arrive in
 * time. They are answered on the socket in the one error shape, with a request
 * id of their own, and the connection is closed. Nothing of the request is logged.
 */
export function answerClientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // A connection reset by the client has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let body = errorBody('MALFORMED_REQUEST', 'the request is not valid HTTP/1.1');
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    body = errorBody('REQUEST_HEADERS_TOO_LARGE', `the request line and headers are longer than ${http.maxHeaderSize} bytes; a URL is limited by the same figure`);
  } else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    body = errorBody('REQUEST_TIMEOUT', 'the request did not arrive in time');
  }
  const requestId = uuid();
  this.log.debug({ reqId: requestId, code: error.code, res: { statusCode: status } }, 'client error');
  if (socket.writable) {
    const text = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy(error);
}

/**
 * One log line per request, when it completes: the request id (the child
 * logger's `reqId`), the method, the route pattern and the query with its
 * values replaced (the logger's `req` serializer), the tenant, the status and
 * the response time. The URL, whose path and query can hold an email, a
 * referral code or a session id, is never logged; the arrival of a request is
 * logged at debug level only.
 */
export class RequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = { req: request, tenantId: request.auth?.tenantId, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }

  override routeNotFound(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.info({ req: request }, 'route not found');
  }
}

/** Sets the Deprecation and Sunset headers (RFC 9745, RFC 8594) of a deprecated route. */
export function markDeprecated(reply: FastifyReply, deprecation: Deprecation, deprecatedSince = new Date('2026-11-01T00:00:00Z')): void {
  reply.header('Deprecation', `@${Math.floor(deprecatedSince.getTime() / 1000)}`);
  reply.header('Sunset', deprecation.sunset.toUTCString());
  if (deprecation.successor) reply.header('Link', `<${deprecation.successor}>; rel="successor-version"`);
}

/** The caller's address as the service sees it (behind a proxy, set TRUST_PROXY so Fastify reads X-Forwarded-For). */
export function clientIp(request: FastifyRequest): string {
  return request.ip;
}

/** Common pieces of query and body schemas. */
export const Pagination = {
  limit: (max: number, fallback: number) =>
    Type.Integer({ minimum: 1, maximum: max, default: fallback, description: `Page size, 1 to ${max} (default ${fallback}).` }),
  cursor: () => Type.Optional(Type.String({ maxLength: 512, description: 'Opaque cursor from the previous page\'s `next_cursor`.' })),
};

export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function decodeCursor<T>(cursor: string | undefined): T | null {
  if (!cursor) return null;
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as T;
  } catch {
    throw new AppError('invalid', 'INVALID_CURSOR', 'cursor is not a cursor this service issued');
  }
}
