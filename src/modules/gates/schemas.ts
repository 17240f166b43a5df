import { Type, type Static } from '@sinclair/typebox';

export const LIMITS = { targetsMax: 50 } as const;

const SessionFields = {
  session_id: Type.String(),
  engagement_id: Type.String({ format: 'uuid' }),
};
const ScreenId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });

export const GateCheckBody = Type.Object(
  { ...SessionFields, targets: Type.Array(ScreenId, { minItems: 1, maxItems: LIMITS.targetsMax, uniqueItems: true, description: 'Screen ids of the engagement.' }) },
  { additionalProperties: false, examples: [{ session_id: 'ses_9c41d7e2a0b34f58', engagement_id: '5b7e0a3c-2f4d-4c61-9a8e-0d2b6c1f7e93', targets: ['welcome', 'prize-room'] }] },
);
export type GateCheckBody = Static<typeof GateCheckBody>;

export const GateResult = Type.Object({
  locked: Type.Boolean(),
  conditions_met: Type.Array(Type.String()),
  conditions_remaining: Type.Optional(Type.Array(Type.String(), { description: 'Present when locked.' })),
  unlock_hint: Type.Optional(Type.String({ description: 'Present when locked: the screen\'s own hint, or one made from the remaining conditions.' })),
});

export const GateCheckResponse = Type.Object({
  gates: Type.Record(Type.String(), GateResult, { description: 'Keyed by target screen id. A screen without a gate is unlocked with no conditions.' }),
});

export const ScreenVisitBody = Type.Object(
  { ...SessionFields, screen_id: ScreenId },
  { additionalProperties: false, examples: [{ session_id: 'ses_9c41d7e2a0b34f58', engagement_id: '5b7e0a3c-2f4d-4c61-9a8e-0d2b6c1f7e93', screen_id: 'welcome' }] },
);

export const ScreenVisitResponse = Type.Object({
  screen_id: Type.String(),
  first_visited_at: Type.String({ format: 'date-time' }),
  last_visited_at: Type.String({ format: 'date-time' }),
  visit_count: Type.Integer(),
});
