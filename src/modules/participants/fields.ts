import { PERSONAL_STANDARD_FIELDS } from '../../platform/privacy.js';

/**
 * The standard profile fields of the spec (Participant): their formats, how a
 * raw value is checked and normalised, and how each is masked for callers
 * without `read:pii`. Pure functions only: no database, no HTTP.
 */
export const STANDARD_FIELDS = [
  'email',
  'first_name',
  'last_name',
  'full_name',
  'mobile_number',
  'country_code',
  'date_of_birth',
  'gender',
  'city',
  'postal_code',
  'external_id',
  'locale',
] as const;
export type StandardField = (typeof STANDARD_FIELDS)[number];

/** Fields masked without `read:pii`: the one classification in platform/privacy.ts. */
export const MASKED_FIELDS: readonly StandardField[] = PERSONAL_STANDARD_FIELDS;

export const GENDERS = ['female', 'male', 'non_binary', 'other', 'prefer_not_to_say'] as const;

export const EMAIL_LENGTH_MAX = 254;
const EMAIL_LOCAL_LENGTH_MAX = 64;
export const NAME_LENGTH_MAX = 100;
export const FULL_NAME_LENGTH_MAX = 200;
export const CITY_LENGTH_MAX = 100;
export const POSTAL_CODE_LENGTH_MAX = 12;
export const EXTERNAL_ID_LENGTH_MAX = 128;
/** BCP 47 tags in use are short; 35 characters holds language, script, region and a variant. */
export const LOCALE_LENGTH_MAX = 35;
/** Mobile numbers as written by people may carry spaces and punctuation; this bounds the raw text. */
export const MOBILE_INPUT_LENGTH_MAX = 32;
const EARLIEST_DATE_OF_BIRTH = '1900-01-01';

export type Checked<T = string> = { ok: true; value: T } | { ok: false; reason: string };

const CONTROL_CHARACTERS = /\p{Cc}/u;
const LETTER = /\p{L}/u;
const EMAIL_LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DOMAIN_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const E164 = /^\+[1-9][0-9]{7,14}$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const POSTAL_CODE = /^[A-Z0-9](?:[A-Z0-9 -]{0,10}[A-Z0-9])?$/;

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

const length = (value: string): number => Array.from(value).length;

function text(raw: unknown, field: string, max: number, options: { letter?: boolean } = {}): Checked {
  if (typeof raw !== 'string') return { ok: false, reason: `${field} must be a string` };
  const value = raw.trim().normalize('NFC');
  if (value === '') return { ok: false, reason: `${field} must not be empty` };
  if (length(value) > max) return { ok: false, reason: `${field} must be at most ${max} characters` };
  if (CONTROL_CHARACTERS.test(value)) return { ok: false, reason: `${field} must not contain control characters` };
  if (options.letter && !LETTER.test(value)) return { ok: false, reason: `${field} must contain a letter` };
  return { ok: true, value };
}

/** An address of the form local@domain: ASCII local part (dot-atom), a domain of at least two labels; the domain is lower-cased. */
export function checkEmail(raw: unknown): Checked {
  if (typeof raw !== 'string') return { ok: false, reason: 'email must be a string' };
  const value = raw.trim();
  if (value.length > EMAIL_LENGTH_MAX) return { ok: false, reason: `email must be at most ${EMAIL_LENGTH_MAX} characters` };
  const at = value.lastIndexOf('@');
  const local = value.slice(0, at);
  const domain = value.slice(at + 1).toLowerCase();
  const labels = domain.split('.');
  const valid =
    at > 0 &&
    local.length <= EMAIL_LOCAL_LENGTH_MAX &&
    EMAIL_LOCAL.test(local) &&
    labels.length >= 2 &&
    labels.every((label) => DOMAIN_LABEL.test(label)) &&
    /[a-z]/.test(labels[labels.length - 1]);
  if (!valid) return { ok: false, reason: 'email must be an address like name@example.com' };
  return { ok: true, value: `${local}@${domain}` };
}

/** E.164 (`+` and 8 to 15 digits). Spaces, dashes, dots and parentheses are dropped; a leading `00` becomes `+`. */
export function checkMobileNumber(raw: unknown): Checked {
  if (typeof raw !== 'string') return { ok: false, reason: 'mobile_number must be a string' };
  if (raw.length > MOBILE_INPUT_LENGTH_MAX) return { ok: false, reason: `mobile_number must be at most ${MOBILE_INPUT_LENGTH_MAX} characters` };
  let value = raw.trim().replace(/[\s().-]/g, '');
  if (value.startsWith('00')) value = `+${value.slice(2)}`;
  if (!E164.test(value)) return { ok: false, reason: 'mobile_number must be in E.164 form, like +4915112345678' };
  return { ok: true, value };
}

/** ISO 3166-1 alpha-2, an assigned code, returned in upper case. */
export function checkCountryCode(raw: unknown): Checked {
  if (typeof raw !== 'string') return { ok: false, reason: 'country_code must be a string' };
  const value = raw.trim().toUpperCase();
  const name = /^[A-Z]{2}$/.test(value) ? regionNames.of(value) : undefined;
  if (!name || name === value || name === 'Unknown Region') {
    return { ok: false, reason: 'country_code must be an ISO 3166-1 alpha-2 code, like DE' };
  }
  return { ok: true, value };
}

