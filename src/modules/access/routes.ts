import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { clientIp, errorRef } from '../../platform/http.js';
import * as service from './service.js';
import * as limits from './limits.js';
import { requireOperator } from './operator-auth.js';
import { OperatorTenantList, OperatorTenantsQuery, listTenantsAsOperator } from './operator-tenants.js';
import {
  ApiKeyList,
  CreateApiKeyBody,
  CreateSessionBody,
  CreatedApiKey,
  KeyIdParams,
  ListApiKeysQuery,
  LoginBody,
  LoginResponse,
  OperatorLimitsBody,
  OperatorTenantParams,
  SessionResponse,
  TenantLimitsResponse,
  TenantResponse,
  TenantUsageResponse,
  UpdateApiKeyBody,
  UpdateTenantBody,
} from './schemas.js';

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, authenticator, config } = app.ctx;

  app.post(
    '/auth/login',
    {
      config: { auth: 'public' },
      schema: {
        tags: ['access'],
        operationId: 'adminLogin',
        summary: 'Exchange an admin user\'s email and password for an admin token (JWT)',
        description:
          'An unknown email, a wrong password and a disabled or invited user all get the same 401. ' +
          'Five failed sign-ins of one email (here or at `POST /console/session`, from any address) lock it out: 429 `RATE_LIMITED` with `Retry-After`, ' +
          'for a minute, doubling with each further failure up to 15 minutes; a success clears the count. An address is locked out the same way after 100 failures. ' +
          'The token ends at `POST /auth/logout`, and when the user\'s password, role or status changes or they sign out of the console.',
        body: LoginBody,
        response: {
          200: LoginResponse,
          401: { ...Type.Ref('ErrorResponse'), description: 'The email or the password is wrong, or the user is disabled or only invited (one answer for all). Codes: AUTH_UNAUTHENTICATED.' },
        },
      },
    },
    async (request) => service.login(db, authenticator, app.ctx.rateLimits, request.body.email, request.body.password, clientIp(request) ?? null),
  );

  app.post(
    '/events/api-keys',
    {
      config: { auth: 'jwt' },
      schema: {
        tags: ['access'],
        operationId: 'createApiKey',
        summary: 'Create an API key; the plaintext key is returned once',
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKey },
      },
    },
    async (request, reply) => reply.status(201).send(await service.createApiKey(db, request.auth!.tenantId, request.body)),
  );

  app.get(
    '/events/api-keys',
    {
      config: { auth: 'jwt' },
      schema: { tags: ['access'], operationId: 'listApiKeys', summary: "List the tenant's API keys (prefixes only)", querystring: ListApiKeysQuery, response: { 200: ApiKeyList } },
    },
    async (request) => service.listApiKeys(db, request.auth!.tenantId, request.query),
  );

  app.patch(
    '/events/api-keys/:id',
    {
      config: { auth: 'jwt' },
      schema: {
        tags: ['access'],
        operationId: 'updateApiKey',
        summary: 'Update the name, scopes or rate limit of an API key',
        params: KeyIdParams,
        body: UpdateApiKeyBody,
        response: { 200: Type.Ref('ApiKey') },
      },
    },
    async (request) => service.updateApiKey(db, authenticator, request.auth!.tenantId, request.params.id, request.body),
  );

  app.delete(
    '/events/api-keys/:id',
    {
      config: { auth: 'jwt' },
      schema: {
        tags: ['access'],
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key (soft delete, effective immediately)',
        params: KeyIdParams,
        response: { 200: Type.Ref('ApiKey') },
      },
    },
    async (request) => service.revokeApiKey(db, authenticator, request.auth!.tenantId, request.params.id),
  );

  app.post(
    '/events/api-keys/:id/rotate',
    {
      config: { auth: 'jwt' },
      schema: {
        tags: ['access'],
        operationId: 'rotateApiKey',
        summary: 'Give an API key a new secret; the old one is refused at once',
        description:
          'The key keeps its id, name, scopes and limits; the new plaintext key is returned once. There is no grace period: ' +
          'the old secret stops working the moment the rotation commits, in every process. A revoked key answers 404.',
        params: KeyIdParams,
        response: { 200: CreatedApiKey },
      },
    },
    async (request) => service.rotateApiKey(db, authenticator, request.auth!.tenantId, request.params.id),
  );

  app.post(
    '/sessions',
    {
      config: { auth: 'key', scopes: ['admin', 'gamify:admin', 'ingest'] },
      schema: {
        tags: ['access'],
        operationId: 'createSession',
        summary: 'Issue a participant session for an engagement (called by the tenant\'s server)',
        description:
          'The tenant\'s server, holding an API key, asks for a session for one participant and one engagement and hands the `session_id` to the participant\'s browser or app. ' +
          'Participant-facing routes take it as `session_id` (body or query) together with the same `engagement_id`. The participant is created if new.',
        body: CreateSessionBody,
        response: {
          201: SessionResponse,
          403: { ...errorRef, description: 'The engagement is for the members of a segment (`segment_id`) and the participant is not one (the detail names the segment); or the credential lacks the scope. Codes: NOT_IN_SEGMENT, AUTH_FORBIDDEN.' },
        },
      },
    },
    async (request, reply) => {
      // Issued here, so remembered here: the participant's first request needs no look-up of it.
      const remember = (issued: service.IssuedSession) => authenticator.rememberIssuedSession(issued, request.auth!);
      return reply.status(201).send(await service.createSession(db, request.auth!.tenantId, request.body, config.sessionTtlSeconds, remember));
    },
  );

  app.get(
    '/tenant',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['access'],
        operationId: 'getTenant',
        summary: "The caller's tenant, its settings, plan and limits in force",
        description: 'The limits shown are those in force (the plan\'s figures or the tenant\'s own); `GET /tenant/limits` says where each comes from.',
        response: { 200: TenantResponse },
      },
    },
    async (request) => service.readTenant(db, request.auth!.tenantId),
  );

  app.patch(
    '/tenant',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['access'],
        operationId: 'updateTenant',
        summary: "Change the caller's tenant's time zone, currency, locale or four-eyes publishing",
        description:
          'The time zone must be an IANA name PostgreSQL knows (it decides the tenant\'s calendar days from the next computation on: ' +
          'daily caps, streaks, leaderboard periods, analytics), the currency an ISO 4217 code, the locale a BCP 47 tag (stored canonical). ' +
          '`require_four_eyes: true` turns on four-eyes publishing from the next request on: nobody publishes a rule, engagement, challenge or contest directly, and a review request is approved only by a person other than its submitter (`POST /admin/reviews/{id}/approve`). ' +
          'Needs settings:write (console: the owner). ' +
          'Answers the tenant as `GET /tenant` shows it. Each change is in the audit log (`GET /admin/audit-log?resource_type=tenant`) with the tenant before and after. ' +
          'Plans and limits are not settings: only the platform operator changes them (`PATCH /operator/tenants/{tenant_id}/limits`).',
        body: UpdateTenantBody,
        response: { 200: TenantResponse },
      },
    },
    async (request) => service.updateTenant(db, request.auth!.tenantId, request.body),
  );

  app.get(
    '/tenant/limits',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['access'],
        operationId: 'getTenantLimits',
        summary: "The caller's tenant's limits in force, and where each figure comes from",
        description:
          'Each limit shows the figure in force (`value`, null is unlimited), the plan\'s figure, the tenant\'s own override (null when none) and which of them applies (`source`). ' +
          'Overrides are set by the platform operator (`PATCH /operator/tenants/{tenant_id}/limits`), never by the tenant. What each limit does when reached is in its description; ' +
          'what the tenant used of them is `GET /tenant/usage`.',
        response: { 200: TenantLimitsResponse },
      },
    },
    async (request) => limits.readLimits(db, request.auth!.tenantId),
  );

  const operatorOnly = async (request: FastifyRequest) => requireOperator(config.operatorToken, request);
  const operatorErrors = {
    401: { ...errorRef, description: 'No operator token, or a wrong one.' },
    403: { ...errorRef, description: "A tenant's credential (API key, admin token, console sign-in), or the operator routes are off (no OPERATOR_TOKEN)." },
    404: { ...errorRef, description: 'No tenant has this id (`TENANT_NOT_FOUND`).' },
  };

  app.get(
    '/operator/tenants',
    {
      onRequest: operatorOnly,
      schema: {
        tags: ['operator'],
        operationId: 'operatorListTenants',
        summary: 'List the tenants, newest first (platform operator)',
        description:
          'Every tenant with its plan and environment, filtered by `environment`, `plan` or `slug_prefix`, keyset-paginated (`next_cursor`). ' +
          "A paired sandbox names its live tenant (`live_tenant_id`). Needs `Authorization: Bearer <OPERATOR_TOKEN>`; a tenant's credentials get 403.",
        security: [{ OperatorToken: [] }],
        querystring: OperatorTenantsQuery,
        response: { 200: OperatorTenantList, 401: operatorErrors[401], 403: operatorErrors[403] },
      },
    },
    async (request) => listTenantsAsOperator(db, request.query),
  );

  app.get(
    '/operator/tenants/:tenant_id/limits',
    {
      onRequest: operatorOnly,
      schema: {
        tags: ['operator'],
        operationId: 'operatorGetTenantLimits',
        summary: "Any tenant's plan and limits in force (platform operator)",
        description: 'The same view as the tenant\'s `GET /tenant/limits`, for the operator. Needs `Authorization: Bearer <OPERATOR_TOKEN>`.',
        security: [{ OperatorToken: [] }],
        params: OperatorTenantParams,
        response: { 200: TenantLimitsResponse, ...operatorErrors },
      },
    },
    async (request) => limits.readLimitsAsOperator(db, request.params.tenant_id),
  );

  app.patch(
    '/operator/tenants/:tenant_id/limits',
    {
      onRequest: operatorOnly,
      schema: {
        tags: ['operator'],
        operationId: 'operatorUpdateTenantLimits',
        summary: "Change a tenant's plan or its own limits (platform operator)",
        description:
          'Sets the fields given and keeps the others: `plan`, and for each limit a figure within its bounds or null to return to the plan\'s figure. ' +
          'Needs `Authorization: Bearer <OPERATOR_TOKEN>`; a tenant\'s credentials get 403. The change is written to the tenant\'s audit log ' +
          '(`GET /admin/audit-log?resource_type=tenant`, action `limits.update`, before and after as `GET /tenant/limits` shows them) in the same transaction. ' +
          'It applies to the next request in this process at once and in every other process when they receive the change notice (normally milliseconds; ' +
          'at most 10 s, the lifetime of their cached credential look-ups). A lowered request rate starts a fresh 60 s window at the new figure; ' +
          'API keys or published engagements above a lowered figure stay, and new ones are refused.',
        security: [{ OperatorToken: [] }],
        params: OperatorTenantParams,
        body: OperatorLimitsBody,
        response: { 200: TenantLimitsResponse, ...operatorErrors },
      },
    },
    async (request) =>
      limits.updateLimitsAsOperator(db, authenticator, request.params.tenant_id, request.body, { id: request.id, route: request.routeOptions.url ?? '' }),
  );

  app.get(
    '/tenant/usage',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['access'],
        operationId: 'getTenantUsage',
        summary: "What the caller's tenant used of its plan's quotas",
        description:
          'Daily figures count the current UTC day and monthly figures the current UTC month. The event-ingestion quota is enforced ' +
          '(429 `INGESTION_QUOTA_EXCEEDED` with `Retry-After` until the next UTC midnight); participants per month are reported, not enforced.',
        response: { 200: TenantUsageResponse },
      },
    },
    async (request) => service.readUsage(db, request.auth!.tenantId),
  );
};

export default routes;
