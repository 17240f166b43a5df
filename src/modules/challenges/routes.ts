import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { mayPublish } from '../../platform/publishing.js';
import * as service from './service.js';
import { PUBLIC_CALLER_REFUSED, resolvePublicCaller } from './public-tenant.js';
import {
  AdminChallengeList,
  ChallengeIdParams,
  ChallengeLeaderboardQuery,
  ChallengeLeaderboardResponse,
  CreateChallengeBody,
  EnrollResponse,
  ListChallengesQuery,
  PublicChallengeList,
  SessionBody,
  SessionQuery,
  UpdateChallengeBody,
} from './schemas.js';

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;
  const tags = ['challenges'];
  const adminChallenge = { 200: Type.Ref('AdminChallenge') };

  app.post(
    '/admin/challenges',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'createChallenge', summary: 'Create a challenge (draft by default)', body: CreateChallengeBody, response: { 201: Type.Ref('AdminChallenge') } },
    },
    async (request, reply) => reply.status(201).send(await service.createChallenge(db, request.auth!.tenantId, request.body, request.auth!.actorId, !mayPublish(request.auth!))),
  );

  app.get(
    '/admin/challenges',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'listChallenges', summary: 'List challenges, newest first', querystring: ListChallengesQuery, response: { 200: AdminChallengeList } } },
    async (request) => service.listChallenges(db, request.auth!.tenantId, request.query),
  );

  app.get(
    '/admin/challenges/:id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getChallenge', summary: 'Read a challenge with its status moves', params: ChallengeIdParams, response: adminChallenge } },
    async (request) => service.getChallenge(db, request.auth!.tenantId, request.params.id),
  );

  app.patch(
    '/admin/challenges/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'updateChallenge',
        summary: 'Update a challenge',
        description: 'Draft and scheduled challenges change freely; an active one may change name, description and ends_at; ended and archived ones name and description only.',
        params: ChallengeIdParams,
        body: UpdateChallengeBody,
        response: adminChallenge,
      },
    },
    async (request) => service.updateChallenge(db, request.auth!.tenantId, request.params.id, request.body, !mayPublish(request.auth!)),
  );

  for (const action of ['publish', 'end', 'archive'] as const) {
    const operationIds = { publish: 'publishChallenge', end: 'endChallenge', archive: 'archiveChallenge' };
    const summaries = {
      publish: 'Publish a draft challenge (scheduled until starts_at, then active)',
      end: 'End a scheduled or active challenge before its window closes',
      archive: 'Archive a challenge (hidden from participants; kept for reporting)',
    };
    app.post(
      `/admin/challenges/:id/${action}`,
      { config: { auth: 'admin' }, schema: { tags, operationId: operationIds[action], summary: summaries[action], params: ChallengeIdParams, response: adminChallenge } },
      async (request) => service.moveChallenge(db, request.auth!.tenantId, request.params.id, action, request.auth!.actorId),
    );
  }

  app.delete(
    '/admin/challenges/:id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'deleteChallenge', summary: 'Archive a challenge (same as POST …/archive)', params: ChallengeIdParams, response: adminChallenge } },
    async (request) => service.moveChallenge(db, request.auth!.tenantId, request.params.id, 'archive', request.auth!.actorId, !mayPublish(request.auth!)),
  );

  app.get(
    '/public/challenges',
    {
      config: { auth: 'session' },
      schema: { tags, operationId: 'listPublicChallenges', summary: "The engagement's challenges with the caller's enrollment and progress", querystring: SessionQuery, response: { 200: PublicChallengeList } },
    },
    async (request) => service.listForParticipant(db, request.auth!.tenantId, request.auth!.participantId!, request.auth!.engagementId!),
  );

  app.post(
    '/public/challenges/:id/enroll',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'enrollInChallenge',
        summary: 'Enroll the caller in a challenge',
        description:
          '409 `ALREADY_ENROLLED` when already enrolled; 422 `CHALLENGE_NOT_STARTED` / `CHALLENGE_ENDED` outside the window; ' +
          '403 `NOT_IN_SEGMENT` when the challenge is for the members of a segment (`segment_id`) the caller is not in (the detail names the segment).',
        params: ChallengeIdParams,
        body: SessionBody,
        response: { 201: EnrollResponse },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await service.enroll(db, request.auth!.tenantId, request.auth!.participantId!, request.auth!.engagementId!, request.params.id)),
  );

  app.get(
    '/public/challenges/:id/progress',
    {
      config: { auth: 'session' },
      schema: { tags, operationId: 'getChallengeProgress', summary: "The caller's progress in a challenge", params: ChallengeIdParams, querystring: SessionQuery, response: { 200: Type.Ref('ChallengeProgress') } },
    },
    async (request) => service.progress(db, request.auth!.tenantId, request.auth!.participantId!, request.auth!.engagementId!, request.params.id),
  );

  app.get(
    '/public/challenges/:id/leaderboard',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'getChallengeLeaderboard',
        summary: "A challenge's leaderboard",
        description:
          'Ranked by score (highest first); equal scores rank by who reached the score first, then by participant id. ' +
          'Needs no credential: the challenge id names its tenant. `session_id` adds the caller\'s row as `me`; an `X-API-Key` or `X-Service-Tenant` (tenant id or slug), when sent, must name the challenge\'s tenant (404 otherwise). ' +
          'A draft or unknown challenge is a 404.',
        params: ChallengeIdParams,
        querystring: ChallengeLeaderboardQuery,
        response: { 200: ChallengeLeaderboardResponse, ...PUBLIC_CALLER_REFUSED },
      },
    },
    async (request, reply) => {
      const caller = await resolvePublicCaller(request, reply, app.ctx, { challengeId: request.params.id });
      return service.leaderboard(db, caller.tenantId, request.params.id, request.query.limit, caller);
    },
  );
};

export default routes;
