import { answerKept } from '../../platform/idempotency-http.js';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as service from './service.js';
import {
  ActivityEligibility,
  ActivityParams,
  CompleteBody,
  CompleteResponse,
  EligibilityQuery,
  EmitFactBody,
  EmitFactResponse,
  ReportCompletionBody,
  ReportCompletionResponse,
  ValidateBody,
  ValidateResponse,
} from './schemas.js';

const tags = ['activities'];

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app.ctx;

  app.post(
    '/activities/:activityId/validate',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'validateActivity',
        summary: 'Validate an activity step on the server (spin wheel: the server draws the segment)',
        description:
          'Spin wheel: takes an attempt (counted against max_attempts and the cooldown) and draws the segment from the server-held weights with a cryptographic random source; calling again before completing returns the same draw. ' +
          'A client-sent `spin_result_index` is never trusted: `valid` is false when it differs and `result` is the server\'s draw. Quiz: checks that the answers name known questions and options, without revealing correctness or taking an attempt.',
        params: ActivityParams,
        body: ValidateBody,
        response: { 200: ValidateResponse },
      },
    },
    async (request) => service.validate(db, request.auth!, request.params.activityId, request.body),
  );

  app.post(
    '/activities/:activityId/complete-with-actions',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'completeActivity',
        summary: "Complete an activity and run its on-completion actions atomically (all or none)",
        description:
          'Quiz: `score` and `passed` are recomputed from `answers`; client claims are ignored. Spin wheel: the prize of the validated draw (or of a fresh draw) is awarded. ' +
          'Completing the same `attempt_id` again returns the first response with `duplicate: true`.',
        params: ActivityParams,
        body: CompleteBody,
        response: {
          200: CompleteResponse,
          503: {
            ...Type.Ref('ErrorResponse'),
            description: `COMPLETION_OUTCOME_UNKNOWN (never run a second time on its own): ${service.OUTCOME_UNKNOWN_DETAIL}. Also SERVICE_OVERLOADED.`,
          },
        },
      },
    },
    async (request) => service.complete(db, config.completionsInFlight, request.auth!, request.params.activityId, request.body),
  );

  app.get(
    '/activities/:activityId/eligibility',
    {
      config: { auth: 'session' },
      schema: { tags, operationId: 'getActivityEligibility', summary: 'Whether the session participant may start the activity now', params: ActivityParams, querystring: EligibilityQuery, response: { 200: ActivityEligibility } },
    },
    async (request) => service.eligibility(db, request.auth!, request.params.activityId),
  );

  app.post(
    '/activities/facts/emit',
    {
      config: { auth: 'session', idempotencyKey: 'optional-body' },
      schema: {
        tags,
        operationId: 'emitFact',
        summary: 'Store a custom fact for the session participant',
        description: 'With `trigger_challenge_evaluation: true`, challenge progress is updated from the fact in the same transaction, through the same path as processed events.',
        body: EmitFactBody,
        response: { 201: EmitFactResponse },
      },
    },
    async (request, reply) => {
      return answerKept(reply, 201, await service.emitFact(db, request.auth!, request.body));
    },
  );

  app.post(
    '/activities/:activityId/completions',
    {
      config: { auth: 'key', scopes: ['ingest', 'admin', 'gamify:admin'] },
      schema: {
        tags,
        operationId: 'reportActivityCompletion',
        summary: "Report, from the tenant's server, a completion of the activity that happened outside the runtime",
        description:
          'Records the same fact as a runtime completion (`activity_completed`, or `quiz_completed` for a quiz), so `activity_count` challenge objectives and contests count it, and emits `activity.completed`. ' +
          'Server credentials only (scope `ingest`, `admin` or `gamify:admin`); participant sessions cannot report completions, and `facts/emit` refuses these fact names. ' +
          'The activity must be published in the tenant (404 `ENGAGEMENT_NOT_FOUND` / `ACTIVITY_NOT_FOUND`, 422 `ENGAGEMENT_NOT_PUBLISHED`). ' +
          '`completion_id` makes it idempotent: the same id again answers 200 with `duplicate: true` and changes nothing (409 `COMPLETION_ID_REUSED` when the id was used for another participant or activity). ' +
          "Each report takes one of the participant's attempts: past the activity's `max_attempts` it is refused with 422 `ATTEMPTS_EXHAUSTED`. The activity's on-completion actions and prizes do not run. " +
          '422 `TIMESTAMP_IN_FUTURE` when `occurred_at` is more than 5 minutes ahead.',
        params: ActivityParams,
        body: ReportCompletionBody,
        response: { 200: ReportCompletionResponse, 201: ReportCompletionResponse },
      },
    },
    async (request, reply) => {
      const result = await service.reportCompletion(db, request.auth!.tenantId, request.params.activityId, request.body);
      return reply.status(result.duplicate ? 200 : 201).send(result);
    },
  );
};

export default routes;
