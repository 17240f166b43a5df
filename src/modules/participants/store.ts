import type { Tx } from '../../platform/db.js';
import { STANDARD_FIELDS, type CustomFieldDefinition, type CustomFieldType, type StandardField } from './fields.js';

/** Creates the participant on first sight; later calls only refresh the display name when one is given. */
export async function ensureParticipant(tx: Tx, tenantId: string, participantId: string, displayName?: string | null): Promise<void> {
  if (!displayName) {
    await tx.query('INSERT INTO participants (tenant_id, participant_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [tenantId, participantId]);
    return;
  }
  // An anonymized participant keeps no display name: later sightings do not bring one back.
  await tx.query(
    `INSERT INTO participants (tenant_id, participant_id, display_name)
     VALUES ($1, $2, $3)
     ON CONFLICT (tenant_id, participant_id) DO UPDATE
       SET display_name = COALESCE(EXCLUDED.display_name, participants.display_name), updated_at = now()
       WHERE EXCLUDED.display_name IS NOT NULL AND EXCLUDED.display_name IS DISTINCT FROM participants.display_name
         AND participants.anonymized_at IS NULL`,
    [tenantId, participantId, displayName ?? null],
  );
}

/** One row when the participant exists (`$1` the tenant, `$2` the participant): for reads that batch it with others. */
export const PARTICIPANT_EXISTS_STATEMENT = 'SELECT 1 FROM participants WHERE tenant_id = $1 AND participant_id = $2';

export async function participantExists(tx: Tx, tenantId: string, participantId: string): Promise<boolean> {
  const { rowCount } = await tx.query(PARTICIPANT_EXISTS_STATEMENT, [tenantId, participantId]);
  return rowCount === 1;
}

/** What a participant session may know of its own participant: nothing personal (`$3` is the session's id). */
export async function readSessionParticipant(
  tx: Tx,
  tenantId: string,
  participantId: string,
  sessionId: string,
): Promise<{ displayName: string | null; locale: string | null; anonymized: boolean; expiresAt: Date } | null> {
  const { rows } = await tx.query(
    `SELECT p.display_name, p.locale, p.anonymized_at IS NOT NULL AS anonymized, s.expires_at
       FROM participants p JOIN sessions s ON s.tenant_id = p.tenant_id AND s.participant_id = p.participant_id
      WHERE p.tenant_id = $1 AND p.participant_id = $2 AND s.id = $3`,
    [tenantId, participantId, sessionId],
  );
  const row = rows[0];
  return row ? { displayName: row.display_name, locale: row.locale, anonymized: row.anonymized, expiresAt: row.expires_at } : null;
}

// ---- profiles ---------------------------------------------------------------

export interface StoredProfile {
  participantId: string;
  displayName: string | null;
  fields: Record<StandardField, string | null>;
  /** Custom values with whether their field is personal data. */
  custom: Record<string, { value: unknown; personal: boolean }>;
  anonymizedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

const PROFILE_COLUMNS = `p.participant_id, p.display_name, p.anonymized_at, p.created_at, p.updated_at,
  to_json(p.created_at) #>> '{}' AS created_cursor,
  ${STANDARD_FIELDS.map((f) => (f === 'date_of_birth' ? `to_char(p.date_of_birth, 'YYYY-MM-DD') AS date_of_birth` : `p.${f}`)).join(', ')},
  (SELECT coalesce(jsonb_object_agg(v.key, jsonb_build_object('value', v.value, 'personal', f.personal)), '{}'::jsonb)
     FROM participant_custom_values v
     JOIN participant_custom_fields f ON f.tenant_id = v.tenant_id AND f.key = v.key
    WHERE v.tenant_id = p.tenant_id AND v.participant_id = p.participant_id) AS custom`;

export type ProfileRow = StoredProfile & { cursor: { created_at: string; participant_id: string } };

function toProfile(row: Record<string, unknown>): ProfileRow {
  const fields = {} as Record<StandardField, string | null>;
  for (const field of STANDARD_FIELDS) fields[field] = (row[field] as string | null) ?? null;
  return {
    participantId: row.participant_id as string,
    displayName: (row.display_name as string | null) ?? null,
    fields,
    custom: row.custom as StoredProfile['custom'],
    anonymizedAt: (row.anonymized_at as Date | null) ?? null,
    createdAt: row.created_at as Date,
    updatedAt: row.updated_at as Date,
    cursor: { created_at: row.created_cursor as string, participant_id: row.participant_id as string },
  };
}

export async function readProfile(tx: Tx, tenantId: string, participantId: string, options: { lock?: boolean } = {}): Promise<ProfileRow | null> {
  const { rows } = await tx.query(
    `SELECT ${PROFILE_COLUMNS} FROM participants p WHERE p.tenant_id = $1 AND p.participant_id = $2${options.lock ? ' FOR UPDATE OF p' : ''}`,
    [tenantId, participantId],
  );
  return rows[0] ? toProfile(rows[0]) : null;
}

export interface ListFilters {
  countryCode?: string;
  city?: string;
  postalCode?: string;
  anonymized?: boolean;
  createdAfter?: string;
  createdBefore?: string;
  externalId?: string;
  emailHash?: string;
  /** Test participants (a draft's preview) are left out unless asked for. */
  includeTest?: boolean;
  /** Custom field equality filters: the value already in its JSON form. */
  attributes?: Array<{ key: string; value: unknown }>;
  /**
   * Only these participants: SQL selecting one column, participant_id (a segment's members,
   * `membersSqlInTx`), whose own parameters start at LIST_PROFILES_MEMBER_PARAMS_FROM.
   */
  members?: { sql: string; params: unknown[] };
}

/** The first parameter number of `ListFilters.members`: listProfiles' own come before it. */
export const LIST_PROFILES_MEMBER_PARAMS_FROM = 16;

/** A page of profiles in (created_at, participant_id) order, one row more than the limit to tell whether more follow. */
export async function listProfiles(
  tx: Tx,
  tenantId: string,
  filters: ListFilters,
  after: { created_at: string; participant_id: string } | null,
  limit: number,
): Promise<ProfileRow[]> {
  const attributes = filters.attributes ?? [];
  const { rows } = await tx.query(
    `SELECT ${PROFILE_COLUMNS} FROM participants p
     WHERE p.tenant_id = $1
       AND ($2::text IS NULL OR p.country_code = $2)
       AND ($3::text IS NULL OR lower(p.city) = lower($3))
       AND ($4::text IS NULL OR p.postal_code = $4)
       AND ($5::boolean IS NULL OR (p.anonymized_at IS NOT NULL) = $5)
       AND ($6::timestamptz IS NULL OR p.created_at >= $6)
       AND ($7::timestamptz IS NULL OR p.created_at < $7)
       AND ($8::text IS NULL OR p.external_id = $8)
       AND ($9::text IS NULL OR p.email_hash = $9)
       AND ($10::timestamptz IS NULL OR (p.created_at, p.participant_id) > ($10::timestamptz, $11::text))
       AND (SELECT count(*) FROM participant_custom_values v
             JOIN unnest($12::text[], $13::jsonb[]) AS a (key, value) ON a.key = v.key AND a.value = v.value
            WHERE v.tenant_id = p.tenant_id AND v.participant_id = p.participant_id) = cardinality($12::text[])
       AND ($15::boolean OR NOT p.test)${filters.members ? `
       AND p.participant_id IN (${filters.members.sql})` : ''}
     ORDER BY p.created_at, p.participant_id
     LIMIT $14`,
    [
      tenantId,
      filters.countryCode ?? null,
      filters.city ?? null,
      filters.postalCode ?? null,
      filters.anonymized ?? null,
      filters.createdAfter ?? null,
      filters.createdBefore ?? null,
      filters.externalId ?? null,
      filters.emailHash ?? null,
      after?.created_at ?? null,
      after?.participant_id ?? null,
      attributes.map((a) => a.key),
      attributes.map((a) => JSON.stringify(a.value)),
      limit + 1,
      filters.includeTest ?? false,
      ...(filters.members?.params ?? []),
    ],
  );
  return rows.map(toProfile);
}

/**
 * The profile upsert, written once for one participant and for many. `source`
 * is a FROM item with columns (participant_id, vals, display_name), `vals`
 * holding only the fields to write (null clears a field). A field is written
 * when the observation (`observedAt`) is at least as new as the one that set
 * the stored value, so out-of-order observations never overwrite newer ones.
 * An existing external_id is replaced only where `externalIdReplaces` is true
 * (`explicit` mode); in `coalesce` mode the first value wins. An anonymized
 * participant is never written. The upsert cannot read its source row, so "was
 * this field given" is read from the inserted row's observation map, which
 * holds exactly the given keys.
 */
function profileUpsertSql(source: string, observedAt: string, externalIdReplaces: string, returning: string): string {
  const value = (f: StandardField) => (f === 'date_of_birth' ? `(x.vals ->> '${f}')::date` : `(x.vals ->> '${f}')`);
  const applies = (f: StandardField) =>
    `(EXCLUDED.profile_observed_at ? '${f}' AND coalesce((p.profile_observed_at ->> '${f}')::timestamptz, '-infinity') <= ${observedAt}` +
    (f === 'external_id' ? ` AND (${externalIdReplaces} OR p.external_id IS NULL))` : ')');
  return `INSERT INTO participants AS p (tenant_id, participant_id, ${STANDARD_FIELDS.join(', ')}, email_hash, profile_observed_at, display_name)
    SELECT $1, x.participant_id, ${STANDARD_FIELDS.map(value).join(', ')},
           CASE WHEN x.vals ? 'email' THEN encode(sha256(convert_to(lower(x.vals ->> 'email'), 'UTF8')), 'hex') END,
           (SELECT coalesce(jsonb_object_agg(k, to_jsonb(${observedAt})), '{}'::jsonb) FROM jsonb_object_keys(x.vals) k),
           x.display_name
      FROM ${source}
    ON CONFLICT (tenant_id, participant_id) DO UPDATE SET
      ${STANDARD_FIELDS.map((f) => `${f} = CASE WHEN ${applies(f)} THEN EXCLUDED.${f} ELSE p.${f} END`).join(',\n      ')},
      email_hash = CASE WHEN ${applies('email')} THEN EXCLUDED.email_hash ELSE p.email_hash END,
      profile_observed_at = p.profile_observed_at || jsonb_strip_nulls(jsonb_build_object(
        ${STANDARD_FIELDS.map((f) => `'${f}', CASE WHEN ${applies(f)} THEN to_jsonb(${observedAt}) END`).join(',\n        ')})),
      display_name = coalesce(EXCLUDED.display_name, p.display_name),
      updated_at = now()
    WHERE p.anonymized_at IS NULL
    RETURNING ${returning}`;
}

/** Writes standard fields of one participant in one statement, creating the participant if new (profileUpsertSql). */
const PROFILE_UPSERT = profileUpsertSql(
  '(VALUES ($2::text, $3::jsonb, $6::text)) AS x (participant_id, vals, display_name)',
  '$4::timestamptz',
  '$5::boolean',
  '(xmax = 0) AS inserted',
);

export async function upsertProfile(
  tx: Tx,
  tenantId: string,
  participantId: string,
  values: Partial<Record<StandardField, string | null>>,
  observedAt: Date,
  mode: 'coalesce' | 'explicit',
  displayName: string | null = null,
): Promise<{ written: boolean }> {
  const { rowCount } = await tx.query(PROFILE_UPSERT, [tenantId, participantId, JSON.stringify(values), observedAt, mode === 'explicit', displayName]);
  return { written: rowCount === 1 };
}

/** The explicit upsert of many participants in one statement (imports), for rows of distinct participant ids (ON CONFLICT DO UPDATE cannot touch one row twice). */
const PROFILES_UPSERT = profileUpsertSql(
  'unnest($2::text[], $3::jsonb[], $4::text[]) AS x (participant_id, vals, display_name)',
  '$5::timestamptz',
  'true',
  'p.participant_id',
);

export interface ProfileRowWrite {
  participantId: string;
  values: Partial<Record<StandardField, string | null>>;
  displayName: string | null;
}

/** The explicit upsert of rows with distinct participant ids; returns the ids written (an anonymized participant is not). */
export async function upsertProfiles(tx: Tx, tenantId: string, rows: ProfileRowWrite[], observedAt: Date): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const { rows: written } = await tx.query(PROFILES_UPSERT, [
    tenantId,
    rows.map((r) => r.participantId),
    rows.map((r) => JSON.stringify(r.values)),
    rows.map((r) => r.displayName),
    observedAt,
  ]);
  return new Set(written.map((row) => row.participant_id as string));
}

/** Custom values of many participants, at most one per participant and key: newest observation wins (the caller leaves out anonymized participants). */
export async function upsertCustomValuesOfMany(
  tx: Tx,
  tenantId: string,
  values: Array<{ participantId: string; key: string; value: unknown }>,
  observedAt: Date,
): Promise<void> {
  if (values.length === 0) return;
  await tx.query(
    `INSERT INTO participant_custom_values AS v (tenant_id, participant_id, key, value, observed_at)
     SELECT $1, x.participant_id, x.key, x.value, $5 FROM unnest($2::text[], $3::text[], $4::jsonb[]) AS x (participant_id, key, value)
     ON CONFLICT (tenant_id, participant_id, key) DO UPDATE SET value = EXCLUDED.value, observed_at = EXCLUDED.observed_at
       WHERE v.observed_at <= EXCLUDED.observed_at`,
    [tenantId, values.map((v) => v.participantId), values.map((v) => v.key), values.map((v) => JSON.stringify(v.value)), observedAt],
  );
}

export async function deleteCustomValuesOfMany(tx: Tx, tenantId: string, keys: Array<{ participantId: string; key: string }>): Promise<void> {
  if (keys.length === 0) return;
  await tx.query(
    `DELETE FROM participant_custom_values v USING unnest($2::text[], $3::text[]) AS d (participant_id, key)
     WHERE v.tenant_id = $1 AND v.participant_id = d.participant_id AND v.key = d.key`,
    [tenantId, keys.map((k) => k.participantId), keys.map((k) => k.key)],
  );
}

/** Writes custom values (newest observation wins) unless the participant is anonymized. */
export async function upsertCustomValues(tx: Tx, tenantId: string, participantId: string, values: Record<string, unknown>, observedAt: Date): Promise<void> {
  const keys = Object.keys(values);
  if (keys.length === 0) return;
  await tx.query(
    `INSERT INTO participant_custom_values AS v (tenant_id, participant_id, key, value, observed_at)
     SELECT $1, $2, x.key, x.value, $5 FROM unnest($3::text[], $4::jsonb[]) AS x (key, value)
     WHERE EXISTS (SELECT 1 FROM participants WHERE tenant_id = $1 AND participant_id = $2 AND anonymized_at IS NULL)
     ON CONFLICT (tenant_id, participant_id, key) DO UPDATE SET value = EXCLUDED.value, observed_at = EXCLUDED.observed_at
       WHERE v.observed_at <= EXCLUDED.observed_at`,
    [tenantId, participantId, keys, keys.map((k) => JSON.stringify(values[k])), observedAt],
  );
}

export async function deleteCustomValues(tx: Tx, tenantId: string, participantId: string, keys: string[]): Promise<number> {
  if (keys.length === 0) return 0;
  const { rowCount } = await tx.query('DELETE FROM participant_custom_values WHERE tenant_id = $1 AND participant_id = $2 AND key = ANY($3::text[])', [
    tenantId,
    participantId,
    keys,
  ]);
  return rowCount ?? 0;
}

// ---- custom field definitions -------------------------------------------------

export interface CustomFieldRecord extends CustomFieldDefinition {
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
}

function toField(row: Record<string, unknown>): CustomFieldRecord {
  return {
    key: row.key as string,
    type: row.type as CustomFieldType,
    personal: row.personal as boolean,
    description: (row.description as string | null) ?? null,
    createdAt: row.created_at as Date,
    updatedAt: row.updated_at as Date,
  };
}

export async function listCustomFields(tx: Tx, tenantId: string, after: string | null = null, limit = 1000): Promise<CustomFieldRecord[]> {
  const { rows } = await tx.query(
    'SELECT * FROM participant_custom_fields WHERE tenant_id = $1 AND ($2::text IS NULL OR key > $2) ORDER BY key LIMIT $3',
    [tenantId, after, limit],
  );
  return rows.map(toField);
}

export async function readCustomField(tx: Tx, tenantId: string, key: string): Promise<CustomFieldRecord | null> {
  const { rows } = await tx.query('SELECT * FROM participant_custom_fields WHERE tenant_id = $1 AND key = $2', [tenantId, key]);
  return rows[0] ? toField(rows[0]) : null;
}

/** Inserts a definition under a lock on the tenant's definitions, unless the key exists or the tenant is at `max`. */
export async function insertCustomField(
  tx: Tx,
  tenantId: string,
  field: { key: string; type: CustomFieldType; personal: boolean; description: string | null },
  now: Date,
  max: number,
): Promise<{ created: CustomFieldRecord | null; count: number }> {
  // Serialises concurrent creations of one tenant so that the quota holds.
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('participant_custom_fields:' || $1))`, [tenantId]);
  const { rows: counted } = await tx.query('SELECT count(*)::int AS n FROM participant_custom_fields WHERE tenant_id = $1', [tenantId]);
  const count = counted[0].n as number;
  if (count >= max) return { created: null, count };
  const { rows } = await tx.query(
    `INSERT INTO participant_custom_fields (tenant_id, key, type, personal, description, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT DO NOTHING RETURNING *`,
    [tenantId, field.key, field.type, field.personal, field.description, now],
  );
  return { created: rows[0] ? toField(rows[0]) : null, count };
}

export async function updateCustomField(
  tx: Tx,
  tenantId: string,
  key: string,
  changes: { personal?: boolean; description?: string | null },
  now: Date,
): Promise<CustomFieldRecord | null> {
  const { rows } = await tx.query(
    `UPDATE participant_custom_fields
        SET personal = coalesce($3, personal),
            description = CASE WHEN $4 THEN $5 ELSE description END,
            updated_at = $6
      WHERE tenant_id = $1 AND key = $2 RETURNING *`,
    [tenantId, key, changes.personal ?? null, 'description' in changes, changes.description ?? null, now],
  );
  return rows[0] ? toField(rows[0]) : null;
}

export async function deleteCustomField(tx: Tx, tenantId: string, key: string): Promise<CustomFieldRecord | null> {
  const { rows } = await tx.query('DELETE FROM participant_custom_fields WHERE tenant_id = $1 AND key = $2 RETURNING *', [tenantId, key]);
  return rows[0] ? toField(rows[0]) : null;
}

// ---- personal-data access log -------------------------------------------------

export interface AccessLogRow {
  id: string;
  actorType: 'admin' | 'system' | 'webhook';
  actorId: string;
  participantId: string | null;
  participantIds: string[];
  fieldsAccessed: string[];
  rowCount: number;
  exportFormat: 'json' | 'csv' | null;
  ipAddress: string | null;
  occurredAt: Date;
  reason: string | null;
}

export async function insertAccessLog(tx: Tx, tenantId: string, row: AccessLogRow): Promise<void> {
  await tx.query(
    `INSERT INTO pii_access_log (tenant_id, id, actor_type, actor_id, participant_id, participant_ids, fields_accessed, row_count, export_format, ip_address, occurred_at, reason)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      tenantId,
      row.id,
      row.actorType,
      row.actorId,
      row.participantId,
      row.participantIds,
      JSON.stringify(row.fieldsAccessed),
      row.rowCount,
      row.exportFormat,
      row.ipAddress,
      row.occurredAt,
      row.reason,
    ],
  );
}

