import type { AuthContext } from '../../platform/auth.js';
import { maskWithPlan, mayReadPersonalData, viewerWith, type MaskPlan } from '../../platform/privacy.js';
import { MASKED_FIELDS } from './fields.js';
import type { StoredProfile } from './store.js';

/**
 * Masking: a profile as the API shows it, masked for callers without
 * `read:pii` by the one masking step, and the personal fields a full read
 * discloses.
 */

/** How an anonymized participant appears wherever a name is shown. */
export const DELETED_USER_LABEL = 'Deleted user';

/** A profile as the API shows it. */
export interface ProfileView {
  participant_id: string;
  display_name: string | null;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  full_name: string | null;
  mobile_number: string | null;
  country_code: string | null;
  date_of_birth: string | null;
  gender: string | null;
  city: string | null;
  postal_code: string | null;
  external_id: string | null;
  locale: string | null;
  custom: Record<string, unknown>;
  /** True when personal values were masked for this caller. */
  masked: boolean;
  anonymized: boolean;
  anonymized_at: string | null;
  created_at: string;
  updated_at: string;
}

export const canReadPii = (auth: AuthContext | null | undefined): boolean => mayReadPersonalData(auth);

/**
 * Masks a profile-shaped record for `auth` with the one masking step
 * (platform/privacy.ts): with `read:pii` it is returned as is; otherwise the
 * standard personal fields at its top level get the spec's masks and the
 * personal custom fields named in `personalCustomKeys` read `***` in its
 * `custom` object. For data built outside an answer (export rows); answers
 * are masked by their response schema's marks.
 */
export function maskProfile<T extends Record<string, unknown>>(
  profile: T,
  auth: AuthContext | null | undefined,
  options: { personalCustomKeys?: Iterable<string> } = {},
): T {
  if (canReadPii(auth)) return profile;
  return maskWithPlan(profile, PROFILE_PLAN, viewerWith(new Set(options.personalCustomKeys ?? []))) as T;
}

const PROFILE_PLAN: MaskPlan = { kind: 'profile' };

/**
 * The profile as the API shows it to `auth`; anonymized participants read as
 * the deleted user. Masked here by the profile's own custom field flags (read
 * in the same transaction), which export rows need; an answer passes the
 * masking step again (masks are idempotent), where the flags come from the
 * definitions cached for up to 5 s: a field just made personal is masked at
 * once either way.
 */
export function viewProfile(profile: StoredProfile, auth: AuthContext | null | undefined): ProfileView {
  const view: ProfileView = {
    participant_id: profile.participantId,
    display_name: profile.anonymizedAt ? DELETED_USER_LABEL : profile.displayName,
    ...profile.fields,
    custom: Object.fromEntries(Object.entries(profile.custom).map(([key, { value }]) => [key, value])),
    masked: !canReadPii(auth),
    anonymized: profile.anonymizedAt !== null,
    anonymized_at: profile.anonymizedAt?.toISOString() ?? null,
    created_at: profile.createdAt.toISOString(),
    updated_at: profile.updatedAt.toISOString(),
  };
  const personalCustomKeys = Object.entries(profile.custom)
    .filter(([, { personal }]) => personal)
    .map(([key]) => key);
  return maskProfile(view as unknown as Record<string, unknown>, auth, { personalCustomKeys }) as unknown as ProfileView;
}

/** The personal fields a full read of this profile discloses (canonical names; custom ones as `custom.<key>`). */
export function personalFieldsOf(profile: StoredProfile): string[] {
  const fields: string[] = MASKED_FIELDS.filter((field) => profile.fields[field] !== null);
  for (const [key, { value, personal }] of Object.entries(profile.custom)) {
    if (personal && value !== null) fields.push(`custom.${key}`);
  }
  return fields;
}
