import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { Pagination } from '../../platform/http.js';
import { ParticipantId } from '../participants/index.js';
import * as service from './service.js';
import { SearchResponse } from './schemas.js';

/**
 * One participant's events as support reads them (the participants area, not
 * the developers' event store): newest first, each with its processing outcome
 * (the points it earned, the rules it met), masked without read:pii like every
 * stored event. The same search as `GET /events/search`, held to one person.
 */
export const PARTICIPANT_EVENTS_PAGE_MAX = 100;

const Params = Type.Object({ participant_id: ParticipantId });
const Query = Type.Object(
  {
    limit: Type.Optional(Pagination.limit(PARTICIPANT_EVENTS_PAGE_MAX, 20)),
    cursor: Pagination.cursor(),
  },
  { additionalProperties: false },
);

export const participantEventsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;
  app.get(
    '/admin/participants/:participant_id/events',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['participants'],
        operationId: 'listParticipantEvents',
        summary: "A participant's recent events with their outcome (points earned, rules met), newest first",
        description:
          'For support: the events of one participant with `participants:read`, where `GET /events/search` is the developers\' view of the whole store. ' +
          'Properties are masked without `read:pii`. Paginate with `next_cursor`.',
        params: Params,
        querystring: Query,
        response: { 200: SearchResponse },
      },
    },
    async (request) => service.searchEvents(db, request.auth!, { participant_id: request.params.participant_id, limit: request.query.limit, cursor: request.query.cursor }),
  );
};
