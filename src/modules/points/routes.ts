import { answerKept } from '../../platform/idempotency-http.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import * as service from './service.js';
import { startSegmentGrant, type SegmentGrantBody } from './bulk.js';
import { errorRef } from '../../platform/http.js';
import { parseInclude, readState } from './state.js';
import {
  BulkGrantBody,
  BulkGrantJob,
  BulkJobParams,
  DeductBody,
  DirectResponse,
  GrantBody,
  HistoryQuery,
  HistoryResponse,
  IdParams,
  InsufficientPoints,
  MultiplierBody,
  MultiplierList,
  MultiplierListQuery,
  SessionBalance,
  SessionBalanceBody,
  SessionTransactions,
  SessionTransactionsBody,
  SegmentGrantBody as SegmentGrantBodySchema,
  SegmentGrantDryRun,
  Settings,
  SettingsPatch,
  StateParams,
  StateQuery,
  StateResponse,
  TierBody,
  TierList,
  TierParams,
  TierPatch,
} from './schemas.js';

/** A bulk grant of 100,000 participants is about 5 MB of JSON. */
const BULK_GRANT_BODY_LIMIT_BYTES = 16 * 1024 * 1024;
/** The deprecated full-profile read stops answering 90 days after its deprecation (2026-11-01). */
const PARTICIPANT_READ_SUNSET = new Date('2027-01-30T00:00:00Z');

