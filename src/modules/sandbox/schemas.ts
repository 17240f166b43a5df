import { Type, type Static } from '@sinclair/typebox';

export const SandboxView = Type.Object(
  {
    live_tenant_id: Type.String({ format: 'uuid', description: 'The live tenant whose sandbox this is.' }),
    sandbox_tenant_id: Type.String({ format: 'uuid', description: 'The sandbox: a tenant of its own, holding its own participants, ledger, events, outcomes, configuration and webhook destinations.' }),
    slug: Type.String({ description: "The sandbox's slug (public site URLs of the sandbox use it)." }),
    created_at: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'Sandbox',
    title: 'Sandbox',
    examples: [
      {
        live_tenant_id: '5b7e0a3c-2f4d-4c61-9a8e-0d2b6c1f7e93',
        sandbox_tenant_id: '0c1d9e4f-7a2b-4e58-b3c6-91d2f0a8e7b4',
        slug: 'acme-sandbox-3f9a1c2e',
        created_at: '2026-11-26T09:30:00.000Z',
      },
    ],
  },
);
export type SandboxView = Static<typeof SandboxView>;

// ---- reset (POST /tenant/sandbox/reset) ----

export const SandboxResetBody = Type.Object(
  {
    scope: Type.Optional(
      Type.Union([Type.Literal('data'), Type.Literal('everything')], {
        default: 'data',
        description:
          '`data` (default): deletes what participants and integrations produced (participants and all their state, events, outbox and webhook deliveries, ' +
          'imports and exports, idempotency keys, usage counters, pending jobs) and keeps the configuration. `everything`: also deletes the configuration ' +
          '(rules, engagements, rewards, badge/tier/streak/challenge/contest/leaderboard definitions, webhook destinations and settings). ' +
          'API keys, console users, tenant settings, the test clock and the audit log are always kept.',
      }),
    ),
  },
  { $id: 'SandboxResetRequest', title: 'SandboxResetRequest', additionalProperties: false, examples: [{ scope: 'data' }, { scope: 'everything' }] },
);
export type SandboxResetBody = Static<typeof SandboxResetBody>;

export const SandboxReset = Type.Object(
  {
    sandbox_tenant_id: Type.String({ format: 'uuid', description: 'The sandbox that was reset.' }),
    scope: Type.Union([Type.Literal('data'), Type.Literal('everything')], { description: 'What was reset.' }),
    deleted: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description:
        'Rows deleted, by table, for every table the scope covers (0 included); `graphile_worker.jobs` counts the background jobs of the sandbox that were waiting to run.',
    }),
    released_reward_codes: Type.Integer({ minimum: 0, description: 'Pool reward codes that participants had claimed and that are free again (scope `data`; with `everything` the codes are deleted).' }),
    reset_at: Type.String({ format: 'date-time', description: "When the reset committed, on the sandbox's clock (its test clock when advanced)." }),
  },
  {
    $id: 'SandboxReset',
    title: 'SandboxReset',
    examples: [
      {
        sandbox_tenant_id: '0c1d9e4f-7a2b-4e58-b3c6-91d2f0a8e7b4',
        scope: 'data',
        deleted: { participants: 12, points_ledger: 40, points_balances: 12, ingested_events: 95, outbox_events: 140, webhook_deliveries: 35, 'graphile_worker.jobs': 2 },
        released_reward_codes: 3,
        reset_at: '2026-11-26T09:45:00.000Z',
      },
    ],
  },
);
export type SandboxReset = Static<typeof SandboxReset>;
