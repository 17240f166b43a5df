import { isIP } from 'node:net';
import type { Database, Tx } from '../../platform/db.js';
import { announceCredentialChange, type AuthContext } from '../../platform/auth.js';
import { maskWithPlan, mayReadPersonalData, PII_SCOPE, type MaskPlan } from '../../platform/privacy.js';
import { clock } from '../../platform/clock.js';
import { AppError, forbidden, invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { emit } from '../../platform/outbox.js';
import { sha256Hex, uuid } from '../../platform/ids.js';
import {
  CUSTOM_FIELDS_PER_TENANT_MAX,
  MASKED_FIELDS,
  STANDARD_FIELDS,
  checkCustomValue,
  checkEmail,
  checkStandardField,
  FULLY_MASKED,
  isStandardField,
  maskStandardField,
  type CustomFieldDefinition,
  type CustomFieldType,
  type StandardField,
} from './fields.js';
import * as store from './store.js';
import type { StoredProfile } from './store.js';

/**
 * Participant profiles and privacy: coalescing profile values, masking every
 * read for callers without `read:pii`, logging every full read, custom field
 * definitions, and erasure (hard delete or anonymization).
 */
export { PII_SCOPE };
/** How an anonymized participant appears wherever a name is shown. */
export const DELETED_USER_LABEL = 'Deleted user';
/** Personal values at least this long are also removed where they appear inside longer text. */
const SCRUB_SUBSTRING_MIN = 5;
const DEFINITION_CACHE_TTL_MS = 5_000;
export const LIST_LIMIT_MAX = 100;
export const LIST_LIMIT_DEFAULT = 25;
export const SEARCH_ATTRIBUTES_MAX = 5;

// ---- masking --------------------------------------------------------------------

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
  return maskWithPlan(profile, PROFILE_PLAN, { personalCustomKeys: new Set(options.personalCustomKeys ?? []) }) as T;
}

const PROFILE_PLAN: MaskPlan = { kind: 'profile' };

/** The profile as the API shows it to `auth`; anonymized participants read as the deleted user. */
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

// ---- the access log ---------------------------------------------------------------

export interface PiiAccess {
  actorType: 'admin' | 'system' | 'webhook';
  /** Admin user or API key (`admin_user:<id>`, `api_key:<id>`), system component, or webhook destination id. */
  actorId: string;
  /** Whose data was read; null for a bulk read of several (then give `participantIds`). */
  participantId: string | null;
  participantIds?: string[];
  fieldsAccessed: string[];
  rowCount: number;
  exportFormat?: 'json' | 'csv' | null;
  ipAddress?: string | null;
  /** Why a person revealed a field (POST /admin/participants/{id}/reveal). */
  reason?: string | null;
}

/** Writes one `pii_access_log` row for one full read of personal data, in the caller's transaction. */
export async function recordPiiAccessInTx(tx: Tx, tenantId: string, access: PiiAccess): Promise<string> {
  if (!Number.isInteger(access.rowCount) || access.rowCount < 1) throw new Error(`rowCount must be a positive integer, got ${access.rowCount}`);
  if (!['admin', 'system', 'webhook'].includes(access.actorType)) throw new Error(`unknown actorType ${access.actorType}`);
  const participantIds = access.participantIds ?? (access.participantId !== null ? [access.participantId] : []);
  const ip = access.ipAddress && isIP(access.ipAddress) ? access.ipAddress : null;
  const id = uuid();
  await store.insertAccessLog(tx, tenantId, {
    id,
    reason: access.reason ?? null,
    actorType: access.actorType,
    actorId: access.actorId,
    participantId: access.participantId ?? (participantIds.length === 1 ? participantIds[0] : null),
    participantIds,
    fieldsAccessed: [...new Set(access.fieldsAccessed)].sort(),
    rowCount: access.rowCount,
    exportFormat: access.exportFormat ?? null,
    ipAddress: ip,
    occurredAt: clock.now(),
  });
  return id;
}

export function actorOf(auth: AuthContext): { actorType: 'admin' | 'system'; actorId: string } {
  if (auth.kind === 'jwt' || auth.kind === 'console') return { actorType: 'admin', actorId: `admin_user:${auth.actorId}` };
  if (auth.kind === 'key') return { actorType: 'admin', actorId: `api_key:${auth.actorId}` };
  return { actorType: 'system', actorId: `session:${auth.actorId}` };
}

