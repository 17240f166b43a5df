import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as service from './service.js';
import { GateCheckBody, GateCheckResponse, ScreenVisitBody, ScreenVisitResponse } from './schemas.js';

const tags = ['gates'];

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;

  app.post(
    '/runtime/gates/check',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'checkGates',
        summary: 'Whether screens are unlocked for the session participant',
        description:
          'Each target screen\'s gate conditions must all hold (AND): `activity_completed` / `activity_completed:<activity_id>` / `<activity_type>_completed`, `min_points_<N>` (available points), `badge_earned:<code>`, `screen_visited:<screen_id>`.',
        body: GateCheckBody,
        response: { 200: GateCheckResponse },
      },
    },
    async (request) => service.checkGates(db, request.auth!, request.body.targets),
  );

  app.post(
    '/runtime/screens/visits',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'recordScreenVisit',
        summary: 'Record that the session participant saw a screen (for `screen_visited:<screen_id>` conditions)',
        description: 'A locked screen cannot be visited: the answer is 422 SCREEN_LOCKED with the remaining conditions. Repeated visits count up.',
        body: ScreenVisitBody,
        response: { 200: ScreenVisitResponse },
      },
    },
    async (request) => service.recordVisit(db, request.auth!, request.body.screen_id),
  );
};

export default routes;
