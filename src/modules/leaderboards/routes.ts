import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as service from './service.js';
import { useReadCacheTtl } from './read-cache.js';
import { acceptsGzip } from '../../platform/encoding.js';
import { PUBLIC_CALLER_REFUSED, resolvePublicCaller } from '../challenges/index.js';
import { AdminLeaderboardList, CodeParams, CreateLeaderboardBody, PublicQuery, RefreshResponse, StandingsQuery, UpdateLeaderboardBody } from './schemas.js';

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.ctx;
  useReadCacheTtl(config.leaderboardReadCacheTtlMs);
  const tags = ['leaderboards'];
  const one = { 200: Type.Ref('AdminLeaderboard') };

  app.post(
    '/admin/leaderboards',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'createLeaderboard',
        summary: 'Define a progression leaderboard (its first ranking is built at once)',
        description:
          "A tenant's first `period_points` board first fills the period totals from the points ledger (they are kept only for tenants with a period board), after waiting for transactions that were running at that moment; a 503 `LEADERBOARD_TOTALS_BUSY` when they have not ended within 30 s (try again: nothing was created).",
        body: CreateLeaderboardBody,
        response: {
          201: Type.Ref('AdminLeaderboard'),
          503: { ...Type.Ref('ErrorResponse'), description: 'LEADERBOARD_TOTALS_BUSY: the first period board waited 30 s for running transactions; try again.' },
        },
      },
    },
    async (request, reply) => reply.status(201).send(await service.create(db, request.auth!.tenantId, request.body)),
  );

  app.get(
    '/admin/leaderboards',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'listLeaderboards', summary: 'List progression leaderboards', response: { 200: AdminLeaderboardList } } },
    async (request) => service.list(db, request.auth!.tenantId),
  );

  app.get(
    '/admin/leaderboards/:code',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getLeaderboardDefinition', summary: 'Read a progression leaderboard definition', params: CodeParams, response: one } },
    async (request) => service.read(db, request.auth!.tenantId, request.params.code),
  );

  app.patch(
    '/admin/leaderboards/:code',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'updateLeaderboard', summary: 'Rename, rescope or change the refresh interval', params: CodeParams, body: UpdateLeaderboardBody, response: one } },
    async (request) => service.update(db, request.auth!.tenantId, request.params.code, request.body),
  );

  app.delete(
    '/admin/leaderboards/:code',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'deleteLeaderboard', summary: 'Archive a progression leaderboard (no longer readable or refreshed)', params: CodeParams, response: one } },
    async (request) => service.archive(db, request.auth!.tenantId, request.params.code),
  );

  app.post(
    '/admin/leaderboards/:code/refresh',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'refreshLeaderboard', summary: 'Rebuild the ranking now instead of at the next scheduled refresh', params: CodeParams, response: { 200: RefreshResponse } } },
    async (request) => service.refreshNow(db, request.auth!.tenantId, request.params.code),
  );

  app.get(
    '/admin/leaderboards/:code/standings',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'getLeaderboardStandings',
        summary: "The tenant's view of a board's ranking, whatever engagement it is scoped to",
        description: 'The same ranking as `GET /public/leaderboards/{code}` (as of its last refresh, `updated_at`), read by the tenant itself: no engagement_id is needed, and `me` and `around_me` are always null.',
        params: CodeParams,
        querystring: StandingsQuery,
        response: { 200: Type.Ref('ProgressionLeaderboard') },
      },
    },
    async (request) => service.readStandings(db, request.auth!.tenantId, request.params.code, request.query),
  );

  app.get(
    '/public/leaderboards/:code',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'getLeaderboard',
        summary: 'Read a progression leaderboard',
        description:
          'The ranking as of its last refresh (`updated_at`; rebuilt every `refresh_seconds`, default 30). Ties: higher score first, then whoever reached the score first, then participant id; ranks are unique. ' +
          'Needs no credential: `engagement_id` names the tenant (an unknown or unpublished engagement is a 404). ' +
          '`session_id` (a session issued for that engagement) adds `me`, and `around_me` with `around`. An `X-API-Key` (whose tenant may also read the boards of its draft engagements) or `X-Service-Tenant` (tenant id or slug), when sent, must name the engagement\'s tenant (404 otherwise). ' +
          'Period leaderboards tell `next_reset_at`; past periods are read with `period_start`. ' +
          'The answer comes gzip-encoded (`Content-Encoding: gzip`, `Vary: Accept-Encoding`) when `Accept-Encoding` accepts gzip.',
        params: CodeParams,
        querystring: PublicQuery,
        response: {
          200: Type.Ref('ProgressionLeaderboard'),
          ...PUBLIC_CALLER_REFUSED,
          403: { ...Type.Ref('ErrorResponse'), description: 'The session was issued for another engagement. Codes: SESSION_ENGAGEMENT_MISMATCH.' },
        },
      },
    },
    async (request, reply) => {
      const caller = await resolvePublicCaller(request, reply, app.ctx, { engagementId: request.query.engagement_id });
      const answer = await service.readPublic(db, caller, request.params.code, request.query, (ranking) => reply.serialize(ranking) as string);
      // The bytes the route's serializer made (maybe for an identical read a moment ago): sent as they are, in gzip
      // to a caller that accepts it (compressed once per answer kept, read-cache.ts).
      reply.type('application/json; charset=utf-8').header('vary', 'accept-encoding');
      return acceptsGzip(request) ? reply.header('content-encoding', 'gzip').send(answer.gzipped()) : reply.send(answer.body);
    },
  );
};

export default routes;