/**
 * Masks profiles for the caller and, when the caller sees personal values in
 * full, logs the read: one row, with row_count the number of participants
 * whose personal values it disclosed.
 */
export async function presentProfilesInTx(
  tx: Tx,
  tenantId: string,
  profiles: StoredProfile[],
  auth: AuthContext | null | undefined,
  options: { exportFormat: 'json' | 'csv' | null },
): Promise<ProfileView[]> {
  const views = profiles.map((profile) => viewProfile(profile, auth));
  if (auth && canReadPii(auth)) {
    const disclosed = profiles.map((profile) => ({ id: profile.participantId, fields: personalFieldsOf(profile) })).filter((d) => d.fields.length > 0);
    if (disclosed.length > 0) {
      await recordPiiAccessInTx(tx, tenantId, {
        ...actorOf(auth),
        participantId: disclosed.length === 1 ? disclosed[0].id : null,
        participantIds: disclosed.map((d) => d.id),
        fieldsAccessed: disclosed.flatMap((d) => d.fields),
        rowCount: disclosed.length,
        exportFormat: options.exportFormat,
        ipAddress: auth.ipAddress ?? null,
      });
    }
  }
  return views;
}

// ---- custom field definitions (cached briefly: coalescing reads them for every event) ----

const definitionCache = new Map<string, { at: number; definitions: Map<string, CustomFieldDefinition> }>();

async function customDefinitions(tx: Tx, tenantId: string): Promise<Map<string, CustomFieldDefinition>> {
  const cached = definitionCache.get(tenantId);
  if (cached && Date.now() - cached.at < DEFINITION_CACHE_TTL_MS) return cached.definitions;
  const definitions = new Map((await store.listCustomFields(tx, tenantId)).map((d) => [d.key, { key: d.key, type: d.type, personal: d.personal }]));
  definitionCache.set(tenantId, { at: Date.now(), definitions });
  return definitions;
}

/** The keys of the tenant's personal custom fields, for the masking step of answers (cached like the definitions). */
export async function personalCustomKeys(db: Database, tenantId: string): Promise<ReadonlySet<string>> {
  const definitions = await db.tenant(tenantId, (tx) => customDefinitions(tx, tenantId));
  return new Set([...definitions.values()].filter((definition) => definition.personal).map((definition) => definition.key));
}

function forgetDefinitions(tenantId: string): void {
  definitionCache.delete(tenantId);
}

// ---- coalescing -------------------------------------------------------------------

export interface CoalesceResult {
  /** Fields taken from the properties (standard names, custom ones as `custom.<key>`). */
  accepted: string[];
  /** Recognised fields whose values were malformed and left out, with why. */
  ignored: Array<{ field: string; reason: string }>;
  /** True when the participant is anonymized: nothing was written. */
  anonymized: boolean;
}

/**
 * Coalesces profile values from free-form properties (event properties, form
 * and survey submissions) into the participant's profile, creating the
 * participant if new. Keys named like a standard field or a defined custom
 * field are taken; blank values never erase; malformed values are ignored
 * (reported, never thrown) so that an event is not lost for a bad email; the
 * newest observation wins per field, except external_id, which only an
 * explicit upsert may change once set.
 */
export async function coalesceProfileInTx(
  tx: Tx,
  tenantId: string,
  participantId: string,
  properties: Record<string, unknown>,
  options: { observedAt?: Date } = {},
): Promise<CoalesceResult> {
  const observedAt = options.observedAt ?? clock.now();
  const result: CoalesceResult = { accepted: [], ignored: [], anonymized: false };
  const standard: Partial<Record<StandardField, string>> = {};
  const custom: Record<string, unknown> = {};
  const isBlank = (value: unknown) => value === null || value === undefined || (typeof value === 'string' && value.trim() === '');
  let definitions: Map<string, CustomFieldDefinition> | null = null;
  for (const [key, raw] of Object.entries(properties ?? {})) {
    if (isBlank(raw)) continue;
    if (isStandardField(key)) {
      const checked = checkStandardField(key, raw, clock.now());
      if (checked.ok) {
        standard[key] = checked.value;
        result.accepted.push(key);
      } else result.ignored.push({ field: key, reason: checked.reason });
      continue;
    }
    definitions ??= await customDefinitions(tx, tenantId);
    const definition = definitions.get(key);
    if (!definition) continue;
    const checked = checkCustomValue(definition, raw);
    if (checked.ok) {
      custom[key] = checked.value;
      result.accepted.push(`custom.${key}`);
    } else result.ignored.push({ field: `custom.${key}`, reason: checked.reason });
  }
  if (result.accepted.length === 0) return result;
  const { written } = await store.upsertProfile(tx, tenantId, participantId, standard, observedAt, 'coalesce');
  if (!written) return { accepted: [], ignored: result.ignored, anonymized: true };
  await store.upsertCustomValues(tx, tenantId, participantId, custom, observedAt);
  return result;
}

