import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { mayPublish, mayTakeDown } from '../../platform/publishing.js';
import * as service from './service.js';
import { simulateRule } from './simulate.js';
import { ListRulesQuery, RuleIdParams, RuleList, SimulateBody, SimulationResult, UpdateRuleBody, type CreateRuleBody } from './schemas.js';

const tags = ['earn rules'];

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;

  app.post(
    '/admin/rules',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'createRule',
        summary: 'Create an earn rule',
        description:
          'A rule matches an event by name and typed conditions, and awards points (fixed or from a numeric property), badges and streak progress. ' +
          'Caps per participant per day, week and lifetime, a total points budget, an active window, priority and stop_processing limit it. ' +
          'A rule that names a badge or streak that does not exist is refused with 422. ' +
          'A person without the publishing permission creates drafts only (the default status for them); asking for `active` or `paused` is refused with 403.',
        body: Type.Ref('EarnRuleInput'),
        response: { 201: Type.Ref('EarnRule') },
      },
    },
    async (request, reply) => reply.status(201).send(await service.createRule(db, request.auth!.tenantId, request.body as CreateRuleBody, !mayPublish(request.auth!))),
  );

  app.get(
    '/admin/rules',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'listRules', summary: 'List earn rules', querystring: ListRulesQuery, response: { 200: RuleList } } },
    async (request) => service.listRules(db, request.auth!.tenantId, request.query),
  );

  app.get(
    '/admin/rules/:rule_id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'getRule', summary: 'Read an earn rule', params: RuleIdParams, response: { 200: Type.Ref('EarnRule') } } },
    async (request) => service.readRule(db, request.auth!.tenantId, request.params.rule_id),
  );

  app.patch(
    '/admin/rules/:rule_id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'updateRule',
        summary: 'Change an earn rule (not its trigger)',
        description:
          'Fields given replace the stored ones; the merged rule is validated as a whole. Changes apply to events processed afterwards. ' +
          'A person without the publishing permission may change drafts only, and may not move them out of draft (403): they submit them for review instead. ' +
          'Where the tenant requires four-eyes publishing, whoever holds the publishing permission may still pause an active rule (`{"status": "paused"}` alone) without a review.',
        params: RuleIdParams,
        body: UpdateRuleBody,
        response: { 200: Type.Ref('EarnRule') },
      },
    },
    async (request) => service.updateRule(db, request.auth!.tenantId, request.params.rule_id, request.body as UpdateRuleBody, !mayPublish(request.auth!), mayTakeDown(request.auth!)),
  );

  app.delete(
    '/admin/rules/:rule_id',
    { config: { auth: 'admin' }, schema: { tags, operationId: 'deleteRule', summary: 'Delete an earn rule', params: RuleIdParams, response: { 204: Type.Null() } } },
    async (request, reply) => {
      await service.deleteRule(db, request.auth!.tenantId, request.params.rule_id, !mayPublish(request.auth!));
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/admin/rules/simulate',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        operationId: 'simulateRule',
        summary: 'Replay stored events through a draft or existing rule, without side effects',
        description:
          'Runs in a read-only transaction: nothing is awarded or counted. Caps and the budget are applied in memory as if the rule had been live from `from`; ' +
          'participant attributes in conditions are read as they are now. At most 20,000 events are scanned (`truncated` tells when the range held more).',
        body: SimulateBody,
        response: { 200: SimulationResult },
      },
    },
    async (request) => simulateRule(db, request.auth!.tenantId, request.body as Parameters<typeof simulateRule>[2]),
  );
};

export default routes;
