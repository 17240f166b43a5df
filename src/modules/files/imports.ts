import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Database, Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { AppError, forbidden, invalid, notFound } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { prefixedId } from '../../platform/ids.js';
import { addJob } from '../../platform/jobs.js';
import { claimKey, storeResponse } from '../../platform/idempotency.js';
import { canReadPii, listCustomFieldsInTx, MASKED_FIELDS, STANDARD_FIELDS, writeProfilesInTx, type ProfileInput, type ProfileWrite } from '../participants/index.js';
import { awardInTx, grantInTx, type GrantInput } from '../points/index.js';
import { inBatch } from '../../platform/batch.js';
import { uploadCodesInTx } from '../rewards/index.js';
import { authOfRequester, IMPORT_PERMISSIONS, requesterOf, requirePermission } from './access.js';
import { byteLimit, readRecords, UPLOAD_MEDIA_TYPES } from './formats.js';
import * as store from './store.js';
import type { FileFormat, ImportKind, ImportRow, PendingRow, RowError } from './store.js';

/**
 * Imports: the upload is parsed as it streams in, checked against the kind's
 * columns before any row is kept, and its rows stored in batches, each in a
 * short transaction of its own; the `files.import` job then applies them in batches
 * of IMPORT_BATCH_ROWS, each batch in its own transaction together with its
 * error report rows and the cursor move (docs/decisions/files.md).
 */
export const IMPORT_TASK = 'files.import';
/** Rows applied per transaction by the job. */
export const IMPORT_BATCH_ROWS = 500;
/** Rows stored per INSERT while the upload streams in. */
export const UPLOAD_BATCH_ROWS = 500;
/** The largest upload accepted by default (FILES_IMPORT_BYTES_MAX overrides it). */
export const IMPORT_BYTES_MAX_DEFAULT = 256 * 1024 * 1024;
export const ERRORS_PAGE_MAX = 500;
export const LIST_PAGE_MAX = 100;

/** The upload size limit: FILES_IMPORT_BYTES_MAX when set (1 KiB to 4 GiB), else the default. */
export function importBytesMax(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.FILES_IMPORT_BYTES_MAX;
  if (raw === undefined || raw === '') return IMPORT_BYTES_MAX_DEFAULT;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1024 || value > 4 * 1024 ** 3) {
    throw new Error(`FILES_IMPORT_BYTES_MAX must be a whole number of bytes from 1024 to 4294967296, got "${raw}"`);
  }
  return value;
}

// ---- the kinds' columns --------------------------------------------------------

interface KindColumns {
  required: string[];
  optional: string[];
}

const GRANT_COLUMNS: KindColumns = { required: ['participant_id', 'amount', 'reason'], optional: ['memo', 'type'] };
const CODE_COLUMNS: KindColumns = { required: ['reward_id', 'code'], optional: [] };

interface CustomDefinition {
  key: string;
  type: string;
  personal: boolean;
}

export async function columnsOf(tx: Tx, tenantId: string, kind: ImportKind): Promise<{ columns: KindColumns; custom: Map<string, CustomDefinition> }> {
  if (kind === 'point_grants') return { columns: GRANT_COLUMNS, custom: new Map() };
  if (kind === 'reward_codes') return { columns: CODE_COLUMNS, custom: new Map() };
  const custom = new Map((await listCustomFieldsInTx(tx, tenantId)).map((d) => [d.key, { key: d.key, type: d.type, personal: d.personal }]));
  return { columns: { required: ['participant_id'], optional: ['display_name', ...STANDARD_FIELDS, ...custom.keys()] }, custom };
}

