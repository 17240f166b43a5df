import { context, trace, SpanKind, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type pg from 'pg';
import { activeTracer, recordFailure, settleSpan } from './tracing.js';

/**
 * Database spans (see tracing.ts): one per transaction and one per statement,
 * made only inside a traced request, job or event batch, so that the job queue's polling,
 * the pumps' idle looks and the heartbeats make none.
 *
 * A statement's text is recorded with every string literal replaced by `?`
 * and comments dropped. Statements with parameters hold no values anyway
 * (`$1`); the one-round-trip reads (`tenantRead`) and the tenant setting
 * inline their values as escaped literals, and those are exactly what the
 * replacement removes. Parameter values are never recorded.
 */

/** A statement text in a span at most; the rest is cut (long CTEs run to several kilobytes). */
export const STATEMENT_TEXT_CHARS_MAX = 2048;
/** Shapes of parameterised statements kept; the service has a few hundred, so the cache only empties on a runaway. */
const SHAPE_CACHE_MAX = 2000;

const IDENTIFIER_CHAR = /[A-Za-z0-9_$]/;
/** The opening of a dollar-quoted string: `$$` or `$tag$` (a tag does not start with a digit, so `$1` is a parameter). */
const DOLLAR_TAG = /^\$(?:[A-Za-z_][A-Za-z0-9_]{0,62})?\$/;

/**
 * The statement with every string literal (`'…'`, `E'…'`, `$tag$…$tag$`)
 * replaced by `?`, comments removed and white space collapsed. Quoted
 * identifiers (`"…"`) are kept: they are names, not values.
 */
export function statementShape(text: string): string {
  let out = '';
  let i = 0;
  const n = text.length;
  const space = () => {
    if (out !== '' && !out.endsWith(' ')) out += ' ';
  };
  while (i < n) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
      space();
    } else if (c === '/' && next === '*') {
      // Block comments nest in PostgreSQL.
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (text[i] === '/' && text[i + 1] === '*') (depth++, (i += 2));
        else if (text[i] === '*' && text[i + 1] === '/') (depth--, (i += 2));
        else i++;
      }
      space();
    } else if (c === "'") {
      // E'…' (escape string): the E goes with the literal, and a backslash escapes the next character.
      const escaped = /[Ee]$/.test(out) && !IDENTIFIER_CHAR.test(out[out.length - 2] ?? '');
      if (escaped) out = out.slice(0, -1);
      i++;
      while (i < n) {
        if (escaped && text[i] === '\\') i += 2;
        else if (text[i] === "'" && text[i + 1] === "'") i += 2;
        else if (text[i] === "'") break;
        else i++;
      }
      i++;
      out += '?';
    } else if (c === '"') {
      const start = i;
      i++;
      while (i < n) {
        if (text[i] === '"' && text[i + 1] === '"') i += 2;
        else if (text[i] === '"') break;
        else i++;
      }
      i++;
      out += text.slice(start, i);
    } else if (c === '$' && !IDENTIFIER_CHAR.test(out[out.length - 1] ?? '') && DOLLAR_TAG.test(text.slice(i, i + 66))) {
      // A dollar-quoted string ($$…$$, $body$…$body$); `$1` is a parameter and does not match.
      const tag = DOLLAR_TAG.exec(text.slice(i, i + 66))![0];
      const end = text.indexOf(tag, i + tag.length);
      i = end < 0 ? n : end + tag.length;
      out += '?';
    } else if (c === ' ' || c === '\n' || c === '\t' || c === '\r') {
      space();
      i++;
    } else {
      out += c;
      i++;
    }
  }
  out = out.trim();
  return out.length > STATEMENT_TEXT_CHARS_MAX ? `${out.slice(0, STATEMENT_TEXT_CHARS_MAX)}…` : out;
}

interface Shape {
  text: string;
  operation: string;
}

const shapes = new Map<string, Shape>();

function shapeOf(text: string, cacheable: boolean): Shape {
  const cached = cacheable ? shapes.get(text) : undefined;
  if (cached) return cached;
  const shaped = statementShape(text);
  const shape = { text: shaped, operation: (/^[A-Za-z]+/.exec(shaped)?.[0] ?? 'QUERY').toUpperCase() };
  if (cacheable) {
    if (shapes.size >= SHAPE_CACHE_MAX) shapes.clear();
    shapes.set(text, shape);
  }
  return shape;
}

