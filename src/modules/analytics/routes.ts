import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as service from './service.js';
import { OverviewQuery, RANGE_DAYS_DEFAULT, RANGE_DAYS_MAX } from './schemas.js';

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;

  app.get(
    '/admin/analytics/overview',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['analytics'],
        operationId: 'getAnalyticsOverview',
        summary: 'Daily figures of the tenant for a range of days (the console Overview)',
        description:
          "Per calendar day in the tenant's time zone (`timezone`), from `from` to `to` inclusive: points issued, redeemed and expired (from the points ledger), " +
          'active participants, events stored and failed (from the event store), webhook deliveries succeeded and failed (from counters kept for good), ' +
          'with totals over the range, the outstanding points liability now, and the top 10 earn rules by points awarded in the range. ' +
          `Every day of the range is listed, with zeros where nothing happened. At most ${RANGE_DAYS_MAX} days; default the last ${RANGE_DAYS_DEFAULT} days ending today. ` +
          'Figures are computed from the database on each call (read only, one snapshot). An admin credential (`admin` or `gamify:admin` scope, or an admin login token) is required.',
        querystring: OverviewQuery,
        response: {
          200: Type.Ref('AnalyticsOverview'),
          400: {
            ...Type.Ref('ErrorResponse'),
            description: `A date that is not a calendar day written YYYY-MM-DD, \`from\` after \`to\`, or a range longer than ${RANGE_DAYS_MAX} days (\`VALIDATION_INVALID_REQUEST\` or \`VALIDATION_INVALID_VALUE\`, the reason in \`detail\`).`,
          },
          403: { ...Type.Ref('ErrorResponse'), description: 'The credential has no admin scope (`AUTH_FORBIDDEN`).' },
        },
      },
    },
    async (request) => service.overview(db, request.auth!.tenantId, request.query),
  );
};

export default routes;
