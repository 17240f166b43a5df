import type { Permission } from './permissions.js';
import { Type, type TSchema } from '@sinclair/typebox';
import type { ErrorObject } from 'ajv';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import http from 'node:http';
import type { Socket } from 'node:net';
import { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type preValidationHookHandler } from 'fastify';
import pg from 'pg';
import { AppError, errorBody, ERROR_VERSION_FIELD } from './errors.js';
import { CommitOutcomeUnknown } from './db.js';
import { isStorableText, unstorableTextError } from './body-check.js';
import { compileValidator, describeProblems, FIELD_ERRORS_MAX, registerSharedSchemas, requestPartOf } from './validation.js';
import { uuid } from './ids.js';
import { onFirstUse } from './first-use.js';
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
    /**
     * The handler checks the text of each item of the body itself and refuses
     * the bad items one by one (an event batch, where one bad event must not
     * sink the others): the body as a whole is then not refused for U+0000 or
     * a lone surrogate. Its parameters and query still are.
     */
    textCheckedPerItem?: boolean;
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
    /**
     * A problem a hook found before the schema check and refuses after it
     * (a required idempotency key sent neither way), so that a request the
     * schema refuses lists it beside the schema's own problems.
     */
    problemBeforeValidation: AppError | null;
  }
}

/** One entry of an error body's `errors`: see FieldError in platform/errors.ts. */
export const FieldErrorSchema = Type.Object(
  {
    in: Type.Union([Type.Literal('body'), Type.Literal('query'), Type.Literal('params'), Type.Literal('headers')], { description: 'The part of the request `path` points into.' }),
    path: Type.String({ description: 'A JSON Pointer (RFC 6901) into that part: `/effects/0/points`; `/` is the part as a whole.', examples: ['/effects/0/points'] }),
    code: Type.String({
      description:
        'What kind of failure, stable and machine-readable: `required`, `type`, `enum`, `const`, `format`, `minimum`, `maximum`, `exclusive_minimum`, ' +
        '`exclusive_maximum`, `multiple_of`, `min_length`, `max_length`, `pattern`, `additional_property`, `min_items`, `max_items`, `unique_items`, ' +
        '`min_properties`, `max_properties`, `any_of`, `one_of`, `unstorable_text`, `invalid`, or a code of the route. New codes may appear.',
    }),
    message: Type.String({ description: 'What is wrong with the field, in plain words: "must be at least 1", "is required".' }),
    allowed: Type.Optional(Type.Array(Type.Unknown(), { description: 'For `enum` and `const` (and a literal among other types, `any_of`): the values the field may take.' })),
    limit: Type.Optional(Type.Number({ description: 'For `minimum`, `maximum`, their exclusive forms, `multiple_of`, `min_length`, `max_length`, `min_items` and `max_items`: the bound the value broke, so a form can say it in its own words.' })),
  },
  { additionalProperties: false, title: 'FieldError' },
);

export const ErrorResponse = Type.Object(
  {
    detail: Type.String({ description: 'What is wrong, for a human: the first problem, and how many more `errors` lists.' }),
    code: Type.String({ description: 'A stable machine-readable code. New codes may appear; tolerate unknown ones.' }),
    [ERROR_VERSION_FIELD]: Type.Literal(1, { description: 'Version of the coded error envelope.' }),
    request_id: Type.String({ description: 'The id of this request, also in the `X-Request-Id` header: quote it to support, who find the request in the logs by it.', examples: ['9b2f4c1e-3a57-4d0b-8e61-5f0a2c7d9e14'] }),
    doc_url: Type.String({
      description: "The reference entry of the operation that answered (its error answers list their codes and what they mean), or the reference's top where no route answered.",
      examples: ['https://loyalty.example.com/docs#/points/deductPoints'],
    }),
    errors: Type.Optional(
      Type.Array(FieldErrorSchema, {
        maxItems: FIELD_ERRORS_MAX,
        description:
          `Each field at fault (a 400 or 422 that can name one), up to ${FIELD_ERRORS_MAX}. Every 400 of a request that does not match the ` +
          'route\'s schema has it; a check of the route adds it when the problem is one field.',
      }),
    ),
  },
  { additionalProperties: true, $id: 'ErrorResponse', title: 'Error' },
);

export const errorRef = Type.Ref('ErrorResponse');

