import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '../../platform/errors.js';
import * as service from './service.js';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { catalogDocument, subscriptionMatches } from './catalog.js';
import { LiveStreamHub, STREAMS_PER_TENANT_MAX, toEnvelope } from './stream.js';
import { isSandboxTenant } from '../../platform/environments.js';
import {
  participantEventsAfter,
  participantEventsAfterSeq,
  participantLatestSeq,
  tenantEventsAfter,
  tenantEventsAfterSeq,
  tenantLatestSeq,
  type StreamEventRow,
} from './store.js';
import {
  BulkReplayBody,
  CatalogDocument,
  CreateDestinationBody,
  CreatedDestination,
  DeliveryList,
  DeliveryParams,
  DestinationIdParams,
  DestinationList,
  ListDestinationsQuery,
  LogsQuery,
  ReplayJobParams,
  StreamQuery,
  TenantStreamQuery,
  TestEventBody,
  UpdateDestinationBody,
  UpdateSettingsBody,
} from './schemas.js';

const tags = ['webhooks'];
const admin = { auth: 'admin' as const };
/** A server-sent event stream: `id:` and `data:` lines, one envelope per message. */
const EVENT_STREAM_ANSWER = {
  description: 'Server-sent events: each message is `id: <envelope id>` and `data: <envelope JSON>`; comment lines keep the connection open.',
  content: { 'text/event-stream': { schema: Type.String({ examples: ['id: evt_01JDX4S7Q9M2K8\ndata: {"id":"evt_01JDX4S7Q9M2K8","event":"points.awarded.v1",…}\n\n'] }) } },
};

/** Events sent on resume before the live feed takes over. */
const STREAM_CATCH_UP_MAX = 500;
/**
 * A comment line keeps proxies from closing an idle stream, and a catch-up read
 * covers a missed notification (scaled by TIME_SCALE in tests and demos).
 */
const STREAM_HEARTBEAT_MS = 15_000;
const STREAM_HEARTBEAT_MIN_MS = 100;
/** Envelope ids a stream remembers to avoid sending one twice. */
const STREAM_SENT_IDS_MAX = 2_000;

