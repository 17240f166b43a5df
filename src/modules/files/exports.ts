import { Readable } from 'node:stream';
import type { Database, Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { AppError, conflict, fieldError, invalid, notFound } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { prefixedId } from '../../platform/ids.js';
import { addJob } from '../../platform/jobs.js';
import { listCustomFieldsInTx, MASKED_FIELDS, recordPiiAccessInTx } from '../participants/index.js';
import { accessLogActorOf, authOfRequester, EXPORT_PERMISSIONS, holdsPersonalValues, mayKnowExport, mayKnowUnmaskedExports, requesterOf, requirePermission } from './access.js';
import { CONTENT_TYPES, csvHeader, csvLine, jsonLine } from './formats.js';
import { exportSource } from '../../platform/export-sources.js';
import { assertSegmentsExistInTx } from '../segments/index.js';
import * as store from './store.js';
import type { ExportKind, ExportRow, FileFormat } from './store.js';

/**
 * Exports: the `files.export` job reads its source a keyset page at a time
 * and appends each page to the file as one stored chunk, the chunk and the
 * cursor move in one transaction (a killed worker resumes after the last
 * chunk written). The download streams the chunks in order, a few at a time.
 */
export const EXPORT_TASK = 'files.export';
/** Rows per page read and per chunk written. */
export const EXPORT_PAGE_ROWS = 1_000;
/** Chunks read per round trip while a download streams. */
export const DOWNLOAD_CHUNKS_PER_READ = 8;

export interface ExportView {
  export_id: string;
  kind: ExportKind;
  format: FileFormat;
  status: store.JobStatus;
  filters: store.ExportFilters;
  rows_written: number;
  bytes: number;
  masked: boolean | null;
  file_url: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  restarts_after_erasure: number;
}

export function presentExport(row: ExportRow): ExportView {
  return {
    export_id: row.id,
    kind: row.kind,
    format: row.format,
    status: row.status,
    filters: { ...row.filters, segment_id: row.filters.segment_id ?? null },
    rows_written: Number(row.rows_written),
    bytes: Number(row.bytes),
    masked: row.kind === 'participants' ? !holdsPersonalValues(row.kind, row.requested_by) : null,
    file_url: row.status === 'completed' ? `/api/v1/admin/exports/${row.id}/file` : null,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
    restarts_after_erasure: row.restarts_after_erasure,
  };
}

export interface ExportRequest {
  kind: ExportKind;
  format: FileFormat;
  from?: string;
  to?: string;
  contest_id?: string;
  segment_id?: string;
}

export async function startExport(db: Database, auth: AuthContext, body: ExportRequest): Promise<ExportView> {
  requirePermission(auth, EXPORT_PERMISSIONS[body.kind], `export ${body.kind}`);
  if (body.from && body.to && Date.parse(body.from) >= Date.parse(body.to)) throw invalid('from must be before to', 'EXPORT_INVALID_RANGE');
  if (body.kind === 'contest_results' && !body.contest_id) throw invalid('a contest_results export needs contest_id', 'EXPORT_CONTEST_REQUIRED');
  if (body.kind !== 'contest_results' && body.contest_id) throw invalid('contest_id applies to contest_results exports only', 'EXPORT_FILTER_NOT_APPLICABLE');
  if (body.kind === 'contest_results' && (body.from || body.to)) throw invalid('from and to do not apply to contest_results exports', 'EXPORT_FILTER_NOT_APPLICABLE');
  if (body.kind !== 'participants' && body.segment_id) {
    throw invalid('segment_id applies to participants exports only', 'EXPORT_FILTER_NOT_APPLICABLE', {
      errors: [fieldError('/segment_id', 'not_applicable', 'applies to participants exports only')],
    });
  }
  const tenantId = auth.tenantId;
  return db.tenant(tenantId, async (tx) => {
    if (body.segment_id) await assertSegmentsExistInTx(tx, tenantId, [body.segment_id], '/segment_id');
    if (body.contest_id) {
      const { rows } = await tx.query('SELECT 1 FROM contests WHERE tenant_id = $1 AND id = $2', [tenantId, body.contest_id]);
      if (rows.length === 0) throw notFound('contest', 'CONTEST_NOT_FOUND');
    }
    const id = prefixedId('exp', 12);
    const row = await store.insertExport(tx, tenantId, {
      id,
      kind: body.kind,
      format: body.format,
      filters: { from: body.from ?? null, to: body.to ?? null, contest_id: body.contest_id ?? null, segment_id: body.segment_id ?? null },
      requestedBy: requesterOf(auth),
      now: clock.now(),
    });
    await addJob(tx, EXPORT_TASK, { tenant_id: tenantId, export_id: id }, { jobKey: `files.export:${id}`, maxAttempts: 10 });
    return presentExport(row);
  });
}

/**
 * A participant was erased (platform/erasure.ts, in the erasure's transaction):
 * every running or completed export of the tenant holds, or may hold, their
 * values, so each is written again from the start without them, its job
 * queued in the same commit (docs/decisions/files.md).
 */
export async function restartExportsAfterErasureInTx(tx: Tx, tenantId: string): Promise<void> {
  for (const id of await store.restartExports(tx, tenantId)) {
    await addJob(tx, EXPORT_TASK, { tenant_id: tenantId, export_id: id }, { jobKey: `files.export:${id}`, maxAttempts: 10 });
  }
}

/**
 * The export, if the caller may know of it: an unmasked export is 404 to a
 * caller without `read:pii` (the same answer as an export that does not
 * exist), checked before the kind's permission so that a 403 cannot confirm it.
 */
async function readAllowedExportInTx(tx: Tx, auth: AuthContext, exportId: string): Promise<ExportRow> {
  const row = await store.readExport(tx, auth.tenantId, exportId);
  if (!row || !mayKnowExport(auth, row)) throw notFound('export', 'EXPORT_NOT_FOUND');
  requirePermission(auth, EXPORT_PERMISSIONS[row.kind], `read ${row.kind} exports`);
  return row;
}

export async function readExport(db: Database, auth: AuthContext, exportId: string): Promise<ExportView> {
  return presentExport(await db.tenant(auth.tenantId, (tx) => readAllowedExportInTx(tx, auth, exportId)));
}

export async function listExports(db: Database, auth: AuthContext, query: { limit: number; cursor?: string }) {
  const after = decodeCursor<{ created_at: string; id: string }>(query.cursor);
  if (after && (typeof after.created_at !== 'string' || typeof after.id !== 'string' || Number.isNaN(Date.parse(after.created_at)))) {
    throw new AppError('invalid', 'INVALID_CURSOR', 'cursor is not a cursor this service issued');
  }
  const rows = await db.tenant(auth.tenantId, (tx) => store.listExports(tx, auth.tenantId, after, query.limit + 1, mayKnowUnmaskedExports(auth)));
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return { exports: page.map(presentExport), next_cursor: rows.length > query.limit && last ? encodeCursor({ created_at: last.cursor_at, id: last.id }) : null };
}

/**
 * Writes one personal-data access log row for a download, in the caller's
 * transaction: who (the actor and address), when, which export (the reason
 * names it, with its kind, format, masking and rows), and the personal fields
 * the file shows in clear (none when masked). The log's `row_count` cannot be
 * 0, so an empty file counts 1; the reason gives the true count.
 */
async function recordDownloadInTx(tx: Tx, auth: AuthContext, row: ExportRow): Promise<void> {
  const unmasked = holdsPersonalValues(row.kind, row.requested_by);
  let fields: string[] = [];
  if (unmasked) {
    const personalCustom = new Set((await listCustomFieldsInTx(tx, auth.tenantId)).filter((d) => d.personal).map((d) => `custom.${d.key}`));
    fields = (row.columns ?? []).filter((column) => (MASKED_FIELDS as readonly string[]).includes(column) || personalCustom.has(column));
  }
  const masking = row.kind !== 'participants' ? 'no profile fields' : unmasked ? 'unmasked' : 'masked';
  const rows = Number(row.rows_written);
  await recordPiiAccessInTx(tx, auth.tenantId, {
    actorType: 'admin',
    actorId: accessLogActorOf(auth),
    participantId: null,
    participantIds: [],
    fieldsAccessed: fields,
    rowCount: Math.max(1, rows),
    exportFormat: row.format === 'csv' ? 'csv' : 'json',
    ipAddress: auth.ipAddress ?? null,
    reason: `download of export ${row.id} (${row.kind}, ${row.format}, ${masking}, ${rows} rows)`,
  });
}

/**
 * The finished file, as a stream of its chunks read DOWNLOAD_CHUNKS_PER_READ
 * at a time. The download is logged (`record`, false for a HEAD request, which
 * sends no file) in the transaction that checks the caller may read it.
 */
export async function openExportFile(
  db: Database,
  auth: AuthContext,
  exportId: string,
  options: { record: boolean },
): Promise<{ stream: Readable; contentType: string; filename: string; bytes: number }> {
  const tenantId = auth.tenantId;
  const row = await db.tenant(tenantId, async (tx) => {
    const found = await readAllowedExportInTx(tx, auth, exportId);
    if (found.status !== 'completed') throw conflict(`the export is ${found.status}; the file can be read once it is completed`, 'EXPORT_NOT_READY');
    if (options.record) await recordDownloadInTx(tx, auth, found);
    return found;
  });
  async function* chunks() {
    let after = -1;
    for (;;) {
      const page = await db.tenant(tenantId, (tx) => store.readChunks(tx, tenantId, exportId, after, DOWNLOAD_CHUNKS_PER_READ));
      for (const chunk of page) yield chunk.data;
      if (page.length < DOWNLOAD_CHUNKS_PER_READ) return;
      after = page.at(-1)!.seq;
    }
  }
  return { stream: Readable.from(chunks()), contentType: CONTENT_TYPES[row.format], filename: `${row.kind}-${row.id}.${row.format}`, bytes: Number(row.bytes) };
}

/**
 * Writes an export to the end, one page per transaction. The first step fixes
 * the CSV columns and writes the header as chunk 0; each later step reads the
 * page after the stored cursor, appends it as the next chunk and moves the
 * cursor in the same transaction, so a run that dies resumes at the next
 * page and writes no row twice. `pagesMax` stops early (tests).
 */
export async function runExport(db: Database, tenantId: string, exportId: string, options: { pagesMax?: number } = {}): Promise<void> {
  for (let pages = 0; options.pagesMax === undefined || pages < options.pagesMax; pages++) {
    const more = await db.tenant(tenantId, async (tx) => {
      const job = await store.readExport(tx, tenantId, exportId, true);
      if (!job || job.status === 'completed') return false;
      // An erasure sent the export back to queued while an earlier page was written (restartExportsAfterErasureInTx): it starts over here.
      const source = exportSource(job.kind);
      if (job.status === 'queued') {
        const columns = await source.columns(tx, tenantId);
        await store.startExport(tx, tenantId, exportId, columns, clock.now());
        if (job.format === 'csv') await store.appendChunk(tx, tenantId, exportId, { seq: 0, data: Buffer.from(csvHeader(columns)), rows: 0, cursor: null });
        return true;
      }
      const auth = authOfRequester(tenantId, job.requested_by);
      const page = await source.page(tx, tenantId, { filters: job.filters, cursor: job.cursor, limit: EXPORT_PAGE_ROWS, auth, format: job.format });
      const columns = job.columns ?? [];
      const text = page.records.map((record) => (job.format === 'csv' ? csvLine(columns, record) : jsonLine(record))).join('');
      await store.appendChunk(tx, tenantId, exportId, { seq: job.chunks, data: Buffer.from(text), rows: page.records.length, cursor: page.cursor });
      if (page.cursor === null) {
        await store.completeExport(tx, tenantId, exportId, clock.now());
        return false;
      }
      return true;
    });
    if (!more) return;
  }
}
