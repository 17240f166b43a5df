import { Type } from '@sinclair/typebox';
import { ParticipantId } from '../participants/index.js';
import { DEDUCT_TYPES, GRANT_TYPES, MEMO_LENGTH_MAX, POINTS_PER_OPERATION_MAX, REASON_LENGTH_MAX } from './service.js';

/** TypeBox schemas of the points routes. */

export const IDEMPOTENCY_KEY_LENGTH_MAX = 255;

export const Amount = Type.Integer({
  minimum: 1,
  maximum: POINTS_PER_OPERATION_MAX,
  description: `Points, a whole number from 1 to ${POINTS_PER_OPERATION_MAX}.`,
});
const Reason = Type.String({ minLength: 1, maxLength: REASON_LENGTH_MAX });
const Memo = Type.String({ maxLength: MEMO_LENGTH_MAX });
const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_LENGTH_MAX,
  description: 'Required. A repeat inside 24 hours returns the first result with `duplicate: true` and applies nothing; the same key with a different body gets 422.',
});

export const GrantBody = Type.Object(
  {
    participant_id: ParticipantId,
    amount: Amount,
    reason: Reason,
    memo: Type.Optional(Memo),
    type: Type.Optional(Type.Union(GRANT_TYPES.map((t) => Type.Literal(t)), { description: 'Ledger type of the entry; default `award`.' })),
    idempotency_key: IdempotencyKey,
  },
  { additionalProperties: false },
);

export const DeductBody = Type.Object(
  {
    participant_id: ParticipantId,
    amount: Amount,
    reason: Reason,
    memo: Type.Optional(Memo),
    type: Type.Optional(Type.Union(DEDUCT_TYPES.map((t) => Type.Literal(t)), { description: 'Ledger type of the entry; default `redemption`.' })),
    idempotency_key: IdempotencyKey,
  },
  { additionalProperties: false },
);

export const DirectResponse = Type.Object({
  available: Type.Integer(),
  lifetime: Type.Integer(),
  delta: Type.Integer({ description: 'Positive on grant, negative on deduct.' }),
  duplicate: Type.Boolean({ description: 'True when the idempotency key was already used inside 24 hours; nothing was applied again.' }),
  ledger_entry_id: Type.String(),
});

export const InsufficientPoints = Type.Object(
  {
    error: Type.Optional(Type.Literal('insufficient_points')),
    available: Type.Optional(Type.Integer({ description: 'Points available now.' })),
    required: Type.Optional(Type.Integer({ description: 'Points the deduct needed.' })),
    detail: Type.String(),
    code: Type.String(),
    error_version: Type.Literal(1),
  },
  { description: 'The balance is too low (or a validation failure: then the standard error body without `error`, `available`, `required`).', additionalProperties: true },
);
