import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { METADATA_SCHEMAS, REWARD_TYPES, type RewardType } from './schemas.js';

/**
 * The fields of each reward type's metadata, with their limits, read from
 * the very schemas that check them (METADATA_SCHEMAS), so that a form can
 * offer the fields and show the limits before they are broken without a
 * second copy of the rules (the console's reward metadata editor).
 */

const Bound = Type.Optional(Type.Number());
const ValueType = Type.Union([Type.Literal('string'), Type.Literal('number'), Type.Literal('boolean')]);

export const RewardMetadataField = Type.Object({
  key: Type.String(),
  type: Type.Union([Type.Literal('string'), Type.Literal('number'), Type.Literal('integer'), Type.Literal('record')], {
    description: '`record`: an object of keys to values of `value_types` (the multiplier\'s event attributes).',
  }),
  required: Type.Boolean(),
  description: Type.Optional(Type.String()),
  enum: Type.Optional(Type.Array(Type.String(), { description: 'The only values allowed.' })),
  minimum: Bound,
  maximum: Bound,
  exclusiveMinimum: Bound,
  exclusiveMaximum: Bound,
  minLength: Bound,
  maxLength: Bound,
  pattern: Type.Optional(Type.String()),
  format: Type.Optional(Type.String()),
  value_types: Type.Optional(Type.Array(ValueType)),
});

export const RewardMetadataFields = Type.Object({
  types: Type.Array(Type.Object({ type: Type.String(), fields: Type.Array(RewardMetadataField) })),
});

type Field = Record<string, unknown> & { key: string };
const KEPT = ['description', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'pattern', 'format'] as const;

function fieldOf(key: string, schema: TSchema, required: boolean): Field {
  const field: Field = { key, required };
  for (const name of KEPT) if (schema[name] !== undefined) field[name] = schema[name];
  const branches = (schema.anyOf ?? []) as TSchema[];
  if (branches.length && branches.every((b) => b.const !== undefined)) {
    return { ...field, type: 'string', enum: branches.map((b) => String(b.const)) };
  }
  if (schema.type === 'object') {
    const values = Object.values((schema.patternProperties ?? {}) as Record<string, TSchema>)[0];
    const valueTypes = ((values?.anyOf ?? [values]) as TSchema[]).map((b) => b?.type).filter(Boolean);
    return { ...field, type: 'record', value_types: valueTypes };
  }
  return { ...field, type: schema.type };
}

function fieldsOf(type: RewardType): Field[] {
  const schema = METADATA_SCHEMAS[type];
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries((schema.properties ?? {}) as Record<string, TSchema>).map(([key, child]) => fieldOf(key, child, required.has(key)));
}

const ALL = { types: REWARD_TYPES.map((type) => ({ type, fields: fieldsOf(type) })) } as Static<typeof RewardMetadataFields>;

export function rewardMetadataFields(): Static<typeof RewardMetadataFields> {
  return ALL;
}
