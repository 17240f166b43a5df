import type { Tx } from '../../platform/db.js';
import type { ExportFilters } from '../../platform/export-sources.js';

/**
 * Every SQL statement on the files module's own tables: imports with their
 * pending rows and error report, exports with their chunks.
 */

export type ImportKind = 'participants' | 'point_grants' | 'reward_codes';
export type ExportKind = 'participants' | 'ledger' | 'contest_results' | 'webhook_deliveries';
export type FileFormat = 'csv' | 'jsonl';
export type JobStatus = 'queued' | 'running' | 'completed';
/** An import's status: `uploading` while its file streams in, then as a job's. */
export type ImportStatus = 'uploading' | JobStatus;

/** Who asked for an import or export: the job acts for them with these scopes and this role. */
export interface Requester {
  kind: 'key' | 'jwt' | 'session' | 'console';
  actor_id: string;
  scopes: string[];
  role: string | null;
}

export interface ImportRow {
  id: string;
  kind: ImportKind;
  format: FileFormat;
  status: ImportStatus;
  requested_by: Requester;
  columns: string[];
  rows_total: number;
  cursor: number;
  rows_done: number;
  rows_failed: number;
  bytes: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** The import's row, inserted when its upload's first data row arrives; `uploading` until `finishUpload`. */
export async function insertImport(
  tx: Tx,
  tenantId: string,
  row: { id: string; kind: ImportKind; format: FileFormat; requestedBy: Requester; columns: string[]; now: Date },
): Promise<void> {
  await tx.query(
    `INSERT INTO file_imports (tenant_id, id, kind, format, status, requested_by, columns, rows_total, bytes, created_at)
     VALUES ($1, $2, $3, $4, 'uploading', $5::jsonb, $6::text[], 0, 0, $7)`,
    [tenantId, row.id, row.kind, row.format, JSON.stringify(row.requestedBy), row.columns, row.now],
  );
}

export interface PendingRow {
  rowNumber: number;
  data: Record<string, unknown> | null;
  parseError: string | null;
}

/**
 * Stores one batch of parsed rows of an upload in one statement and moves
 * the import's counts, so that an import still `uploading` shows how far it
 * has come. Returns false when the import is no longer `uploading` (the
 * retention job took it for abandoned), and then stores nothing.
 */
export async function insertImportRows(tx: Tx, tenantId: string, importId: string, rows: PendingRow[], progress: { rowsTotal: number; bytes: number }): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE file_imports SET rows_total = $3, bytes = $4 WHERE tenant_id = $1 AND id = $2 AND status = 'uploading'`,
    [tenantId, importId, progress.rowsTotal, progress.bytes],
  );
  if (rowCount !== 1) return false;
  if (rows.length === 0) return true;
  await tx.query(
    `INSERT INTO file_import_rows (tenant_id, import_id, row_number, data, parse_error)
     SELECT $1, $2, r.row_number, r.data, r.parse_error FROM unnest($3::int[], $4::jsonb[], $5::text[]) AS r (row_number, data, parse_error)`,
    [tenantId, importId, rows.map((r) => r.rowNumber), rows.map((r) => (r.data === null ? null : JSON.stringify(r.data))), rows.map((r) => r.parseError)],
  );
  return true;
}

/** Ends an upload: the import is `queued` for its job. Null when it is no longer `uploading`. */
export async function finishUpload(tx: Tx, tenantId: string, importId: string): Promise<ImportRow | null> {
  const { rows } = await tx.query<ImportRow>(
    `UPDATE file_imports SET status = 'queued' WHERE tenant_id = $1 AND id = $2 AND status = 'uploading' RETURNING *`,
    [tenantId, importId],
  );
  return rows[0] ?? null;
}

/** Deletes an import that never finished its upload, with its rows (ON DELETE CASCADE). */
export async function deleteUpload(tx: Tx, tenantId: string, importId: string): Promise<void> {
  await tx.query(`DELETE FROM file_imports WHERE tenant_id = $1 AND id = $2 AND status = 'uploading'`, [tenantId, importId]);
}

export async function readImport(tx: Tx, tenantId: string, importId: string, lock = false): Promise<ImportRow | null> {
  const { rows } = await tx.query<ImportRow>(`SELECT * FROM file_imports WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [tenantId, importId]);
  return rows[0] ?? null;
}

