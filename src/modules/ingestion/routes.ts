import { answerKept } from '../../platform/idempotency-http.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AppError, type FieldError } from '../../platform/errors.js';
import { eventsAccepted, eventsRejected } from '../../platform/metrics.js';
import * as service from './service.js';
import { EventWriter } from './writer.js';
import { eventNameProperties, listEventNames } from './event-names.js';
import { checkShape, isRejection, normalize, type Rejection } from './normalize.js';
import {
  AcceptedResponse,
  BATCH_BODY_BYTES_MAX,
  BATCH_EVENTS_MAX,
  BatchBody,
  BatchResponse,
  EventIdParams,
  EventNameParams,
  EventNamePropertiesResponse,
  EventNamesQuery,
  EventNamesResponse,
  IdempotencyHeader,
  PROPERTIES_BYTES_MAX,
  RetryResponse,
  SearchQuery,
  SearchResponse,
  SyncResponse,
  type IngestEvent,
} from './schemas.js';

const tags = ['event ingestion'];
/** Server integrations hold an API key with `ingest`, or an admin key. */
const INGEST_SCOPES = ['admin', 'gamify:admin', 'ingest'] as const;
const ingestConfig = { auth: 'key' as const, scopes: INGEST_SCOPES, rateLimit: 'ingest' as const };
/** A batch's events are checked one by one (normalize): one with text PostgreSQL cannot store is rejected alone. */
const batchConfig = { ...ingestConfig, textCheckedPerItem: true };

function refuse(rejection: Rejection): AppError {
  const kind = rejection.code === 'IDEMPOTENCY_KEY_REUSED' ? 'rule_violation' : rejection.code === 'IDEMPOTENCY_IN_PROGRESS' ? 'conflict' : 'invalid';
  return new AppError(kind, rejection.code, rejection.detail, rejection.errors ? { errors: rejection.errors } : {});
}

const INGEST_ROUTES = new Set(['/api/v1/ingest/events', '/api/v1/ingest/events/batch', '/api/v1/events/batch', '/api/v1/ingest/events/sync']);

