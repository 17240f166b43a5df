import type { Database, Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { forbidden, invalid, notFound } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { sha256Hex } from '../../platform/ids.js';
import { checkCustomValue, checkEmail, type CustomFieldDefinition } from './fields.js';
import * as store from './store.js';
import { DELETED_USER_LABEL, canReadPii, type ProfileView } from './masking.js';
import { presentProfilesInTx } from './access-log.js';
import { customDefinitions } from './definition-cache.js';

/**
 * Profile reads: one profile, the session's own participant, the state part,
 * the filtered list and the ad hoc search, each masked for the caller.
 */

export const LIST_LIMIT_MAX = 100;
export const LIST_LIMIT_DEFAULT = 25;
export const SEARCH_ATTRIBUTES_MAX = 5;

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
  include_test?: boolean;
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
    includeTest: query.include_test,
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
