import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import * as service from './service.js';
import { AdvanceBody, AdvanceResponse } from './schemas.js';

const tags = ['test clock'];
const SANDBOX_ONLY = 'Sandbox tenants only: a live tenant gets 403 with code `SANDBOX_ONLY`.';

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.ctx;

  app.get(
    '/admin/test-clock',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'getTestClock',
        summary: "Read the sandbox tenant's test clock",
        description: `The tenant's now, real time, and how far the tenant's clock runs ahead. ${SANDBOX_ONLY}`,
        response: { 200: Type.Ref('TestClock') },
      },
    },
    async (request) => service.readTestClock(db, request.auth!.tenantId),
  );

  app.post(
    '/admin/test-clock/advance',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'advanceTestClock',
        summary: "Move the sandbox tenant's clock forward and run the work that became due",
        description:
          'Give `seconds` or `to`. The clock only moves forward, at most 400 days per call and five years ahead of real time, and keeps running from the new moment. ' +
          "Before answering, the tenant's due lifecycle work runs on the new clock: contests start, close (final sweep, winners drawn) and issue prizes after the verification hold; " +
          'challenges start and end; points lots expire and expiry reminders go out. `ran` says what ran. Errors: 400 `TEST_CLOCK_ADVANCE_INVALID` (neither or both fields), ' +
          `422 \`TEST_CLOCK_BACKWARDS\`, \`TEST_CLOCK_STEP_TOO_LARGE\`, \`TEST_CLOCK_OFFSET_TOO_LARGE\`. ${SANDBOX_ONLY}`,
        body: AdvanceBody,
        response: { 200: AdvanceResponse },
      },
    },
    async (request) => service.advanceTestClock(db, config, request.auth!.tenantId, request.body),
  );

  app.delete(
    '/admin/test-clock',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'resetTestClock',
        summary: "Put the sandbox tenant back on real time",
        description:
          "Removes the test clock: the tenant's now is real time again. What happened on the advanced clock stays (a completed contest stays completed; times recorded on the advanced clock stay in the future). " +
          SANDBOX_ONLY,
        response: { 200: Type.Ref('TestClock') },
      },
    },
    async (request) => service.resetTestClock(db, request.auth!.tenantId),
  );
};

export default routes;
