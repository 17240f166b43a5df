import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { trace } from '@opentelemetry/api';
import { loadConfig, ConfigError } from '../src/config.js';
import { activeTracer, startTracing, tracingOn } from '../src/platform/tracing.js';
import { createLogger } from '../src/platform/logger.js';
import { startReceiver } from '../src/modules/webhooks/testing.js';
import { statementShape } from '../src/platform/tracing-db.js';
import { startTestService, waitFor } from './helper.js';

/**
 * Traces (docs/decisions/operations.md, Traces): off unless an OTLP endpoint
 * is configured; when on, a request is a server span named by its route
 * pattern with its transactions and statements below it, a job added during
 * the request continues the request's trace, log lines name the trace, and no
 * span carries a value the caller sent.
 */

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  status: number;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
}

interface Receiver {
  url: string;
  /** Every JSON body posted, as received. */
  bodies: string[];
  /** Every body posted in protobuf. */
  protobufBodies: Buffer[];
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type OtlpAttribute = { key: string; value: OtlpValue };

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  const attributes: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    attributes[key] = value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue;
  }
  return attributes;
}

/** A local OTLP/HTTP receiver: collects what the JSON exporter posts to /v1/traces. */
async function startOtlpReceiver(): Promise<Receiver> {
  const bodies: string[] = [];
  const protobufBodies: Buffer[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'POST' && request.url === '/v1/traces') {
        if (request.headers['content-type'] === 'application/x-protobuf') {
          protobufBodies.push(Buffer.concat(chunks));
          // An empty ExportTraceServiceResponse.
          response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
          return;
        }
        bodies.push(Buffer.concat(chunks).toString('utf8'));
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    protobufBodies,
    spans() {
      return bodies.flatMap((body) =>
        (JSON.parse(body).resourceSpans ?? []).flatMap((resourceSpans: any) =>
          (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans: any) =>
            (scopeSpans.spans ?? []).map((span: any) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              status: span.status?.code ?? 0,
              attributes: attributesOf(span.attributes),
              resource: attributesOf(resourceSpans.resource?.attributes),
              links: (span.links ?? []).map((link: any) => ({ traceId: link.traceId, spanId: link.spanId })),
            })),
          ),
        ),
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** True when `ancestor` is `span`'s parent, grandparent, … among the spans received. */
function descendsFrom(span: ReceivedSpan, ancestor: ReceivedSpan, all: ReceivedSpan[]): boolean {
  const byId = new Map(all.map((s) => [s.spanId, s]));
  let current: ReceivedSpan | undefined = span;
  for (let depth = 0; current && depth < 50; depth++) {
    if (current.parentSpanId === ancestor.spanId) return current.traceId === ancestor.traceId;
    current = byId.get(current.parentSpanId);
  }
  return false;
}

const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const SPAN_KIND_CONSUMER = 5;

test('tracing is configured by the OpenTelemetry variables and off without an endpoint', () => {
  const base = { APP_ENV: 'test' };
  assert.equal(loadConfig(base).tracing, null);
  assert.equal(loadConfig({ ...base, OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing, null);
  const general = loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing!;
  assert.equal(general.tracesUrl, 'http://collector:4318/v1/traces');
  assert.equal(general.protocol, 'http/protobuf');
  assert.equal(general.serviceName, 'loyalty-service');
  assert.equal(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/otlp/' }).tracing!.tracesUrl, 'http://collector:4318/otlp/v1/traces');
  const specific = loadConfig({
    ...base,
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/api/spans',
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource,service.namespace=loyalty%20eu',
  }).tracing!;
  assert.equal(specific.tracesUrl, 'https://traces.example/api/spans');
  assert.equal(specific.protocol, 'http/json');
  assert.equal(specific.serviceName, 'from-resource');
  assert.equal(specific.resourceAttributes['service.namespace'], 'loyalty eu');
  assert.equal(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: 'billing-api', OTEL_RESOURCE_ATTRIBUTES: 'service.name=x' }).tracing!.serviceName, 'billing-api');
  assert.equal(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).tracing, null);
  assert.equal(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing, null);
  assert.throws(() => loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), ConfigError);
  assert.throws(() => loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), ConfigError);
  assert.throws(() => loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'zipkin' }), ConfigError);
});