// ---- explicit upsert ----------------------------------------------------------------

export type ProfileInput = Partial<Record<StandardField, string | null>> & {
  display_name?: string;
  custom?: Record<string, unknown>;
};

/**
 * The explicit upsert: fields given are written (null clears one), fields
 * left out keep their values, the participant is created if new. Malformed
 * values and unknown custom fields are refused whole. Setting personal fields
 * needs `read:pii`: a caller that cannot read them may not overwrite them.
 */
export async function upsertProfile(db: Database, tenantId: string, participantId: string, input: ProfileInput, auth: AuthContext): Promise<ProfileView> {
  checkProfileInput(input);
  return db.tenant(tenantId, async (tx) => {
    await writeProfileInTx(tx, tenantId, participantId, input, auth);
    const profile = await store.readProfile(tx, tenantId, participantId);
    return (await presentProfilesInTx(tx, tenantId, [profile!], auth, { exportFormat: null }))[0];
  });
}

/** The standard fields of an upsert, checked; throws `invalid` naming every malformed one. */
function checkProfileInput(input: ProfileInput): Partial<Record<StandardField, string | null>> {
  const now = clock.now();
  const standard: Partial<Record<StandardField, string | null>> = {};
  const problems: string[] = [];
  for (const field of STANDARD_FIELDS) {
    if (!(field in input)) continue;
    const raw = input[field];
    if (raw === null) {
      standard[field] = null;
      continue;
    }
    const checked = checkStandardField(field, raw, now);
    if (checked.ok) standard[field] = checked.value;
    else problems.push(checked.reason);
  }
  if (problems.length > 0) throw invalid(problems.join('; '), 'PROFILE_INVALID_VALUE');
  return standard;
}

/** An explicit upsert checked and split into what it writes. */
interface PreparedProfileWrite {
  standard: Partial<Record<StandardField, string | null>>;
  displayName: string | null;
  customSet: Record<string, unknown>;
  customCleared: string[];
}

/**
 * The explicit upsert's checks, in memory and in this order: malformed
 * standard values, then each custom value (unknown field, malformed value),
 * then personal fields without `read:pii`. Throws the first refusal.
 */
function prepareProfileWrite(input: ProfileInput, definitions: Map<string, CustomFieldDefinition>, auth: AuthContext): PreparedProfileWrite {
  const standard = checkProfileInput(input);
  const customSet: Record<string, unknown> = {};
  const customCleared: string[] = [];
  const personalTouched: string[] = MASKED_FIELDS.filter((field) => field in standard);
  for (const [key, raw] of Object.entries(input.custom ?? {})) {
    const definition = definitions.get(key);
    if (!definition) {
      throw invalid(`custom.${key} is not a defined custom field; define it first with POST /api/v1/gamify/admin/participant-fields`, 'PROFILE_UNKNOWN_CUSTOM_FIELD');
    }
    if (definition.personal) personalTouched.push(`custom.${key}`);
    if (raw === null) {
      customCleared.push(key);
      continue;
    }
    const checked = checkCustomValue(definition, raw);
    if (!checked.ok) throw invalid(checked.reason, 'PROFILE_INVALID_VALUE');
    customSet[key] = checked.value;
  }
  if (personalTouched.length > 0 && !canReadPii(auth)) {
    throw forbidden(`setting personal fields needs the scope "read:pii": ${personalTouched.join(', ')}`);
  }
  return { standard, displayName: input.display_name ?? null, customSet, customCleared };
}