/** Refuses a file whose header misses a required column, names an unknown or repeated one, or sets personal data the caller may not. */
export function checkHeader(kind: ImportKind, columns: string[], known: KindColumns, custom: Map<string, CustomDefinition>, auth: AuthContext): void {
  const missing = known.required.filter((c) => !columns.includes(c));
  if (missing.length > 0) {
    throw invalid(`the ${kind} import needs the column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}; the file has ${columns.join(', ') || 'none'}`, 'IMPORT_MISSING_COLUMN', {
      missing_columns: missing,
    });
  }
  const allowed = new Set([...known.required, ...known.optional]);
  const unknown = columns.filter((c) => !allowed.has(c));
  if (unknown.length > 0) {
    const hint = kind === 'participants' ? ' (custom fields must be defined first with POST /api/v1/gamify/admin/participant-fields)' : '';
    throw invalid(`the ${kind} import does not know the column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; it takes ${[...allowed].join(', ')}${hint}`, 'IMPORT_UNKNOWN_COLUMN', {
      unknown_columns: unknown,
    });
  }
  const repeated = columns.filter((c, i) => columns.indexOf(c) !== i);
  if (repeated.length > 0) throw invalid(`the column${repeated.length > 1 ? 's' : ''} ${[...new Set(repeated)].join(', ')} appear more than once`, 'IMPORT_REPEATED_COLUMN');
  if (kind === 'participants' && !canReadPii(auth)) {
    const personal = columns.filter((c) => (MASKED_FIELDS as readonly string[]).includes(c) || custom.get(c)?.personal);
    if (personal.length > 0) throw forbidden(`importing personal fields needs the scope "read:pii": ${personal.join(', ')}`);
  }
}

// ---- the upload ----------------------------------------------------------------------

export interface ImportView {
  import_id: string;
  kind: ImportKind;
  format: FileFormat;
  status: store.ImportStatus;
  columns: string[];
  rows_total: number;
  rows_done: number;
  rows_failed: number;
  rows_pending: number;
  bytes: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Set on the upload's answer: true when an Idempotency-Key named an earlier upload of the same file. */
  duplicate?: boolean;
}

