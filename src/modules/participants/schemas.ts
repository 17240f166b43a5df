import { personal, type PersonalKind } from '../../platform/privacy.js';
import { Type, type TSchema } from '@sinclair/typebox';
import { Pagination } from '../../platform/http.js';
import {
  CITY_LENGTH_MAX,
  CUSTOM_FIELD_KEY_PATTERN,
  CUSTOM_FIELD_TYPES,
  CUSTOM_STRING_LENGTH_MAX,
  EMAIL_LENGTH_MAX,
  EXTERNAL_ID_LENGTH_MAX,
  FULL_NAME_LENGTH_MAX,
  GENDERS,
  LOCALE_LENGTH_MAX,
  MOBILE_INPUT_LENGTH_MAX,
  NAME_LENGTH_MAX,
  POSTAL_CODE_LENGTH_MAX,
  CUSTOM_FIELDS_PER_TENANT_MAX,
} from './fields.js';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, SEARCH_ATTRIBUTES_MAX } from './service.js';

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** The participant id as it appears in requests (kept here too so that this file does not import index.ts). */
export const ParticipantIdSchema = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: '^[^\\u0000-\\u001f]+$',
  description: "The tenant's identifier of the participant (1 to 128 characters, no control characters).",
});

export const ParticipantProfile = Type.Object(
  {
    participant_id: Type.String(),
    display_name: nullable(Type.String({ description: 'The public name; "Deleted user" once anonymized.' })),
    email: nullable(Type.String({ ...personal('email'), description: 'Masked without read:pii: first character, `***`, `@domain`.' })),
    first_name: nullable(Type.String({ ...personal('first_name'), description: 'Masked without read:pii: first 2 characters then `***`.' })),
    last_name: nullable(Type.String({ ...personal('last_name'), description: 'Masked without read:pii: first 2 characters then `***`.' })),
    full_name: nullable(Type.String({ ...personal('full_name'), description: 'Masked without read:pii: initials, like `A.L.`.' })),
    mobile_number: nullable(Type.String({ ...personal('mobile_number'), description: 'E.164. Masked without read:pii: `***` and the last 4 digits.' })),
    country_code: nullable(Type.String({ description: 'ISO 3166-1 alpha-2. Always visible.' })),
    date_of_birth: nullable(Type.String({ ...personal('date_of_birth'), description: 'YYYY-MM-DD. Masked without read:pii: the year only.' })),
    gender: nullable(Type.String({ ...personal('gender'), description: `One of ${GENDERS.join(', ')}. Masked without read:pii: \`***\`.` })),
    city: nullable(Type.String({ description: 'Always visible.' })),
    postal_code: nullable(Type.String({ description: 'Always visible.' })),
    external_id: nullable(Type.String({ description: 'Always visible.' })),
    locale: nullable(
      Type.String({ description: "The participant's language, a BCP 47 tag in canonical form (like `de`, `pt-BR`); the embed runtime shows its texts in it. Always visible." }),
    ),
    custom: Type.Record(Type.String(), Type.Unknown(), { ...personal('custom'), description: 'Custom field values; personal ones read `***` without read:pii.' }),
    masked: Type.Boolean({ description: 'True when personal values are masked for this caller.' }),
    anonymized: Type.Boolean(),
    anonymized_at: nullable(Type.String({ format: 'date-time' })),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'ParticipantProfile', title: 'ParticipantProfile' },
);

const field = (maxLength: number, description: string, kind?: PersonalKind) => Type.Optional(nullable(Type.String({ maxLength, description, ...(kind ? personal(kind) : {}) })));

