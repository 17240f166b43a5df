import { Type, type Static } from '@sinclair/typebox';

/** Schemas of the sandbox promotion (promotion-routes.ts). */

const Fields = Type.Object({}, { additionalProperties: true, description: "The item's promotable fields, as its own GET route shows them (ids, counters and timestamps left out)." });

const KindDiff = Type.Object({
  create: Type.Array(
    Type.Object({
      key: Type.String({ description: 'The natural key the item is matched by.' }),
      sandbox_id: Type.String(),
      fields: Fields,
    }),
    { description: 'In the sandbox only: created in live by the promotion.' },
  ),
  update: Type.Array(
    Type.Object({
      key: Type.String(),
      sandbox_id: Type.String(),
      live_id: Type.String(),
      changes: Type.Record(Type.String(), Type.Object({ before: Type.Unknown(), after: Type.Unknown() }), { description: 'Each changed field: its live value (before) and the sandbox value (after).' }),
    }),
    { description: 'On both sides with different fields: the live item takes the sandbox fields.' },
  ),
  unchanged: Type.Integer({ minimum: 0, description: 'Items equal on both sides.' }),
  live_only: Type.Array(Type.Object({ key: Type.String(), live_id: Type.String() }), { description: 'In live only: left alone (a promotion never deletes live configuration).' }),
  blocked: Type.Array(
    Type.Object({ key: Type.String(), sandbox_id: Type.Union([Type.String(), Type.Null()]), reason: Type.String() }),
    { description: 'Sandbox items that cannot be promoted, with why. While any is listed, applying is refused with 422 `PROMOTION_BLOCKED`.' },
  ),
});

const emptyKind = { create: [], update: [], unchanged: 0, live_only: [], blocked: [] };

export const SandboxPromotionDiff = Type.Object(
  {
    live_tenant_id: Type.String({ format: 'uuid' }),
    sandbox_tenant_id: Type.String({ format: 'uuid' }),
    rules: { ...KindDiff, description: 'Earn rules, matched by name. New rules arrive in live as drafts; an update never changes a live rule\'s status.' },
    engagements: { ...KindDiff, description: "Engagements, matched by site slug. They arrive in live as drafts; an update replaces the live draft and never publishes it." },
    rewards: { ...KindDiff, description: 'The reward catalogue, matched by reward id. Code pools are not copied.' },
    badges: {
      ...KindDiff,
      description: "Badge definitions, matched by code (name, description, image_url). Applied before rules and engagements, so a rule naming a badge promoted alongside is not blocked; participants' earned badges are never copied.",
    },
    streaks: {
      ...KindDiff,
      description: "Streak definitions, matched by code (name, period, event_name, grace_periods). A different period is blocked (it cannot change on an existing streak); participants' streaks are never copied.",
    },
    fingerprint: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the canonical JSON of this diff (without the fingerprint): pass it to `POST /tenant/sandbox/promotion`.' }),
  },
  {
    $id: 'SandboxPromotionDiff',
    title: 'SandboxPromotionDiff',
    examples: [
      {
        live_tenant_id: '5b7e0a3c-2f4d-4c61-9a8e-0d2b6c1f7e93',
        sandbox_tenant_id: '0c1d9e4f-7a2b-4e58-b3c6-91d2f0a8e7b4',
        rules: {
          create: [
            {
              key: 'Purchase points',
              sandbox_id: 'rul_4f9a1c2e7b3d',
              fields: { name: 'Purchase points', description: null, trigger: 'event', event_name: 'purchase_completed', schedule: null, conditions: {}, effects: [{ type: 'award_points', rate: { property: 'amount', per: 1, points: 1 } }], caps: {}, budget_points: null, priority: 0, stop_processing: false, starts_at: null, ends_at: null },
            },
          ],
          update: [{ key: 'Welcome bonus', sandbox_id: 'rul_8c2d5e1f0a9b', live_id: 'rul_1a7e3c9d4b2f', changes: { priority: { before: 0, after: 10 } } }],
          unchanged: 3,
          live_only: [{ key: 'Legacy signup', live_id: 'rul_9d0e2f4a6c8b' }],
          blocked: [],
        },
        engagements: { ...emptyKind, unchanged: 1 },
        rewards: {
          ...emptyKind,
          blocked: [{ key: 'free-coffee', sandbox_id: 'free-coffee', reason: 'its type differs (live "coupon", sandbox "voucher") and cannot be changed on an existing item; rename one of them' }],
        },
        badges: { ...emptyKind, create: [{ key: 'vip', sandbox_id: 'vip', fields: { name: 'VIP', description: null, image_url: null } }] },
        streaks: { ...emptyKind, update: [{ key: 'daily-visit', sandbox_id: 'daily-visit', live_id: 'daily-visit', changes: { grace_periods: { before: 0, after: 1 } } }] },
        fingerprint: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      },
    ],
  },
);
export type SandboxPromotionDiff = Static<typeof SandboxPromotionDiff>;

export const SandboxPromotionBody = Type.Object(
  { fingerprint: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'The `fingerprint` of the previewed diff (`GET /tenant/sandbox/promotion`).' }) },
  {
    $id: 'SandboxPromotionBody',
    title: 'SandboxPromotionBody',
    additionalProperties: false,
    examples: [{ fingerprint: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' }],
  },
);
export type SandboxPromotionBody = Static<typeof SandboxPromotionBody>;

const Counts = Type.Object({ created: Type.Integer({ minimum: 0 }), updated: Type.Integer({ minimum: 0 }) });

export const SandboxPromotion = Type.Object(
  {
    applied: Type.Object({ rules: Counts, engagements: Counts, rewards: Counts, badges: Counts, streaks: Counts }),
    fingerprint: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'The fingerprint of the diff that was applied.' }),
    audit_id: Type.Union([Type.String(), Type.Null()], { description: 'The audit log entry of the promotion (action `sandbox.promote`), written in the same transaction; null when the diff held nothing to apply.' }),
  },
  {
    $id: 'SandboxPromotion',
    title: 'SandboxPromotion',
    examples: [
      {
        applied: {
          rules: { created: 1, updated: 1 },
          engagements: { created: 0, updated: 0 },
          rewards: { created: 0, updated: 0 },
          badges: { created: 1, updated: 0 },
          streaks: { created: 0, updated: 1 },
        },
        fingerprint: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
        audit_id: '4711',
      },
    ],
  },
);
export type SandboxPromotion = Static<typeof SandboxPromotion>;

export const promotionSchemas = [SandboxPromotionDiff, SandboxPromotionBody, SandboxPromotion];
