import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { forbidden } from '../../platform/errors.js';
import { mayPublish } from '../../platform/publishing.js';
import * as service from './service.js';
import {
  ActiveContests,
  AdminContestList,
  AdminContestListQuery,
  AdminLeaderboard,
  AdminLeaderboardQuery,
  BracketLeaderboard,
  BracketQuery,
  ContestIdParams,
  CreateContestBody,
  EnterBody,
  EntryAdminView,
  EntryParams,
  FraudDecisionBody,
  FraudDecisionResponse,
  LeaderboardQuery,
  MeQuery,
  PrizesResponse,
  PublicLeaderboard,
  ReviewList,
  ReviewListQuery,
  ServerEnterBody,
  SessionQuery,
  UpdateContestBody,
  WinnersResponse,
} from './schemas.js';

const tags = ['contests'];
const SERVER_SCOPES = ['admin', 'gamify:admin', 'ingest'];

/**
 * Participant routes act as the participant of the caller's session; the
 * tenant's server acts for a named participant with its API key
 * (`/admin/contests/{id}/entries`). See docs/decisions/contests.md.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.ctx;

  // ------------------------------------------------------------ participants (session)

  app.get(
    '/contests/active',
    {
      config: { auth: 'session' },
      schema: { tags, operationId: 'listActiveContests', summary: 'All currently active contests of the tenant', querystring: SessionQuery, response: { 200: ActiveContests } },
    },
    async (request) => service.listActiveContests(db, request.auth!.tenantId),
  );

  app.get(
    '/contests/:id',
    {
      config: { auth: 'session' },
      schema: { tags, operationId: 'getContest', summary: 'One contest (public-safe; drafts are not visible)', params: ContestIdParams, querystring: SessionQuery, response: { 200: Type.Ref('ContestSummary') } },
    },
    async (request) => service.readPublicContest(db, request.auth!.tenantId, request.params.id),
  );

  app.post(
    '/contests/:id/enter',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'enterContest',
        summary: "Enter the contest as the session's participant (idempotent)",
        description: '201 with the new entry, or 200 with the existing one when already entered. `participant_id`, when sent, must be the session\'s own.',
        params: ContestIdParams,
        body: EnterBody,
        response: { 200: Type.Ref('ContestEntry'), 201: Type.Ref('ContestEntry') },
      },
    },
    async (request, reply) => {
      const auth = request.auth!;
      const { entry, created } = await service.enterAsParticipant(db, auth.tenantId, auth.participantId!, auth.actorId, request.params.id, request.body);
      return reply.status(created ? 201 : 200).send(entry);
    },
  );

  app.get(
    '/contests/:id/me',
    {
      config: { auth: 'session' },
      schema: { tags, operationId: 'getMyContestEntry', summary: "The session participant's entry", params: ContestIdParams, querystring: MeQuery, response: { 200: Type.Ref('ContestEntry') } },
    },
    async (request) => {
      const auth = request.auth!;
      if (request.query.participant_id !== undefined && request.query.participant_id !== auth.participantId) {
        throw forbidden("participant_id must be the session's own participant");
      }
      return service.me(db, auth.tenantId, request.params.id, auth.participantId!);
    },
  );

  app.get(
    '/contests/:id/leaderboard/public',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'getContestPublicLeaderboard',
        summary: 'Public leaderboard: by score, ties by earliest to reach it (final ranks once completed)',
        params: ContestIdParams,
        querystring: LeaderboardQuery,
        response: { 200: PublicLeaderboard },
      },
    },
    async (request) => service.publicLeaderboard(db, request.auth!.tenantId, request.params.id, request.query.limit),
  );

  app.get(
    '/contests/:id/leaderboard/bracket',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'getContestBracket',
        summary: '`size` rows centred on a participant (default: the session participant)',
        params: ContestIdParams,
        querystring: BracketQuery,
        response: { 200: BracketLeaderboard },
      },
    },
    async (request) =>
      service.bracket(db, request.auth!.tenantId, request.params.id, request.query.around ?? request.auth!.participantId!, request.query.size),
  );

  app.get(
    '/contests/:id/prizes',
    {
      config: { auth: 'session' },
      schema: { tags, operationId: 'getContestPrizes', summary: 'Prize tiers', params: ContestIdParams, querystring: SessionQuery, response: { 200: PrizesResponse } },
    },
    async (request) => service.prizes(db, request.auth!.tenantId, request.params.id),
  );

  app.get(
    '/contests/:id/winners',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'getContestWinners',
        summary: 'Public winners list, published once prize codes are issued; names only of winners who consented',
        params: ContestIdParams,
        querystring: SessionQuery,
        response: { 200: WinnersResponse },
      },
    },
    async (request) => service.winners(db, request.auth!.tenantId, request.params.id),
  );

  // ------------------------------------------------------------ administration

  app.get(
    '/contests/:id/leaderboard',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'getContestLeaderboard', summary: 'Admin leaderboard with participant ids', params: ContestIdParams, querystring: AdminLeaderboardQuery, response: { 200: AdminLeaderboard } },
    },
    async (request) => service.adminLeaderboard(db, request.auth!.tenantId, request.params.id, request.query.limit, request.query.offset ?? 0),
  );

  app.post(
    '/admin/contests',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'createContest', summary: 'Create a contest (as a draft)', body: CreateContestBody, response: { 201: Type.Ref('AdminContest') } },
    },
    async (request, reply) => reply.status(201).send(await service.createContest(db, request.auth!.tenantId, request.body)),
  );

  app.get(
    '/admin/contests',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'listContests', summary: 'List contests, newest first', querystring: AdminContestListQuery, response: { 200: AdminContestList } },
    },
    async (request) => service.listAdminContests(db, request.auth!.tenantId, request.query),
  );

  app.get(
    '/admin/contests/:id',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'getAdminContest', summary: 'Read a contest with its lifecycle and audit fields', params: ContestIdParams, response: { 200: Type.Ref('AdminContest') } },
    },
    async (request) => service.readAdminContest(db, request.auth!.tenantId, request.params.id),
  );

  app.patch(
    '/admin/contests/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'updateContest',
        summary: 'Change a contest: a draft freely; scoring and prize_structure are frozen from scheduled on; once active only title and description',
        params: ContestIdParams,
        body: UpdateContestBody,
        response: { 200: Type.Ref('AdminContest') },
      },
    },
    async (request) => service.updateContest(db, config, request.auth!.tenantId, request.params.id, request.body, !mayPublish(request.auth!)),
  );

  app.post(
    '/admin/contests/:id/publish',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'publishContest', summary: 'Publish a draft: draft → scheduled; the lifecycle worker takes it from there', params: ContestIdParams, response: { 200: Type.Ref('AdminContest') } },
    },
    async (request) => service.publishContest(db, config, request.auth!.tenantId, request.params.id),
  );

  app.post(
    '/admin/contests/:id/entries',
    {
      config: { auth: 'key', scopes: SERVER_SCOPES },
      schema: {
        tags,
        operationId: 'createContestEntry',
        summary: "Enter a participant from the tenant's server (idempotent), with verification signals",
        description: 'The server-side form of `POST /contests/{id}/enter`: the API key names the tenant, the body names the participant. Email and payment method are accepted only here.',
        params: ContestIdParams,
        body: ServerEnterBody,
        response: { 200: Type.Ref('ContestEntry'), 201: Type.Ref('ContestEntry') },
      },
    },
    async (request, reply) => {
      const { entry, created } = await service.enterByServer(db, request.auth!.tenantId, request.auth!.actorId, request.params.id, request.body);
      return reply.status(created ? 201 : 200).send(entry);
    },
  );

  app.get(
    '/admin/contests/:id/entries/:participant_id',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'getContestEntry', summary: 'An entry with its signals, status history and prize', params: EntryParams, response: { 200: EntryAdminView } },
    },
    async (request) => service.entryAdminView(db, request.auth!.tenantId, request.params.id, request.params.participant_id),
  );

  app.get(
    '/admin/fraud/reviews',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'listFraudReviews', summary: 'The manual review queue (oldest first)', querystring: ReviewListQuery, response: { 200: ReviewList } },
    },
    async (request) => service.listReviews(db, request.auth!.tenantId, request.query),
  );

  app.post(
    '/admin/fraud/decisions',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'decideFraudReview',
        summary: 'Resolve a held review: approve (the prize is issued after verification) or disqualify (reward.disqualified)',
        body: FraudDecisionBody,
        response: { 200: FraudDecisionResponse },
      },
    },
    async (request) => service.decide(db, request.auth!.tenantId, request.auth!.actorId, request.body),
  );
};

export default routes;
