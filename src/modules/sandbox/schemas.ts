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