type QueryFunction = (...args: unknown[]) => unknown;

function finishQuery(span: Span, error: unknown, result?: unknown): void {
  if (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') span.setAttribute('db.response.status_code', code);
    recordFailure(span, error);
  } else {
    const rows = (result as { rowCount?: unknown } | undefined)?.rowCount;
    if (typeof rows === 'number') span.setAttribute('db.response.returned_rows', rows);
  }
  span.end();
}

/** A client span for a statement (or an extended message of several), its literals replaced. */
function startStatementSpan(tracer: Tracer, parent: Context, text: string, cacheable: boolean, poolName: string, database: string | undefined): Span {
  const shape = shapeOf(text, cacheable);
  const attributes: Attributes = {
    'db.system.name': 'postgresql',
    'db.operation.name': shape.operation,
    'db.query.text': shape.text,
    'db.client.connection.pool.name': poolName,
  };
  if (database) attributes['db.namespace'] = database;
  return tracer.startSpan(shape.operation, { kind: SpanKind.CLIENT, attributes }, parent);
}

/**
 * Makes every statement on this connection a span while tracing is on and a
 * traced request or job is active. Installed on each new connection of the
 * service's pools when tracing is on; a connection of a process that traces
 * nothing is never wrapped.
 */
export function traceQueries(client: pg.PoolClient, poolName: string): void {
  const query = client.query.bind(client) as QueryFunction;
  const database = (client as unknown as { database?: string }).database;
  (client as unknown as { query: QueryFunction }).query = (...args: unknown[]) => {
    const tracer = activeTracer();
    const parent = context.active();
    if (!tracer || !trace.getSpan(parent)) return query(...args);
    const [first, second] = args;
    // Cursors and other submittables answer by events, not by a promise or callback; an extended
    // message (db-extended.ts) says it can be traced, and answers through its callback.
    if (typeof (first as { submit?: unknown } | null)?.submit === 'function') {
      const message = first as { traced?: unknown; text?: unknown; callback?: unknown };
      if (message.traced !== true || typeof message.text !== 'string' || typeof message.callback !== 'function') return query(...args);
      const span = startStatementSpan(tracer, parent, message.text, true, poolName, database);
      const callback = message.callback as (error: unknown, result: unknown) => void;
      message.callback = (error: unknown, result: unknown) => {
        finishQuery(span, error, Array.isArray(result) ? undefined : result);
        callback(error, result);
      };
      return query(...args);
    }
    const text = typeof first === 'string' ? first : (first as { text?: unknown } | null)?.text;
    if (typeof text !== 'string') return query(...args);
    const values = Array.isArray(second) ? second : (first as { values?: unknown }).values;
    const span = startStatementSpan(tracer, parent, text, Array.isArray(values) && values.length > 0, poolName, database);
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      // The pool's own `query()` passes a callback.
      const callback = args[last] as (error: unknown, result: unknown) => void;
      args[last] = (error: unknown, result: unknown) => {
        finishQuery(span, error, result);
        callback(error, result);
      };
      return query(...args);
    }
    let pending: unknown;
    try {
      pending = query(...args);
    } catch (error) {
      finishQuery(span, error);
      throw error;
    }
    (pending as Promise<unknown>).then(
      (result) => finishQuery(span, null, result),
      (error: unknown) => finishQuery(span, error),
    );
    return pending;
  };
}

/**
 * Runs a transaction in a span of its own (`transaction`), the parent of its
 * statements, when a traced request or job is active. `run` reports each
 * attempt (serialization failures run it again) through `attempted`.
 */
export async function traceTransaction<T>(poolName: string, run: (attempted: (attempt: number) => void) => Promise<T>): Promise<T> {
  const tracer = activeTracer();
  if (!tracer || !trace.getSpan(context.active())) return run(() => undefined);
  const attributes: Attributes = { 'db.system.name': 'postgresql', 'db.client.connection.pool.name': poolName };
  return tracer.startActiveSpan('transaction', { kind: SpanKind.INTERNAL, attributes }, (span) =>
    settleSpan(span, () => run((attempt) => span.setAttribute('loyalty.transaction.attempts', attempt)), {
      attribute: 'loyalty.transaction.outcome',
      succeeded: 'committed',
      failed: 'rolled_back',
    }),
  );
}
