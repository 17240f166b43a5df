import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as service from './service.js';
import {
  ApiKeyList,
  CreateApiKeyBody,
  CreateSessionBody,
  CreatedApiKey,
  KeyIdParams,
  ListApiKeysQuery,
  LoginBody,
  LoginResponse,
  SessionResponse,
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
        summary: 'Exchange an admin user\'s email and password for an admin token (JWT)',
        body: LoginBody,
        response: { 200: LoginResponse },
      },
    },
    async (request) => service.login(db, authenticator, request.body.email, request.body.password),
  );

  app.post(
    '/events/api-keys',
    {
      config: { auth: 'jwt' },
      schema: {
        tags: ['access'],
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
      schema: { tags: ['access'], summary: "List the tenant's API keys (prefixes only)", querystring: ListApiKeysQuery, response: { 200: ApiKeyList } },
    },
    async (request) => service.listApiKeys(db, request.auth!.tenantId, request.query),
  );

  app.patch(
    '/events/api-keys/:id',
    {
      config: { auth: 'jwt' },
      schema: {
        tags: ['access'],
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
        summary: 'Issue a participant session for an engagement (called by the tenant\'s server)',
        description:
          'The tenant\'s server, holding an API key, asks for a session for one participant and one engagement and hands the `session_id` to the participant\'s browser or app. ' +
          'Participant-facing routes take it as `session_id` (body or query) together with the same `engagement_id`. The participant is created if new.',
        body: CreateSessionBody,
        response: { 201: SessionResponse },
      },
    },
    async (request, reply) => reply.status(201).send(await service.createSession(db, request.auth!.tenantId, request.body, config.sessionTtlSeconds)),
  );

  app.get(
    '/tenant',
    {
      config: { auth: 'admin' },
      schema: { tags: ['access'], summary: "The caller's tenant, its plan and quotas", response: { 200: TenantResponse } },
    },
    async (request) => service.readTenant(db, request.auth!.tenantId),
  );

  app.patch(
    '/tenant',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['access'],
        summary: "Change the caller's tenant's time zone, currency or locale",
        description:
          'The time zone must be an IANA name PostgreSQL knows (it decides the tenant\'s calendar days from the next computation on: ' +
          'daily caps, streaks, leaderboard periods, analytics), the currency an ISO 4217 code, the locale a BCP 47 tag (stored canonical). ' +
          'Answers the tenant as `GET /tenant` shows it.',
        body: UpdateTenantBody,
        response: { 200: TenantResponse },
      },
    },
    async (request) => service.updateTenant(db, request.auth!.tenantId, request.body),
  );

  app.get(
    '/tenant/usage',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['access'],
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
