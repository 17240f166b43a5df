import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import * as service from './service.js';
import { RewardMetadataFields, rewardMetadataFields } from './metadata-fields.js';
import { ClaimedList, ClaimedQuery, CreateRewardBody, ListRewardsQuery, RewardIdParams, RewardList, UpdateRewardBody, UploadCodesBody, UploadCodesResponse } from './schemas.js';

const tags = ['rewards'];

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;

  app.post(
    '/admin/rewards',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'createReward', summary: 'Add a reward to the catalogue', body: CreateRewardBody, response: { 201: Type.Ref('Reward') } } },
    async (request, reply) => reply.status(201).send(await service.createReward(db, request.auth!.tenantId, request.body)),
  );

  app.get(
    '/admin/rewards',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'listRewards', summary: 'List the reward catalogue', querystring: ListRewardsQuery, response: { 200: RewardList } } },
    async (request) => service.listRewards(db, request.auth!.tenantId, request.query),
  );

  // Under `types/`, so that no reward id (`/admin/rewards/{id}`) is shadowed.
  app.get(
    '/admin/rewards/types/metadata-fields',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'listRewardMetadataFields',
        summary: "The metadata fields of each reward type, with the limits the service checks",
        description: 'Read from the schemas that check `metadata` on create and update: the console builds its metadata editor from it.',
        response: { 200: RewardMetadataFields },
      },
    },
    async () => rewardMetadataFields(),
  );

  app.get(
    '/admin/rewards/:id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getReward', summary: 'Read a reward', params: RewardIdParams, response: { 200: Type.Ref('Reward') } } },
    async (request) => service.readReward(db, request.auth!.tenantId, request.params.id),
  );

  app.patch(
    '/admin/rewards/:id',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'updateReward', summary: 'Change a reward (type and code source are fixed)', params: RewardIdParams, body: UpdateRewardBody, response: { 200: Type.Ref('Reward') } },
    },
    async (request) => service.updateReward(db, request.auth!.tenantId, request.params.id, request.body),
  );

  app.post(
    '/admin/rewards/:id/codes',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'uploadRewardCodes', summary: 'Upload redemption codes to a pool reward (each is handed out once)', params: RewardIdParams, body: UploadCodesBody, response: { 200: UploadCodesResponse } },
    },
    async (request) => service.uploadCodes(db, request.auth!.tenantId, request.params.id, request.body.codes),
  );

  app.get(
    '/public/rewards/claimed',
    {
      config: { auth: 'session' },
      schema: { tags, operationId: 'listClaimedRewards', summary: "The session participant's claimed rewards, newest first", querystring: ClaimedQuery, response: { 200: ClaimedList } },
    },
    async (request) => service.listClaimed(db, request.auth!.tenantId, request.auth!.participantId!, request.query.limit, request.query.cursor),
  );
};

export default routes;
