import type { Database, Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { AppError, forbidden, invalid } from '../../platform/errors.js';
import { MASKED_FIELDS, STANDARD_FIELDS, checkCustomValue, checkStandardField, type CustomFieldDefinition, type StandardField } from './fields.js';
import * as store from './store.js';
import { canReadPii, type ProfileView } from './masking.js';
import { presentProfilesInTx } from './access-log.js';
import { customDefinitions } from './definition-cache.js';

/**
 * The explicit upsert of a profile: one (the API, `writeProfileInTx`) or many
 * at once, set-based (`writeProfilesInTx`, imports), with the same checks.
 */

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
