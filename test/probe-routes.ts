import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

/**
 * Routes that exist only in tests. They exercise platform hooks (sessions,
 * the ingestion burst, deprecation, the public per-tenant limit, unexpected
 * exceptions) without depending on a module that may not be built yet.
 */
const SessionEcho = Type.Object({
  tenant_id: Type.String(),
  participant_id: Type.String(),
  engagement_id: Type.String(),
});

export const probeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const echo = (request: { auth: { tenantId: string; participantId?: string; engagementId?: string } | null }) => ({
    tenant_id: request.auth!.tenantId,
    participant_id: request.auth!.participantId!,
    engagement_id: request.auth!.engagementId!,
  });

  app.get(
    '/probe/session',
    {
      config: { auth: 'session' },
      schema: {
        querystring: Type.Object({ session_id: Type.String(), engagement_id: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
        response: { 200: SessionEcho },
      },
    },
    async (request) => echo(request),
  );

  app.post(
    '/probe/session',
    {
      config: { auth: 'session' },
      schema: {
        body: Type.Object(
          { session_id: Type.String(), engagement_id: Type.String({ format: 'uuid' }), note: Type.Optional(Type.String({ maxLength: 100 })) },
          { additionalProperties: false },
        ),
        response: { 200: SessionEcho },
      },
    },
    async (request) => echo(request),
  );

  app.post(
    '/probe/ingest',
    {
      config: { auth: 'key', scopes: ['admin', 'ingest'], rateLimit: 'ingest' },
      schema: { response: { 202: Type.Object({ accepted: Type.Boolean() }) } },
    },
    async (_request, reply) => reply.status(202).send({ accepted: true }),
  );

  app.get(
    '/probe/deprecated',
    {
      config: { auth: 'public', deprecated: { sunset: new Date('2027-03-01T00:00:00Z'), successor: '/api/v1/probe/successor' } },
      schema: { response: { 200: Type.Object({ ok: Type.Boolean() }) } },
    },
    async () => ({ ok: true }),
  );

  app.get(
    '/probe/public-tenant/:tenantId',
    {
      config: { auth: 'public' },
      schema: { params: Type.Object({ tenantId: Type.String({ format: 'uuid' }) }), response: { 200: Type.Object({ ok: Type.Boolean() }) } },
    },
    async (request, reply) => {
      await app.ctx.limitPublicTenant(request, reply, request.params.tenantId);
      return { ok: true };
    },
  );

  app.get('/probe/crash', { config: { auth: 'public' }, schema: { response: { 200: Type.Object({ ok: Type.Boolean() }) } } }, async () => {
    throw new Error('an unexpected failure with a secret inside: s3cr3t');
  });
};