const participantAnonymized = () => new AppError('conflict', 'PARTICIPANT_ANONYMIZED', 'the participant has been anonymized; its profile can no longer be written');

/** Writes one checked upsert: the profile, then its custom values; an anonymized participant is refused before the custom values. */
async function writePreparedProfile(tx: Tx, tenantId: string, participantId: string, write: PreparedProfileWrite, now: Date): Promise<void> {
  const { written } = await store.upsertProfile(tx, tenantId, participantId, write.standard, now, 'explicit', write.displayName);
  if (!written) throw participantAnonymized();
  await store.upsertCustomValues(tx, tenantId, participantId, write.customSet, now);
  await store.deleteCustomValues(tx, tenantId, participantId, write.customCleared);
}

/**
 * The explicit upsert's write inside the caller's transaction, without the
 * read-back. Same rules as `upsertProfile`: malformed values, unknown custom
 * fields and personal fields without `read:pii` are refused whole, before any
 * write.
 */
export async function writeProfileInTx(tx: Tx, tenantId: string, participantId: string, input: ProfileInput, auth: AuthContext): Promise<void> {
  const write = prepareProfileWrite(input, await customDefinitions(tx, tenantId), auth);
  await writePreparedProfile(tx, tenantId, participantId, write, clock.now());
}

/** The most upserts `writeProfilesInTx` takes in one call (a bound on the statements' arrays). */
export const PROFILE_WRITES_MAX = 1000;

export interface ProfileWrite {
  participantId: string;
  input: ProfileInput;
}

/** Per upsert: written, or the refusal `writeProfileInTx` would have thrown for it. */
export type ProfileWriteOutcome = { ok: true } | { ok: false; error: AppError };

/**
 * A refusal of the row's values by the database (SQLSTATE class 22, data
 * exception, or 23, integrity constraint violation): a statement holding that
 * row fails whole. Serialization failures and the rest are not refusals.
 */