/** An ISO 8601 calendar date (YYYY-MM-DD), a real day, from 1900-01-01 up to today. */
export function checkDate(raw: unknown, field: string, today: Date | null): Checked {
  if (typeof raw !== 'string') return { ok: false, reason: `${field} must be a string` };
  const match = ISO_DATE.exec(raw.trim());
  if (!match) return { ok: false, reason: `${field} must be a date in the form YYYY-MM-DD` };
  const [, year, month, day] = match;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (date.getUTCFullYear() !== Number(year) || date.getUTCMonth() !== Number(month) - 1 || date.getUTCDate() !== Number(day)) {
    return { ok: false, reason: `${field} is not a real calendar date` };
  }
  const value = match[0];
  if (today) {
    if (value < EARLIEST_DATE_OF_BIRTH) return { ok: false, reason: `${field} must not be before ${EARLIEST_DATE_OF_BIRTH}` };
    if (value > today.toISOString().slice(0, 10)) return { ok: false, reason: `${field} must not be in the future` };
  }
  return { ok: true, value };
}

export function checkGender(raw: unknown): Checked {
  const value = typeof raw === 'string' ? raw.trim().toLowerCase() : raw;
  if (typeof value !== 'string' || !(GENDERS as readonly string[]).includes(value)) {
    return { ok: false, reason: `gender must be one of ${GENDERS.join(', ')}` };
  }
  return { ok: true, value };
}

/** A BCP 47 language tag (`de`, `pt-BR`), returned in canonical form (`en-us` → `en-US`) by `Intl.getCanonicalLocales`. */
export function checkLocale(raw: unknown): Checked {
  if (typeof raw !== 'string') return { ok: false, reason: 'locale must be a string' };
  const value = raw.trim();
  const reason = 'locale must be a BCP 47 language tag, like de or pt-BR';
  if (value.length < 2 || value.length > LOCALE_LENGTH_MAX) return { ok: false, reason: `${reason}, at most ${LOCALE_LENGTH_MAX} characters` };
  try {
    const [canonical] = Intl.getCanonicalLocales(value);
    // Private-use-only and grandfathered forms are not languages a page can be shown in.
    if (!canonical || !/^[a-z]{2,8}(?:-|$)/.test(canonical) || canonical.length > LOCALE_LENGTH_MAX) return { ok: false, reason };
    return { ok: true, value: canonical };
  } catch {
    return { ok: false, reason };
  }
}

export function checkPostalCode(raw: unknown): Checked {
  if (typeof raw !== 'string') return { ok: false, reason: 'postal_code must be a string' };
  const value = raw.trim().toUpperCase();
  if (value.length > POSTAL_CODE_LENGTH_MAX) return { ok: false, reason: `postal_code must be at most ${POSTAL_CODE_LENGTH_MAX} characters` };
  if (!POSTAL_CODE.test(value)) return { ok: false, reason: 'postal_code may hold letters, digits, spaces and hyphens only' };
  return { ok: true, value };
}

/** Checks and normalises one standard field. `today` bounds dates of birth. */
export function checkStandardField(field: StandardField, raw: unknown, today: Date): Checked {
  switch (field) {
    case 'email':
      return checkEmail(raw);
    case 'first_name':
    case 'last_name':
      return text(raw, field, NAME_LENGTH_MAX, { letter: true });
    case 'full_name':
      return text(raw, field, FULL_NAME_LENGTH_MAX, { letter: true });
    case 'mobile_number':
      return checkMobileNumber(raw);
    case 'country_code':
      return checkCountryCode(raw);
    case 'date_of_birth':
      return checkDate(raw, field, today);
    case 'gender':
      return checkGender(raw);
    case 'city':
      return text(raw, field, CITY_LENGTH_MAX, { letter: true });
    case 'postal_code':
      return checkPostalCode(raw);
    case 'external_id':
      return text(raw, field, EXTERNAL_ID_LENGTH_MAX);
    case 'locale':
      return checkLocale(raw);
  }
}

export const isStandardField = (key: string): key is StandardField => (STANDARD_FIELDS as readonly string[]).includes(key);

// ---- masks: platform/privacy.ts, the one home of personal data and its masks ----

export { maskEmail, maskMobileNumber, maskName, maskFullName, maskDateOfBirth } from '../../platform/privacy.js';

// ---- custom fields ----------------------------------------------------------

export const CUSTOM_FIELD_TYPES = ['string', 'number', 'boolean', 'date'] as const;
export type CustomFieldType = (typeof CUSTOM_FIELD_TYPES)[number];
export const CUSTOM_FIELD_KEY_PATTERN = '^[a-z][a-z0-9_]{0,62}$';
export const CUSTOM_STRING_LENGTH_MAX = 500;
/** A tenant defines at most this many custom fields. */
export const CUSTOM_FIELDS_PER_TENANT_MAX = 100;

export interface CustomFieldDefinition {
  key: string;
  type: CustomFieldType;
  personal: boolean;
}

/** Checks one custom value against its definition's type. */
export function checkCustomValue(definition: CustomFieldDefinition, raw: unknown): Checked<string | number | boolean> {
  const where = `custom.${definition.key}`;
  switch (definition.type) {
    case 'string': {
      const checked = text(raw, where, CUSTOM_STRING_LENGTH_MAX);
      return checked;
    }
    case 'number':
      if (typeof raw !== 'number' || !Number.isFinite(raw)) return { ok: false, reason: `${where} must be a number` };
      return { ok: true, value: raw };
    case 'boolean':
      if (typeof raw !== 'boolean') return { ok: false, reason: `${where} must be true or false` };
      return { ok: true, value: raw };
    case 'date':
      return checkDate(raw, where, null);
  }
}