test('a statement is traced with every literal replaced, comments dropped', () => {
  const inlined = `BEGIN; SELECT set_config('app.tenant_id', '2d1c9a56-0000-4000-8000-000000000000', true); -- the participant's row
    SELECT * FROM participants WHERE email = E'jane\\\\o''neil@example.com' /* a /* nested */ 'comment' */ AND code = $$x'y$$ AND "odd""name" = $1; COMMIT`;
  assert.equal(
    statementShape(inlined),
    `BEGIN; SELECT set_config(?, ?, true); SELECT * FROM participants WHERE email = ? AND code = ? AND "odd""name" = $1; COMMIT`,
  );
});

test('with tracing off no SDK starts and nothing is sent, even with an endpoint named', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const lines: string[] = [];
  const svc = await startTestService(t, {
    config: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_SDK_DISABLED: 'true' },
    logDestination: { write: (line) => void lines.push(line) },
  });
  assert.equal(svc.config.tracing, null);
  assert.equal(tracingOn(), false);
  const tenant = await svc.createTenant();
  const granted = await svc.request('POST', '/api/v1/gamify/points/grant', { key: tenant.apiKey, body: { participant_id: 'p-off', amount: 5, reason: 'test', idempotency_key: 'off-1' } });
  assert.equal(granted.status, 200, granted.text);
  // No tracer provider is registered: a span made through the API records nothing.
  const probe = trace.getTracer('probe').startSpan('probe');
  assert.equal(probe.isRecording(), false);
  probe.end();
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(receiver.bodies.length, 0);
  const completed = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request completed');
  assert.ok(completed.length > 0);
  assert.ok(completed.every((line) => line.trace_id === undefined && line.span_id === undefined));
});

