import { publicOrigin } from '../../platform/http.js';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as service from './service.js';
import {
  CodeParams,
  ConversionList,
  ConversionListQuery,
  ConversionParams,
  ConvertBody,
  ConvertResponse,
  DecisionBody,
  GenerateBody,
  Settings,
  SettingsBody,
  StatsParams,
  ValidateResponse,
} from './schemas.js';

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, authenticator, config } = app.ctx;
  const tags = ['referrals'];

  app.post(
    '/referrals/generate',
    {
      config: { auth: 'key' },
      schema: {
        tags,
        operationId: 'generateReferralCode',
        summary: "Generate (or return) a participant's referral code for a campaign",
        description: 'The same participant and campaign always get the same code. `email`, `device_id` and `ip_address` of the referrer feed the self-referral and review checks.',
        body: GenerateBody,
        response: {
          200: Type.Ref('ReferralCode'),
          503: { ...Type.Ref('ErrorResponse'), description: 'REFERRAL_CODE_EXHAUSTED: every freshly drawn code was already taken; try again (nothing was created).' },
        },
      },
    },
    async (request) => service.generate(db, request.auth!.tenantId, request.body, publicOrigin(request, config.publicBaseUrl)),
  );

  app.get(
    '/referrals/validate/:code',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'validateReferralCode',
        summary: 'Check a referral code (public; the code names its tenant)',
        description: 'A valid code answers 200 with `valid: true`. An unknown code answers 404 and a malformed one 400, both with `valid: false` and a `detail`.',
        params: CodeParams,
        response: { 200: ValidateResponse },
      },
    },
    async (request) => service.validate(db, request.params.code),
  );

  app.post(
    '/referrals/convert',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'convertReferral',
        summary: 'Convert a referral (public; the code names its tenant)',
        description:
          'One conversion per referred session, participant and email. Self-referral (same participant or email) is a 422 `SELF_REFERRAL`; a repeat is a 409 `REFERRAL_ALREADY_CONVERTED`. ' +
          'A conversion from the referrer\'s device or IP, or beyond the referrer\'s hourly or daily velocity, is held (`status: pending_review`, `converted: false`) until an admin decides.',
        body: ConvertBody,
        response: { 200: ConvertResponse },
      },
    },
    async (request) => service.convert(db, authenticator, request.body),
  );

  app.get(
    '/referrals/stats/:participant_id',
    { config: { auth: 'key' }, schema: { tags, operationId: 'getReferralStats', summary: "A participant's referral stats", params: StatsParams, response: { 200: Type.Ref('ReferralStats') } } },
    async (request) => service.stats(db, request.auth!.tenantId, request.params.participant_id, publicOrigin(request, config.publicBaseUrl)),
  );

  app.get(
    '/admin/referrals/settings',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getReferralSettings', summary: 'Referral fraud thresholds and referrer milestones', response: { 200: Settings } } },
    async (request) => service.readSettings(db, request.auth!.tenantId),
  );

  app.put(
    '/admin/referrals/settings',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'updateReferralSettings', summary: 'Change referral fraud thresholds and referrer milestones', body: SettingsBody, response: { 200: Settings } } },
    async (request) => service.writeSettings(db, request.auth!.tenantId, request.body),
  );

  app.get(
    '/admin/referrals/conversions',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'listReferralConversions', summary: 'List conversions (filter `status=pending_review` for the review queue)', querystring: ConversionListQuery, response: { 200: ConversionList } } },
    async (request) => service.listConversions(db, request.auth!.tenantId, request.query),
  );

  for (const decision of ['approve', 'reject'] as const) {
    app.post(
      `/admin/referrals/conversions/:id/${decision}`,
      {
        config: { auth: 'admin' },
        schema: {
          tags,
          operationId: decision === 'approve' ? 'approveReferralConversion' : 'rejectReferralConversion',
          summary: decision === 'approve' ? 'Approve a held conversion (it then counts: event, milestones)' : 'Reject a held conversion',
          params: ConversionParams,
          body: Type.Optional(DecisionBody),
          response: { 200: Type.Ref('ReferralConversion') },
        },
      },
      async (request) => service.decide(db, request.auth!.tenantId, request.params.id, decision, request.auth!.actorId, request.body?.note ?? null),
    );
  }
};

export default routes;
