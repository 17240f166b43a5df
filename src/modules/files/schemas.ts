import { Type, type Static } from '@sinclair/typebox';
import { Pagination } from '../../platform/http.js';
import { IdempotencyKeyHeaderSchema } from '../../platform/idempotency-http.js';
import { SegmentId } from '../segments/index.js';
import { ERRORS_PAGE_MAX, LIST_PAGE_MAX } from './imports.js';

const ImportKind = Type.Union([Type.Literal('participants'), Type.Literal('point_grants'), Type.Literal('reward_codes')], {
  description: 'participants: profiles with custom fields; point_grants: one grant per row; reward_codes: codes for pool rewards.',
});
const ExportKind = Type.Union([Type.Literal('participants'), Type.Literal('ledger'), Type.Literal('contest_results'), Type.Literal('webhook_deliveries')]);
const FileFormat = Type.Union([Type.Literal('csv'), Type.Literal('jsonl')], { description: 'csv (RFC 4180 with a header row) or jsonl (one JSON object per line).' });
const Status = Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed')]);
const ImportStatus = Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('uploading')], {
  description: 'queued, running, completed: the job that applies its rows; uploading: the file is still arriving (an upload that stops is deleted, and never reaches queued).',
});
const Time = Type.String({ format: 'date-time' });
const NullableTime = Type.Union([Time, Type.Null()]);

export const ImportQuery = Type.Object({ kind: ImportKind, format: FileFormat }, { additionalProperties: false });
export const ImportHeaders = Type.Object({
  // The shared header's bounds (1 to 255 visible ASCII characters), refused with 400 before the handler runs; the import keeps the key itself.
  'idempotency-key': Type.Optional({
    ...IdempotencyKeyHeaderSchema,
    description:
      'Sending the same file again with the same key within 24 hours answers the first import (`duplicate: true`) and stores nothing; the same key with another file gets 422 `IDEMPOTENCY_KEY_REUSED`.',
  }),
});

// No `type`: the body reaches the handler as a stream, which this schema must accept; it documents the file.
export const ImportUpload = Type.Unsafe<string>({
  format: 'binary',
  description:
    'The file itself as the request body: `text/csv` for csv, `application/x-ndjson` (or `application/jsonl`) for jsonl. ' +
    'participants: participant_id (required), display_name, the standard profile fields and defined custom field keys; ' +
    'point_grants: participant_id, amount, reason (required), memo, type; reward_codes: reward_id, code.',
});