export function presentImport(row: ImportRow): ImportView {
  return {
    import_id: row.id,
    kind: row.kind,
    format: row.format,
    status: row.status,
    columns: row.columns,
    rows_total: row.rows_total,
    rows_done: row.rows_done,
    rows_failed: row.rows_failed,
    rows_pending: Math.max(0, row.rows_total - row.rows_done - row.rows_failed),
    bytes: Number(row.bytes),
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
  };
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaTypeOf(contentType: string | undefined): string | null {
  if (!contentType) return null;
  return contentType.split(';')[0].trim().toLowerCase() || null;
}

export function checkMediaType(format: FileFormat, contentType: string | undefined): void {
  const media = mediaTypeOf(contentType);
  const accepted = UPLOAD_MEDIA_TYPES[format];
  if (!media || !accepted.includes(media)) {
    throw new AppError(
      'unsupported_media_type',
      'UNSUPPORTED_MEDIA_TYPE',
      `a ${format} import is sent as ${accepted.join(' or ')}${media ? `, not ${media}` : '; the request has no Content-Type'}`,
    );
  }
}

export const IMPORT_IDEMPOTENCY_SCOPE = 'files.import';

/** The upload's import, created when its first data row arrives. */
interface Upload {
  id: string;
  rowsTotal: number;
  bytes: number;
  batch: PendingRow[];
}

/** An upload the retention job deleted as abandoned (it ran past UPLOAD_ABANDONED_AFTER_DAYS) before it finished. */
const uploadExpired = () => new AppError('conflict', 'IMPORT_UPLOAD_EXPIRED', 'the upload took so long that it was taken for abandoned and deleted; send the file again');

/**
 * Stores an upload and queues its job. The file is read as it arrives, and
 * no transaction is held open while it does: the header is checked before
 * anything is written; the import is inserted as `uploading` when the first
 * data row arrives; its rows are written UPLOAD_BATCH_ROWS at a time, each
 * batch in its own short transaction; a last short transaction claims the
 * Idempotency-Key (the file's SHA-256 is its fingerprint, known once read),
 * marks the import `queued` and adds its job. An upload refused or broken
 * halfway (too large, a broken CSV, the client gone) deletes its import and
 * rows before answering; one whose process died is deleted by the retention
 * job after UPLOAD_ABANDONED_AFTER_DAYS (index.ts). The same file sent again
 * with its key within 24 hours answers the first import with
 * `duplicate: true`, and the repeat's rows are deleted.
 */
export async function startImport(
  db: Database,
  auth: AuthContext,
  input: {
    kind: ImportKind;
    format: FileFormat;
    contentType: string | undefined;
    declaredLength: number | null;
    body: Readable;
    bytesMax: number;
    idempotencyKey?: string;
  },
): Promise<ImportView> {
  requirePermission(auth, IMPORT_PERMISSIONS[input.kind], `import ${input.kind}`);
  checkMediaType(input.format, input.contentType);
  if (input.declaredLength !== null && input.declaredLength > input.bytesMax) {
    throw new AppError('payload_too_large', 'PAYLOAD_TOO_LARGE', `the file is larger than ${input.bytesMax} bytes`);
  }
  const tenantId = auth.tenantId;
  const { columns: known, custom } = await db.tenant(tenantId, (tx) => columnsOf(tx, tenantId, input.kind));
  const digest = createHash('sha256');
  let bytes = 0;
  const counted = input.body.pipe(
    byteLimit(input.bytesMax, (seen, chunk) => {
      bytes = seen;
      digest.update(chunk);
    }),
  );
  input.body.on('error', (error) => counted.destroy(error));
  let upload: Upload | null = null;
  try {
    let header: string[] = [];
    for await (const record of readRecords(counted, input.format, (columns) => {
      checkHeader(input.kind, columns, known, custom, auth);
      header = columns;
    })) {
      if (!upload) {
        const created: Upload = { id: prefixedId('imp', 12), rowsTotal: 0, bytes: 0, batch: [] };
        await db.tenant(tenantId, (tx) =>
          store.insertImport(tx, tenantId, { id: created.id, kind: input.kind, format: input.format, requestedBy: requesterOf(auth), columns: header, now: clock.now() }),
        );
        upload = created;
      }
      upload.rowsTotal = record.rowNumber;
      upload.batch.push(record);
      if (upload.batch.length >= UPLOAD_BATCH_ROWS) await storeBatch(db, tenantId, upload, bytes);
    }
    if (!upload) throw invalid('the file has no rows to import', 'FILE_EMPTY');
    return await finishUpload(db, tenantId, input, upload, bytes, digest.digest('hex'));
  } catch (error) {
    // The body may still be arriving: stop reading it.
    counted.destroy();
    if (upload) {
      const { id } = upload;
      // A failed clean-up leaves an `uploading` import, which the retention job deletes later; the caller gets the upload's own error.
      await db.tenant(tenantId, (tx) => store.deleteUpload(tx, tenantId, id)).catch(() => undefined);
    }
    throw error;
  }
}

/** Writes the upload's pending rows in one short transaction. */
async function storeBatch(db: Database, tenantId: string, upload: Upload, bytes: number): Promise<void> {
  const rows = upload.batch;
  upload.batch = [];
  const stored = await db.tenant(tenantId, (tx) => store.insertImportRows(tx, tenantId, upload.id, rows, { rowsTotal: upload.rowsTotal, bytes }));
  if (!stored) throw uploadExpired();
}

/**
 * The upload's last transaction: its last rows, the Idempotency-Key, the
 * status and the job. A key that names an earlier upload of the same file
 * deletes this one in the same transaction and answers the earlier import.
 * It reads nothing from the body, so it may be retried after a serialization failure.
 */
async function finishUpload(
  db: Database,
  tenantId: string,
  input: { kind: ImportKind; format: FileFormat; idempotencyKey?: string },
  upload: Upload,
  bytes: number,
  sha256: string,
): Promise<ImportView> {
  const rows = upload.batch;
  return db.tenant(tenantId, async (tx) => {
    if (input.idempotencyKey !== undefined) {
      const claim = await claimKey<{ import_id: string }>(tx, tenantId, IMPORT_IDEMPOTENCY_SCOPE, input.idempotencyKey, `${input.kind}/${input.format}/${sha256}`);
      if (!claim.fresh) {
        await store.deleteUpload(tx, tenantId, upload.id);
        const earlier = await store.readImport(tx, tenantId, claim.response.import_id);
        if (!earlier) throw notFound('import', 'IMPORT_NOT_FOUND');
        return { ...presentImport(earlier), duplicate: true };
      }
      await storeResponse(tx, tenantId, IMPORT_IDEMPOTENCY_SCOPE, input.idempotencyKey, { import_id: upload.id });
    }
    if (!(await store.insertImportRows(tx, tenantId, upload.id, rows, { rowsTotal: upload.rowsTotal, bytes }))) throw uploadExpired();
    const row = await store.finishUpload(tx, tenantId, upload.id);
    if (!row) throw uploadExpired();
    await addJob(tx, IMPORT_TASK, { tenant_id: tenantId, import_id: upload.id }, { jobKey: `files.import:${upload.id}`, maxAttempts: 10 });
    return { ...presentImport(row), duplicate: false };
  });
}

// ---- reads --------------------------------------------------------------------------------

async function readAllowedImport(db: Database, auth: AuthContext, importId: string): Promise<ImportRow> {
  const row = await db.tenant(auth.tenantId, (tx) => store.readImport(tx, auth.tenantId, importId));
  if (!row) throw notFound('import', 'IMPORT_NOT_FOUND');
  requirePermission(auth, IMPORT_PERMISSIONS[row.kind], `read ${row.kind} imports`);
  return row;
}

export async function readImport(db: Database, auth: AuthContext, importId: string): Promise<ImportView> {
  return presentImport(await readAllowedImport(db, auth, importId));
}

export async function listImports(db: Database, auth: AuthContext, query: { limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'text' });
  const rows = await db.tenant(auth.tenantId, (tx) => store.listImports(tx, auth.tenantId, after, query.limit + 1));
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return { imports: page.map(presentImport), next_cursor: rows.length > query.limit && last ? encodeCursor({ created_at: last.cursor_at, id: last.id }) : null };
}

