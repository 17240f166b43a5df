import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as service from './service.js';
import { catalogDocument } from './catalog.js';
import { streamRoutes } from './stream-routes.js';
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
  TestEventBody,
  UpdateDestinationBody,
  UpdateSettingsBody,
} from './schemas.js';

const tags = ['webhooks'];
const admin = { auth: 'admin' as const };

export const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config, log } = app.ctx;
  const context = { db, config, log };

  app.get(
    '/gamify/webhooks',
    { config: admin, schema: { tags, operationId: 'listWebhooks', summary: 'List webhook destinations, each with its health', querystring: ListDestinationsQuery, response: { 200: DestinationList } } },
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
    { config: admin, schema: { tags, operationId: 'getWebhook', summary: 'Read a webhook destination and its health (from its recent delivery attempts)', params: DestinationIdParams, response: { 200: Type.Ref('WebhookDestination') } } },
    async (request) => service.readDestination(context, request.auth!.tenantId, request.params.destination_id),
  );

  app.patch(
    '/gamify/webhooks/:destination_id',
    {
      config: admin,
      schema: {
        tags,
        operationId: 'updateWebhook',
        summary: 'Update the url, events, description, retry_count, timeout_seconds, active state or private-network opt-in of a destination',
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

  await app.register(streamRoutes);
};

export const rootRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/.well-known/events.json',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'getEventCatalog',
        summary: 'The event catalog: the 27 subscribable events with the JSON Schema of each event\'s data',
        response: { 200: CatalogDocument },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return catalogDocument();
    },
  );
};