export async function listImports(tx: Tx, tenantId: string, after: { created_at: string; id: string } | null, limit: number): Promise<Array<ImportRow & { cursor_at: string }>> {
  const { rows } = await tx.query(
    `SELECT *, to_json(created_at) #>> '{}' AS cursor_at FROM file_imports
     WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::text))
     ORDER BY created_at DESC, id DESC LIMIT $4`,
    [tenantId, after?.created_at ?? null, after?.id ?? null, limit],
  );
  return rows;
}

/** The next rows to apply, after the cursor, in row order. */
export async function pendingRows(tx: Tx, tenantId: string, importId: string, after: number, limit: number): Promise<PendingRow[]> {
  const { rows } = await tx.query(
    `SELECT row_number, data, parse_error FROM file_import_rows
     WHERE tenant_id = $1 AND import_id = $2 AND row_number > $3 ORDER BY row_number LIMIT $4`,
    [tenantId, importId, after, limit],
  );
  return rows.map((r) => ({ rowNumber: r.row_number, data: r.data, parseError: r.parse_error }));
}

export interface RowError {
  rowNumber: number;
  field: string | null;
  code: string;
  detail: string;
}

/**
 * Ends one batch: records its errors, deletes its rows, moves the cursor
 * and the counts. Runs in the batch's transaction, after the rows' effects.
 */
export async function finishBatch(
  tx: Tx,
  tenantId: string,
  importId: string,
  batch: { lastRow: number; done: number; failed: number; errors: RowError[] },
): Promise<void> {
  if (batch.errors.length > 0) {
    await tx.query(
      `INSERT INTO file_import_errors (tenant_id, import_id, row_number, position, field, code, detail)
       SELECT $1, $2, e.row_number, row_number() OVER (PARTITION BY e.row_number ORDER BY e.ord), e.field, e.code, e.detail
       FROM unnest($3::int[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS e (row_number, field, code, detail, ord)
       ON CONFLICT DO NOTHING`,
      [tenantId, importId, batch.errors.map((e) => e.rowNumber), batch.errors.map((e) => e.field), batch.errors.map((e) => e.code), batch.errors.map((e) => e.detail)],
    );
  }
  await tx.query('DELETE FROM file_import_rows WHERE tenant_id = $1 AND import_id = $2 AND row_number <= $3', [tenantId, importId, batch.lastRow]);
  await tx.query(
    `UPDATE file_imports SET cursor = $3, rows_done = rows_done + $4, rows_failed = rows_failed + $5 WHERE tenant_id = $1 AND id = $2`,
    [tenantId, importId, batch.lastRow, batch.done, batch.failed],
  );
}

export async function markImport(tx: Tx, tenantId: string, importId: string, status: 'running' | 'completed', now: Date): Promise<void> {
  await tx.query(
    `UPDATE file_imports SET status = $3,
       started_at = coalesce(started_at, $4),
       finished_at = CASE WHEN $3 = 'completed' THEN $4 ELSE NULL END
     WHERE tenant_id = $1 AND id = $2`,
    [tenantId, importId, status, now],
  );
}

export async function listImportErrors(
  tx: Tx,
  tenantId: string,
  importId: string,
  after: { row: number; position: number } | null,
  limit: number,
): Promise<Array<{ row_number: number; position: number; field: string | null; code: string; detail: string }>> {
  const { rows } = await tx.query(
    `SELECT row_number, position, field, code, detail FROM file_import_errors
     WHERE tenant_id = $1 AND import_id = $2 AND ($3::int IS NULL OR (row_number, position) > ($3::int, $4::smallint))
     ORDER BY row_number, position LIMIT $5`,
    [tenantId, importId, after?.row ?? null, after?.position ?? null, limit],
  );
  return rows;
}

// ---- exports ----------------------------------------------------------------

export interface ExportRow {
  id: string;
  kind: ExportKind;
  format: FileFormat;
  status: JobStatus;
  filters: ExportFilters;
  requested_by: Requester;
  columns: string[] | null;
  cursor: Record<string, unknown> | null;
  rows_written: number;
  chunks: number;
  bytes: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  restarts_after_erasure: number;
}


export async function insertExport(
  tx: Tx,
  tenantId: string,
  row: { id: string; kind: ExportKind; format: FileFormat; filters: ExportFilters; requestedBy: Requester; now: Date },
): Promise<ExportRow> {
  const { rows } = await tx.query<ExportRow>(
    `INSERT INTO file_exports (tenant_id, id, kind, format, status, filters, requested_by, created_at)
     VALUES ($1, $2, $3, $4, 'queued', $5::jsonb, $6::jsonb, $7) RETURNING *`,
    [tenantId, row.id, row.kind, row.format, JSON.stringify(row.filters), JSON.stringify(row.requestedBy), row.now],
  );
  return rows[0];
}