test('a request is a server span with its transactions and statements; its job continues the trace; nothing personal is recorded', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const lines: string[] = [];
  const svc = await startTestService(t, {
    jobs: true,
    config: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'loyalty-trace-test',
      ALLOW_LOOPBACK_WEBHOOKS: 'true',
      ALLOW_HTTP_WEBHOOKS: 'true',
    },
    logDestination: { write: (line) => void lines.push(line) },
  });
  assert.equal(tracingOn(), true);
  const tenant = await svc.createTenant();
  // Values that must never reach a span: a person's email and participant id, the key, free text, an idempotency key.
  const participantId = 'p-trace-7f3a91';
  const email = 'trace.person+7f3a@example.com';
  const reason = 'welcome-bonus-5c2e';
  const idempotencyKey = 'grant-key-0d44e1';
  const call = async (method: string, path: string, body: unknown, expected: number) => {
    const response = await svc.request(method, path, { key: tenant.apiKey, body });
    assert.equal(response.status, expected, `${method} ${path}: ${response.text}`);
    return response.body;
  };
  const webhooks = await startReceiver();
  t.after(() => webhooks.close());
  // A receiver's URL may carry a secret in its path.
  const hookPath = '/hooks/url-token-9be27c';
  await call('POST', '/api/v1/gamify/webhooks', { name: 'Local', url: `${webhooks.url}${hookPath}`, events: ['points.awarded.v1'] }, 201);
  await call('PATCH', `/api/v1/gamify/admin/participants/${participantId}/profile`, { email }, 200);
  await call('POST', '/api/v1/gamify/points/grant', { participant_id: participantId, amount: 25, reason, idempotency_key: idempotencyKey }, 200);
  const search = await svc.request('GET', `/api/v1/admin/participants/search?email=${encodeURIComponent(email)}`, { key: tenant.apiKey });
  assert.ok(search.status < 500, search.text);
  await call('POST', '/api/v1/admin/rules', { name: 'Ten per order', trigger: 'event', event_name: 'order', effects: [{ type: 'award_points', points: 10 }], status: 'active' }, 201);
  await call('POST', '/api/v1/ingest/events', { event_name: 'order', participant_id: participantId, properties: { coupon: 'coupon-secret-55ab' }, idempotency_key: 'event-key-3c19' }, 202);
  assert.equal((await svc.request('GET', '/readyz')).status, 200);
  const bulk = await call('POST', '/api/v1/admin/points/bulk-grant', { idempotency_key: 'bulk-key-81f0', reason, grants: [{ participant_id: participantId, amount: 10 }, { participant_id: 'p-trace-other', amount: 5 }] }, 202);

  const grantRoute = '/api/v1/gamify/points/grant';
  const bulkRoute = '/api/v1/admin/points/bulk-grant';
  const jobSpan = await waitFor('the bulk grant job span', () =>
    receiver.spans().find((span) => span.name === 'process points.bulk_grant' && span.attributes['loyalty.job.outcome'] === 'succeeded'),
  );
  const laneBatch = await waitFor('an event batch span', () =>
    receiver.spans().find((span) => span.name === 'process ingestion lane' && Number(span.attributes['messaging.batch.message_count']) >= 1),
  );
  const webhookAttempt = await waitFor('a webhook attempt span', () => receiver.spans().find((span) => span.name === 'webhook POST' && span.attributes['http.response.status_code'] === 200));
  // The job's own statements come in the same or a later batch than the job span.
  await waitFor('the job line', () => lines.some((line) => line.includes('"job done"') && line.includes('points.bulk_grant')));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const spans = receiver.spans();

  // Every span is this service's.
  assert.ok(spans.every((span) => span.resource['service.name'] === 'loyalty-trace-test'));

  // The grant (one statement, no transaction of its own): a server span named by the route pattern, with its status, tenant and statements below.
  const grant = spans.find((span) => span.kind === SPAN_KIND_SERVER && span.name === `POST ${grantRoute}`);
  assert.ok(grant, `no server span for the grant among ${[...new Set(spans.map((span) => span.name))].join(', ')}`);
  assert.equal(grant.attributes['http.route'], grantRoute);
  assert.equal(grant.attributes['http.request.method'], 'POST');
  assert.equal(grant.attributes['http.response.status_code'], 200);
  assert.equal(grant.attributes['loyalty.tenant_id'], tenant.tenantId);
  assert.equal(grant.parentSpanId, '');
  const grantStatements = spans.filter((span) => span.attributes['db.system.name'] === 'postgresql' && span.kind === SPAN_KIND_CLIENT && descendsFrom(span, grant, spans));
  assert.ok(grantStatements.length > 0, 'no statement spans below the grant');
  assert.ok(grantStatements.every((span) => typeof span.attributes['db.query.text'] === 'string' && span.attributes['db.operation.name']));

  // The profile route is named by its pattern: the participant id in the path is not.
  assert.ok(spans.some((span) => span.name === 'PATCH /api/v1/gamify/admin/participants/:participant_id/profile'));

  // The bulk grant: its job (added in the request's transaction) continues the request's trace, with statements of its own.
  const bulkRequest = spans.find((span) => span.kind === SPAN_KIND_SERVER && span.name === `POST ${bulkRoute}`);
  assert.ok(bulkRequest);
  assert.equal(bulkRequest.attributes['http.response.status_code'], 202);
  const transaction = spans.find((span) => span.name === 'transaction' && span.parentSpanId === bulkRequest.spanId);
  assert.ok(transaction, 'no transaction span below the bulk grant request');
  assert.equal(transaction.attributes['loyalty.transaction.outcome'], 'committed');
  assert.equal(transaction.attributes['loyalty.transaction.attempts'], 1);
  assert.ok(spans.some((span) => span.attributes['db.operation.name'] === 'COMMIT' && span.parentSpanId === transaction.spanId));
  assert.equal(jobSpan.kind, SPAN_KIND_CONSUMER);
  assert.equal(jobSpan.traceId, bulkRequest.traceId);
  assert.ok(descendsFrom(jobSpan, bulkRequest, spans), 'the job span is not below the request that added it');
  assert.equal(jobSpan.attributes['messaging.destination.name'], 'points.bulk_grant');
  assert.equal(typeof jobSpan.attributes['messaging.message.id'], 'string');
  assert.equal(jobSpan.attributes['loyalty.tenant_id'], tenant.tenantId);
  assert.equal(jobSpan.attributes['loyalty.job.attempt'], 1);
  assert.ok(spans.some((span) => span.attributes['db.system.name'] === 'postgresql' && descendsFrom(span, jobSpan, spans)), 'no statement spans below the job');
  assert.ok(bulk.job_id);

  // A webhook delivery: an attempt span below its job's span, named by ids, never by the receiver's URL.
  const deliverJob = spans.find((span) => span.spanId === webhookAttempt.parentSpanId);
  assert.equal(deliverJob?.name, 'process webhooks.deliver');
  assert.equal(webhookAttempt.kind, SPAN_KIND_CLIENT);
  assert.equal(webhookAttempt.attributes['loyalty.webhook.event'], 'points.awarded.v1');
  // The dispatch and delivery jobs are traces of their own (made in SQL from outbox rows), linked to
  // what emitted their events: the grant route's (written by its SQL function; migration 1310), the
  // event batch's and the bulk grant job's points.awarded.v1.
  for (const [origin, name] of [
    [grant, 'the grant request'],
    [laneBatch, 'the event batch'],
    [jobSpan, 'the bulk grant job'],
  ] as const) {
    for (const task of ['outbox.dispatch', 'webhooks.deliver']) {
      await waitFor(`a ${task} span linked to ${name}`, () => {
        const all = receiver.spans();
        return all.some(
          (span) =>
            span.name === `process ${task}` &&
            span.links.some((l) => {
              const linked = all.find((candidate) => candidate.spanId === l.spanId);
              return l.traceId === origin.traceId && linked !== undefined && (linked.spanId === origin.spanId || descendsFrom(linked, origin, all));
            }),
        );
      });
    }
  }
  assert.ok(webhooks.received.some((delivery) => delivery.body?.participant_id === participantId));

  // Accepted events are processed in batches by lane, each batch a trace of its own (its events came from many requests).
  assert.equal(laneBatch.kind, SPAN_KIND_CONSUMER);
  assert.equal(laneBatch.parentSpanId, '');
  assert.equal(laneBatch.attributes['loyalty.tenant_id'], tenant.tenantId);
  // The span starts once the lane is taken, inside the batch's transaction: the batch's statements are its children.
  assert.ok(spans.some((span) => span.attributes['db.system.name'] === 'postgresql' && span.parentSpanId === laneBatch.spanId), 'no statement spans below the lane batch');
  // It links to the request that accepted its event (the traceparent kept on the pending row).
  const ingest = spans.find((span) => span.kind === SPAN_KIND_SERVER && span.name === 'POST /api/v1/ingest/events');
  assert.ok(ingest, 'no server span for the ingest request');
  const link = laneBatch.links.find((l) => l.traceId === ingest.traceId);
  assert.ok(link, `the lane batch does not link to the ingest request's trace: ${JSON.stringify(laneBatch.links)}`);
  const linked = spans.find((span) => span.spanId === link.spanId);
  assert.ok(linked && (linked === ingest || descendsFrom(linked, ingest, spans)), 'the link names a span of the ingest request');
  const [pending] = await svc.sql('SELECT count(*)::int AS n FROM ingestion_pending WHERE traceparent IS NOT NULL');
  assert.equal(pending.n, 0, 'no trace context outlives its pending row');

  // Probes are not traced.
  assert.ok(!spans.some((span) => span.name.includes('/readyz') || span.attributes['db.query.text'] === 'SELECT 1'));

  // Work outside any request or job (the queue's polling, pumps, heartbeats) makes no spans.
  assert.ok(spans.every((span) => span.kind === SPAN_KIND_SERVER || span.kind === SPAN_KIND_CONSUMER || span.parentSpanId !== ''));

  // Nothing the caller sent is in any span: not in names, attributes or statement texts.
  const everything = receiver.bodies.join('\n');
  for (const value of [email, encodeURIComponent(email), participantId, tenant.apiKey, reason, idempotencyKey, 'bulk-key-81f0', 'p-trace-other', hookPath, webhooks.url, 'coupon-secret-55ab', 'event-key-3c19']) {
    assert.ok(!everything.includes(value), `a span carries ${value}`);
  }

  // Log lines inside the traced request and job name the trace.
  const logged = lines.map((line) => JSON.parse(line));
  const grantLine = logged.find((line) => line.msg === 'request completed' && line.req?.route === grantRoute);
  assert.ok(grantLine);
  assert.equal(grantLine.trace_id, grant.traceId);
  assert.match(grantLine.span_id, /^[0-9a-f]{16}$/);
  const jobLine = logged.find((line) => line.msg === 'job done' && line.task === 'points.bulk_grant');
  assert.ok(jobLine);
  assert.equal(jobLine.trace_id, jobSpan.traceId);
  assert.equal(jobLine.span_id, jobSpan.spanId);
});

test('the default protocol posts protobuf, and stopping sends the spans still waiting', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const config = loadConfig({ APP_ENV: 'test', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '60000' }).tracing!;
  assert.equal(config.protocol, 'http/protobuf');
  const tracing = await startTracing(config, createLogger('silent'), { env: 'test', role: 'all' });
  activeTracer()!.startSpan('protobuf-probe').end();
  await tracing.stop();
  assert.equal(tracingOn(), false);
  assert.equal(receiver.bodies.length, 0);
  assert.equal(receiver.protobufBodies.length, 1);
  assert.ok(receiver.protobufBodies[0].includes(Buffer.from('protobuf-probe')));
  assert.ok(receiver.protobufBodies[0].includes(Buffer.from('loyalty-service')));
});
