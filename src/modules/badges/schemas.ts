import { Type, type Static } from '@sinclair/typebox';
import { ParticipantId } from '../participants/index.js';
import { Pagination } from '../../platform/http.js';

export const BadgeCode = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_.:-]+$',
  description: 'The badge code: 1 to 64 letters, digits, `_`, `.`, `:` or `-`.',
});

const BadgeName = Type.String({ minLength: 1, maxLength: 100 });
const BadgeDescription = Type.String({ maxLength: 1000 });
const ImageUrl = Type.String({ format: 'uri', maxLength: 2048, pattern: '^https?://' });

export const BadgeDefinition = Type.Object(
  {
    code: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    image_url: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'BadgeDefinition', title: 'BadgeDefinition' },
);
export type BadgeDefinition = Static<typeof BadgeDefinition>;

export const CreateBadgeBody = Type.Object(
  {
    code: BadgeCode,
    name: BadgeName,
    description: Type.Optional(BadgeDescription),
    image_url: Type.Optional(ImageUrl),
  },
  { additionalProperties: false },
);
export type CreateBadgeBody = Static<typeof CreateBadgeBody>;

export const UpdateBadgeBody = Type.Object(
  {
    name: Type.Optional(BadgeName),
    description: Type.Optional(Type.Union([BadgeDescription, Type.Null()])),
    image_url: Type.Optional(Type.Union([ImageUrl, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateBadgeBody = Static<typeof UpdateBadgeBody>;

export const BadgeCodeParams = Type.Object({ code: BadgeCode }, { additionalProperties: false });

export const ListBadgesQuery = Type.Object(
  { limit: Type.Optional(Pagination.limit(100, 50)), cursor: Pagination.cursor() },
  { additionalProperties: false },
);

export const BadgeList = Type.Object({
  badges: Type.Array(Type.Ref('BadgeDefinition')),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const AwardBadgeBody = Type.Object({ participant_id: ParticipantId }, { additionalProperties: false });

export const AwardBadgeResponse = Type.Object({
  participant_id: Type.String(),
  badge_code: Type.String(),
  awarded: Type.Boolean({ description: 'False when the participant had already earned the badge (nothing changed).' }),
  earned_at: Type.String({ format: 'date-time' }),
});

/** The spec's Badge object as a participant sees it. */
export const BadgeStatus = Type.Object(
  {
    code: Type.String(),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    image_url: Type.Union([Type.String(), Type.Null()]),
    earned: Type.Boolean(),
    earned_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'BadgeStatus', title: 'Badge' },
);
export type BadgeStatus = Static<typeof BadgeStatus>;

export const BADGE_CODES_FILTER_MAX = 100;

export const BadgeStatusQuery = Type.Object(
  {
    session_id: Type.String({ maxLength: 256 }),
    engagement_id: Type.Optional(Type.String({ format: 'uuid' })),
    badge_codes: Type.Optional(
      Type.String({ maxLength: 6600, description: `Comma-separated badge codes (at most ${BADGE_CODES_FILTER_MAX}); filters the result.` }),
    ),
  },
  { additionalProperties: false },
);

export const BadgeStatusResponse = Type.Object({ badges: Type.Array(Type.Ref('BadgeStatus')) });
