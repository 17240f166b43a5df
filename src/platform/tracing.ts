import {
  context,
  diag,
  propagation,
  trace,
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  isSpanContextValid,
  type Attributes,
  type Context,
  type DiagLogger,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { AppEnv, Role, TracingConfig } from '../config.js';
// pino's type, not logger.ts's alias: logger.ts imports this file for the trace fields of its lines.
import type { Logger } from 'pino';
import { AppError } from './errors.js';

/**
 * OpenTelemetry traces, off unless an OTLP endpoint is configured
 * (docs/decisions/operations.md, Traces). When off, none of the SDK is even
 * loaded: `startTracing` imports it, and every choke point that makes spans
 * (the request hook, the database layer, the job runner, a lane batch, the webhook attempt)
 * first asks `activeTracer()`, which is null, and goes its usual way.
 *
 * Spans are made by hand at those choke points rather than by
 * auto-instrumentation, which under ESM needs a loader hook (`--import` of
 * the SDK's module hooks before the service's own modules) and patches
 * libraries wholesale, recording URLs, headers and statement values that the
 * request-log policy keeps out of every record (decisions/foundation.md).
 * Attribute names are the OpenTelemetry semantic conventions' (stable ones
 * where they exist), written out rather than imported: the conventions
 * package is a megabyte of JavaScript that every process would load.
 *
 * What a span may carry: route patterns, status codes, statement texts with
 * every literal replaced, ids (tenant, job, delivery, destination), task and
 * event names, SQLSTATEs and error codes. Never a query string, a header,
 * a body, a parameter value or an error message (PostgreSQL's quote values).
 */

/** The tracer of the running SDK; null when tracing is off. */
let tracer: Tracer | null = null;

export function activeTracer(): Tracer | null {
  return tracer;
}

export function tracingOn(): boolean {
  return tracer !== null;
}

export interface Tracing {
  /** Sends the spans still waiting, then stops the SDK and unregisters it. */
  stop(): Promise<void>;
}

const TRACER_NAME = 'loyalty-service';
/** A collector that is down makes every batch fail: one warning per interval at most says so. */
const EXPORT_WARNING_INTERVAL_MS = 60_000;
/** How long stopping waits for the last spans to be sent. */
const STOP_FLUSH_MS_MAX = 3_000;

/** OpenTelemetry's own diagnostics (a failed export) as warnings in the service's log, at most one per interval. */
function diagnosticsTo(log: Logger): DiagLogger {
  let lastWarningAt = -Infinity;
  // A component's logger passes its name first (`OTLPExportDelegate`), then the message and any error.
  const warn = (...parts: unknown[]) => {
    const now = performance.now();
    if (now - lastWarningAt < EXPORT_WARNING_INTERVAL_MS) return;
    lastWarningAt = now;
    const message = parts.map((part) => (part instanceof Error ? part.message : String(part))).join(' ');
    log.warn({ component: 'tracing' }, `traces: ${message.slice(0, 500)}`);
  };
  const ignore = () => undefined;
  return { error: warn, warn, info: ignore, debug: ignore, verbose: ignore };
}

/**
 * Starts the SDK: spans are batched and posted to the OTLP/HTTP endpoint
 * (protobuf or JSON), the active span follows async work through
 * AsyncLocalStorage, and trace context travels as W3C `traceparent`.
 * One SDK per process; the sampler is the SDK's (OTEL_TRACES_SAMPLER,
 * parent-based always-on by default).
 */
export async function startTracing(config: TracingConfig, log: Logger, service: { env: AppEnv; role: Role }): Promise<Tracing> {
  if (tracer) throw new Error('tracing is already started in this process');
  const [{ BasicTracerProvider, BatchSpanProcessor }, { resourceFromAttributes }, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { OTLPTraceExporter }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-base'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/core'),
      config.protocol === 'http/json' ? import('@opentelemetry/exporter-trace-otlp-http') : import('@opentelemetry/exporter-trace-otlp-proto'),
    ]);
  const exporter = new OTLPTraceExporter({ url: config.tracesUrl });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'deployment.environment.name': service.env,
      'loyalty.role': service.role,
      ...config.resourceAttributes,
      'service.name': config.serviceName,
    }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: config.exportDelayMs })],
  });
  diag.setLogger(diagnosticsTo(log), DiagLogLevel.WARN);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  tracer = provider.getTracer(TRACER_NAME);
  // The origin only: a URL's user information or path may hold a collector's credentials.
  log.info({ endpoint: new URL(config.tracesUrl).origin, protocol: config.protocol, serviceName: config.serviceName }, 'traces are sent over OTLP');
  return {
    async stop() {
      tracer = null;
      // A collector that does not answer is retried for the exporter's timeout; the shutdown of the process does not wait that long.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), STOP_FLUSH_MS_MAX);
      });
      const flushed = await Promise.race([provider.shutdown().then(() => 'sent' as const), late]).catch((error: unknown) => {
        log.warn({ err: error, component: 'tracing' }, 'traces: the last spans could not be sent');
        return 'failed' as const;
      });
      clearTimeout(timer);
      if (flushed === 'late') log.warn({ component: 'tracing' }, `traces: the last spans were not sent within ${STOP_FLUSH_MS_MAX} ms of stopping; they are dropped`);
      trace.disable();
      propagation.disable();
      context.disable();
      diag.disable();
    },
  };
}

