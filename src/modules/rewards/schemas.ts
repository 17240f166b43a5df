import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Pagination } from '../../platform/http.js';

export const REWARD_TYPES = ['coupon', 'voucher', 'physical', 'digital', 'points_multiplier'] as const;
export type RewardType = (typeof REWARD_TYPES)[number];

/**
 * Display by type (spec, Reward (claimed)): coupon shows a coupon card, voucher
 * a voucher card, physical a gift card, digital and points_multiplier a simple card.
 */
export const DISPLAY_TYPE: Record<RewardType, string> = {
  coupon: 'coupon',
  voucher: 'voucher',
  physical: 'gift_card',
  digital: 'simple',
  points_multiplier: 'simple',
};

export const LIMITS = { codesPerUploadMax: 1_000, inventoryMax: 100_000_000, claimedPageMax: 100, multiplierMax: 10, multiplierHoursMax: 8_760 } as const;

const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, for example EUR.' });

/** Metadata shapes by type; checked on create and update. */
export const METADATA_SCHEMAS: Record<RewardType, TSchema> = {
  coupon: Type.Object(
    {
      discount_percent: Type.Number({ exclusiveMinimum: 0, maximum: 100 }),
      min_order_value: Type.Optional(Type.Number({ minimum: 0 })),
      currency: Type.Optional(Currency),
      conditions: Type.Optional(Type.String({ maxLength: 1000 })),
    },
    { additionalProperties: false },
  ),
  voucher: Type.Object(
    {
      value: Type.Number({ exclusiveMinimum: 0 }),
      currency: Currency,
      conditions: Type.Optional(Type.String({ maxLength: 1000 })),
    },
    { additionalProperties: false },
  ),
  physical: Type.Object(
    {
      sku: Type.Optional(Type.String({ maxLength: 100 })),
      value: Type.Optional(Type.Number({ minimum: 0 })),
      currency: Type.Optional(Currency),
      fulfilment_instructions: Type.Optional(Type.String({ maxLength: 1000 })),
    },
    { additionalProperties: false },
  ),
  digital: Type.Object(
    {
      kind: Type.Union([Type.Literal('download'), Type.Literal('access_code'), Type.Literal('membership')]),
      url: Type.Optional(Type.String({ format: 'uri', maxLength: 2000 })),
      membership_tier: Type.Optional(Type.String({ maxLength: 100 })),
    },
    { additionalProperties: false },
  ),
  points_multiplier: Type.Object(
    {
      multiplier: Type.Number({ exclusiveMinimum: 1, maximum: LIMITS.multiplierMax }),
      duration_hours: Type.Integer({ minimum: 1, maximum: LIMITS.multiplierHoursMax }),
      event_type: Type.String({ minLength: 1, maxLength: 100, description: 'Events of this name are multiplied (multipliers apply to matching events only).' }),
      attributes: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), { description: 'Event attributes that must match too.' })),
    },
    { additionalProperties: false },
  ),
};

const RewardTypeSchema = Type.Union(REWARD_TYPES.map((t) => Type.Literal(t)));
const CodeSource = Type.Union([Type.Literal('pool'), Type.Literal('generated'), Type.Literal('none')], {
  description: '`pool`: codes uploaded with `POST /admin/rewards/{id}/codes`, each handed out once; `generated`: a random code per claim; `none`: no code.',
});

/** Pictures are shown on participants' pages, which are served over https: an http image would be blocked as mixed content. */
const ImageUrl = Type.String({ format: 'uri', maxLength: 2048, pattern: '^https://', description: 'An https URL of the reward\'s picture, shown beside its name on the participant\'s page.' });

const editable = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  image_url: Type.Optional(Type.Union([ImageUrl, Type.Null()], { description: 'An https URL of the reward\'s picture (at most 2048 characters); null removes it.' })),
  metadata: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'Shape by type; see the type descriptions.' })),
  inventory: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: LIMITS.inventoryMax }), Type.Null()], { description: 'Total claims allowed; null or omitted is unlimited.' })),
  available_until: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'No claims after this instant.' })),
  valid_for_days: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 3650 }), Type.Null()], { description: 'A claim expires this many days after it was made.' })),
  active: Type.Optional(Type.Boolean()),
};