export const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config, log, systemUrl } = app.ctx;
  const context = { db, config, log };

  app.get(
    '/gamify/webhooks',
    { config: admin, schema: { tags, operationId: 'listWebhooks', summary: 'List webhook destinations', querystring: ListDestinationsQuery, response: { 200: DestinationList } } },
    async (request) => service.listDestinations(context, request.auth!.tenantId, request.query),
  );

  app.post(
    '/gamify/webhooks',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'createWebhook',
        summary: 'Create a webhook destination; returns the signing secret once',
        description:
          'Rule violations (name outside 1–100 characters or with the reserved `[system]` prefix, a URL that is not https or points at a ' +
          'private, loopback, link-local or otherwise non-public address, unknown event names or invalid patterns, retry_count outside 0–5, timeout_seconds ' +
          'outside 3–60) answer 422 `VALIDATION_INVALID_VALUE`. `allow_private_network: true` (a local receiver, development only) answers ' +
          '403 `SANDBOX_ONLY` for a live tenant and 403 `TEST_CONTROLS_DISABLED` when the service runs with APP_ENV=production.',
        body: CreateDestinationBody,
        response: { 201: CreatedDestination },
      },
    },
    async (request, reply) => reply.status(201).send(await service.createDestination(context, request.auth!.tenantId, request.body)),
  );

  // `settings` is never a destination id (those are `whk_…`), and a static path wins over the parametric one.
  app.get(
    '/gamify/webhooks/settings',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'getWebhookSettings',
        summary: "The tenant's webhook settings: the backoff scale of a sandbox tenant and the retry waits it gives",
        description: 'Readable by live and sandbox tenants (a live tenant always has webhook_backoff_scale 1).',
        response: { 200: Type.Ref('WebhookSettings') },
      },
    },
    async (request) => service.readSettings(context, request.auth!.tenantId),
  );

  app.patch(
    '/gamify/webhooks/settings',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'updateWebhookSettings',
        summary: 'Set the webhook backoff scale of a sandbox tenant (a test control)',
        description:
          'Multiplies the retry schedule (30 s, 5 min, 30 min) of every destination of the tenant, with the service\'s TIME_SCALE, from the next ' +
          'retry scheduled on. Deliveries already waiting keep their time. Sandbox tenants only: a live tenant answers 403 `SANDBOX_ONLY` ' +
          '(whatever the value). A value outside 0.001–1 answers 400 `VALIDATION_INVALID_REQUEST`. Allowed in production: it only speeds up ' +
          'retries to the sandbox tenant\'s own receivers, within the same number of attempts.',
        body: UpdateSettingsBody,
        response: { 200: Type.Ref('WebhookSettings') },
      },
    },
    async (request) => service.updateSettings(context, request.auth!.tenantId, request.body),
  );

  app.get(
    '/gamify/webhooks/:destination_id',
    { config: admin, schema: { tags, operationId: 'getWebhook', summary: 'Read a webhook destination', params: DestinationIdParams, response: { 200: Type.Ref('WebhookDestination') } } },
    async (request) => service.readDestination(context, request.auth!.tenantId, request.params.destination_id),
  );

  app.patch(
    '/gamify/webhooks/:destination_id',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'updateWebhook',
        summary: 'Update the url, events, retry_count, timeout_seconds, active state or private-network opt-in of a destination',
        description:
          'The URL is re-validated against the same forgery rules as at creation (422 `VALIDATION_INVALID_VALUE`); turning ' +
          '`allow_private_network` off re-validates the stored URL under the public rules. `allow_private_network: true` answers 403 ' +
          '`SANDBOX_ONLY` for a live tenant and 403 `TEST_CONTROLS_DISABLED` in production.',
        params: DestinationIdParams,
        body: UpdateDestinationBody,
        response: { 200: Type.Ref('WebhookDestination') },
      },
    },
    async (request) => service.updateDestination(context, request.auth!.tenantId, request.params.destination_id, request.body),
  );

  app.delete(
    '/gamify/webhooks/:destination_id',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'deleteWebhook',
        summary: 'Delete a destination (its pending deliveries and logs go with it)',
        params: DestinationIdParams,
        response: { 204: Type.Null({ description: 'Deleted.' }) },
      },
    },
    async (request, reply) => {
      await service.deleteDestination(context, request.auth!.tenantId, request.params.destination_id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/gamify/webhooks/:destination_id/test',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'testWebhook',
        summary: 'Send a signed test delivery (event `ping`) now and report its outcome',
        description: 'One attempt, no retries. The answer is the delivery record with the attempt (status, response code, duration, error).',
        params: DestinationIdParams,
        response: { 200: Type.Ref('WebhookDelivery') },
      },
    },
    async (request) => service.sendTestDelivery(context, request.auth!.tenantId, request.params.destination_id),
  );

  app.post(
    '/gamify/webhooks/:destination_id/test-events',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'sendWebhookTestEvent',
        summary: 'Send a signed test event (a catalog event with a sample payload) now and report its outcome',
        description:
          'The envelope is a real delivery\'s (signed with the destination\'s secret, `X-Service-Event` the event name) with `test: true`, ' +
          'an id `evt_test_…`, and `data` built from the event\'s schema in `/.well-known/events.json` (ids start with `test_`). The ' +
          'destination need not subscribe to the event. One attempt, no retries; the delivery is kept in the log like any other. An event ' +
          'name not in the catalog (a pattern included) answers 422 `VALIDATION_INVALID_VALUE`; an inactive destination 409.',
        params: DestinationIdParams,
        body: TestEventBody,
        response: { 200: Type.Ref('WebhookDelivery') },
      },
    },
    async (request) => service.sendTestEvent(context, request.auth!.tenantId, request.params.destination_id, request.body),
  );

  app.get(
    '/gamify/webhooks/:destination_id/logs',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'listWebhookLogs',
        summary: 'Delivery history of a destination, newest first, with every attempt',
        params: DestinationIdParams,
        querystring: LogsQuery,
        response: { 200: DeliveryList },
      },
    },
    async (request) => service.listLogs(context, request.auth!.tenantId, request.params.destination_id, request.query),
  );

  app.post(
    '/gamify/webhooks/:destination_id/deliveries/:log_id/replay',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'replayWebhookDelivery',
        summary: 'Replay one finished delivery as a new delivery',
        description:
          'The new delivery has its own `log_id` and a fresh attempt budget; its envelope id and X-Service-Delivery-Id stay the ' +
          'event\'s, so receivers that dedupe by delivery id recognise it. A delivery still in progress answers 409.',
        params: DeliveryParams,
        response: { 202: Type.Ref('WebhookDelivery') },
      },
    },
    async (request, reply) =>
      reply.status(202).send(await service.replayDelivery(context, request.auth!.tenantId, request.params.destination_id, request.params.log_id)),
  );

  app.post(
    '/gamify/webhooks/:destination_id/replay',
    {
      config: { ...admin, optionalBody: true },
      schema: {
        tags,
        operationId: 'replayWebhookDeliveries',
        summary: 'Bulk replay: a job that replays every event whose latest delivery ended in the given states',
        description: 'Filters: `since`/`until` on the event time, `statuses` (default `["EXHAUSTED"]`), `events`. At most 10,000 deliveries per job.',
        params: DestinationIdParams,
        body: BulkReplayBody,
        response: { 202: Type.Ref('WebhookReplayJob') },
      },
    },
    async (request, reply) =>
      reply.status(202).send(await service.startBulkReplay(context, request.auth!.tenantId, request.params.destination_id, request.body)),
  );

  app.get(
    '/gamify/webhooks/:destination_id/replay-jobs/:job_id',
    {
      config: admin,
      schema: { tags, operationId: 'getWebhookReplayJob', summary: 'Status of a bulk replay job', params: ReplayJobParams, response: { 200: Type.Ref('WebhookReplayJob') } },
    },
    async (request) => service.readReplayJob(context, request.auth!.tenantId, request.params.destination_id, request.params.job_id),
  );

  const hub = new LiveStreamHub(db, systemUrl, log);
  const openStreams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of openStreams) end();
    await hub.close();
  });

  app.get(
    '/public/events/stream',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'streamEvents',
        summary: "The participant's live event stream (server-sent events)",
        description:
          'Each message is one envelope (the same JSON, with the same `id`, as a webhook delivery) as `data:`, with `id:` set to the ' +
          'envelope id. Reconnect with the `Last-Event-ID` header (browsers send it) or `last_event_id` to receive what was missed. ' +
          'When that id is no longer known (events are kept OUTBOX_RETENTION_DAYS, 30 by default), the stream starts from now and ' +
          'its first message is `event: reset` (data `{"reason":"last_event_id_unknown"}`): re-read the state instead of waiting for what was missed. ' +
          'Events of other engagements are not shown; events without an engagement are.',
        querystring: StreamQuery,
        response: { 200: EVENT_STREAM_ANSWER },
      },
    },
    async (request, reply) => {
      const auth = request.auth!;
      const tenantId = auth.tenantId;
      const participantId = auth.participantId!;
      const engagementId = auth.engagementId!;
      await serveStream(request, reply, {
        tenantId,
        after: (id) => participantEventsAfter(db, tenantId, participantId, engagementId, id, STREAM_CATCH_UP_MAX),
        afterSeq: (seq) => participantEventsAfterSeq(db, tenantId, participantId, engagementId, seq, STREAM_CATCH_UP_MAX),
        latestSeq: () => participantLatestSeq(db, tenantId, participantId),
        subscribe: (push) => hub.subscribe({ tenantId, participantId, engagementId, push }),
        shows: () => true,
      });
    },
  );

  app.get(
    '/gamify/webhooks/stream',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'streamTenantEvents',
        summary: "A sandbox tenant's live stream of every event as webhook envelopes (server-sent events), for a local forwarder",
        description:
          'What `npx @loyalty/sdk listen --forward-to <url>` reads: each message is one envelope (the JSON a webhook destination receives, ' +
          'with the same `id`) as `data:`, with `id:` set to the envelope id, for every event of the tenant (or those `events` selects). ' +
          'Resume with `Last-Event-ID` or `last_event_id` as on the participant stream (an unknown id starts from now after `event: reset`). ' +
          'Sandbox tenants only: a live tenant answers 403 `SANDBOX_ONLY` (forward a live tenant\'s events with a destination). At most ' +
          `${STREAMS_PER_TENANT_MAX} open at once per tenant (429 \`STREAM_LIMIT_REACHED\`). An invalid pattern in \`events\` answers 422.`,
        querystring: TenantStreamQuery,
        response: { 200: EVENT_STREAM_ANSWER },
      },
    },
    async (request, reply) => {
      const tenantId = request.auth!.tenantId;
      const patterns = service.streamPatterns(request.query.events);
      await service.requireSandboxStream(context, tenantId);
      await serveStream(request, reply, {
        tenantId,
        after: (id) => tenantEventsAfter(db, tenantId, id, STREAM_CATCH_UP_MAX),
        afterSeq: (seq) => tenantEventsAfterSeq(db, tenantId, seq, STREAM_CATCH_UP_MAX),
        latestSeq: () => tenantLatestSeq(db, tenantId),
        subscribe: (push) => hub.subscribeTenant({ tenantId, push }),
        shows: (row) => subscriptionMatches(patterns, row.event),
      });
    },
  );

  /** Where a stream's events come from: its catch-up reads, its live subscription and which events it shows. */
  interface StreamSource {
    tenantId: string;
    /** The events after the one with this id, or null when that id is not known. */
    after(id: string): Promise<StreamEventRow[] | null>;
    afterSeq(seq: number): Promise<StreamEventRow[]>;
    latestSeq(): Promise<number>;
    subscribe(push: (rows: StreamEventRow[]) => void): Promise<() => void>;
    shows(row: StreamEventRow): boolean;
  }

  /** One server-sent-event stream: resume, live feed, heartbeat with catch-up, and its end. */
  async function serveStream(
    request: { id: string; headers: IncomingHttpHeaders; raw: IncomingMessage; query: { last_event_id?: string } },
    reply: { raw: ServerResponse; hijack(): unknown },
    source: StreamSource,
  ): Promise<void> {
    const { tenantId } = source;
    const header = request.headers['last-event-id'];
    const resumeFrom = (typeof header === 'string' && header !== '' ? header : request.query.last_event_id) ?? null;
    const caughtUp = resumeFrom ? await source.after(resumeFrom) : [];
    // An id the stream does not know (deleted by retention, or never this stream's): the stream
    // starts from now and says so first, so that the client re-reads what it may have missed.
    const reset = caughtUp === null;
    const missed = caughtUp ?? [];

    // The outbox position the heartbeat's catch-up reads after: the last event sent, or, on a fresh
    // stream, the latest event when the stream opened, so that an event whose notification
    // is missed (committed while the stream subscribes, or while the listener reconnects) still arrives.
    let cursor = missed.length > 0 ? Number(missed[missed.length - 1].seq) : await source.latestSeq();
    const sent = new Set<string>();
    const raw = reply.raw;
    const livemode = !(await isSandboxTenant(db, tenantId));
    const write = (rows: StreamEventRow[]) => {
      // A catch-up read may answer after the stream closed.
      if (raw.writableEnded || raw.destroyed) return;
      for (const row of rows) {
        cursor = Math.max(cursor, Number(row.seq));
        if (sent.has(row.id) || !source.shows(row)) continue;
        sent.add(row.id);
        if (sent.size > STREAM_SENT_IDS_MAX) sent.delete(sent.values().next().value as string);
        raw.write(`id: ${row.id}\ndata: ${JSON.stringify(toEnvelope(tenantId, row, livemode))}\n\n`);
      }
    };
    let unsubscribe: () => void;
    try {
      unsubscribe = await source.subscribe(write);
    } catch (error) {
      throw new AppError('rate_limited', 'STREAM_LIMIT_REACHED', (error as Error).message, {}, { 'Retry-After': '5' });
    }
    reply.hijack();
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': request.id,
    });
    raw.write('retry: 3000\n\n');
    if (reset) raw.write(`event: reset\ndata: ${JSON.stringify({ reason: 'last_event_id_unknown' })}\n\n`);
    write(missed);
    const heartbeat = setInterval(
      () => {
        raw.write(': keep-alive\n\n');
        source.afterSeq(cursor).then(write, () => undefined);
      },
      Math.max(STREAM_HEARTBEAT_MIN_MS, STREAM_HEARTBEAT_MS * config.timeScale),
    );
    const end = () => {
      clearInterval(heartbeat);
      unsubscribe();
      openStreams.delete(end);
      if (!raw.writableEnded) raw.end();
    };
    openStreams.add(end);
    request.raw.on('close', end);
  }
};

export const rootRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/.well-known/events.json',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'getEventCatalog',
        summary: 'The event catalog: the 25 subscribable events with the JSON Schema of each event\'s data',
        response: { 200: CatalogDocument },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return catalogDocument();
    },
  );
};
