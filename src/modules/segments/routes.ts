import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import * as service from './service.js';
import {
  CreateSegmentBody,
  FactList,
  ListSegmentsQuery,
  MemberList,
  MembersQuery,
  PreviewBody,
  RefreshResult,
  SegmentList,
  SegmentParams,
  SegmentPreview,
  SegmentSize,
  UpdateSegmentBody,
  type SegmentFilter,
} from './schemas.js';

const tags = ['segments'];

/**
 * Segments under /api/v1/admin/segments. Writes are audited (programs:write);
 * the preview is a read (programs:read, not audited: the builder calls it as
 * the filter is edited); members are participants (participants:read).
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;

  app.post(
    '/admin/segments',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'createSegment', summary: 'Save a segment: a named filter over participants', body: CreateSegmentBody, response: { 201: Type.Ref('Segment') } },
    },
    async (request, reply) => reply.status(201).send(await service.createSegment(db, request.auth!.tenantId, request.body as never, request.auth!)),
  );

  app.get(
    '/admin/segments',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'listSegments', summary: "List the tenant's segments", querystring: ListSegmentsQuery, response: { 200: SegmentList } } },
    async (request) => service.listSegments(db, request.auth!.tenantId, request.query, request.auth!),
  );

  app.get(
    '/admin/segments/facts',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'listSegmentFacts',
        summary: 'The facts a segment filter can read, with their types and operators (custom fields included)',
        response: { 200: FactList },
      },
    },
    async (request) => service.listFacts(db, request.auth!.tenantId),
  );

  app.post(
    '/admin/segments/preview',
    {
      config: { auth: 'admin', permission: 'programs:read' },
      schema: {
        tags,
        operationId: 'previewSegment',
        summary: 'The live size of a filter and a masked sample of up to 10 members (nothing is saved)',
        body: PreviewBody,
        response: { 200: SegmentPreview },
      },
    },
    async (request) => service.previewSegment(db, request.auth!.tenantId, request.body.filter as SegmentFilter, request.auth!),
  );

  app.get(
    '/admin/segments/:segment_id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getSegment', summary: 'Read a segment', params: SegmentParams, response: { 200: Type.Ref('Segment') } } },
    async (request) => service.readSegment(db, request.auth!.tenantId, request.params.segment_id, request.auth!),
  );

  app.patch(
    '/admin/segments/:segment_id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'updateSegment',
        summary: 'Change the name, description, filter or materialization of a segment',
        description:
          'Name and description change at once. A segment used by a live program (`used_by[].live`: an active rule, a published engagement, a multiplier not yet over, a published challenge not yet over, a running experiment) is live itself: ' +
          'a change of its filter or materialization applies at once only for a caller with the publishing permission (programs:publish; never where the tenant requires four-eyes publishing). ' +
          'For anyone else it is kept as the segment\'s `draft` (`status` `draft_pending`), the live filter still deciding membership; submit it with `POST /admin/reviews` (kind `segment`) and a publisher\'s approval applies it. ' +
          'Sending the live filter and materialization again clears a draft; a direct change by a publisher replaces it.',
        params: SegmentParams,
        body: UpdateSegmentBody,
        response: { 200: Type.Ref('Segment') },
      },
    },
    async (request) => service.updateSegment(db, request.auth!.tenantId, request.params.segment_id, request.body as never, request.auth!),
  );

  app.delete(
    '/admin/segments/:segment_id',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'deleteSegment', summary: 'Delete a segment that nothing uses (409 SEGMENT_IN_USE otherwise)', params: SegmentParams, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      await service.deleteSegment(db, request.auth!.tenantId, request.params.segment_id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/admin/segments/:segment_id/size',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'getSegmentSize',
        summary: "A segment's size: live, or as of the last refresh for a materialized one",
        params: SegmentParams,
        response: { 200: SegmentSize },
      },
    },
    async (request) => service.segmentSize(db, request.auth!.tenantId, request.params.segment_id),
  );

  app.get(
    '/admin/segments/:segment_id/members',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'listSegmentMembers',
        summary: "A segment's members in participant id order, masked for callers without read:pii",
        params: SegmentParams,
        querystring: MembersQuery,
        response: { 200: MemberList },
      },
    },
    async (request) => service.listMembers(db, request.auth!.tenantId, request.params.segment_id, request.query, request.auth!),
  );

  app.post(
    '/admin/segments/:segment_id/refresh',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'refreshSegment',
        summary: "Refresh a materialized segment's membership now (segment.entered.v1 / segment.left.v1 for who moved)",
        params: SegmentParams,
        response: { 200: RefreshResult },
      },
    },
    async (request) => service.refreshSegment(db, request.auth!.tenantId, request.params.segment_id),
  );
};

export default routes;