export async function readExport(tx: Tx, tenantId: string, exportId: string, lock = false): Promise<ExportRow | null> {
  const { rows } = await tx.query<ExportRow>(`SELECT * FROM file_exports WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [tenantId, exportId]);
  return rows[0] ?? null;
}

/** An export written unmasked: the SQL form of `holdsPersonalValues` in access.ts. */
const UNMASKED_EXPORT_SQL = `(kind = 'participants' AND requested_by -> 'scopes' ? 'read:pii')`;

/** Exports newest first; unmasked ones only when `withUnmasked` (the caller holds `read:pii`). */
export async function listExports(
  tx: Tx,
  tenantId: string,
  after: { created_at: string; id: string } | null,
  limit: number,
  withUnmasked: boolean,
): Promise<Array<ExportRow & { cursor_at: string }>> {
  const { rows } = await tx.query(
    `SELECT *, to_json(created_at) #>> '{}' AS cursor_at FROM file_exports
     WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::text))
       AND ($5::boolean OR NOT ${UNMASKED_EXPORT_SQL})
     ORDER BY created_at DESC, id DESC LIMIT $4`,
    [tenantId, after?.created_at ?? null, after?.id ?? null, limit, withUnmasked],
  );
  return rows;
}

/** Sets the CSV columns and marks the export running (its first step). */
export async function startExport(tx: Tx, tenantId: string, exportId: string, columns: string[], now: Date): Promise<void> {
  await tx.query(
    `UPDATE file_exports SET status = 'running', columns = $3::text[], started_at = coalesce(started_at, $4) WHERE tenant_id = $1 AND id = $2`,
    [tenantId, exportId, columns, now],
  );
}

/** Appends one chunk and moves the cursor, in the caller's transaction. */
export async function appendChunk(
  tx: Tx,
  tenantId: string,
  exportId: string,
  chunk: { seq: number; data: Buffer; rows: number; cursor: Record<string, unknown> | null },
): Promise<void> {
  if (chunk.data.length > 0) {
    await tx.query('INSERT INTO file_export_chunks (tenant_id, export_id, seq, data) VALUES ($1, $2, $3, $4)', [tenantId, exportId, chunk.seq, chunk.data]);
  }
  await tx.query(
    `UPDATE file_exports SET cursor = $3::jsonb, rows_written = rows_written + $4, chunks = chunks + $5, bytes = bytes + $6
     WHERE tenant_id = $1 AND id = $2`,
    [tenantId, exportId, JSON.stringify(chunk.cursor), chunk.rows, chunk.data.length > 0 ? 1 : 0, chunk.data.length],
  );
}

export async function completeExport(tx: Tx, tenantId: string, exportId: string, now: Date): Promise<void> {
  await tx.query(`UPDATE file_exports SET status = 'completed', finished_at = $3 WHERE tenant_id = $1 AND id = $2`, [tenantId, exportId, now]);
}

export async function readChunks(tx: Tx, tenantId: string, exportId: string, afterSeq: number, limit: number): Promise<Array<{ seq: number; data: Buffer }>> {
  const { rows } = await tx.query(
    'SELECT seq, data FROM file_export_chunks WHERE tenant_id = $1 AND export_id = $2 AND seq > $3 ORDER BY seq LIMIT $4',
    [tenantId, exportId, afterSeq, limit],
  );
  return rows;
}

/**
 * Sends the tenant's running and completed exports back to the start (an
 * erasure: their files hold the erased participant's values): status queued,
 * progress cleared, the restart counted, their chunks deleted. A running job
 * holds its export row while it writes a page, so this waits for that page;
 * the job's next page finds the export queued and starts over. Returns the
 * ids of the exports sent back.
 */
export async function restartExports(tx: Tx, tenantId: string): Promise<string[]> {
  const { rows } = await tx.query<{ id: string }>(
    `UPDATE file_exports e
        SET status = 'queued', cursor = NULL, columns = NULL, rows_written = 0, chunks = 0, bytes = 0,
            started_at = NULL, finished_at = NULL, restarts_after_erasure = e.restarts_after_erasure + 1
      WHERE e.tenant_id = $1 AND e.status IN ('running', 'completed')
      RETURNING e.id`,
    [tenantId],
  );
  const ids = rows.map((row) => row.id);
  if (ids.length > 0) await tx.query('DELETE FROM file_export_chunks WHERE tenant_id = $1 AND export_id = ANY ($2::text[])', [tenantId, ids]);
  return ids;
}

export type { ExportFilters };
