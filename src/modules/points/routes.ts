import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as service from './service.js';
import { DeductBody, DirectResponse, GrantBody, InsufficientPoints } from './schemas.js';

/** HTTP routes of the points module: schemas, credential, one call into the service. */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;

  app.post(
    '/gamify/points/grant',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['points'],
        summary: 'Grant points to a participant (created if new)',
        description: 'Direct grant, the escape hatch for bonus campaigns and corrections. Multipliers never apply here. Idempotent per tenant and key for 24 hours.',
        body: GrantBody,
        response: { 200: DirectResponse },
      },
    },
    async (request) => service.grantDirect(db, request.auth!.tenantId, request.body),
  );

  app.post(
    '/gamify/points/deduct',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['points'],
        summary: 'Deduct points; 422 insufficient_points when the balance is too low',
        description: 'Atomic and guarded: concurrent deducts never drive the balance below zero and points never partially leave. Idempotent per tenant and key for 24 hours.',
        body: DeductBody,
        response: { 200: DirectResponse, 422: InsufficientPoints },
      },
    },
    async (request) => service.deductDirect(db, request.auth!.tenantId, request.body),
  );
};

export default routes;