export async function listImportErrors(db: Database, auth: AuthContext, importId: string, query: { limit: number; cursor?: string }) {
  await readAllowedImport(db, auth, importId);
  const after = decodeCursor(query.cursor, { row: 'int32', position: 'int16' });
  const rows = await db.tenant(auth.tenantId, (tx) => store.listImportErrors(tx, auth.tenantId, importId, after, query.limit + 1));
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    errors: page.map((e) => ({ row: e.row_number, field: e.field, code: e.code, detail: e.detail })),
    next_cursor: rows.length > query.limit && last ? encodeCursor({ row: last.row_number, position: last.position }) : null,
  };
}

// ---- the job ----------------------------------------------------------------------------------

type RowOutcome = { ok: true } | { ok: false; errors: Array<{ field: string | null; code: string; detail: string }> };

const fail = (field: string | null, detail: string, code = 'IMPORT_INVALID_VALUE'): RowOutcome => ({ ok: false, errors: [{ field, code, detail }] });

/**
 * Runs `fn` under a savepoint: a domain refusal (AppError) rolls back that
 * row's writes alone and becomes the row's error; anything else fails the batch.
 */
async function underSavepoint(tx: Tx, fn: () => Promise<void>): Promise<RowOutcome> {
  await tx.query('SAVEPOINT import_row');
  try {
    await fn();
    await tx.query('RELEASE SAVEPOINT import_row');
    return { ok: true };
  } catch (error) {
    await tx.query('ROLLBACK TO SAVEPOINT import_row');
    if (error instanceof AppError) return fail(null, error.message, error.code);
    throw error;
  }
}

