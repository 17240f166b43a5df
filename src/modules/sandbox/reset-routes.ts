import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';
import { resetSandbox, sandboxToReset } from './reset.js';
import type { SandboxResetBody } from './schemas.js';

const tags = ['sandbox'];

/** POST /tenant/sandbox/reset: empties the sandbox (docs/sandbox.md, "Resetting the sandbox"). */
const resetRoutes: FastifyPluginAsync = async (app) => {
  const { db } = app.ctx;

  app.post(
    '/tenant/sandbox/reset',
    {
      // No body means the default scope.
      config: { auth: 'admin', optionalBody: true },
      schema: {
        tags,
        operationId: 'resetSandbox',
        summary: 'Reset the sandbox: delete its participants and what they produced (or everything)',
        description:
          'Empties the sandbox in one transaction (a failure changes nothing). With a live credential it resets the live tenant\'s sandbox ' +
          '(404 `SANDBOX_NOT_FOUND` when there is none); with a sandbox credential (an `lk_test_` key with the admin scope) it resets that sandbox. ' +
          'It never touches the live tenant\'s data. `scope: "data"` (the default; the body may be left out) deletes participants and everything ' +
          'they and integrations produced — ledger and lots, balances, badges, tiers, streaks, challenge and contest progress and results, referrals, ' +
          'reward claims (claimed pool codes become free again, claim counts start over), activity outcomes, sessions, events, outbox, webhook deliveries, ' +
          'imports and exports, idempotency keys, usage counters and the sandbox\'s waiting background jobs — and keeps the configuration. ' +
          '`scope: "everything"` also deletes the configuration. API keys, console users, tenant settings, the test clock and the audit log are always kept. ' +
          'Writes arriving during the reset wait for it and land after it. A credential without the admin scope gets 403; an unknown scope 400.',
        body: Type.Ref('SandboxResetRequest'),
        response: { 200: Type.Ref('SandboxReset') },
      },
    },
    async (request) => {
      const scope = (request.body as SandboxResetBody | undefined)?.scope ?? 'data';
      const sandboxTenantId = await sandboxToReset(db, request.auth!.tenantId);
      const ownClaim = sandboxTenantId === request.auth!.tenantId ? request.idempotencyClaim ?? null : null;
      return resetSandbox(db, sandboxTenantId, scope, ownClaim);
    },
  );
};
export default resetRoutes;