// ---- erasure ----------------------------------------------------------------------

export interface ErasureCounts {
  table: string;
  total: number;
  changed: number;
}

/** Runs the erasure function of migration 0700 over every table that holds the participant's rows. */
export async function eraseEverywhere(
  tx: Tx,
  tenantId: string,
  participantId: string,
  mode: 'delete' | 'anonymize',
  scrub: { values: string[]; keys: string[]; label: string; substringMin: number },
): Promise<ErasureCounts[]> {
  const { rows } = await tx.query('SELECT * FROM privacy_erase_participant($1, $2, $3, $4, $5, $6, $7)', [
    tenantId,
    participantId,
    mode,
    scrub.values,
    scrub.keys,
    scrub.label,
    scrub.substringMin,
  ]);
  return rows.map((row) => ({ table: row.table_name as string, total: Number(row.total), changed: Number(row.changed) }));
}

/** Nulls every personal column of the participants row and marks it anonymized. */
export async function anonymizeParticipantRow(tx: Tx, tenantId: string, participantId: string, at: Date): Promise<number> {
  const { rowCount } = await tx.query(
    `UPDATE participants SET ${STANDARD_FIELDS.map((f) => `${f} = NULL`).join(', ')},
       email_hash = NULL, display_name = NULL, profile_observed_at = '{}'::jsonb, anonymized_at = $3, updated_at = now()
     WHERE tenant_id = $1 AND participant_id = $2`,
    [tenantId, participantId, at],
  );
  return rowCount ?? 0;
}

