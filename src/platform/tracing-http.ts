import { context, propagation, trace, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { activeTracer } from './tracing.js';

/**
 * One server span per HTTP request (see tracing.ts), named by its method and
 * route pattern (`POST /api/v1/gamify/points/grant`; the method alone when no
 * route matched), with the status code and the caller's tenant. As in the
 * request log (decisions/foundation.md): never the path with its values, the
 * query, a header, the body or the caller's address.
 *
 * The operations routes (`trace: false`: probes and metrics) are not traced.
 *
 * An incoming W3C `traceparent` (from the tenant's gateway or a load
 * balancer) is honoured as the parent; `tracestate` and baggage are not read,
 * since they could carry whatever the caller put in them.
 *
 * Must be the first `onRequest` hook, so that every later hook, the body
 * parsing and the handler run inside the span: the request's and the reply's
 * event emitters are bound to its context, because the body arrives through
 * socket events that would otherwise run outside it.
 */
export function traceRequests(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const tracer = activeTracer();
    if (!tracer || request.routeOptions.config?.trace === false) return done();
    const traceparent = request.headers.traceparent;
    const parent = typeof traceparent === 'string' ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
    const route = request.routeOptions.url;
    const attributes: Attributes = { 'http.request.method': request.method };
    if (route) attributes['http.route'] = route;
    const span = tracer.startSpan(route ? `${request.method} ${route}` : request.method, { kind: SpanKind.SERVER, attributes }, parent);
    const traced = trace.setSpan(parent, span);
    context.bind(traced, request.raw);
    context.bind(traced, reply.raw);
    // `close` comes after `finish`, and also when the caller went away first.
    reply.raw.once('close', () => {
      const status = reply.raw.statusCode;
      span.setAttribute('http.response.status_code', status);
      const tenantId = request.auth?.tenantId;
      if (tenantId) span.setAttribute('loyalty.tenant_id', tenantId);
      if (status >= 500) {
        span.setAttribute('error.type', String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      if (!reply.raw.writableFinished) span.setAttribute('loyalty.request.aborted', true);
      span.end();
    });
    context.with(traced, done);
  });
}