/**
 * What an error is, for `error.type`: an SQLSTATE, one of our error codes, or
 * the error's class. Never its message, which may quote a value.
 */
export function errorType(error: unknown): string {
  if (error instanceof AppError) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  return error instanceof Error ? error.name : 'unknown';
}

/**
 * Marks a span failed by `error`. A refusal the caller caused (an AppError
 * below 500: insufficient points, a conflict) is recorded as its code but
 * is not a failure of the service.
 */
export function recordFailure(span: Span, error: unknown): void {
  span.setAttribute('error.type', errorType(error));
  if (!(error instanceof AppError && error.status < 500)) span.setStatus({ code: SpanStatusCode.ERROR });
}

/**
 * Runs `fn` with `span` and ends the span when `fn` settles: failed
 * (`recordFailure`) if it throws. With `outcome`, the span also records in
 * that attribute how `fn` ended.
 */
export async function settleSpan<T>(
  span: Span,
  fn: (span: Span) => Promise<T>,
  outcome?: { attribute: string; succeeded: string; failed: string },
): Promise<T> {
  try {
    const result = await fn(span);
    if (outcome) span.setAttribute(outcome.attribute, outcome.succeeded);
    return result;
  } catch (error) {
    if (outcome) span.setAttribute(outcome.attribute, outcome.failed);
    recordFailure(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * Runs `fn` in a span that is a child of the active one; when tracing is off,
 * or nothing around is traced (a pump tick, a heartbeat), `fn` runs as is with
 * no span. The span ends when `fn` settles, failed if it throws.
 */
export async function childSpan<T>(name: string, options: { kind?: SpanKind; attributes?: Attributes }, fn: (span: Span | null) => Promise<T>): Promise<T> {
  const active = tracer;
  if (!active || !trace.getSpan(context.active())) return fn(null);
  return active.startActiveSpan(name, options, (span) => settleSpan(span, fn));
}

/**
 * Runs `fn` as the root span of a new trace, for work that no request or job
 * holds (a pump's batch); as is, with no span, when tracing is off. Call it
 * only once there is work: an idle look must not make a trace.
 */
export async function rootSpan<T>(name: string, options: { kind?: SpanKind; attributes?: Attributes }, fn: (span: Span | null) => Promise<T>): Promise<T> {
  const active = tracer;
  if (!active) return fn(null);
  return active.startActiveSpan(name, { ...options, root: true }, ROOT_CONTEXT, (span) => settleSpan(span, fn));
}

/**
 * Records a root span for work already done, from `startTime` to now, linked
 * to `traceparents`: for a statement that found its work and did it at once
 * (the outbox's take and fan-out), where a span opened before it would make a
 * trace of every idle look. Its statements are not its children. Nothing when
 * tracing is off.
 */
export function recordRootSpan(name: string, options: { kind?: SpanKind; attributes?: Attributes; startTime: Date; traceparents: Array<string | null> }): void {
  const active = tracer;
  if (!active) return;
  const { traceparents, ...spanOptions } = options;
  const span = active.startSpan(name, { ...spanOptions, root: true }, ROOT_CONTEXT);
  linkTraces(span, traceparents);
  span.end();
}

/** The active context while tracing is on (to carry it across a queue); undefined when off. */
export function currentContext(): Context | undefined {
  return tracer ? context.active() : undefined;
}

/** Runs `fn` in a context taken by `currentContext`; as is when there is none. */
export function inContext<T>(taken: Context | undefined, fn: () => T): T {
  return taken ? context.with(taken, fn) : fn();
}

// ---------------------------------------------------------------------------
// Jobs

/** The payload field that carries the trace context of the request or job that added a job. */
export const TRACEPARENT_FIELD = 'traceparent';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A job payload with the active trace context added, so that the job's span
 * joins the trace of the request (or job) that added it. Unchanged when
 * tracing is off or nothing is traced.
 */
export function withTraceparent(payload: unknown): unknown {
  if (!isPlainObject(payload)) return payload;
  const traceparent = currentTraceparent();
  return traceparent ? { ...payload, [TRACEPARENT_FIELD]: traceparent } : payload;
}

/** The active trace context as a W3C `traceparent`, for work handed on through a table; null when tracing is off or nothing is traced. */
export function currentTraceparent(): string | null {
  if (!tracer || !trace.getSpan(context.active())) return null;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/**
 * Links the span to the traces named by `traceparents` (distinct, at most
 * `max`): a batch consumer's span pointing at the requests that produced its
 * messages, as OpenTelemetry's messaging conventions do. Malformed values are
 * skipped.
 */
export function linkTraces(span: Span | null, traceparents: Array<string | null>, max = 64): void {
  if (!span) return;
  const links = [...new Set(traceparents.filter((t): t is string => typeof t === 'string'))]
    .slice(0, max)
    .map((traceparent) => trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent })))
    .filter((spanContext) => spanContext !== undefined && isSpanContextValid(spanContext))
    .map((spanContext) => ({ context: spanContext! }));
  if (links.length > 0) span.addLinks(links);
}

/** `linkTraces` on the active span (a job's, a request's); nothing when tracing is off or nothing is traced. */
export function linkActiveTraces(traceparents: Array<string | null>, max = 64): void {
  if (!tracer) return;
  linkTraces(trace.getSpan(context.active()) ?? null, traceparents, max);
}

/** The payload as its handler expects it (without the trace context) and the trace context, if it carries one. */
export function splitTraceparent(payload: unknown): { payload: unknown; traceparent: string | null } {
  if (!isPlainObject(payload) || !(TRACEPARENT_FIELD in payload)) return { payload, traceparent: null };
  const { [TRACEPARENT_FIELD]: traceparent, ...own } = payload;
  return { payload: own, traceparent: typeof traceparent === 'string' ? traceparent : null };
}

export interface TracedJob {
  id: string;
  task: string;
  /** This attempt's number, from 1. */
  attempt: number;
  tenantId: string | undefined;
}

/**
 * Runs one job in a span of its own (`process <task>`): a child of the trace
 * that added the job when its payload carries one, else the root of a new trace.
 */
export async function traceJob(job: TracedJob, traceparent: string | null, run: () => Promise<void>): Promise<void> {
  const active = tracer;
  if (!active) return run();
  const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
  const attributes: Attributes = {
    'messaging.system': 'graphile_worker',
    'messaging.operation.name': 'process',
    'messaging.destination.name': job.task,
    'messaging.message.id': job.id,
    'loyalty.job.attempt': job.attempt,
  };
  if (job.tenantId) attributes['loyalty.tenant_id'] = job.tenantId;
  return active.startActiveSpan(`process ${job.task}`, { kind: SpanKind.CONSUMER, attributes }, parent, (span) =>
    settleSpan(span, run, { attribute: 'loyalty.job.outcome', succeeded: 'succeeded', failed: 'failed' }),
  );
}

// ---------------------------------------------------------------------------
// Log correlation

/** Returned when a log line has no trace to name; the logger merges nothing then. */
export const NO_TRACE_FIELDS: Readonly<Record<string, never>> = Object.freeze({});

/**
 * `trace_id` and `span_id` of the active span, for every log line written
 * inside a traced request or job (the logger's mixin). While tracing is off
 * this is one comparison and returns NO_TRACE_FIELDS.
 */
export function traceLogFields(): Record<string, string> {
  if (!tracer) return NO_TRACE_FIELDS;
  const span = trace.getSpan(context.active());
  if (!span) return NO_TRACE_FIELDS;
  const spanContext = span.spanContext();
  if (!isSpanContextValid(spanContext)) return NO_TRACE_FIELDS;
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
