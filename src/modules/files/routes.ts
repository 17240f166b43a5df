import { answerKept } from '../../platform/idempotency-http.js';
import type { Readable } from 'node:stream';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorRef } from '../../platform/http.js';
import * as imports from './imports.js';
import * as exports from './exports.js';
import { dryRunImport, DRY_RUN_ROWS_MAX } from './dry-run.js';
import { requireReadableErrorReport } from './access.js';
import { ErrorsQuery, ExportBody, ExportIdParams, ExportList, ImportErrors, ImportHeaders, ImportIdParams, ImportList, ImportQuery, ImportUpload, ListQuery } from './schemas.js';

const tags = ['files'];
const importRef = Type.Ref('FileImport');
const exportRef = Type.Ref('FileExport');
// Every kind shares these routes, so the role check that depends on the kind
// happens in the service (access.ts); platform/permissions.ts lets any console user reach them.
const anyKind = { auth: 'admin' } as const;

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.ctx;

  // The upload route reads its body as a stream: every media type reaches the
  // handler unparsed, which checks it against the format (415) and counts its bytes (413).
  await app.register(async (upload) => {
    upload.removeAllContentTypeParsers();
    upload.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    upload.post(
      '/admin/imports',
      {
        // The Idempotency-Key is kept by the import itself, in the upload's last transaction, with the file's digest as its fingerprint;
        // its header schema (ImportHeaders) is the shared one, so a malformed key is refused (400) before the handler reads the body.
        config: { ...anyKind, idempotencyKey: 'route' },
        schema: {
          tags,
          operationId: 'createImport',
          summary: 'Upload a CSV or JSON lines file of participants, point grants or reward codes; applied by a background job',
          description:
            'The body is the file (`text/csv` or `application/x-ndjson`), read as it arrives; `kind` and `format` are query parameters. ' +
            'The header (CSV) or first object (JSON lines) is checked at once: a missing required column or an unknown one is 400, ' +
            'personal participant fields without `read:pii` are 403. Answers 202 with the import; poll `GET /admin/imports/{import_id}` ' +
            'and read refused rows from `/errors`. Files larger than FILES_IMPORT_BYTES_MAX (256 MiB by default) are refused with 413. ' +
            'With an `Idempotency-Key` header, the same file sent again within 24 hours answers the first import with `duplicate: true` (applied once); the key with another file is 422.',
          querystring: ImportQuery,
          headers: ImportHeaders,
          consumes: ['text/csv', 'application/x-ndjson'],
          body: ImportUpload,
          response: {
            202: importRef,
            400: { ...errorRef, description: 'A required column is missing, a column is unknown or repeated, the CSV cannot be read, or the file has no rows.' },
            403: { ...errorRef, description: 'The credential lacks an admin scope, the role lacks the permission of the kind, or personal fields are imported without read:pii.' },
            413: { ...errorRef, description: 'The file is larger than FILES_IMPORT_BYTES_MAX (256 MiB by default).' },
            415: { ...errorRef, description: 'The body is not text/csv (format csv) or application/x-ndjson / application/jsonl (format jsonl).' },
            422: { ...errorRef, description: 'The Idempotency-Key was used with another file (IDEMPOTENCY_KEY_REUSED).' },
          },
        },
      },
      async (request, reply) => {
        const query = request.query as Static<typeof ImportQuery>;
        const declared = request.headers['content-length'];
        const view = await imports.startImport(db, request.auth!, {
          kind: query.kind,
          format: query.format,
          contentType: request.headers['content-type'],
          declaredLength: declared === undefined ? null : Number(declared),
          body: request.body as unknown as Readable,
          bytesMax: imports.importBytesMax(),
          idempotencyKey: typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : undefined,
        });
        return answerKept(reply, 202, view);
      },
    );

    upload.post(
      '/admin/imports/dry-run',
      {
        config: anyKind,
        schema: {
          tags,
          operationId: 'dryRunImport',
          summary: 'Check a file as an import would apply it, and keep nothing: counts, points in all, the refused rows',
          description:
            'The same body, query and checks as `POST /admin/imports`; each batch of rows is applied as the import job applies it, in a transaction that is rolled back. ' +
            'Answers 200 with the rows an import would apply and refuse (the first 100 refusals), the distinct participants and, for point_grants, the points in all. ' +
            `At most ${DRY_RUN_ROWS_MAX} rows (422 IMPORT_DRY_RUN_TOO_LARGE beyond).`,
          querystring: ImportQuery,
          consumes: ['text/csv', 'application/x-ndjson'],
          body: ImportUpload,
          response: {
            200: Type.Ref('ImportDryRun'),
            400: { ...errorRef, description: 'A required column is missing, a column is unknown or repeated, the CSV cannot be read, or the file has no rows.' },
            403: { ...errorRef, description: 'The credential lacks an admin scope, the role lacks the permission of the kind, or personal fields are imported without read:pii.' },
            413: { ...errorRef, description: 'The file is larger than FILES_IMPORT_BYTES_MAX (256 MiB by default).' },
            415: { ...errorRef, description: 'The body is not text/csv (format csv) or application/x-ndjson / application/jsonl (format jsonl).' },
            422: { ...errorRef, description: 'The file has more rows than a dry run reads (IMPORT_DRY_RUN_TOO_LARGE).' },
          },
        },
      },
      async (request) => {
        const query = request.query as Static<typeof ImportQuery>;
        const declared = request.headers['content-length'];
        return dryRunImport(db, request.auth!, {
          kind: query.kind,
          format: query.format,
          contentType: request.headers['content-type'],
          declaredLength: declared === undefined ? null : Number(declared),
          body: request.body as unknown as Readable,
          bytesMax: imports.importBytesMax(),
        });
      },
    );
  });

  app.get(
    '/admin/imports',
    { config: anyKind, schema: { tags, operationId: 'listImports', summary: 'List imports, newest first', querystring: ListQuery, response: { 200: ImportList } } },
    async (request) => imports.listImports(db, request.auth!, request.query),
  );

  app.get(
    '/admin/imports/:import_id',
    {
      config: anyKind,
      schema: { tags, operationId: 'getImport', summary: "An import's status and progress (rows done, failed, pending)", params: ImportIdParams, response: { 200: importRef } },
    },
    async (request) => imports.readImport(db, request.auth!, request.params.import_id),
  );

  app.get(
    '/admin/imports/:import_id/errors',
    {
      config: anyKind,
      schema: {
        tags,
        operationId: 'listImportErrors',
        summary: "An import's per-row error report: row number, field and detail, in row order",
        description:
          'A detail may quote the row it refuses (a JSON line that cannot be read is quoted by the parser), so the report of a participants import ' +
          'sent by a caller holding `read:pii` is readable only with `read:pii` (403 otherwise); the import itself stays readable.',
        params: ImportIdParams,
        querystring: ErrorsQuery,
        response: {
          200: ImportErrors,
          403: { ...errorRef, description: 'The role lacks the permission of the kind, or the import is a participants import sent with read:pii and the caller lacks read:pii.' },
        },
      },
    },
    async (request) => {
      await requireReadableErrorReport(db, request.auth!, request.params.import_id);
      return imports.listImportErrors(db, request.auth!, request.params.import_id, request.query);
    },
  );

  app.post(
    '/admin/exports',
    {
      config: anyKind,
      schema: {
        tags,
        operationId: 'createExport',
        summary: 'Export participants, the ledger, contest results or webhook deliveries as CSV or JSON lines; written by a background job',
        description:
          'Answers 202 with the export; poll `GET /admin/exports/{export_id}` and download from `file_url` once completed. ' +
          'Participants are masked exactly as the participants API masks them for the requester (full only with `read:pii`; full exports are logged in the personal-data access log). ' +
          'An unmasked export (`masked: false`) is listed, read and downloaded only by callers holding `read:pii` (console: the owner); to anyone else it is 404 and absent from listings.',
        body: ExportBody,
        response: { 202: exportRef },
      },
    },
    async (request, reply) => reply.status(202).send(await exports.startExport(db, request.auth!, request.body)),
  );

  app.get(
    '/admin/exports',
    {
      config: anyKind,
      schema: {
        tags,
        operationId: 'listExports',
        summary: 'List exports, newest first',
        description: 'Unmasked participants exports (`masked: false`) are listed only for callers holding `read:pii` (console: the owner); others do not see them.',
        querystring: ListQuery,
        response: { 200: ExportList },
      },
    },
    async (request) => exports.listExports(db, request.auth!, request.query),
  );

  app.get(
    '/admin/exports/:export_id',
    {
      config: anyKind,
      schema: {
        tags,
        operationId: 'getExport',
        summary: "An export's status and progress",
        description: 'An unmasked participants export (`masked: false`) is readable only with `read:pii` (console: the owner); to anyone else it is 404, as if it did not exist.',
        params: ExportIdParams,
        response: {
          200: exportRef,
          404: { ...errorRef, description: 'No such export in the tenant, or it is unmasked and the caller lacks read:pii (EXPORT_NOT_FOUND either way).' },
        },
      },
    },
    async (request) => exports.readExport(db, request.auth!, request.params.export_id),
  );

  app.get(
    '/admin/exports/:export_id/file',
    {
      config: anyKind,
      schema: {
        tags,
        operationId: 'downloadExport',
        summary: "Download a completed export's file (streamed, as an attachment)",
        description:
          'Every download is recorded in the personal-data access log (`GET /admin/pii-access-log`): who, when, and the export in `reason` ' +
          '(`download of export <id> (<kind>, <format>, masked|unmasked, <n> rows)`), with the personal fields the file shows in clear. ' +
          'The file of an unmasked participants export (`masked: false`) is downloaded only with `read:pii` (console: the owner); to anyone else it is 404.',
        params: ExportIdParams,
        response: {
          200: {
            description: 'The file, CSV or JSON lines, with Content-Disposition: attachment.',
            content: { 'text/csv': { schema: Type.String() }, 'application/x-ndjson': { schema: Type.String() } },
          },
          404: { ...errorRef, description: 'No such export in the tenant, or it is unmasked and the caller lacks read:pii (EXPORT_NOT_FOUND either way).' },
          409: { ...errorRef, description: 'The export is not completed yet.' },
        },
      },
    },
    async (request, reply) => {
      // A HEAD request sends no file, so it is not a download to log.
      const file = await exports.openExportFile(db, request.auth!, request.params.export_id, { record: request.method !== 'HEAD' });
      reply.header('content-type', file.contentType);
      reply.header('content-disposition', `attachment; filename="${file.filename}"`);
      reply.header('content-length', String(file.bytes));
      return reply.send(file.stream as never);
    },
  );
};

export default routes;
