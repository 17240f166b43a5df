import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as service from './service.js';
import { OverviewQuery, RANGE_DAYS_DEFAULT, RANGE_DAYS_MAX } from './schemas.js';
import { calendar } from './calendar.js';
import { CALENDAR_DAYS_MAX, CALENDAR_ITEMS_MAX, CalendarQuery } from './calendar-schemas.js';

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
          'with totals over the range, the outstanding points liability now and at the end of each day, and the top 10 earn rules by points awarded in the range. ' +
          "With a point value set (PATCH /admin/points/settings `point_value`), the liability, the expiry forecast (open lots by the month of their expiry, the current month and the next 11) and the breakage (points expired ÷ points issued in the range) are also given in money, in the tenant's `currency`. " +
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

  // The campaign calendar is read by whoever reads the programs (a reviewer too), not only by analytics readers (platform/permissions.ts).
  app.get(
    '/admin/calendar',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['analytics'],
        operationId: 'getCampaignCalendar',
        summary: 'Rules, multipliers, engagements, challenges and contests on one timeline, with overlaps',
        description:
          "Every earn rule, campaign multiplier (not a participant's own), engagement (its trigger window), challenge and contest whose window meets the days from `from` to `to` " +
          "(calendar days in the tenant's time zone, inclusive; default the current month), each with its window (null bounds are open), its own status and a common `state`. " +
          'Earn-affecting items (event rules that are not paused, and multipliers) list the others of the same event whose windows overlap theirs. ' +
          `At most ${CALENDAR_DAYS_MAX} days and ${CALENDAR_ITEMS_MAX} items (\`truncated\` says when more ran). Needs \`programs:read\` (console roles) or an admin credential.`,
        querystring: CalendarQuery,
        response: {
          200: Type.Ref('Calendar'),
          400: {
            ...Type.Ref('ErrorResponse'),
            description: `A date that is not a calendar day written YYYY-MM-DD, \`from\` after \`to\`, or a window longer than ${CALENDAR_DAYS_MAX} days (\`VALIDATION_INVALID_REQUEST\` or \`VALIDATION_INVALID_VALUE\`, the reason in \`detail\`).`,
          },
          403: { ...Type.Ref('ErrorResponse'), description: 'The credential has no admin scope, or the console role cannot read programs (`AUTH_FORBIDDEN`).' },
        },
      },
    },
    async (request) => calendar(db, request.auth!.tenantId, request.query),
  );
};

export default routes;
