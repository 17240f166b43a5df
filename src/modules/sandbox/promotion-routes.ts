import type { FastifyPluginAsync } from 'fastify';
import { Type } from '@sinclair/typebox';
import { applyPromotion, previewPromotion } from './promotion.js';
import type { SandboxPromotionBody } from './promotion-schemas.js';

const tags = ['sandbox'];

const routes: FastifyPluginAsync = async (app) => {
  const { db } = app.ctx;

  app.get(
    '/tenant/sandbox/promotion',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'previewSandboxPromotion',
        summary: "Preview copying the sandbox's configuration to live (the diff)",
        description:
          "The difference between the sandbox's badge and streak definitions, reward catalogue, engagements and earn rules and the live tenant's, matched by natural key: a badge or streak by its code, a reward by its id, an engagement by its site slug, a rule by its name. " +
          'Each kind lists what a promotion would create, update (each changed field before → after), how many items are unchanged, the live-only items (left alone: a promotion never deletes live configuration) ' +
          'and the blocked items with why (a key shared by two items on one side, a field an update cannot change, a badge, streak or reward named that neither side defines or that is itself blocked). ' +
          'Apply it with `POST /tenant/sandbox/promotion` and its `fingerprint`. Readable with an admin credential of either side (live, or the sandbox\'s `lk_test_` key). ' +
          '404 `SANDBOX_NOT_FOUND` when the caller has no sandbox pair; 422 `PROMOTION_TOO_LARGE` when a side holds more than 1,000 items of a kind.',
        response: { 200: Type.Ref('SandboxPromotionDiff') },
      },
    },
    async (request) => previewPromotion(db, request.auth!.tenantId),
  );

  app.post(
    '/tenant/sandbox/promotion',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'applySandboxPromotion',
        summary: "Copy the sandbox's configuration to live (one audited transaction)",
        description:
          'Recomputes the diff and, when its fingerprint is the one given, applies its creates and updates to the live tenant in one transaction, through the same validation as the admin routes, ' +
          'with one audit log entry (action `sandbox.promote`, the applied diff as its details) in that transaction. Badges and streaks are written first, so the rules and engagements that name them find them; new rules and engagements arrive as drafts; nothing is published, paused or deleted. ' +
          'Only an admin credential of the live tenant may apply: a sandbox credential gets 403 `LIVE_CREDENTIAL_REQUIRED`. ' +
          'A fingerprint that no longer matches (either side changed since the preview, or the diff was already applied) gets 409 `PROMOTION_DIFF_CHANGED` with the current `fingerprint`, and nothing changes. ' +
          'Blocked items refuse the whole promotion: 422 `PROMOTION_BLOCKED` with `blocked` (each with its `kind`). A validation refusal of the owning module (for example 422 `INVENTORY_BELOW_CLAIMED`) refuses it whole too.',
        body: Type.Ref('SandboxPromotionBody'),
        response: { 200: Type.Ref('SandboxPromotion') },
      },
    },
    async (request) => {
      const body = request.body as SandboxPromotionBody;
      const result = await applyPromotion(db, { auth: request.auth!, fingerprint: body.fingerprint, route: request.routeOptions.url ?? '/api/v1/tenant/sandbox/promotion', requestId: request.id });
      // The promotion wrote its own audit row inside its transaction: the automatic one after commit would repeat it.
      request.pendingAudit = null;
      return result;
    },
  );
};
export default routes;