const isBlank = (value: unknown) => value === undefined || (typeof value === 'string' && value.trim() === '');

function participantIdOf(data: Record<string, unknown>): string | RowOutcome {
  const value = data.participant_id;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value !== 'string' || value.trim() === '') return fail('participant_id', 'participant_id is required');
  // eslint-disable-next-line no-control-regex
  if (value.length > 128 || /[\u0000-\u001f]/.test(value)) return fail('participant_id', 'participant_id must be 1 to 128 characters without control characters');
  return value;
}

/** A CSV cell of a typed custom field as its JSON value; JSON lines values are taken as they are. */
function customValue(definition: CustomDefinition, raw: unknown, format: FileFormat): unknown {
  if (format === 'jsonl' || typeof raw !== 'string') return raw;
  if (definition.type === 'number') return /^\s*-?\d+(\.\d+)?([eE][+-]?\d+)?\s*$/.test(raw) ? Number(raw) : raw;
  if (definition.type === 'boolean') return raw === 'true' ? true : raw === 'false' ? false : raw;
  return raw;
}

/** A participant row's upsert, or why it is refused before the participants module sees it. */
function participantWriteOf(data: Record<string, unknown>, format: FileFormat, custom: Map<string, CustomDefinition>): ProfileWrite | RowOutcome {
  const participantId = participantIdOf(data);
  if (typeof participantId !== 'string') return participantId;
  // CSV: an empty cell leaves the value as it is. JSON lines: null clears it, a missing key leaves it.
  const input: ProfileInput = {};
  const customInput: Record<string, unknown> = {};
  const errors: Array<{ field: string; code: string; detail: string }> = [];
  for (const [column, raw] of Object.entries(data)) {
    if (column === 'participant_id') continue;
    if (format === 'csv' ? isBlank(raw) : raw === undefined) continue;
    const definition = custom.get(column);
    if (definition) {
      customInput[column] = raw === null ? null : customValue(definition, raw, format);
      continue;
    }
    if (raw !== null && typeof raw !== 'string') {
      errors.push({ field: column, code: 'IMPORT_INVALID_VALUE', detail: `${column} must be a string` });
      continue;
    }
    if (column === 'display_name') {
      if (raw !== null) input.display_name = raw;
    } else (input as Record<string, unknown>)[column] = raw;
  }
  if (errors.length > 0) return { ok: false, errors };
  if (Object.keys(customInput).length > 0) input.custom = customInput;
  return { participantId, input };
}

/**
 * Participants, set-based: each row is turned into an upsert here, and the
 * participants module writes the batch's upserts with a few statements
 * (`writeProfilesInTx`: later rows of a participant win, an anonymized
 * participant is refused, a batch the database refuses whole is written row
 * by row). Its refusals become row errors as a per-row upsert's would.
 */
async function applyParticipants(
  tx: Tx,
  tenantId: string,
  format: FileFormat,
  rows: PendingRow[],
  custom: Map<string, CustomDefinition>,
  auth: AuthContext,
): Promise<Map<number, RowOutcome>> {
  const outcomes = new Map<number, RowOutcome>();
  const writes: Array<{ rowNumber: number; write: ProfileWrite }> = [];
  for (const row of rows) {
    const write = participantWriteOf(row.data!, format, custom);
    if ('ok' in write) outcomes.set(row.rowNumber, write);
    else writes.push({ rowNumber: row.rowNumber, write });
  }
  const written = await writeProfilesInTx(tx, tenantId, writes.map((w) => w.write), auth);
  writes.forEach(({ rowNumber }, i) => {
    const outcome = written[i];
    outcomes.set(rowNumber, outcome.ok ? outcome : fail(null, outcome.error.message, outcome.error.code));
  });
  return outcomes;
}

