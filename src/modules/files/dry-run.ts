import type { Readable } from 'node:stream';
import type { Static } from '@sinclair/typebox';
import type { ImportDryRun } from './schemas.js';
import type { Database } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { AppError, invalid } from '../../platform/errors.js';
import { IMPORT_PERMISSIONS, requesterOf, requirePermission } from './access.js';
import { byteLimit, readRecords } from './formats.js';
import { applyBatch, checkHeader, checkMediaType, columnsOf, IMPORT_BATCH_ROWS } from './imports.js';
import type { FileFormat, ImportKind, ImportRow, PendingRow, RowError } from './store.js';

/**
 * The dry run of an import: the file is read and checked exactly as the
 * import's job would apply it — each batch of rows applied by the same code
 * (`applyBatch`) in a transaction that is then rolled back — so the counts and
 * the refused rows are the ones a real run would give (a participant a row
 * names twice, an anonymized participant, a reward that takes no codes), and
 * nothing is kept: no import, no row, no ledger entry, no event.
 */
export const DRY_RUN_ROWS_MAX = 100_000;
export const DRY_RUN_ERRORS_MAX = 100;

/** The answer of a dry run (the route's schema, ImportDryRun). */
export type DryRunView = Static<typeof ImportDryRun>;

/** Thrown inside a batch's transaction to roll it back once its outcome is known. */
class RolledBack extends Error {
  constructor(readonly result: { errors: RowError[] }) {
    super('dry run');
  }
}

async function checkBatch(db: Database, auth: AuthContext, job: ImportRow, rows: PendingRow[]): Promise<RowError[]> {
  const attempt = (oneByOne: boolean) =>
    db
      .tenant(auth.tenantId, async (tx) => {
        throw new RolledBack(await applyBatch(tx, auth.tenantId, job, rows, oneByOne));
      })
      .catch((error: unknown) => {
        if (error instanceof RolledBack) return error.result.errors;
        throw error;
      });
  try {
    return await attempt(false);
  } catch (error) {
    // As the job does: a batch of held grants refused as a whole (a balance limit) is tried again row by row.
    if (!(error instanceof AppError)) throw error;
    return attempt(true);
  }
}

export async function dryRunImport(
  db: Database,
  auth: AuthContext,
  input: { kind: ImportKind; format: FileFormat; contentType: string | undefined; declaredLength: number | null; body: Readable; bytesMax: number },
): Promise<DryRunView> {
  requirePermission(auth, IMPORT_PERMISSIONS[input.kind], `import ${input.kind}`);
  checkMediaType(input.format, input.contentType);
  if (input.declaredLength !== null && input.declaredLength > input.bytesMax) {
    throw new AppError('payload_too_large', 'PAYLOAD_TOO_LARGE', `the file is larger than ${input.bytesMax} bytes`);
  }
  const { columns: known, custom } = await db.tenant(auth.tenantId, (tx) => columnsOf(tx, auth.tenantId, input.kind));
  const counted = input.body.pipe(byteLimit(input.bytesMax, () => undefined));
  input.body.on('error', (error) => counted.destroy(error));
  const job = { id: 'dry_run', kind: input.kind, format: input.format, requested_by: requesterOf(auth) } as ImportRow;
  let columns: string[] = [];
  let rowsTotal = 0;
  const refused = new Set<number>();
  const errors: RowError[] = [];
  const valid = { participants: new Set<string>(), points: 0 };
  let batch: PendingRow[] = [];
  const flush = async () => {
    const found = await checkBatch(db, auth, job, batch);
    for (const error of found) refused.add(error.rowNumber);
    errors.push(...found.slice(0, Math.max(0, DRY_RUN_ERRORS_MAX + 1 - errors.length)));
    for (const row of batch) {
      if (refused.has(row.rowNumber) || !row.data) continue;
      if (typeof row.data.participant_id === 'string') valid.participants.add(row.data.participant_id.trim());
      if (input.kind === 'point_grants') valid.points += Number(row.data.amount);
    }
    batch = [];
  };
  try {
    for await (const record of readRecords(counted, input.format, (header) => {
      checkHeader(input.kind, header, known, custom, auth);
      columns = header;
    })) {
      rowsTotal = record.rowNumber;
      if (rowsTotal > DRY_RUN_ROWS_MAX) throw invalid(`a dry run reads at most ${DRY_RUN_ROWS_MAX} rows; import the file in parts`, 'IMPORT_DRY_RUN_TOO_LARGE');
      batch.push(record);
      if (batch.length >= IMPORT_BATCH_ROWS) await flush();
    }
    if (batch.length > 0) await flush();
  } finally {
    counted.destroy();
  }
  if (rowsTotal === 0) throw invalid('the file has no rows to import', 'FILE_EMPTY');
  return {
    kind: input.kind,
    format: input.format,
    columns,
    rows_total: rowsTotal,
    rows_valid: rowsTotal - refused.size,
    rows_refused: refused.size,
    participants: valid.participants.size,
    points_total: input.kind === 'point_grants' ? valid.points : null,
    errors: errors.slice(0, DRY_RUN_ERRORS_MAX).map((e) => ({ row: e.rowNumber, field: e.field, code: e.code, detail: e.detail })),
    errors_truncated: errors.length > DRY_RUN_ERRORS_MAX,
  };
}
