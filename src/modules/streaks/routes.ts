import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import * as service from './service.js';
import { CreateStreakBody, ListStreaksQuery, StreakCodeParams, StreakList, UpdateStreakBody } from './schemas.js';

const tags = ['streaks'];

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;

  app.post(
    '/admin/streaks',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'createStreak', summary: 'Define a streak', body: CreateStreakBody, response: { 201: Type.Ref('StreakDefinition') } } },
    async (request, reply) => reply.status(201).send(await service.createStreak(db, request.auth!.tenantId, request.body)),
  );

  app.get(
    '/admin/streaks',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'listStreaks', summary: "List the tenant's streak definitions", querystring: ListStreaksQuery, response: { 200: StreakList } } },
    async (request) => service.listStreaks(db, request.auth!.tenantId, request.query),
  );

  app.get(
    '/admin/streaks/:code',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getStreak', summary: 'Read a streak definition', params: StreakCodeParams, response: { 200: Type.Ref('StreakDefinition') } } },
    async (request) => service.readStreak(db, request.auth!.tenantId, request.params.code),
  );

  app.patch(
    '/admin/streaks/:code',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'updateStreak',
        summary: 'Change the name, counted event or grace of a streak',
        params: StreakCodeParams,
        body: UpdateStreakBody,
        response: { 200: Type.Ref('StreakDefinition') },
      },
    },
    async (request) => service.updateStreak(db, request.auth!.tenantId, request.params.code, request.body),
  );

  app.delete(
    '/admin/streaks/:code',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'deleteStreak', summary: "Delete a streak definition and every participant's streak of it", params: StreakCodeParams, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      await service.deleteStreak(db, request.auth!.tenantId, request.params.code);
      return reply.status(204).send(null);
    },
  );
};

export default routes;
