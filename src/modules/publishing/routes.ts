import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as service from './service.js';
import { CreateReviewBody, ListReviewsQuery, ReturnReviewBody, ReviewIdParams, ReviewList } from './schemas.js';

const tags = ['publishing'];
const review = { 200: Type.Ref('Review') };

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config, authenticator } = app.ctx;

  app.post(
    '/admin/reviews',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'createReview',
        summary: 'Ask for a draft to be published (a review request)',
        description:
          'For people without the publishing permission (programs:publish): the draft rule, engagement (or an engagement\'s unpublished changes), challenge or contest goes to the publishers. ' +
          'A segment (kind `segment`) goes when it holds a draft: a change of its filter or materialization kept while live programs use it (`PATCH /admin/segments/{segment_id}`). ' +
          'Needs programs:write. The item must exist in this tenant (404) and hold something unpublished (409 `REVIEW_ITEM_NOT_DRAFT`); an item has at most one pending request (409 `REVIEW_ALREADY_PENDING`). ' +
          'The submitter is recorded: a console user by id and email, an API key by its id. A rule\'s request may carry the author\'s latest backtest (`backtest`, the answer of `POST /admin/rules/simulate`), shown to the publisher. ' +
          'A pending request is closed (status `published`, by whoever published, when) when its item is published directly from its own route. ' +
          'When the tenant requires four-eyes publishing (`require_four_eyes`, `PATCH /tenant`), this is the only way to publish for everyone, publishers and API keys included: the direct publish routes answer 403 `FOUR_EYES_REQUIRED`.',
        body: CreateReviewBody,
        response: { 201: Type.Ref('Review') },
      },
    },
    async (request, reply) => reply.status(201).send(await service.submitReview(db, request.auth!, request.body)),
  );

  app.get(
    '/admin/reviews',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'listReviews',
        summary: 'List review requests, newest first',
        description: 'Filter by `status`, `kind` and `item_id`; pages with `limit` and `next_cursor`. Needs programs:write: the people who author drafts or publish them (a fraud reviewer or an analyst has nothing to do here).',
        querystring: ListReviewsQuery,
        response: { 200: ReviewList },
      },
    },
    async (request) => service.listReviews(db, request.auth!.tenantId, request.query),
  );

  app.get(
    '/admin/reviews/:id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getReview', summary: 'Read a review request', description: 'Needs programs:write.', params: ReviewIdParams, response: review } },
    async (request) => service.readReview(db, request.auth!.tenantId, request.params.id),
  );

  app.post(
    '/admin/reviews/:id/approve',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'approveReview',
        summary: 'Approve a pending request: the item is published',
        description:
          'Needs programs:publish. Publishes the item through its own publish route\'s logic (a rule becomes `active`, an engagement\'s draft is published, a challenge and a contest leave `draft`, a segment\'s draft filter and materialization replace the live ones and a materialized segment is refreshed) ' +
          'in the same transaction as the decision: when publishing is refused (a plan quota, a closed window …) that error is answered and the request stays pending. ' +
          'A request whose item was published directly meanwhile is answered as it stands (status `published`): the item is live, as the approval asked. ' +
          '409 `REVIEW_ALREADY_DECIDED` (approved or returned already), `REVIEW_ITEM_GONE` or `REVIEW_ITEM_CHANGED` (edited after submission: return it for resubmission); each names the item by its kind and name. ' +
          'When the tenant requires four-eyes publishing (`require_four_eyes` in `GET /tenant`), the approval must come from a person other than the submitter: ' +
          '403 `FOUR_EYES_REQUIRED` when the caller submitted the request (as the same console user, by cookie or admin login token) or is an API key.',
        params: ReviewIdParams,
        response: review,
      },
    },
    async (request) => {
      const approved = await service.approveReview(db, config, request.auth!, request.params.id);
      // Public routes cache whether an engagement is published: this process forgets at once, the others on the notice the publication sent.
      if (approved.kind === 'engagement') authenticator.forgetCredentials();
      return approved;
    },
  );

  app.post(
    '/admin/reviews/:id/return',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'returnReview',
        summary: 'Return a pending request to its author with a note',
        description:
          'Needs programs:publish. Nothing is published: a draft stays a draft, and for a live item with unpublished changes (an engagement) the live version keeps running unchanged; its author changes the draft and submits it again. 409 `REVIEW_ALREADY_DECIDED` when it was decided already. ' +
          'Four-eyes publishing does not restrict returning: a submitter may take back their own request this way.',
        params: ReviewIdParams,
        body: ReturnReviewBody,
        response: review,
      },
    },
    async (request) => service.returnReview(db, request.auth!, request.params.id, request.body.note),
  );
};

export default routes;