export interface ErasureRecord {
  id: string;
  participantId: string;
  action: 'anonymized' | 'deleted';
  performedAt: Date;
  rowCounts: Record<string, number>;
  rowsKept: Record<string, number>;
}

export async function insertErasure(
  tx: Tx,
  tenantId: string,
  record: ErasureRecord & { actorType: string; actorId: string },
): Promise<void> {
  await tx.query(
    `INSERT INTO participant_erasures (tenant_id, id, participant_id, action, actor_type, actor_id, performed_at, row_counts, rows_kept)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      tenantId,
      record.id,
      record.participantId,
      record.action,
      record.actorType,
      record.actorId,
      record.performedAt,
      JSON.stringify(record.rowCounts),
      JSON.stringify(record.rowsKept),
    ],
  );
}

export async function latestErasure(tx: Tx, tenantId: string, participantId: string, action: 'anonymized' | 'deleted'): Promise<ErasureRecord | null> {
  const { rows } = await tx.query(
    `SELECT * FROM participant_erasures WHERE tenant_id = $1 AND participant_id = $2 AND action = $3 ORDER BY performed_at DESC, id LIMIT 1`,
    [tenantId, participantId, action],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    id: row.id,
    participantId: row.participant_id,
    action: row.action,
    performedAt: row.performed_at,
    rowCounts: row.row_counts,
    rowsKept: row.rows_kept,
  };
}

/** A page of participants born on this month and day, in participant id order after `after`. */
export async function participantsWithBirthday(
  tx: Tx,
  tenantId: string,
  input: { month: number; day: number; after: string | null; limit: number },
): Promise<string[]> {
  const { rows } = await tx.query(
    `SELECT participant_id FROM participants
     WHERE tenant_id = $1 AND date_of_birth IS NOT NULL
       AND date_part('month', date_of_birth::timestamp) = $2 AND date_part('day', date_of_birth::timestamp) = $3
       AND ($4::text IS NULL OR participant_id > $4)
     ORDER BY participant_id LIMIT $5`,
    [tenantId, input.month, input.day, input.after, input.limit],
  );
  return rows.map((row) => row.participant_id as string);
}

/**
 * Test participants: made by a draft's preview (src/modules/engagements), flagged `test`, left out of
 * lists and exports by default, and deleted by a preview reset with every row that cascades from them.
 */
export async function createTestParticipant(tx: Tx, tenantId: string, participantId: string, displayName: string): Promise<void> {
  await tx.query('INSERT INTO participants (tenant_id, participant_id, display_name, test) VALUES ($1, $2, $3, true)', [tenantId, participantId, displayName]);
}

export async function isTestParticipant(tx: Tx, tenantId: string, participantId: string): Promise<boolean> {
  const { rows } = await tx.query('SELECT test FROM participants WHERE tenant_id = $1 AND participant_id = $2', [tenantId, participantId]);
  return rows[0]?.test === true;
}

/** Deletes the test participants whose ids start with `prefix` (never a participant without the flag); returns how many. */
export async function deleteTestParticipants(tx: Tx, tenantId: string, prefix: string): Promise<number> {
  const { rowCount } = await tx.query(
    "DELETE FROM participants WHERE tenant_id = $1 AND test AND starts_with(participant_id, $2)",
    [tenantId, prefix],
  );
  return rowCount ?? 0;
}