/** The `code` of an error answer, for the metric's label (a bounded set: the service's error codes). */
function errorCode(payload: unknown): string {
  if (typeof payload !== 'string') return 'UNKNOWN';
  const code = /"code":"([A-Z_]{1,64})"/.exec(payload)?.[1];
  return code ?? 'UNKNOWN';
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, log } = app.ctx;
  const writer = new EventWriter(db, log);
  app.addHook('onClose', async () => writer.drain());
  // Refusals of a whole request (validation, quota, idempotency conflicts) are counted from the error
  // they answer with; events refused inside a batch are counted by the batch handler.
  app.addHook('onSend', async (request, reply, payload) => {
    if (reply.statusCode < 400 || reply.statusCode === 401 || reply.statusCode === 403 || reply.statusCode === 429) return payload;
    if (!INGEST_ROUTES.has(request.routeOptions.url ?? '')) return payload;
    eventsRejected.inc({ code: errorCode(payload) });
    return payload;
  });

  const eventDescription =
    `An idempotency key is required, as \`idempotency_key\` or the \`Idempotency-Key\` header (both: they must agree). ` +
    `Properties are limited to ${PROPERTIES_BYTES_MAX} bytes of JSON.`;

  app.post(
    '/ingest/events',
    {
      config: { ...ingestConfig, idempotencyKey: 'route' },
      schema: {
        tags,
        operationId: 'ingestEvent',
        summary: 'Ingest one event; processed in the background',
        description: `Answers once the event is durably stored (202); a worker then processes it in a batch of the participant's lane, in accept order per participant, woken by its arrival. Expect it processed within tens of milliseconds when the tenant's pipeline is idle and a few hundred under load (one process on two cores: p95 about 20 ms at 10 events/s, about 150 ms from 100 to 700/s, 0.3–2 s at 1,000/s); the backlog is in GET /tenant/usage (\`event_processing\`). A repeated key answers as the first did: 202, with the first event's \`message_id\`, \`duplicate: true\` and the header \`Idempotent-Replayed: true\`. ${eventDescription}`,
        headers: IdempotencyHeader,
        body: Type.Ref('IngestEvent'),
        response: { 202: AcceptedResponse },
      },
    },
    async (request, reply) => {
      const event = normalize(request.auth!.tenantId, request.body as IngestEvent, request.headers['idempotency-key'], true);
      if (isRejection(event)) throw refuse(event);
      const [result] = await writer.submit(request.auth!.tenantId, [event]);
      if (result.status === 'rejected') throw refuse(result);
      eventsAccepted.inc({ outcome: result.status });
      return answerKept(reply, 202, { accepted: true, message_id: result.eventId, duplicate: result.status === 'duplicate' });
    },
  );

  const batchHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const tenantId = request.auth!.tenantId;
    const items = (request.body as { events: unknown[] }).events;
    const results: Array<{ index: number; status: 'accepted' | 'duplicate' | 'rejected'; message_id?: string; code?: string; detail?: string; errors?: FieldError[] }> = [];
    const toStore: Array<{ index: number; event: Exclude<ReturnType<typeof normalize>, Rejection> }> = [];
    items.forEach((item, index) => {
      const shape = checkShape(item, index);
      const event = shape ?? normalize(tenantId, item as IngestEvent, undefined, true);
      if (isRejection(event)) results[index] = { index, status: 'rejected', code: event.code, detail: event.detail, ...(event.errors && { errors: event.errors }) };
      else toStore.push({ index, event });
    });
    const stored = toStore.length > 0 ? await writer.submit(tenantId, toStore.map((s) => s.event)) : [];
    stored.forEach((result, i) => {
      const index = toStore[i].index;
      results[index] =
        result.status === 'rejected' ? { index, status: 'rejected', code: result.code, detail: result.detail } : { index, status: result.status, message_id: result.eventId };
    });
    const count = (status: string) => results.filter((r) => r.status === status).length;
    for (const result of results) {
      if (result.status === 'rejected') eventsRejected.inc({ code: result.code ?? 'INVALID' });
      else eventsAccepted.inc({ outcome: result.status });
    }
    return reply.status(200).send({ accepted: count('accepted'), duplicates: count('duplicate'), rejected: count('rejected'), results });
  };

  const batchSchema = (operationId: string, summary: string, description: string) => ({
    tags,
    operationId,
    summary,
    description:
      `${description} Up to ${BATCH_EVENTS_MAX} events per request (a larger batch is refused with 400) and ${BATCH_BODY_BYTES_MAX / (1024 * 1024)} MiB. ` +
      'Each event (an IngestEvent with its own `idempotency_key`) is validated and stored on its own: the response lists, in request order, ' +
      'whether each was accepted, a duplicate, or rejected with the reason, so one bad event does not sink the batch.',
    body: BatchBody,
    response: { 200: BatchResponse },
  });

  app.post(
    '/ingest/events/batch',
    { config: batchConfig, bodyLimit: BATCH_BODY_BYTES_MAX, schema: batchSchema('ingestEventBatch', 'Ingest a batch of events; processed in the background', 'Answers once the accepted events are durably stored.') },
    batchHandler,
  );

  app.post(
    '/events/batch',
    {
      config: batchConfig,
      bodyLimit: BATCH_BODY_BYTES_MAX,
      schema: batchSchema('postEventBatch', 'Ingest a batch of events (same as /ingest/events/batch)', 'The path named in the capacity guidance; the same handler as `/ingest/events/batch`.'),
    },
    batchHandler,
  );

  app.post(
    '/ingest/events/sync',
    {
      config: { ...ingestConfig, idempotencyKey: 'route' },
      schema: {
        tags,
        operationId: 'ingestEventSync',
        summary: 'Ingest one event and process it in the request (testing and debugging)',
        description:
          `Stores and processes the event in one transaction and returns its \`event_id\` and \`fact_id\`. A repeated key returns the first event's result with \`duplicate: true\` and the header \`Idempotent-Replayed: true\`. ` +
          `\`rules\` says of every active rule listening to the event name why it did or did not award (the same list as the stored event's \`outcome.rules\`); when none listens, \`unmatched_event_name.nearest\` names the closest event names that rules listen to. ` +
          `If processing fails, the event is kept as failed (see \`/events/search?status=failed\`) and the answer is 422 \`EVENT_PROCESSING_FAILED\` with \`event_id\`. ${eventDescription}`,
        headers: IdempotencyHeader,
        body: Type.Ref('IngestEvent'),
        response: { 200: SyncResponse },
      },
    },
    async (request, reply) => {
      const event = normalize(request.auth!.tenantId, request.body as IngestEvent, request.headers['idempotency-key'], false);
      if (isRejection(event)) throw refuse(event);
      const result = await service.ingestSync(db, request.auth!.tenantId, event);
      eventsAccepted.inc({ outcome: result.duplicate ? 'duplicate' : 'accepted' });
      return answerKept(reply, 200, result);
    },
  );

  app.get(
    '/events/search',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'searchEvents',
        summary: "Search the tenant's event store",
        description:
          'By participant, event name, processing status and time range (`from` inclusive, `to` exclusive), newest first, with cursor pagination. ' +
          'Failed events carry `last_error`. Standard personal fields in properties are masked without the `read:pii` scope.',
        querystring: SearchQuery,
        response: { 200: SearchResponse },
      },
    },
    async (request) => service.searchEvents(db, request.auth!, request.query),
  );

  // Read by the rule editor's pickers: programs:read, not the developers' event store permission.
  app.get(
    '/admin/events/names',
    {
      config: { auth: 'admin', permission: 'programs:read' },
      schema: {
        tags,
        operationId: 'listEventNames',
        summary: 'List the event names received, with counts and when last seen',
        description: 'Every event name the tenant has sent, in name order, with how many events of it were accepted and the earliest and latest `occurred_at`. `q` keeps names containing it.',
        querystring: EventNamesQuery,
        response: { 200: EventNamesResponse },
      },
    },
    async (request) => listEventNames(db, request.auth!.tenantId, request.query),
  );

  app.get(
    '/admin/events/names/:event_name/properties',
    {
      config: { auth: 'admin', permission: 'programs:read' },
      schema: {
        tags,
        operationId: 'listEventNameProperties',
        summary: 'List the properties seen on an event name, with their JSON types',
        description:
          'Read from the latest 1,000 stored events of the name: each property path (as a rule condition names it, `properties.<name>`), the JSON types seen there and how often. ' +
          'Values are not returned. A name never received answers an empty list.',
        params: EventNameParams,
        response: { 200: EventNamePropertiesResponse },
      },
    },
    async (request) => eventNameProperties(db, request.auth!.tenantId, request.params.event_name),
  );

  app.get(
    '/admin/events/:event_id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getStoredEvent', summary: 'Read one stored event with its processing status', params: EventIdParams, response: { 200: Type.Ref('StoredEvent') } } },
    async (request) => service.readEvent(db, request.auth!, request.params.event_id),
  );

  app.post(
    '/admin/events/:event_id/retry',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'retryStoredEvent',
        summary: 'Queue a failed event for another processing attempt',
        description: 'Only events whose status is `failed` or `retrying`; a processed event answers 409.',
        params: EventIdParams,
        response: { 202: RetryResponse },
      },
    },
    async (request, reply) => reply.status(202).send(await service.retryEvent(db, request.auth!.tenantId, request.params.event_id)),
  );
};

export default routes;