function isRefusedByDatabase(error: unknown): error is Error & { code: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

const refusedByDatabase = (error: { code: string }) =>
  new AppError('invalid', 'PROFILE_REFUSED_BY_DATABASE', `the database refused the row's values (SQLSTATE ${error.code}); nothing of the row was written`);

/**
 * Many explicit upserts in the caller's transaction, set-based (imports):
 * the same outcome, per upsert, as calling `writeProfileInTx` for each in
 * order under a savepoint, with a few statements instead of three per
 * upsert. Each upsert is checked in memory first (same refusals, same
 * messages). The checked ones are written in waves in which no participant
 * appears twice: the n-th upsert of a participant goes in the n-th wave, so
 * a later upsert still wins. Each wave is one profile statement, one
 * statement for custom values set and one for those cleared (null). An
 * anonymized participant is not written (the profile statement does not
 * return it) and gets PARTICIPANT_ANONYMIZED. If the database refuses a
 * statement whole, the waves are rolled back and the upserts written one by
 * one, each under a savepoint, so that only the refused one fails.
 */
export async function writeProfilesInTx(tx: Tx, tenantId: string, writes: ProfileWrite[], auth: AuthContext): Promise<ProfileWriteOutcome[]> {
  if (writes.length > PROFILE_WRITES_MAX) throw new Error(`writeProfilesInTx takes at most ${PROFILE_WRITES_MAX} upserts, got ${writes.length}`);
  const definitions = await customDefinitions(tx, tenantId);
  const outcomes: ProfileWriteOutcome[] = writes.map(() => ({ ok: true }));
  const waves: Array<Array<{ index: number; participantId: string; write: PreparedProfileWrite }>> = [];
  const seen = new Map<string, number>();
  writes.forEach(({ participantId, input }, index) => {
    let write: PreparedProfileWrite;
    try {
      write = prepareProfileWrite(input, definitions, auth);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      outcomes[index] = { ok: false, error };
      return;
    }
    const wave = seen.get(participantId) ?? 0;
    seen.set(participantId, wave + 1);
    (waves[wave] ??= []).push({ index, participantId, write });
  });
  if (waves.length === 0) return outcomes;
  const now = clock.now();
  await tx.query('SAVEPOINT profile_writes');
  try {
    for (const wave of waves) {
      // Rows locked in id order, as every batch does, so that two imports touching the same participants do not deadlock.
      wave.sort((a, b) => (a.participantId < b.participantId ? -1 : a.participantId > b.participantId ? 1 : 0));
      const written = await store.upsertProfiles(
        tx,
        tenantId,
        wave.map((w) => ({ participantId: w.participantId, values: w.write.standard, displayName: w.write.displayName })),
        now,
      );
      const kept = wave.filter((w) => written.has(w.participantId));
      for (const w of wave) if (!written.has(w.participantId)) outcomes[w.index] = { ok: false, error: participantAnonymized() };
      await store.upsertCustomValuesOfMany(
        tx,
        tenantId,
        kept.flatMap((w) => Object.entries(w.write.customSet).map(([key, value]) => ({ participantId: w.participantId, key, value }))),
        now,
      );
      await store.deleteCustomValuesOfMany(
        tx,
        tenantId,
        kept.flatMap((w) => w.write.customCleared.map((key) => ({ participantId: w.participantId, key }))),
      );
    }
    await tx.query('RELEASE SAVEPOINT profile_writes');
    return outcomes;
  } catch (error) {
    if (!isRefusedByDatabase(error)) throw error;
    await tx.query('ROLLBACK TO SAVEPOINT profile_writes');
  }
  const checked = waves.flat().sort((a, b) => a.index - b.index);
  for (const { index, participantId, write } of checked) {
    await tx.query('SAVEPOINT profile_write');
    try {
      await writePreparedProfile(tx, tenantId, participantId, write, now);
      await tx.query('RELEASE SAVEPOINT profile_write');
      outcomes[index] = { ok: true };
    } catch (error) {
      if (!(error instanceof AppError) && !isRefusedByDatabase(error)) throw error;
      await tx.query('ROLLBACK TO SAVEPOINT profile_write');
      outcomes[index] = { ok: false, error: error instanceof AppError ? error : refusedByDatabase(error) };
    }
  }
  await tx.query('RELEASE SAVEPOINT profile_writes');
  return outcomes;
}

// ---- reads ----------------------------------------------------------------------------

export async function readProfileView(db: Database, tenantId: string, participantId: string, auth: AuthContext): Promise<ProfileView> {
  return db.tenant(tenantId, async (tx) => {
    const profile = await store.readProfile(tx, tenantId, participantId);
    if (!profile) throw notFound('participant');
    return (await presentProfilesInTx(tx, tenantId, [profile], auth, { exportFormat: null }))[0];
  });
}

export interface SessionParticipantView {
  participant_id: string;
  display_name: string | null;
  locale: string | null;
  session_expires_at: string;
}

/**
 * The session's own participant as its page may know it (the embed runtime
 * shows its texts in `locale`): the public name and the language, never a
 * personal field.
 */
export async function readSessionParticipant(db: Database, auth: AuthContext): Promise<SessionParticipantView> {
  const participantId = auth.participantId!;
  return db.tenant(auth.tenantId, async (tx) => {
    const found = await store.readSessionParticipant(tx, auth.tenantId, participantId, auth.actorId);
    if (!found) throw notFound('participant');
    return {
      participant_id: participantId,
      display_name: found.anonymized ? DELETED_USER_LABEL : found.displayName,
      locale: found.locale,
      session_expires_at: found.expiresAt.toISOString(),
    };
  });
}

/** The `profile` part of the state read, masked for the caller. */
export async function profileStatePart(tx: Tx, tenantId: string, participantId: string, auth: AuthContext): Promise<ProfileView | null> {
  const profile = await store.readProfile(tx, tenantId, participantId);
  if (!profile) return null;
  return (await presentProfilesInTx(tx, tenantId, [profile], auth, { exportFormat: null }))[0];
}

export interface ListQuery {
  limit?: number;
  cursor?: string;
  country_code?: string;
  city?: string;
  postal_code?: string;
  anonymized?: boolean;
  created_after?: string;
  created_before?: string;
}

type Cursor = { created_at: string; participant_id: string };

function decodeListCursor(cursor: string | undefined): Cursor | null {
  return decodeCursor(cursor, { created_at: 'timestamp', participant_id: 'text' });
}

async function pageOfProfiles(db: Database, tenantId: string, filters: store.ListFilters, query: { limit?: number; cursor?: string }, auth: AuthContext) {
  const limit = query.limit ?? LIST_LIMIT_DEFAULT;
  const after = decodeListCursor(query.cursor);
  return db.tenant(tenantId, async (tx) => {
    const rows = await store.listProfiles(tx, tenantId, filters, after, limit);
    const page = rows.slice(0, limit);
    const views = await presentProfilesInTx(tx, tenantId, page, auth, { exportFormat: 'json' });
    const last = page[page.length - 1];
    return { participants: views, next_cursor: rows.length > limit && last ? encodeCursor(last.cursor) : null };
  });
}

export async function listParticipants(db: Database, tenantId: string, query: ListQuery, auth: AuthContext) {
  const filters: store.ListFilters = {
    countryCode: query.country_code?.toUpperCase(),
    city: query.city,
    postalCode: query.postal_code?.toUpperCase(),
    anonymized: query.anonymized,
    createdAfter: query.created_after,
    createdBefore: query.created_before,
  };
  return pageOfProfiles(db, tenantId, filters, query, auth);
}

export interface SearchQuery {
  external_id?: string;
  email_hash?: string;
  email?: string;
  attribute?: string[];
  limit?: number;
  cursor?: string;
}

function parseAttributeValue(definition: CustomFieldDefinition, raw: string): unknown {
  let value: unknown = raw;
  if (definition.type === 'number') value = raw.trim() === '' ? Number.NaN : Number(raw);
  if (definition.type === 'boolean') value = raw === 'true' ? true : raw === 'false' ? false : raw;
  const checked = checkCustomValue(definition, value);
  if (!checked.ok) throw invalid(`attribute ${definition.key}: ${checked.reason}`, 'SEARCH_INVALID_ATTRIBUTE');
  return checked.value;
}

/**
 * The ad hoc search: by external id, by email hash (SHA-256 hex of the
 * trimmed, lower-cased address), by exact email (only with `read:pii`), and by
 * custom attributes (`key:value`; personal ones only with `read:pii`).
 */
export async function searchParticipants(db: Database, tenantId: string, query: SearchQuery, auth: AuthContext) {
  const attributes = query.attribute ?? [];
  if (!query.external_id && !query.email_hash && !query.email && attributes.length === 0) {
    throw invalid('give at least one of external_id, email_hash, email or attribute', 'SEARCH_NO_CRITERIA');
  }
  if (query.email !== undefined && !canReadPii(auth)) {
    throw forbidden('searching by exact email needs the scope "read:pii"; search by email_hash instead');
  }
  let emailHash = query.email_hash?.toLowerCase();
  if (query.email !== undefined) {
    const checked = checkEmail(query.email);
    if (!checked.ok) throw invalid(checked.reason, 'SEARCH_INVALID_EMAIL');
    const hash = sha256Hex(checked.value.toLowerCase());
    if (emailHash && emailHash !== hash) return { participants: [], next_cursor: null };
    emailHash = hash;
  }
  const definitions = await db.tenant(tenantId, (tx) => customDefinitions(tx, tenantId));
  const parsed: Array<{ key: string; value: unknown }> = [];
  for (const attribute of attributes) {
    const colon = attribute.indexOf(':');
    if (colon < 1) throw invalid(`attribute "${attribute}" must have the form key:value`, 'SEARCH_INVALID_ATTRIBUTE');
    const key = attribute.slice(0, colon);
    const definition = definitions.get(key);
    if (!definition) throw invalid(`attribute ${key} is not a defined custom field`, 'PROFILE_UNKNOWN_CUSTOM_FIELD');
    if (definition.personal && !canReadPii(auth)) throw forbidden(`searching by the personal field ${key} needs the scope "read:pii"`);
    parsed.push({ key, value: parseAttributeValue(definition, attribute.slice(colon + 1)) });
  }
  return pageOfProfiles(db, tenantId, { externalId: query.external_id, emailHash, attributes: parsed }, query, auth);
}

// ---- custom field definitions -----------------------------------------------------------

export interface CustomFieldView {
  key: string;
  type: CustomFieldType;
  personal: boolean;
  description: string | null;
  created_at: string;
  updated_at: string;
}

const fieldView = (record: store.CustomFieldRecord): CustomFieldView => ({
  key: record.key,
  type: record.type,
  personal: record.personal,
  description: record.description,
  created_at: record.createdAt.toISOString(),
  updated_at: record.updatedAt.toISOString(),
});

export async function createCustomField(
  db: Database,
  tenantId: string,
  input: { key: string; type: CustomFieldType; personal: boolean; description?: string },
): Promise<CustomFieldView> {
  if (isStandardField(input.key) || input.key === 'display_name') {
    throw invalid(`"${input.key}" is a standard profile field; custom fields need another key`, 'CUSTOM_FIELD_RESERVED_KEY');
  }
  const result = await db.tenant(tenantId, (tx) =>
    store.insertCustomField(tx, tenantId, { ...input, description: input.description ?? null }, clock.now(), CUSTOM_FIELDS_PER_TENANT_MAX),
  );
  if (!result.created && result.count >= CUSTOM_FIELDS_PER_TENANT_MAX) {
    throw ruleViolation(`a tenant may define at most ${CUSTOM_FIELDS_PER_TENANT_MAX} custom fields`, 'CUSTOM_FIELD_LIMIT_REACHED');
  }
  if (!result.created) throw new AppError('conflict', 'CUSTOM_FIELD_EXISTS', `the custom field "${input.key}" already exists`);
  forgetDefinitions(tenantId);
  return fieldView(result.created);
}

export async function listCustomFields(db: Database, tenantId: string, query: { limit?: number; cursor?: string }) {
  const limit = query.limit ?? LIST_LIMIT_MAX;
  const after = decodeCursor(query.cursor, { key: 'text' });
  const rows = await db.tenant(tenantId, (tx) => store.listCustomFields(tx, tenantId, after?.key ?? null, limit + 1));
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { fields: page.map(fieldView), next_cursor: rows.length > limit && last ? encodeCursor({ key: last.key }) : null };
}

export async function readCustomField(db: Database, tenantId: string, key: string): Promise<CustomFieldView> {
  const record = await db.tenant(tenantId, (tx) => store.readCustomField(tx, tenantId, key));
  if (!record) throw notFound('custom field');
  return fieldView(record);
}

export async function updateCustomField(db: Database, tenantId: string, key: string, changes: { personal?: boolean; description?: string | null }) {
  const record = await db.tenant(tenantId, (tx) => store.updateCustomField(tx, tenantId, key, changes, clock.now()));
  if (!record) throw notFound('custom field');
  forgetDefinitions(tenantId);
  return fieldView(record);
}

export async function deleteCustomField(db: Database, tenantId: string, key: string) {
  const record = await db.tenant(tenantId, (tx) => store.deleteCustomField(tx, tenantId, key));
  if (!record) throw notFound('custom field');
  forgetDefinitions(tenantId);
  return fieldView(record);
}

// ---- erasure ----------------------------------------------------------------------------

export interface ErasureView {
  erasure_id: string;
  participant_id: string;
  action: 'anonymized' | 'deleted';
  performed_at: string;
  /** Rows of the participant changed per table: nulled or scrubbed (anonymized), or deleted. */
  row_counts: Record<string, number>;
  /** Rows of the participant kept per table (anonymization keeps events, facts, ledger and the rest). */
  rows_kept: Record<string, number>;
  /** True when this erasure had already been done: the stored evidence is returned. */
  duplicate: boolean;
}

const erasureView = (record: store.ErasureRecord, duplicate: boolean): ErasureView => ({
  erasure_id: record.id,
  participant_id: record.participantId,
  action: record.action,
  performed_at: record.performedAt.toISOString(),
  row_counts: record.rowCounts,
  rows_kept: record.rowsKept,
  duplicate,
});

/** The values that identify the participant, to be removed from every copy in other tables. */
function personalValuesOf(profile: StoredProfile): string[] {
  const values = new Set<string>();
  const add = (value: unknown) => {
    if (typeof value === 'string' && value.trim() !== '') values.add(value.trim());
    if (typeof value === 'number') values.add(String(value));
  };
  for (const field of ['email', 'first_name', 'last_name', 'full_name', 'mobile_number', 'date_of_birth', 'city', 'postal_code', 'external_id'] as const) {
    add(profile.fields[field]);
  }
  if (profile.fields.mobile_number) add(profile.fields.mobile_number.slice(1));
  add(profile.displayName);
  for (const { value, personal } of Object.values(profile.custom)) if (personal) add(value);
  // Longest first, so that a full name is removed whole before its parts are.
  return [...values].sort((a, b) => b.length - a.length);
}

function countsOf(rows: store.ErasureCounts[], pick: (row: store.ErasureCounts) => number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const row of rows) {
    const n = pick(row);
    if (n > 0) counts[row.table] = (counts[row.table] ?? 0) + n;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * Anonymizes a participant: personal data nulled in the profile, personal
 * custom values removed, copies of personal values scrubbed from every other
 * table's rows of the participant; events, facts, ledger and progress kept.
 * A second call returns the stored evidence.
 */
export async function anonymizeParticipant(db: Database, tenantId: string, participantId: string, auth: AuthContext): Promise<ErasureView> {
  return db.tenant(tenantId, async (tx) => {
    const profile = await store.readProfile(tx, tenantId, participantId, { lock: true });
    if (!profile) throw notFound('participant');
    if (profile.anonymizedAt) {
      const evidence = await store.latestErasure(tx, tenantId, participantId, 'anonymized');
      if (evidence) return erasureView(evidence, true);
    }
    const now = clock.now();
    const definitions = await store.listCustomFields(tx, tenantId);
    const personalKeys = definitions.filter((d) => d.personal).map((d) => d.key);
    const removedCustom = await store.deleteCustomValues(tx, tenantId, participantId, personalKeys);
    const scrubbed = await store.eraseEverywhere(tx, tenantId, participantId, 'anonymize', {
      values: personalValuesOf(profile),
      keys: [...STANDARD_FIELDS, ...personalKeys].map((k) => k.toLowerCase()),
      label: DELETED_USER_LABEL,
      substringMin: SCRUB_SUBSTRING_MIN,
    });
    await store.anonymizeParticipantRow(tx, tenantId, participantId, now);
    const rowCounts = countsOf(
      [...scrubbed, { table: 'participants', total: 1, changed: 1 }, { table: 'participant_custom_values', total: removedCustom, changed: removedCustom }],
      (row) => row.changed,
    );
    const rowsKept = countsOf([...scrubbed, { table: 'participants', total: 1, changed: 1 }], (row) => row.total);
    const record: store.ErasureRecord = { id: uuid(), participantId, action: 'anonymized', performedAt: now, rowCounts, rowsKept };
    await store.insertErasure(tx, tenantId, { ...record, ...actorOf(auth) });
    await emit(tx, tenantId, {
      event: 'participant.anonymized.v1',
      participantId,
      data: { participant_id: participantId, anonymized_at: now.toISOString(), row_counts: rowCounts },
    });
    return erasureView(record, false);
  });
}

/**
 * Hard delete: the participant and every row of theirs, in every table. A
 * repeat for a participant already deleted returns the stored evidence; an id
 * never seen is 404.
 */
export async function deleteParticipant(db: Database, tenantId: string, participantId: string, auth: AuthContext): Promise<ErasureView> {
  return db.tenant(tenantId, async (tx) => {
    const exists = await store.readProfile(tx, tenantId, participantId, { lock: true });
    if (!exists) {
      const evidence = await store.latestErasure(tx, tenantId, participantId, 'deleted');
      if (evidence) return erasureView(evidence, true);
      throw notFound('participant');
    }
    const now = clock.now();
    const deleted = await store.eraseEverywhere(tx, tenantId, participantId, 'delete', { values: [], keys: [], label: DELETED_USER_LABEL, substringMin: SCRUB_SUBSTRING_MIN });
    // The participant's sessions went with them: every process drops its cached session look-ups on commit.
    await announceCredentialChange(tx, `participant:${participantId}`);
    const record: store.ErasureRecord = {
      id: uuid(),
      participantId,
      action: 'deleted',
      performedAt: now,
      rowCounts: countsOf(deleted, (row) => row.changed),
      rowsKept: {},
    };
    await store.insertErasure(tx, tenantId, { ...record, ...actorOf(auth) });
    await emit(tx, tenantId, {
      event: 'participant.deleted.v1',
      participantId,
      data: { participant_id: participantId, deleted_at: now.toISOString(), row_counts: record.rowCounts },
    });
    return erasureView(record, false);
  });
}
