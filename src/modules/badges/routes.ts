import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import * as service from './service.js';
import {
  AwardBadgeBody,
  AwardBadgeResponse,
  BadgeCodeParams,
  BadgeList,
  BadgeStatusQuery,
  BadgeStatusResponse,
  CreateBadgeBody,
  ListBadgesQuery,
  UpdateBadgeBody,
} from './schemas.js';

const tags = ['badges'];

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;

  app.post(
    '/admin/badges',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'createBadge', summary: 'Define a badge', body: CreateBadgeBody, response: { 201: Type.Ref('BadgeDefinition') } },
    },
    async (request, reply) => reply.status(201).send(await service.createBadge(db, request.auth!.tenantId, request.body)),
  );

  app.get(
    '/admin/badges',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'listBadges', summary: "List the tenant's badge definitions", querystring: ListBadgesQuery, response: { 200: BadgeList } },
    },
    async (request) => service.listBadges(db, request.auth!.tenantId, request.query),
  );

  app.get(
    '/admin/badges/:code',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'getBadge', summary: 'Read a badge definition', params: BadgeCodeParams, response: { 200: Type.Ref('BadgeDefinition') } },
    },
    async (request) => service.readBadge(db, request.auth!.tenantId, request.params.code),
  );

  app.patch(
    '/admin/badges/:code',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'updateBadge',
        summary: 'Change the name, description or image of a badge',
        params: BadgeCodeParams,
        body: UpdateBadgeBody,
        response: { 200: Type.Ref('BadgeDefinition') },
      },
    },
    async (request) => service.updateBadge(db, request.auth!.tenantId, request.params.code, request.body),
  );

  app.delete(
    '/admin/badges/:code',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'deleteBadge',
        summary: "Delete a badge definition and every participant's record of it",
        params: BadgeCodeParams,
        response: { 204: Type.Null({ description: 'Deleted.' }) },
      },
    },
    async (request, reply) => {
      await service.deleteBadge(db, request.auth!.tenantId, request.params.code);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/admin/badges/:code/award',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'awardBadge',
        summary: 'Award a badge to a participant directly',
        description: 'Idempotent: a participant who already holds the badge keeps the original `earned_at` and `awarded` is false.',
        params: BadgeCodeParams,
        body: AwardBadgeBody,
        response: { 200: AwardBadgeResponse },
      },
    },
    async (request) =>
      service.awardBadgeDirectly(db, request.auth!.tenantId, request.params.code, request.body.participant_id, request.auth!.actorId),
  );

  app.get(
    '/public/badges/status',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'getBadgeStatus',
        summary: "The session participant's badges: every badge of the tenant with earned and earned_at",
        description: `Without \`badge_codes\`, all badges configured for the tenant (at most ${service.BADGE_STATUS_MAX}, in code order).`,
        querystring: BadgeStatusQuery,
        response: { 200: BadgeStatusResponse },
      },
    },
    async (request) => service.badgeStatus(db, request.auth!.tenantId, request.auth!.participantId!, request.query.badge_codes),
  );
};

export default routes;