export const ProfileUpsertBody = Type.Object(
  {
    email: field(EMAIL_LENGTH_MAX, 'An address like name@example.com (personal: needs read:pii).', 'email'),
    first_name: field(NAME_LENGTH_MAX, '1 to 100 characters (personal: needs read:pii).', 'first_name'),
    last_name: field(NAME_LENGTH_MAX, '1 to 100 characters (personal: needs read:pii).', 'last_name'),
    full_name: field(FULL_NAME_LENGTH_MAX, '1 to 200 characters (personal: needs read:pii).', 'full_name'),
    mobile_number: field(MOBILE_INPUT_LENGTH_MAX, 'E.164, like +4915112345678; spaces and dashes are dropped (personal: needs read:pii).', 'mobile_number'),
    country_code: field(8, 'ISO 3166-1 alpha-2, like DE.'),
    date_of_birth: field(10, 'YYYY-MM-DD, from 1900-01-01 to today (personal: needs read:pii).', 'date_of_birth'),
    gender: field(32, `One of ${GENDERS.join(', ')} (personal: needs read:pii).`, 'gender'),
    city: field(CITY_LENGTH_MAX, '1 to 100 characters.'),
    postal_code: field(POSTAL_CODE_LENGTH_MAX, 'Letters, digits, spaces and hyphens, up to 12 characters.'),
    external_id: field(EXTERNAL_ID_LENGTH_MAX, "The participant's id in the tenant's own systems."),
    locale: field(LOCALE_LENGTH_MAX, 'A BCP 47 language tag, like de or pt-BR; stored in canonical form (en-us becomes en-US).'),
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The public name shown on leaderboards.' })),
    custom: Type.Optional(
      Type.Record(
        Type.String({ pattern: CUSTOM_FIELD_KEY_PATTERN }),
        Type.Union([Type.String({ maxLength: CUSTOM_STRING_LENGTH_MAX }), Type.Number(), Type.Boolean(), Type.Null()]),
        { ...personal('custom'), maxProperties: CUSTOM_FIELDS_PER_TENANT_MAX, description: 'Values of defined custom fields; null removes one.' },
      ),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ParticipantParams = Type.Object({ participant_id: ParticipantIdSchema });

export const DeleteQuery = Type.Object(
  {
    anonymize: Type.Optional(Type.Boolean({ default: false, description: 'true: anonymize (keep events, facts and ledger) instead of deleting.' })),
  },
  { additionalProperties: false },
);

export const ErasureResponse = Type.Object({
  erasure_id: Type.String({ format: 'uuid' }),
  participant_id: Type.String(),
  action: Type.Union([Type.Literal('anonymized'), Type.Literal('deleted')]),
  performed_at: Type.String({ format: 'date-time' }),
  row_counts: Type.Record(Type.String(), Type.Integer(), { description: 'Rows of the participant changed per table (anonymized or deleted).' }),
  rows_kept: Type.Record(Type.String(), Type.Integer(), { description: 'Rows of the participant kept per table.' }),
  duplicate: Type.Boolean({ description: 'True when the erasure had already been done; the stored evidence is returned.' }),
});

export const ListParticipantsQuery = Type.Object(
  {
    limit: Type.Optional(Pagination.limit(LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)),
    cursor: Pagination.cursor(),
    country_code: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$' })),
    city: Type.Optional(Type.String({ minLength: 1, maxLength: CITY_LENGTH_MAX })),
    postal_code: Type.Optional(Type.String({ minLength: 1, maxLength: POSTAL_CODE_LENGTH_MAX })),
    anonymized: Type.Optional(Type.Boolean()),
    created_after: Type.Optional(Type.String({ format: 'date-time' })),
    created_before: Type.Optional(Type.String({ format: 'date-time' })),
    include_test: Type.Optional(Type.Boolean({ description: 'Also list test participants (made by a draft engagement\'s preview in the console); left out by default.' })),
  },
  { additionalProperties: false },
);

export const ParticipantPage = Type.Object({
  participants: Type.Array(Type.Ref('ParticipantProfile')),
  next_cursor: nullable(Type.String()),
});

export const SearchParticipantsQuery = Type.Object(
  {
    external_id: Type.Optional(Type.String({ minLength: 1, maxLength: EXTERNAL_ID_LENGTH_MAX })),
    email_hash: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'SHA-256 (hex) of the trimmed, lower-cased email.' })),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: EMAIL_LENGTH_MAX, description: 'Exact email; needs read:pii.' })),
    attribute: Type.Optional(
      Type.Array(Type.String({ minLength: 3, maxLength: 600 }), {
        maxItems: SEARCH_ATTRIBUTES_MAX,
        description: 'Custom field equality, `key:value`; repeat for several (all must match). Personal fields need read:pii.',
      }),
    ),
    limit: Type.Optional(Pagination.limit(LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)),
    cursor: Pagination.cursor(),
  },
  { additionalProperties: false },
);

const CustomFieldType = Type.Union(
  CUSTOM_FIELD_TYPES.map((t) => Type.Literal(t)),
  { description: 'string (up to 500 characters), number, boolean, or date (YYYY-MM-DD).' },
);

export const CustomField = Type.Object(
  {
    key: Type.String(),
    type: CustomFieldType,
    personal: Type.Boolean({ description: 'Personal data: masked as `***` without read:pii, logged on full reads, removed by anonymization.' }),
    description: nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'ParticipantCustomField', title: 'ParticipantCustomField' },
);

export const CreateCustomFieldBody = Type.Object(
  {
    key: Type.String({ pattern: CUSTOM_FIELD_KEY_PATTERN, description: 'Lower case letters, digits and underscores, starting with a letter; at most 63 characters.' }),
    type: CustomFieldType,
    personal: Type.Boolean(),
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const UpdateCustomFieldBody = Type.Object(
  {
    personal: Type.Optional(Type.Boolean()),
    description: Type.Optional(nullable(Type.String({ maxLength: 500 }))),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const CustomFieldParams = Type.Object({ key: Type.String({ pattern: CUSTOM_FIELD_KEY_PATTERN }) });

export const CustomFieldPage = Type.Object({
  fields: Type.Array(Type.Ref('ParticipantCustomField')),
  next_cursor: nullable(Type.String()),
});

export const ListCustomFieldsQuery = Type.Object(
  { limit: Type.Optional(Pagination.limit(LIST_LIMIT_MAX, LIST_LIMIT_MAX)), cursor: Pagination.cursor() },
  { additionalProperties: false },
);

export const SessionParticipantQuery = Type.Object(
  { session_id: Type.String(), engagement_id: Type.String({ format: 'uuid' }) },
  { additionalProperties: false },
);

export const SessionParticipant = Type.Object({
  participant_id: Type.String(),
  display_name: nullable(Type.String({ description: 'The public name; "Deleted user" once anonymized.' })),
  locale: nullable(Type.String({ description: "The participant's language (BCP 47, canonical), when the tenant set one; the embed runtime prefers it to the browser's." })),
  session_expires_at: Type.String({ format: 'date-time' }),
});