export const CreateRewardBody = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Chosen by the caller; generated when omitted.' })),
    type: RewardTypeSchema,
    code_source: Type.Optional(CodeSource),
    code_prefix: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{0,20}$' })),
    ...editable,
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'spring-coupon-10',
        type: 'coupon',
        code_source: 'pool',
        name: '10% off your next order',
        description: 'A one-time coupon for 10% off, valid for 30 days after you claim it.',
        image_url: 'https://shop.example.com/images/spring-coupon.png',
        metadata: { discount_percent: 10 },
        inventory: 1000,
        available_until: '2027-12-31T23:00:00.000Z',
        valid_for_days: 30,
        active: true,
      },
    ],
  },
);
export type CreateRewardBody = Static<typeof CreateRewardBody>;

export const UpdateRewardBody = Type.Partial(Type.Object(editable), {
  additionalProperties: false,
  minProperties: 1,
  examples: [{ name: '15% off your next order', metadata: { discount_percent: 15 }, inventory: 2000 }],
});
export type UpdateRewardBody = Static<typeof UpdateRewardBody>;

export const RewardRecord = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    image_url: Type.Union([Type.String(), Type.Null()], { description: "The reward's picture (https), when it has one." }),
    type: RewardTypeSchema,
    display_type: Type.String(),
    metadata: Type.Object({}, { additionalProperties: true }),
    code_source: Type.String(),
    code_prefix: Type.String(),
    inventory: Type.Union([Type.Integer(), Type.Null()]),
    claimed_count: Type.Integer(),
    codes_available: Type.Union([Type.Integer(), Type.Null()], { description: 'Unclaimed codes of a pool reward; null for other code sources.' }),
    available_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    valid_for_days: Type.Union([Type.Integer(), Type.Null()]),
    active: Type.Boolean(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Reward', title: 'Reward' },
);

export const RewardIdParams = Type.Object({ id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) });

export const ListRewardsQuery = Type.Object(
  { type: Type.Optional(RewardTypeSchema), limit: Pagination.limit(100, 50), cursor: Pagination.cursor() },
  { additionalProperties: false },
);

export const RewardList = Type.Object({ rewards: Type.Array(Type.Ref('Reward')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const UploadCodesBody = Type.Object(
  { codes: Type.Array(Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' }), { minItems: 1, maxItems: LIMITS.codesPerUploadMax }) },
  { additionalProperties: false },
);

export const UploadCodesResponse = Type.Object({
  added: Type.Integer(),
  duplicates: Type.Integer({ description: 'Codes already in the pool (or repeated in the upload); ignored.' }),
  codes_available: Type.Integer(),
});

export const ClaimedReward = Type.Object(
  {
    reward_id: Type.String(),
    claim_id: Type.String(),
    name: Type.String(),
    type: RewardTypeSchema,
    code: Type.Union([Type.String(), Type.Null()]),
    display_type: Type.String(),
    claimed_at: Type.String({ format: 'date-time' }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    status: Type.Union([Type.Literal('active'), Type.Literal('expired')]),
    metadata: Type.Object({}, { additionalProperties: true }),
    image_url: Type.Union([Type.String(), Type.Null()], { description: "The reward's picture as the catalogue has it now, when it has one." }),
  },
  { $id: 'ClaimedReward', title: 'ClaimedReward' },
);
export type ClaimedReward = Static<typeof ClaimedReward>;

export const ClaimedQuery = Type.Object(
  {
    session_id: Type.String(),
    engagement_id: Type.String({ format: 'uuid' }),
    limit: Pagination.limit(LIMITS.claimedPageMax, 50),
    cursor: Pagination.cursor(),
  },
  { additionalProperties: false },
);

export const ClaimedList = Type.Object({ rewards: Type.Array(Type.Ref('ClaimedReward')), next_cursor: Type.Union([Type.String(), Type.Null()]) });
