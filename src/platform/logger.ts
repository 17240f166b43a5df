import pino from 'pino';
import { NO_TRACE_FIELDS, traceLogFields } from './tracing.js';

export type Logger = pino.Logger;

/**
 * Logs go to stderr, so that command-line tools keep stdout for their result.
 * Tests pass a destination of their own to read what the service logs.
 *
 * Nothing a caller sends is logged as sent: a request is logged by its route
 * pattern and the names of its query parameters (values replaced), never its
 * URL, headers or body, so no email, session id or key reaches the log; see
 * docs/decisions/foundation.md. The serializers do this rather than pino's
 * `redact`, which costs every log line several microseconds.
 *
 * While tracing is on, a line written inside a traced request or job names
 * its `trace_id` and `span_id` (tracing.ts); otherwise the mixin adds nothing.
 */
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination({ dest: 2, sync: false })): Logger {
  return pino(
    {
      level,
      base: { service: 'loyalty' },
      serializers: { req: serializeRequest, res: serializeReply, err: serializeError },
      mixin: traceLogFields,
      // pino's own merge writes the line's fields into the mixin's object; the shared empty one is left alone.
      mixinMergeStrategy: (line, fields) => (fields === NO_TRACE_FIELDS ? line : Object.assign(fields, line)),
    },
    destination,
  );
}

/** What the `req` serializer reads: a Fastify request, or anything shaped like one. */
interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
  routeOptions?: { url?: string };
}

export const REDACTED = '[redacted]';
/** Query parameters named in a log line at most; a longer query is cut with a marker. */
const QUERY_NAMES_MAX = 20;
/** A query parameter's name is kept only when it looks like one of ours; anything else could be data. */
const QUERY_NAME_PATTERN = /^[A-Za-z0-9_.[\]-]{1,64}$/;

/**
 * The query string of a URL with every value replaced: `email=jane%40example.com&limit=5`
 * becomes `email=[redacted]&limit=[redacted]`. The names stay (they tell what
 * was asked); a name that does not look like a parameter name is replaced too.
 */
export function redactedQuery(url: string | undefined): string | undefined {
  const start = url?.indexOf('?') ?? -1;
  if (url === undefined || start < 0 || start === url.length - 1) return undefined;
  const parts = url.slice(start + 1).split('&', QUERY_NAMES_MAX + 1);
  const named = parts.slice(0, QUERY_NAMES_MAX).map((part) => {
    const equals = part.indexOf('=');
    const name = equals < 0 ? part : part.slice(0, equals);
    return `${QUERY_NAME_PATTERN.test(name) ? name : REDACTED}=${REDACTED}`;
  });
  if (parts.length > QUERY_NAMES_MAX) named.push('…');
  return named.join('&');
}

/**
 * A request as the log shows it: the route pattern (`/api/v1/admin/participants/:participant_id`,
 * never the path with its values; null when no route matched) and the redacted query.
 */
function serializeRequest(request: LoggedRequest) {
  return {
    method: request.method,
    route: request.routeOptions?.url ?? null,
    query: redactedQuery(request.url),
    remoteAddress: request.ip,
  };
}

function serializeReply(reply: { statusCode?: number }) {
  return { statusCode: reply.statusCode };
}

/**
 * Errors as pino's standard serializer shows them, less PostgreSQL's `detail`,
 * which quotes the row's values ("Key (email)=(jane@example.com) already
 * exists"); `constraint`, `table` and `column` still say what failed.
 */
function serializeError(error: Error) {
  return withoutDetail(pino.stdSerializers.err(error));
}

function withoutDetail<T>(serialized: T): T {
  if (serialized === null || typeof serialized !== 'object') return serialized;
  const fields = serialized as Record<string, unknown>;
  if (fields.detail !== undefined) fields.detail = REDACTED;
  if (Array.isArray(fields.aggregateErrors)) fields.aggregateErrors = fields.aggregateErrors.map(withoutDetail);
  return serialized;
}
