import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../platform/errors.js';
import { isSandboxTenant } from '../../platform/environments.js';
import { subscriptionMatches } from './catalog.js';
import { LiveStreamHub, STREAMS_PER_TENANT_MAX, toEnvelope } from './stream.js';
import {
  participantEventsAfter,
  participantEventsAfterSeq,
  participantLatestSeq,
  tenantEventsAfter,
  tenantEventsAfterSeq,
  tenantLatestSeq,
  type StreamEventRow,
} from './store.js';
import { StreamQuery, TenantStreamQuery } from './schemas.js';
import * as service from './service.js';

/** The live event streams (server-sent events): a participant's, and the tenant's for its admins. */

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

export const streamRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config, log, systemUrl } = app.ctx;
  const context = { db, config, log };

  const hub = new LiveStreamHub(db, systemUrl, log);
  const openStreams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of openStreams) end();
    await hub.close();
  });

  app.get(
    '/public/events/stream',
    {
      config: { auth: 'session', longLived: true },
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
      config: { ...admin, longLived: true },
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