/** The detail of 503 COMMIT_OUTCOME_UNKNOWN (`CommitOutcomeUnknown`, platform/db.ts), which every route's documentation quotes. */
export const COMMIT_OUTCOME_UNKNOWN_DETAIL =
  'the connection to the database was lost while the change was being committed, so it may or may not have been recorded: ' +
  'read the resource before repeating the request (a repeat with the same idempotency key is never applied twice)';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid parameters or request body.',
  401: 'Missing or invalid credential.',
  403: 'The credential lacks the required scope, or belongs to another kind of caller.',
  404: 'The resource does not exist (or belongs to another tenant).',
  409: 'Duplicate action or a conflicting request in progress.',
  413: 'The request body is larger than the limit.',
  414: 'A path parameter is longer than the router accepts (500 characters).',
  415: 'The request body is not JSON.',
  422: 'Validation failure or guarded operation failure.',
  429: 'Rate limit exceeded; see Retry-After.',
  500: 'Server error.',
  503: `The process is at its limit of requests in progress (SERVICE_OVERLOADED): nothing was done; retry after Retry-After seconds. Or COMMIT_OUTCOME_UNKNOWN: ${COMMIT_OUTCOME_UNKNOWN_DETAIL}.`,
};

/** Adds the standard error responses to a route's schema so that OpenAPI documents every error. */
export function withErrorResponses(schema: { response?: Record<string | number, unknown> }, auth: AuthMode | undefined, url = ''): void {
  schema.response ??= {};
  const statuses = [400, 404, 409, 413, 415, 422, 429, 500, 503];
  if (auth && auth !== 'public') statuses.push(401, 403);
  // The router refuses an overlong path parameter before any route runs (routerError).
  if (url.includes(':')) statuses.push(414);
  for (const status of statuses) {
    if (!(status in schema.response)) {
      schema.response[status] = { ...Type.Ref('ErrorResponse'), description: ERROR_DESCRIPTIONS[status] };
    }
  }
}

/**
 * Routes' schemas are compiled by platform/validation.ts: bodies strictly (no
 * type coercion, no silently removed properties); query strings, params and
 * headers, which arrive as text, coerced to the declared types.
 */
export function installValidators(app: FastifyInstance, schemas: TSchema[]): void {
  registerSharedSchemas(schemas);
  app.setValidatorCompiler(({ schema, httpPart }) => compileValidator(schema, httpPart === 'body' ? 'none' : 'text'));
  app.addHook('preValidation', refuseUnstorableText);
}

/**
 * Before any schema: every path parameter, query parameter and JSON body of
 * every route is refused with a 400 naming the field when a string or a
 * property name in it holds U+0000 or a lone UTF-16 surrogate, which
 * PostgreSQL cannot store (and would refuse with its own text). A body that is
 * a stream (a file upload) is not walked; the file's reader checks its cells.
 * A callback hook: it runs on every request and needs no promise.
 */
const refuseUnstorableText: preValidationHookHandler = (request, _reply, done) => {
  const problem =
    unstorableTextError(request.params, { in: 'params', label: 'params' }) ??
    unstorableTextError(request.query, { in: 'query', label: 'querystring' }) ??
    (request.routeOptions.config?.textCheckedPerItem ? null : unstorableTextError(request.body, { in: 'body', label: 'body' }));
  if (problem) done(problem);
  else done();
};

/**
 * Response serializers, compiled once per distinct schema instead of once per
 * route and status, and at the first answer that needs one rather than at
 * start (platform/first-use.ts). Every route documents the same ten error
 * responses, so without the first fast-json-stringify would build (and keep)
 * about 1,400 identical error serializers, each with its own copy of the
 * shared schemas; without the second the serializers of every answer no
 * request has given yet.
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
        const built = onFirstUse(() => compile(route));
        serialize = ((data: unknown) => built()(data)) as ReturnType<typeof compile>;
        compiled.set(key, serialize);
      }
      return serialize;
    };
  };
}

/**
 * A PostgreSQL error of class 22 ("data exception": a value the server cannot
 * take, such as text that is not a number or a date out of range) is a value
 * from the request that no check caught. It is answered as a 400 in words of
 * ours: the server's own text names types, encodings and internals, and
 * sometimes repeats the value. The error is logged with the request id, so
 * the check that missed it can be added.
 */
function isDataException(error: unknown): error is pg.DatabaseError {
  return error instanceof pg.DatabaseError && typeof error.code === 'string' && error.code.startsWith('22');
}

/**
 * The absolute address the service is reached at, for links in answers
 * (embed, referral, invitation and documentation URLs): PUBLIC_BASE_URL, or
 * the origin the request came to (behind a proxy: as TRUST_PROXY lets it tell).
 */
export function publicOrigin(request: FastifyRequest, publicBaseUrl: string | null): string {
  return publicBaseUrl?.replace(/\/+$/, '') ?? `${request.protocol}://${request.host}`;
}