const GRANT_TYPES = ['award', 'bonus', 'adjustment'];

/** A grant row's input, or why it is refused. */
function grantInputOf(data: Record<string, unknown>, importId: string, rowNumber: number): GrantInput | RowOutcome {
  const participantId = participantIdOf(data);
  if (typeof participantId !== 'string') return participantId;
  const rawAmount = data.amount;
  const amount = typeof rawAmount === 'string' && /^\s*\d+\s*$/.test(rawAmount) ? Number(rawAmount) : rawAmount;
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 1) return fail('amount', 'amount must be a whole number of at least 1');
  if (typeof data.reason !== 'string' || data.reason.trim() === '') return fail('reason', 'reason is required');
  const memo = isBlank(data.memo) || data.memo === null ? null : data.memo;
  if (memo !== null && typeof memo !== 'string') return fail('memo', 'memo must be a string');
  const type = isBlank(data.type) || data.type === null ? 'bonus' : data.type;
  if (typeof type !== 'string' || !GRANT_TYPES.includes(type)) return fail('type', `type must be one of ${GRANT_TYPES.join(', ')}`);
  // The ledger entry names the import and the row it came from.
  return { participantId, amount, reason: data.reason, memo, type: type as GrantInput['type'], source: { kind: 'bulk', id: `${importId}:${rowNumber}` } };
}

const isOutcome = (value: GrantInput | RowOutcome): value is RowOutcome => 'ok' in value;

/**
 * Grants, the fast way: inside a processing batch the points module holds
 * the grants and writes them with one statement per round, and their events
 * with one statement (`awardInTx`). Input errors are thrown per grant before
 * anything is written, so they become row errors here; a refusal only the
 * write can find (a balance past its limit) fails the whole batch, which is
 * then run again row by row (`applyGrantsOneByOne`).
 */
async function applyGrantsHeld(tx: Tx, tenantId: string, importId: string, rows: PendingRow[]): Promise<Map<number, RowOutcome>> {
  const outcomes = new Map<number, RowOutcome>();
  await inBatch(tx, async (batchTx) => {
    for (const row of rows) {
      const input = grantInputOf(row.data!, importId, row.rowNumber);
      if (isOutcome(input)) {
        outcomes.set(row.rowNumber, input);
        continue;
      }
      try {
        await awardInTx(batchTx, tenantId, input);
        outcomes.set(row.rowNumber, { ok: true });
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        outcomes.set(row.rowNumber, fail(null, error.message, error.code));
      }
    }
  });
  return outcomes;
}

/** Grants one at a time, each under a savepoint: a grant refused by the write fails its row alone. */
async function applyGrantsOneByOne(tx: Tx, tenantId: string, importId: string, rows: PendingRow[]): Promise<Map<number, RowOutcome>> {
  const outcomes = new Map<number, RowOutcome>();
  for (const row of rows) {
    const input = grantInputOf(row.data!, importId, row.rowNumber);
    outcomes.set(row.rowNumber, isOutcome(input) ? input : await underSavepoint(tx, async () => void (await grantInTx(tx, tenantId, input))));
  }
  return outcomes;
}

const CODE_PATTERN = /^[\x21-\x7e]{1,128}$/;

