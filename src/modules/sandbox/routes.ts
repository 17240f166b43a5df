import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';
import * as service from './service.js';

const tags = ['sandbox'];

const routes: FastifyPluginAsync = async (app) => {
  const { db } = app.ctx;

  app.get(
    '/tenant/sandbox',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'getSandbox',
        summary: "The caller's sandbox and live tenant",
        description:
          'Asked with a live credential, names the live tenant\'s sandbox; asked with a sandbox credential (an `lk_test_` key), names the same pair. ' +
          '404 `SANDBOX_NOT_FOUND` before the sandbox is opened (`POST /tenant/sandbox`, or the first test key: `POST /events/api-keys` with `environment: "test"`).',
        response: { 200: Type.Ref('Sandbox') },
      },
    },
    async (request) => service.toSandboxView(await service.readSandbox(db, request.auth!.tenantId)),
  );

  app.post(
    '/tenant/sandbox',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'openSandbox',
        summary: "Open the live tenant's sandbox (idempotent)",
        description:
          'Makes the sandbox on first call (201) and answers the existing one after (200). The sandbox starts with the live tenant\'s plan, time zone, currency and locale, ' +
          'no participants and no configuration; `POST /tenant/sandbox/promotion` later copies its configuration to live. ' +
          'A sandbox credential gets 409 `SANDBOX_CREDENTIAL`.',
        response: { 200: Type.Ref('Sandbox'), 201: Type.Ref('Sandbox') },
      },
    },
    async (request, reply) => {
      const opened = await service.openSandbox(db, request.auth!.tenantId);
      return reply.status(opened.created ? 201 : 200).send(service.toSandboxView(opened));
    },
  );
};
export default routes;
