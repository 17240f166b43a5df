import { errorRef, publicOrigin } from '../../platform/http.js';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createSession } from '../access/index.js';
import * as service from './service.js';
import * as preview from './preview.js';
import {
  AnonymousSessionBody,
  AnonymousSessionResponse,
  CreateEngagementBody,
  EligibilityQuery,
  EligibilityResponse,
  EmbedUrlResponse,
  EngagementIdParams,
  EngagementList,
  ImpressionBody,
  ImpressionResponse,
  ListEngagementsQuery,
  PreviewEngagement,
  PreviewQuery,
  PreviewResetResponse,
  PreviewResponse,
  PublicEngagement,
  SiteParams,
  UpdateEngagementBody,
} from './schemas.js';

const tags = ['engagements'];

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config, authenticator } = app.ctx;
  const engagement = { 200: Type.Ref('Engagement') };

  app.post(
    '/admin/engagements',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'createEngagement', summary: 'Create an engagement (as a draft)', body: CreateEngagementBody, response: { 201: Type.Ref('Engagement') } } },
    async (request, reply) => reply.status(201).send(await service.createEngagement(db, request.auth!.tenantId, request.body)),
  );

  app.get(
    '/admin/engagements',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'listEngagements', summary: 'List engagements, newest first', querystring: ListEngagementsQuery, response: { 200: EngagementList } } },
    async (request) => service.listEngagements(db, request.auth!.tenantId, request.query),
  );

  app.get(
    '/admin/engagements/:id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getEngagement', summary: 'Read an engagement with its draft definition (secrets included)', params: EngagementIdParams, response: engagement } },
    async (request) => service.readEngagement(db, request.auth!.tenantId, request.params.id),
  );

  app.patch(
    '/admin/engagements/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'updateEngagement',
        summary: 'Change the draft; a published engagement keeps serving its snapshot until published again',
        params: EngagementIdParams,
        body: UpdateEngagementBody,
        response: engagement,
      },
    },
    async (request) => service.updateEngagement(db, request.auth!.tenantId, request.params.id, request.body),
  );

  app.post(
    '/admin/engagements/:id/publish',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'publishEngagement', summary: 'Publish the current draft (snapshot); the site serves it from now on', params: EngagementIdParams, response: engagement },
    },
    async (request) => {
      const published = await service.publishEngagement(db, request.auth!.tenantId, request.auth!.plan, request.params.id);
      // Public routes cache an engagement's tenant and publication: this process forgets at once, the others on the notice it sent.
      authenticator.forgetCredentials();
      return published;
    },
  );

  app.post(
    '/admin/engagements/:id/unpublish',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'unpublishEngagement', summary: 'Take the engagement off its site; its activities stop', params: EngagementIdParams, response: engagement } },
    async (request) => {
      const unpublished = await service.unpublishEngagement(db, request.auth!.tenantId, request.params.id);
      authenticator.forgetCredentials();
      return unpublished;
    },
  );

  app.post(
    '/admin/engagements/:id/preview',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'startEngagementPreview',
        summary: 'Preview the draft with a new test participant, without publishing',
        description:
          'Deletes the test participants of earlier previews of this engagement, makes a new one (flagged `test`: left out of participant lists, exports and figures) and a session for it, scoped to this engagement: the preview token. ' +
          'The runtime page at `preview_url` with `#session=<session_id>` runs the current draft (published or not) and marks itself as a preview. ' +
          'Its completions take attempts and draw prizes from the real stock, but award nothing: no points, no reward code or stock or budget used, no badge, no challenge progress, no events or webhooks.',
        params: EngagementIdParams,
        response: { 201: PreviewResponse },
      },
    },
    async (request, reply) => reply.status(201).send(await preview.startPreview(db, request.auth!.tenantId, request.params.id, createSession)),
  );

  app.delete(
    '/admin/engagements/:id/preview',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'resetEngagementPreview',
        summary: "Delete the engagement's test participants, with their attempts and sessions",
        params: EngagementIdParams,
        response: { 200: PreviewResetResponse },
      },
    },
    async (request) => preview.resetPreview(db, request.auth!.tenantId, request.params.id),
  );

  app.get(
    '/sites/:tenantSlug/:siteSlug/preview',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'getSitePreview',
        summary: 'The draft of the engagement a preview session was issued for, without server secrets',
        description:
          'For preview sessions only (`startEngagementPreview`): 403 `PREVIEW_SESSION_REQUIRED` for a real participant\'s session, 403 `SESSION_ENGAGEMENT_MISMATCH` when `engagement_id` is another engagement, ' +
          '403 `SESSION_TENANT_MISMATCH` for another tenant\'s site, 404 `SITE_NOT_FOUND` when the draft is on another site.',
        params: SiteParams,
        querystring: PreviewQuery,
        response: {
          200: PreviewEngagement,
          403: { ...errorRef, description: 'Not a preview session of this engagement and tenant. Codes: PREVIEW_SESSION_REQUIRED, SESSION_ENGAGEMENT_MISMATCH, SESSION_TENANT_MISMATCH.' },
        },
      },
    },
    async (request) => preview.readPreview(db, { tenantId: request.auth!.tenantId, engagementId: request.auth!.engagementId!, participantId: request.auth!.participantId! }, request.params.tenantSlug, request.params.siteSlug),
  );

  app.get(
    '/sites/:tenantSlug/:siteSlug',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'getSite',
        summary: 'The published engagement of a site, without server secrets',
        description: 'Never a draft. Quiz answers, wheel weights and inventories, reward references and on-completion actions are not part of it.',
        params: SiteParams,
        response: { 200: PublicEngagement },
      },
    },
    async (request) => service.readSite(db, request.params.tenantSlug, request.params.siteSlug),
  );

  app.post(
    '/sites/:tenantSlug/:siteSlug/sessions',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        operationId: 'createSiteSession',
        summary: 'An anonymous participant session for a visitor of a published engagement that allows it',
        description: 'Creates a new participant `anon_<random>` and a session for the site\'s published engagement. Rate-limited per address like every public route.',
        params: SiteParams,
        body: AnonymousSessionBody,
        response: {
          201: AnonymousSessionResponse,
          403: { ...errorRef, description: 'The engagement does not give sessions to anonymous visitors; the tenant\'s server issues them. Codes: ANONYMOUS_SESSIONS_DISABLED.' },
        },
      },
    },
    async (request, reply) =>
      reply
        .status(201)
        .send(
          await service.createAnonymousSession(db, request.params.tenantSlug, request.params.siteSlug, request.body.display_name, config.sessionTtlSeconds, createSession),
        ),
  );

  app.get(
    '/public/engagements/:id/embed-url',
    { config: { auth: 'key' }, schema: { tags, operationId: 'getEmbedUrl', summary: 'The runtime URL to embed an engagement', params: EngagementIdParams, response: { 200: EmbedUrlResponse } } },
    // Absolute always: PUBLIC_BASE_URL, or the origin the request came to.
    async (request) => service.embedUrl(db, request.auth!.tenantId, request.params.id, publicOrigin(request, config.publicBaseUrl)),
  );

  app.get(
    '/public/eligibility',
    {
      config: { auth: 'key' },
      schema: {
        tags,
        operationId: 'evaluateEligibility',
        summary: "Evaluate an engagement's trigger rules for a visitor (URL, time window, frequency cap, attributes)",
        querystring: EligibilityQuery,
        response: { 200: EligibilityResponse },
      },
    },
    async (request) => service.checkEligibility(db, request.auth!.tenantId, request.query),
  );

  app.post(
    '/public/impressions',
    {
      config: { auth: 'key' },
      schema: { tags, operationId: 'recordImpression', summary: 'Record that an engagement was shown to a visitor (feeds the frequency cap)', body: ImpressionBody, response: { 201: ImpressionResponse } },
    },
    async (request, reply) => reply.status(201).send(await service.recordImpression(db, request.auth!.tenantId, request.body)),
  );
};

export default routes;