/** Reward codes: grouped by reward, one insert per reward and batch; a reward that cannot take codes fails its rows. */
async function applyCodes(tx: Tx, tenantId: string, rows: PendingRow[]): Promise<Map<number, RowOutcome>> {
  const outcomes = new Map<number, RowOutcome>();
  const byReward = new Map<string, PendingRow[]>();
  for (const row of rows) {
    const data = row.data!;
    if (typeof data.reward_id !== 'string' || data.reward_id.trim() === '') {
      outcomes.set(row.rowNumber, fail('reward_id', 'reward_id is required'));
      continue;
    }
    if (typeof data.code !== 'string' || !CODE_PATTERN.test(data.code)) {
      outcomes.set(row.rowNumber, fail('code', 'code must be 1 to 128 printable ASCII characters without spaces'));
      continue;
    }
    byReward.set(data.reward_id, [...(byReward.get(data.reward_id) ?? []), row]);
  }
  for (const [rewardId, group] of byReward) {
    const outcome = await underSavepoint(tx, async () => {
      await uploadCodesInTx(tx, tenantId, rewardId, group.map((r) => r.data!.code as string));
    });
    for (const row of group) outcomes.set(row.rowNumber, outcome.ok ? outcome : { ok: false, errors: outcome.errors.map((e) => ({ ...e, field: 'reward_id' })) });
  }
  return outcomes;
}

export async function applyBatch(tx: Tx, tenantId: string, job: ImportRow, rows: PendingRow[], oneByOne: boolean): Promise<{ done: number; failed: number; errors: RowError[] }> {
  const parsed = rows.filter((r) => r.data !== null);
  let outcomes: Map<number, RowOutcome>;
  if (job.kind === 'participants') {
    const { custom } = await columnsOf(tx, tenantId, 'participants');
    outcomes = await applyParticipants(tx, tenantId, job.format, parsed, custom, authOfRequester(tenantId, job.requested_by));
  } else if (job.kind === 'reward_codes') outcomes = await applyCodes(tx, tenantId, parsed);
  else outcomes = oneByOne ? await applyGrantsOneByOne(tx, tenantId, job.id, parsed) : await applyGrantsHeld(tx, tenantId, job.id, parsed);
  const result = { done: 0, failed: 0, errors: [] as RowError[] };
  for (const row of rows) {
    const outcome = row.data === null ? fail(null, row.parseError ?? 'the row cannot be read', 'IMPORT_UNREADABLE_ROW') : outcomes.get(row.rowNumber)!;
    if (outcome.ok) result.done += 1;
    else {
      result.failed += 1;
      for (const error of outcome.errors) result.errors.push({ rowNumber: row.rowNumber, ...error });
    }
  }
  return result;
}

/**
 * Applies an import's rows to the end, one batch per transaction. Each batch
 * locks the import, takes the rows after its cursor, applies them, records
 * their errors, deletes them and moves the cursor, all in that transaction:
 * a worker killed mid-batch rolls the whole batch back, and the next run
 * starts at the cursor, so no row is applied twice. `batchesMax` stops early
 * (tests use it to stand for a worker that dies between batches).
 */
export async function runImport(db: Database, tenantId: string, importId: string, options: { batchesMax?: number } = {}): Promise<void> {
  const runBatch = (oneByOne: boolean) =>
    db.tenant(tenantId, async (tx) => {
      const job = await store.readImport(tx, tenantId, importId, true);
      // An import still `uploading` has no job yet; one that is could only be a job added by hand.
      if (!job || job.status === 'completed' || job.status === 'uploading') return false;
      if (job.status === 'queued') await store.markImport(tx, tenantId, importId, 'running', clock.now());
      const rows = await store.pendingRows(tx, tenantId, importId, job.cursor, IMPORT_BATCH_ROWS);
      if (rows.length === 0) {
        await store.markImport(tx, tenantId, importId, 'completed', clock.now());
        return false;
      }
      const result = await applyBatch(tx, tenantId, job, rows, oneByOne);
      await store.finishBatch(tx, tenantId, importId, { lastRow: rows.at(-1)!.rowNumber, ...result });
      return true;
    });
  for (let batches = 0; options.batchesMax === undefined || batches < options.batchesMax; batches++) {
    let more: boolean;
    try {
      more = await runBatch(false);
    } catch (error) {
      // A batch of held grants refused as a whole (a balance limit) is applied again row by row.
      if (!(error instanceof AppError)) throw error;
      more = await runBatch(true);
    }
    if (!more) return;
  }
}
