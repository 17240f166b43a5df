import type { Database } from '../../platform/db.js';
import { announceCredentialChange, type AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { notFound } from '../../platform/errors.js';
import { emit } from '../../platform/outbox.js';
import { uuid } from '../../platform/ids.js';
import { STANDARD_FIELDS } from './fields.js';
import * as store from './store.js';
import type { StoredProfile } from './store.js';
import { DELETED_USER_LABEL } from './masking.js';
import { actorOf } from './access-log.js';
import { runErasureHandlers } from '../../platform/erasure.js';

/**
 * Erasure: anonymization (personal data nulled and scrubbed, history kept) and
 * hard delete, each recorded as evidence and announced by an event.
 */

/** Personal values at least this long are also removed where they appear inside longer text. */
const SCRUB_SUBSTRING_MIN = 5;

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
    await runErasureHandlers(tx, tenantId, { participantId, action: 'anonymize' });
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
    await runErasureHandlers(tx, tenantId, { participantId, action: 'delete' });
    await emit(tx, tenantId, {
      event: 'participant.deleted.v1',
      participantId,
      data: { participant_id: participantId, deleted_at: now.toISOString(), row_counts: record.rowCounts },
    });
    return erasureView(record, false);
  });
}