export const ImportIdParams = Type.Object({ import_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
export const ExportIdParams = Type.Object({ export_id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

export const ImportJob = Type.Object(
  {
    import_id: Type.String(),
    kind: ImportKind,
    format: FileFormat,
    status: ImportStatus,
    columns: Type.Array(Type.String(), { description: 'The columns of the file (CSV header, or the keys of the first JSON line).' }),
    rows_total: Type.Integer({ description: 'Rows in the file (while uploading: rows stored so far).' }),
    rows_done: Type.Integer({ description: 'Rows applied.' }),
    rows_failed: Type.Integer({ description: 'Rows refused; see GET /admin/imports/{import_id}/errors.' }),
    rows_pending: Type.Integer({ description: 'Rows not yet processed.' }),
    bytes: Type.Integer(),
    created_at: Time,
    started_at: NullableTime,
    finished_at: NullableTime,
    duplicate: Type.Optional(Type.Boolean({ description: 'On the upload answer only: true when the Idempotency-Key named an earlier upload of the same file, which is the import shown.' })),
  },
  { $id: 'FileImport', title: 'FileImport' },
);

export const ImportList = Type.Object({ imports: Type.Array(Type.Ref('FileImport')), next_cursor: Type.Union([Type.String(), Type.Null()]) });
export const ListQuery = Type.Object({ limit: Pagination.limit(LIST_PAGE_MAX, 25), cursor: Pagination.cursor() }, { additionalProperties: false });
export const ErrorsQuery = Type.Object({ limit: Pagination.limit(ERRORS_PAGE_MAX, 100), cursor: Pagination.cursor() }, { additionalProperties: false });

export const ImportErrors = Type.Object({
  errors: Type.Array(
    Type.Object({
      row: Type.Integer({ description: 'The data row, 1 for the first row after the CSV header (or the first JSON line).' }),
      field: Type.Union([Type.String(), Type.Null()], { description: 'The column at fault, when one is.' }),
      code: Type.String(),
      detail: Type.String(),
    }),
  ),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const ExportBody = Type.Object(
  {
    kind: ExportKind,
    format: FileFormat,
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Rows created at or after this time (not for contest_results).' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Rows created before this time (not for contest_results).' })),
    contest_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The contest of a contest_results export (required there).' })),
    segment_id: Type.Optional({
      ...SegmentId,
      description: 'participants only: the members of this segment of the tenant (as each page is written), masked like every participants export. Another kind: 400 `EXPORT_FILTER_NOT_APPLICABLE`; a segment the tenant does not have: 422 `SEGMENT_NOT_FOUND`.',
    }),
  },
  {
    additionalProperties: false,
    examples: [{ kind: 'participants', format: 'csv', from: '2026-11-01T00:00:00.000Z', to: '2026-11-26T09:30:00.000Z', segment_id: 'seg_0f8fad5bd9cb469fa16570867728950e' }],
  },
);
export type ExportBody = Static<typeof ExportBody>;

export const ExportJob = Type.Object(
  {
    export_id: Type.String(),
    kind: ExportKind,
    format: FileFormat,
    status: Status,
    filters: Type.Object({ from: NullableTime, to: NullableTime, contest_id: Type.Union([Type.String(), Type.Null()]), segment_id: Type.Union([Type.String(), Type.Null()]) }),
    rows_written: Type.Integer({ description: 'Rows written so far.' }),
    bytes: Type.Integer({ description: 'Size of the file written so far.' }),
    masked: Type.Union([Type.Boolean(), Type.Null()], { description: 'participants: true when personal values are masked (the requester lacked read:pii); null for other kinds.' }),
    file_url: Type.Union([Type.String(), Type.Null()], { description: 'Where to download the file once completed.' }),
    created_at: Time,
    started_at: NullableTime,
    finished_at: NullableTime,
    restarts_after_erasure: Type.Integer({
      minimum: 0,
      description:
        'How many times a participant\'s erasure sent this export back to the start: its file was deleted and is written again without the erased participant (status `queued` again, then `running`, `completed`).',
    }),
  },
  { $id: 'FileExport', title: 'FileExport' },
);

export const ExportList = Type.Object({ exports: Type.Array(Type.Ref('FileExport')), next_cursor: Type.Union([Type.String(), Type.Null()]) });

export const ImportDryRun = Type.Object(
  {
    kind: ImportKind,
    format: FileFormat,
    columns: Type.Array(Type.String(), { description: 'The columns of the file.' }),
    rows_total: Type.Integer({ description: 'Rows in the file.' }),
    rows_valid: Type.Integer({ description: 'Rows an import would apply.' }),
    rows_refused: Type.Integer({ description: 'Rows an import would refuse; the first ones are in `errors`.' }),
    participants: Type.Integer({ description: 'Distinct participants of the rows an import would apply.' }),
    points_total: Type.Union([Type.Integer(), Type.Null()], { description: 'point_grants: the points the rows an import would apply grant in all; null for other kinds.' }),
    errors: Type.Array(
      Type.Object({
        row: Type.Integer({ description: 'The data row, 1 for the first row after the CSV header (or the first JSON line).' }),
        field: Type.Union([Type.String(), Type.Null()], { description: 'The column at fault, when one is.' }),
        code: Type.String(),
        detail: Type.String({ description: 'May quote the row: the caller\'s own file, answered to the caller only and kept nowhere.' }),
      }),
      { description: 'The first 100 refusals, in row order.' },
    ),
    errors_truncated: Type.Boolean({ description: 'True when more refusals than those listed were found.' }),
  },
  { $id: 'ImportDryRun', title: 'ImportDryRun' },
);
