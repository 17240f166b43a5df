import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { mayPublish } from '../../platform/publishing.js';
import * as service from './service.js';
import { rolloutExperiment } from './rollout.js';
import { resultsRoutes } from './results.js';
import { ExperimentIdParams, ExperimentList, ListExperimentsQuery, RolloutBody, UpdateExperimentBody, type CreateExperimentBody } from './schemas.js';

const tags = ['experiments'];

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;
  await app.register(resultsRoutes);

  app.post(
    '/admin/experiments',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'createExperiment',
        summary: 'Create an experiment (a draft)',
        description:
          'Splits participants between 2 to 5 variants of a rule, a multiplier or an engagement (`subject_type`), the first being the control, with an optional holdout that gets none of them. ' +
          "The variants' `allocation_percent` and `holdout_percent` sum to 100; keys and subjects are unique; each subject must be a " +
          '`subject_type` of the tenant (422 `EXPERIMENT_SUBJECT_NOT_FOUND` naming the variant). Nobody is assigned until it starts.',
        body: Type.Ref('ExperimentInput'),
        response: { 201: Type.Ref('Experiment') },
      },
    },
    async (request, reply) => reply.status(201).send(await service.createExperiment(db, request.auth!.tenantId, request.body as CreateExperimentBody)),
  );

  app.get(
    '/admin/experiments',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'listExperiments', summary: 'List experiments, newest first', querystring: ListExperimentsQuery, response: { 200: ExperimentList } } },
    async (request) => service.listExperiments(db, request.auth!.tenantId, request.query),
  );

  app.get(
    '/admin/experiments/:experiment_id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getExperiment', summary: 'Read an experiment', params: ExperimentIdParams, response: { 200: Type.Ref('Experiment') } } },
    async (request) => service.readExperiment(db, request.auth!.tenantId, request.params.experiment_id),
  );

  app.patch(
    '/admin/experiments/:experiment_id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'updateExperiment',
        summary: 'Change an experiment',
        description:
          'A draft changes in everything. Once started, only the name, the description and the allocation change (409 `EXPERIMENT_STARTED` naming each other field): ' +
          'the new split applies to participants exposed from then on, and nobody already assigned ever moves. An ended experiment changes no more.',
        params: ExperimentIdParams,
        body: UpdateExperimentBody,
        response: { 200: Type.Ref('Experiment') },
      },
    },
    async (request) => service.updateExperiment(db, request.auth!.tenantId, request.params.experiment_id, request.body as UpdateExperimentBody),
  );

  app.delete(
    '/admin/experiments/:experiment_id',
    {
      config: { auth: 'admin' },
      schema: { tags, operationId: 'deleteExperiment', summary: 'Delete a draft experiment', description: 'Only a draft (409 `EXPERIMENT_NOT_DRAFT` otherwise: stop it instead).', params: ExperimentIdParams, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      await service.deleteExperiment(db, request.auth!.tenantId, request.params.experiment_id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/admin/experiments/:experiment_id/start',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'startExperiment',
        summary: 'Start (or restart) an experiment',
        description:
          'From now on each participant is assigned at their first exposure (a rule or multiplier variant: the first event one of the subjects is considered for; an engagement variant: the first session) and gets only their variant: ' +
          "the other variants' subjects and, for the holdout, all of them, do not apply to them. A draft subject serves its variant's participants while the experiment runs, " +
          'so starting one needs the publishing permission (403 otherwise). A subject serves one running experiment at a time (409 `EXPERIMENT_SUBJECT_IN_USE`).',
        params: ExperimentIdParams,
        response: { 200: Type.Ref('Experiment') },
      },
    },
    async (request) => service.startExperiment(db, request.auth!.tenantId, request.params.experiment_id, mayPublish(request.auth!)),
  );

  app.post(
    '/admin/experiments/:experiment_id/stop',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'stopExperiment',
        summary: 'Stop an experiment',
        description: 'Its subjects behave as without it (a draft serves nobody, an active rule everyone); assignments are kept, for the results and for a restart.',
        params: ExperimentIdParams,
        response: { 200: Type.Ref('Experiment') },
      },
    },
    async (request) => service.stopExperiment(db, request.auth!.tenantId, request.params.experiment_id),
  );

  app.post(
    '/admin/experiments/:experiment_id/rollout',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'rolloutExperiment',
        summary: 'End an experiment by rolling out a variant',
        description:
          "The variant's subject goes to everyone the normal way: an unpublished draft is published now when the caller may publish directly, else (four-eyes publishing) a review request is submitted for it; " +
          "the other variants' subjects stop (an active rule is paused, a multiplier ends now). The experiment ends with `rolled_out_variant`.",
        params: ExperimentIdParams,
        body: RolloutBody,
        response: { 200: Type.Ref('ExperimentRollout') },
      },
    },
    async (request) => rolloutExperiment(db, request.auth!, request.params.experiment_id, request.body.variant),
  );
};

export default routes;