/** HTTP routes of the points module: schemas, credential, one call into the service. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;
  const tags = ['points'];

  app.post(
    '/gamify/points/grant',
    {
      config: { auth: 'admin', idempotencyKey: 'body' },
      schema: {
        tags,
        operationId: 'grantPoints',
        summary: 'Grant points to a participant (created if new)',
        description: 'Direct grant, the escape hatch for bonus campaigns and corrections. Multipliers never apply here. Idempotent per tenant and key for 24 hours: a repeat of the key answers the first answer with `duplicate: true` and `Idempotent-Replayed: true`.',
        body: GrantBody,
        response: { 200: DirectResponse },
      },
    },
    async (request, reply) => answerKept(reply, 200, await service.grantDirect(db, request.auth!.tenantId, request.body as service.DirectRequest, service.ledgerActorOf(request.auth!))),
  );

  app.post(
    '/gamify/points/deduct',
    {
      config: { auth: 'admin', idempotencyKey: 'body' },
      schema: {
        tags,
        operationId: 'deductPoints',
        summary: 'Deduct points; 422 insufficient_points when the balance is too low',
        description: 'Atomic and guarded: concurrent deducts never drive the balance below zero and points never partially leave. Idempotent per tenant and key for 24 hours: a repeat of the key answers the first answer with `duplicate: true` and `Idempotent-Replayed: true`.',
        body: DeductBody,
        response: { 200: DirectResponse, 422: InsufficientPoints },
      },
    },
    async (request, reply) => answerKept(reply, 200, await service.deductDirect(db, request.auth!.tenantId, request.body as service.DirectRequest, service.ledgerActorOf(request.auth!))),
  );

  app.get(
    '/admin/points/settings',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getPointsSettings', summary: "The tenant's expiry policy, default TTL, reminder days, currency name and point value", response: { 200: Settings } } },
    async (request) => service.readSettings(db, request.auth!.tenantId),
  );

  app.patch(
    '/admin/points/settings',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'updatePointsSettings',
        summary: 'Change the expiry policy, default TTL, reminder days, currency name or point value',
        description:
          'Expiry changes apply to lots granted from now on; existing lots keep their expiry. `point_value` (money per point in the tenant\'s currency) changes how the overview values points from the next read; null clears it. ' +
          'A value with more than 6 decimal places is refused (400, `errors[].path` `/point_value`, code `multiple_of`).',
        body: SettingsPatch,
        response: { 200: Settings },
      },
    },
    async (request) => service.updateSettings(db, request.auth!.tenantId, request.body),
  );

  app.post(
    '/admin/points/multipliers',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'createMultiplier',
        summary: 'Create a points multiplier for matching events in a time window',
        description: 'Applies to points earned from matching events only, never to direct grants or deducts. When several match, the highest wins (they do not stack).',
        body: MultiplierBody,
        response: { 201: Type.Ref('PointsMultiplier') },
      },
    },
    async (request, reply) => reply.status(201).send(await service.createMultiplier(db, request.auth!.tenantId, request.body)),
  );

  app.get(
    '/admin/points/multipliers',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'listMultipliers', summary: 'List multipliers, newest first', querystring: MultiplierListQuery, response: { 200: MultiplierList } } },
    async (request) => service.listMultipliers(db, request.auth!.tenantId, request.query),
  );

  app.get(
    '/admin/points/multipliers/:id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getMultiplier', summary: 'Read a multiplier', params: IdParams, response: { 200: Type.Ref('PointsMultiplier') } } },
    async (request) => service.readMultiplier(db, request.auth!.tenantId, request.params.id),
  );

  app.delete(
    '/admin/points/multipliers/:id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'deleteMultiplier', summary: 'Delete a multiplier', params: IdParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      await service.deleteMultiplier(db, request.auth!.tenantId, request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/admin/points/tiers',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'listTiers', summary: 'Tier definitions, lowest threshold first', response: { 200: TierList } } },
    async (request) => service.listTiers(db, request.auth!.tenantId),
  );

  app.post(
    '/admin/points/tiers',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'createTier',
        summary: 'Define a tier by its lifetime-points threshold',
        description: 'Every participant is then re-evaluated in the background; each change emits tier.changed.v1.',
        body: TierBody,
        response: { 201: Type.Ref('PointsTier') },
      },
    },
    async (request, reply) => reply.status(201).send(await service.createTier(db, request.auth!.tenantId, request.body)),
  );

  app.get(
    '/admin/points/tiers/:code',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getTier', summary: 'Read a tier', params: TierParams, response: { 200: Type.Ref('PointsTier') } } },
    async (request) => service.readTier(db, request.auth!.tenantId, request.params.code),
  );

  app.patch(
    '/admin/points/tiers/:code',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'updateTier', summary: 'Rename a tier or move its threshold', params: TierParams, body: TierPatch, response: { 200: Type.Ref('PointsTier') } },
    },
    async (request) => service.updateTier(db, request.auth!.tenantId, request.params.code, request.body),
  );

  app.delete(
    '/admin/points/tiers/:code',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'deleteTier', summary: 'Delete a tier', params: TierParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      await service.deleteTier(db, request.auth!.tenantId, request.params.code);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/points/history',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'getPointsHistory',
        summary: 'Ledger history, newest first, including points expired in the last 90 days',
        description: 'Filter by participant, ledger types (comma-separated) and a time range; paginate with `next_cursor`.',
        querystring: HistoryQuery,
        response: { 200: HistoryResponse },
      },
    },
    async (request) => service.readHistory(db, request.auth!.tenantId, request.query),
  );

  app.post(
    '/points/balance',
    {
      config: { auth: 'session' },
      schema: { tags, operationId: 'getPointsBalance', summary: "The session participant's balance", body: SessionBalanceBody, response: { 200: SessionBalance } },
    },
    async (request) => service.sessionBalance(db, request.auth!.tenantId, request.auth!.participantId!),
  );

  app.post(
    '/points/transactions',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'getPointsTransactions',
        summary: "The session participant's ledger, newest first (limit at most 100)",
        body: SessionTransactionsBody,
        response: { 200: SessionTransactions },
      },
    },
    async (request) => service.sessionTransactions(db, request.auth!.tenantId, request.auth!.participantId!, request.body.limit, request.body.offset),
  );

  app.post(
    '/admin/points/bulk-grant',
    {
      config: { auth: 'admin', idempotencyKey: 'body' },
      bodyLimit: BULK_GRANT_BODY_LIMIT_BYTES,
      schema: {
        tags,
        operationId: 'bulkGrantPoints',
        summary: 'Grant points to up to 100,000 participants in a background job',
        description:
          'Answers 202 with the job at once; poll the status route. Each participant is granted exactly once per job, also when the job is retried. ' +
          'A repeated idempotency key inside 24 hours answers 202 with the existing job, `duplicate: true` and `Idempotent-Replayed: true`.',
        body: BulkGrantBody,
        response: { 202: BulkGrantJob },
      },
    },
    async (request, reply) => answerKept(reply, 202, await service.startBulkGrant(db, request.auth!.tenantId, request.body as service.BulkGrantBody, service.ledgerActorOf(request.auth!))),
  );

  app.post(
    '/admin/points/segment-grants',
    {
      config: { auth: 'admin', idempotencyKey: 'optional-body' },
      schema: {
        tags,
        operationId: 'grantPointsToSegment',
        summary: 'Grant points to every member of a segment, after a dry run that counts them',
        description:
          '`dry_run: true` answers 200 with the members and the points the grant would give, and writes nothing. ' +
          'Otherwise the members at this moment become a bulk grant job (answered 202; follow it with `GET /admin/points/bulk-grant/{job_id}`): each member is granted exactly once per job, also when the job is retried. ' +
          'A grant needs an idempotency key (the `Idempotency-Key` header or `idempotency_key`): a repeat inside 24 hours, also one sent while the first is still running, answers the same job with `duplicate: true` and `Idempotent-Replayed: true`. ' +
          'A segment the tenant does not have: 404 `SEGMENT_NOT_FOUND`. Recorded in the audit log (a dry run or a repeat is not).',
        body: SegmentGrantBodySchema,
        response: {
          200: SegmentGrantDryRun,
          202: BulkGrantJob,
          404: { ...errorRef, description: 'The tenant has no such segment. Codes: SEGMENT_NOT_FOUND.' },
        },
      },
    },
    async (request, reply) => {
      const body = request.body as SegmentGrantBody;
      const answer = await startSegmentGrant(db, request.auth!.tenantId, body, service.ledgerActorOf(request.auth!));
      // A dry run, or a repeat of a key, changes nothing: the audit log keeps changes only.
      if (answer.dry_run === true || answer.duplicate) request.pendingAudit = null;
      if (answer.dry_run === true) return reply.status(200).send(answer);
      return answerKept(reply, 202, answer);
    },
  );

  app.get(
    '/admin/points/bulk-grant/:job_id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getBulkGrantJob', summary: 'Status of a bulk grant job', params: BulkJobParams, response: { 200: BulkGrantJob } } },
    async (request) => service.readBulkGrant(db, request.auth!.tenantId, request.params.job_id),
  );

  app.get(
    '/gamify/state/:participant_id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['state'],
        operationId: 'getParticipantState',
        summary: "The canonical read of a participant's state",
        description:
          '`include` selects parts (points, tier, badges, streaks, rewards, challenges, contests, referrals, profile); omitted means all. ' +
          'Parts of features without data answer empty collections of the documented shape. Unknown parts: 400.',
        params: StateParams,
        querystring: StateQuery,
        response: { 200: StateResponse },
      },
    },
    async (request) => readState(db, request.auth!, request.params.participant_id, await parseInclude(request.query.include)),
  );

  app.get(
    '/gamify/participants/:participant_id',
    {
      config: {
        auth: 'admin',
        deprecated: { sunset: PARTICIPANT_READ_SUNSET, successor: '/api/v1/gamify/state/{participant_id}?include=...' },
      },
      schema: {
        tags: ['state'],
        operationId: 'getParticipant',
        summary: 'Deprecated full participant read; use GET /gamify/state/{participant_id}',
        description: 'Answers every part of the state read, with `Deprecation`, `Sunset` and a `Link` to the successor.',
        params: StateParams,
        response: { 200: StateResponse },
      },
    },
    async (request) => readState(db, request.auth!, request.params.participant_id, await parseInclude(undefined)),
  );
};

export default routes;
