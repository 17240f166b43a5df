import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as service from './service.js';
import { revealRoutes } from './reveal.js';
import {
  CreateCustomFieldBody,
  CustomFieldPage,
  CustomFieldParams,
  DeleteQuery,
  ErasureResponse,
  ListCustomFieldsQuery,
  ListParticipantsQuery,
  ParticipantPage,
  ParticipantParams,
  ProfileUpsertBody,
  SearchParticipantsQuery,
  SessionParticipant,
  SessionParticipantQuery,
  UpdateCustomFieldBody,
} from './schemas.js';

const tags = ['participants'];
const profileRef = Type.Ref('ParticipantProfile');

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db, authenticator } = app.ctx;

  app.patch(
    '/gamify/admin/participants/:participant_id/profile',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'upsertParticipantProfile',
        summary: "Upsert a participant's profile (standard and custom fields)",
        description:
          'Fields given are written, null clears one, fields left out keep their values; the participant is created if new. ' +
          'Setting personal fields (email, names, mobile number, date of birth, gender, personal custom fields) needs `read:pii`. ' +
          'The response is masked unless the caller has `read:pii`.',
        params: ParticipantParams,
        body: ProfileUpsertBody,
        response: { 200: profileRef },
      },
    },
    async (request) => service.upsertProfile(db, request.auth!.tenantId, request.params.participant_id, request.body, request.auth!),
  );

  app.get(
    '/public/participant',
    {
      config: { auth: 'session' },
      schema: {
        tags,
        operationId: 'getSessionParticipant',
        summary: "The session's participant: id, public name and language, and when the session expires",
        description:
          'What a participant page may know of its own participant: no personal field. The embed runtime shows its texts in `locale` ' +
          'when the page names no language (set it with `PATCH /gamify/admin/participants/{participant_id}/profile` or a participants import).',
        querystring: SessionParticipantQuery,
        response: { 200: SessionParticipant },
      },
    },
    async (request) => service.readSessionParticipant(db, request.auth!),
  );

  app.get(
    '/gamify/admin/participants/:participant_id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'getParticipantProfile',
        summary: "Read one participant's profile (masked unless read:pii; full reads are logged)",
        params: ParticipantParams,
        response: { 200: profileRef },
      },
    },
    async (request) => service.readProfileView(db, request.auth!.tenantId, request.params.participant_id, request.auth!),
  );

  app.delete(
    '/gamify/admin/participants/:participant_id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'deleteParticipant',
        summary: 'Erase a participant: hard delete, or anonymize with ?anonymize=true',
        description:
          'Hard delete removes the participant and every row of theirs. `anonymize=true` nulls personal data, keeps events, facts and ledger, ' +
          'and shows the participant as "Deleted user". Both return per-table row counts as audit evidence and are idempotent: a repeat returns the stored evidence with `duplicate: true`.',
        params: ParticipantParams,
        querystring: DeleteQuery,
        response: { 200: ErasureResponse },
      },
    },
    async (request) => {
      const { tenantId } = request.auth!;
      const id = request.params.participant_id;
      if (request.query.anonymize) return service.anonymizeParticipant(db, tenantId, id, request.auth!);
      const erased = await service.deleteParticipant(db, tenantId, id, request.auth!);
      // This process at once; the others on the commit's notification.
      authenticator.forgetCredentials();
      return erased;
    },
  );

  app.get(
    '/gamify/admin/participants',
    {
      config: { auth: 'admin', rateLimit: 'listing' },
      schema: {
        tags,
        operationId: 'listParticipants',
        summary: 'List participants (rate-limited; not for bulk loads)',
        description: 'Cursor-paginated in creation order. Masked unless the caller has `read:pii`; a full read writes one access log row covering the page.',
        querystring: ListParticipantsQuery,
        response: { 200: ParticipantPage },
      },
    },
    async (request) => service.listParticipants(db, request.auth!.tenantId, request.query, request.auth!),
  );

  app.get(
    '/admin/participants/search',
    {
      config: { auth: 'admin', rateLimit: 'listing' },
      schema: {
        tags,
        operationId: 'searchParticipants',
        summary: 'Find participants by external id, email hash, exact email (read:pii) or custom attributes',
        querystring: SearchParticipantsQuery,
        response: { 200: ParticipantPage },
      },
    },
    async (request) => service.searchParticipants(db, request.auth!.tenantId, request.query, request.auth!),
  );

  app.post(
    '/gamify/admin/participant-fields',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'createParticipantField', summary: 'Define a custom profile field', body: CreateCustomFieldBody, response: { 201: Type.Ref('ParticipantCustomField') } },
    },
    async (request, reply) => reply.status(201).send(await service.createCustomField(db, request.auth!.tenantId, request.body)),
  );

  app.get(
    '/gamify/admin/participant-fields',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'listParticipantFields', summary: 'List custom profile fields', querystring: ListCustomFieldsQuery, response: { 200: CustomFieldPage } },
    },
    async (request) => service.listCustomFields(db, request.auth!.tenantId, request.query),
  );

  app.get(
    '/gamify/admin/participant-fields/:key',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'getParticipantField', summary: 'Read a custom profile field', params: CustomFieldParams, response: { 200: Type.Ref('ParticipantCustomField') } },
    },
    async (request) => service.readCustomField(db, request.auth!.tenantId, request.params.key),
  );

  app.patch(
    '/gamify/admin/participant-fields/:key',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'updateParticipantField',
        summary: "Change a custom field's personal-data flag or description (its type is fixed)",
        params: CustomFieldParams,
        body: UpdateCustomFieldBody,
        response: { 200: Type.Ref('ParticipantCustomField') },
      },
    },
    async (request) => service.updateCustomField(db, request.auth!.tenantId, request.params.key, request.body),
  );

  app.delete(
    '/gamify/admin/participant-fields/:key',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'deleteParticipantField',
        summary: 'Delete a custom field and every value of it',
        params: CustomFieldParams,
        response: { 200: Type.Ref('ParticipantCustomField') },
      },
    },
    async (request) => service.deleteCustomField(db, request.auth!.tenantId, request.params.key),
  );

  await app.register(revealRoutes);
};

export default routes;