/**
 * What every error body carries beside its code, for the caller to quote and
 * to read: `request_id` (the `X-Request-Id` of the answer, which support finds
 * in the logs) and `doc_url`, the reference entry of the operation that
 * answered (its error answers list their codes and what they mean), or the
 * reference itself where no route answered.
 */
export function errorContext(request: FastifyRequest, publicBaseUrl: string | null): { request_id: string; doc_url: string } {
  const base = publicOrigin(request, publicBaseUrl);
  const schema = request.routeOptions?.schema as { operationId?: unknown; tags?: unknown } | undefined;
  const tag = Array.isArray(schema?.tags) && typeof schema.tags[0] === 'string' ? schema.tags[0] : 'default';
  // Swagger UI's deep links: the tag with its spaces as underscores, then the operation id.
  const anchor = typeof schema?.operationId === 'string' ? `#/${encodeURIComponent(tag.replace(/\s/g, '_'))}/${schema.operationId}` : '';
  return { request_id: request.id, doc_url: `${base}/docs${anchor}` };
}

export function installErrorHandlers(app: FastifyInstance, publicBaseUrl: string | null): void {
  const answer = (reply: FastifyReply, status: number, body: ReturnType<typeof errorBody>) =>
    reply.status(status).send({ ...body, ...errorContext(reply.request, publicBaseUrl) });
  app.setErrorHandler((error: FastifyError & { validation?: ErrorObject[]; validationContext?: string }, request, reply) => {
    // Refused before its body was read to the end (an upload stopped at a too-long line): the connection
    // closes after the answer, so the rest of the body is never waited for and no socket lingers half-read.
    if (!request.raw.complete) reply.header('connection', 'close');
    // A caller without a credential is refused whatever is wrong with its body:
    // the body was read only to look for a participant session in it.
    const appError = error instanceof AppError ? error : request.credentialRefusal;
    if (appError) {
      for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
      return answer(reply, appError.status, errorBody(appError.code, appError.message, appError.extra));
    }
    if (error instanceof CommitOutcomeUnknown) {
      request.log.warn({ err: error, req: request, tenantId: request.auth?.tenantId }, 'the answer to a COMMIT was lost');
      return answer(reply, 503, errorBody('COMMIT_OUTCOME_UNKNOWN', COMMIT_OUTCOME_UNKNOWN_DETAIL));
    }
    if (error.validation) {
      const part = error.validationContext ?? 'body';
      const { detail, errors } = describeProblems(error.validation, { in: requestPartOf(part), label: part });
      const early = request.problemBeforeValidation;
      if (early) {
        return answer(reply, 400, errorBody('VALIDATION_INVALID_REQUEST', `${detail}; and ${early.message}`, { errors: [...errors, ...(early.extra.errors ?? [])] }));
      }
      return answer(reply, 400, errorBody('VALIDATION_INVALID_REQUEST', detail, { errors }));
    }
    if (isDataException(error)) {
      request.log.warn({ err: error, req: request, tenantId: request.auth?.tenantId, sqlState: error.code }, 'a value of the request was refused by the database');
      return answer(reply, 400, errorBody('VALIDATION_INVALID_REQUEST', 'a value in the request cannot be used: a text, number or date is malformed or out of range'));
    }
    switch (error.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return answer(reply, 400, errorBody('INVALID_JSON', `the request body is not valid JSON: ${error.message}`));
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return answer(reply, 413, errorBody('PAYLOAD_TOO_LARGE', `the request body is larger than ${request.routeOptions.bodyLimit} bytes`));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return answer(reply, 415, errorBody('UNSUPPORTED_MEDIA_TYPE', request.headers['content-type'] === undefined
          ? 'the request has a body but no Content-Type; send it as application/json'
          : 'send the request body as application/json'));
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return answer(reply, 400, errorBody('INVALID_CONTENT_LENGTH', 'the request body is not as long as its Content-Length says'));
      default:
        break;
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      // Fastify's own codes (FST_ERR_…) name its internals; the client gets a code of ours.
      const code = error.code && !error.code.startsWith('FST_') ? error.code : (CODE_OF_STATUS[error.statusCode] ?? 'BAD_REQUEST');
      return answer(reply, error.statusCode, errorBody(code, error.message));
    }
    request.log.error({ err: error, req: request, tenantId: request.auth?.tenantId }, 'unhandled error');
    return answer(reply, 500, errorBody('INTERNAL_ERROR', 'internal server error'));
  });

  app.setNotFoundHandler((request, reply) => {
    answer(reply, 404, errorBody('ROUTE_NOT_FOUND', `no route ${request.method} ${shortened(request.url.split('?')[0], ECHOED_PATH_LENGTH_MAX)}`));
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
  body = { ...body, request_id: requestId, doc_url: '/docs' } as typeof body;
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

/**
 * What a field of a cursor may be. A cursor comes back from the client, so
 * its fields are input like any other and are checked before SQL sees them:
 * - `timestamp`: an ISO 8601 date-time as the service writes it (`T` or a
 *   space, up to 6 decimals, `Z` or an offset), a real date of years 1000 to 9999;
 * - `uuid`: a UUID in its text form;
 * - `text`: a string of at most CURSOR_TEXT_LENGTH_MAX characters that PostgreSQL can store;
 * - `int16`, `int32`, `int64`: a whole number from 0 to the top of PostgreSQL's
 *   smallint or integer, or to 2^53 - 1 for a bigint that the service reads as a number;
 * - `digits`: a bigint read as text (an id selected as `id::text`), a string of digits up to 2^63 - 1.
 */
export type CursorField = 'timestamp' | 'uuid' | 'text' | 'int16' | 'int32' | 'int64' | 'digits';
type CursorValue<F extends CursorField> = F extends 'int16' | 'int32' | 'int64' ? number : string;

/** The longest text field of a cursor: longer than any key, code or email of ours. */
const CURSOR_TEXT_LENGTH_MAX = 512;
const CURSOR_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(Z|[+-]\d{2}(:?\d{2})?)?$/;
const CURSOR_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const INT64_MAX = 9_223_372_036_854_775_807n;

function isTimestamp(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const match = CURSOR_TIMESTAMP.exec(value);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  if (year < 1000 || hour > 23 || minute > 59 || second > 59) return false;
  // A day the calendar has: 2026-02-30 comes back as March.
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function isCursorField(kind: CursorField, value: unknown): boolean {
  switch (kind) {
    case 'timestamp':
      return isTimestamp(value);
    case 'uuid':
      return typeof value === 'string' && CURSOR_UUID.test(value);
    case 'text':
      return typeof value === 'string' && value.length <= CURSOR_TEXT_LENGTH_MAX && isStorableText(value);
    case 'int16':
      return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= 32_767;
    case 'int32':
      return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= 2_147_483_647;
    case 'int64':
      return Number.isSafeInteger(value) && (value as number) >= 0;
    case 'digits':
      return typeof value === 'string' && /^\d{1,19}$/.test(value) && BigInt(value) <= INT64_MAX;
  }
}

/** Cursor fields of a cursor decoded without a declaration: a timestamp by its name, else text or a whole number. */
const TIMESTAMP_NAME = /^(at|c|.+_at)$/;

function isUndeclaredField(name: string, value: unknown): boolean {
  if (TIMESTAMP_NAME.test(name)) return isTimestamp(value);
  return isCursorField('text', value) || isCursorField('int64', value);
}

const invalidCursor = () => new AppError('invalid', 'INVALID_CURSOR', 'cursor is not valid: send the next_cursor of the previous page as it was given');

/**
 * The fields of a cursor from `encodeCursor`, each checked against its
 * declared kind; anything else (not base64url JSON, not an object, a field
 * missing, of the wrong kind or not declared) is a 400 INVALID_CURSOR, so
 * that no forged cursor reaches SQL. Without `fields` (callers not yet
 * declaring theirs), the object's values must be storable text or whole
 * numbers, and fields named like timestamps (`at`, `c`, `…_at`) timestamps.
 */
export function decodeCursor<const F extends Record<string, CursorField>>(cursor: string | undefined, fields: F): { [K in keyof F]: CursorValue<F[K]> } | null;
/** @deprecated Declare the cursor's fields, so that each is checked against its kind. */
export function decodeCursor<T>(cursor: string | undefined): T | null;
export function decodeCursor(cursor: string | undefined, fields?: Record<string, CursorField>): Record<string, unknown> | null {
  if (!cursor) return null;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)) throw invalidCursor();
  const value = decoded as Record<string, unknown>;
  const names = Object.keys(value);
  if (fields) {
    if (names.length !== Object.keys(fields).length) throw invalidCursor();
    for (const [name, kind] of Object.entries(fields)) {
      if (!Object.hasOwn(value, name) || !isCursorField(kind, value[name])) throw invalidCursor();
    }
  } else {
    if (names.length === 0) throw invalidCursor();
    for (const name of names) if (!isUndeclaredField(name, value[name])) throw invalidCursor();
  }
  return value;
}
