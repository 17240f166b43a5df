-- Files in and out (docs/decisions/files.md): imports of participants, point
-- grants and reward codes from CSV or JSON lines, and exports of participants,
-- the ledger, contest results and webhook deliveries, both as background jobs.

-- An import: the upload is parsed while it streams in and its rows are stored
-- below in the upload's transaction; a job then applies them in batches.
-- `cursor` is the highest row number applied: a batch applies its rows,
-- records their errors, deletes them and moves the cursor in one transaction,
-- so a worker killed mid-batch leaves the cursor where the batch started.
CREATE TABLE file_imports (
  tenant_id uuid NOT NULL,
  id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('participants', 'point_grants', 'reward_codes')),
  format text NOT NULL CHECK (format IN ('csv', 'jsonl')),
  status text NOT NULL CHECK (status IN ('queued', 'running', 'completed')),
  -- Who asked, as the job acts for them: { kind, actor_id, scopes, role }.
  requested_by jsonb NOT NULL,
  columns text[] NOT NULL,
  rows_total integer NOT NULL CHECK (rows_total >= 0),
  cursor integer NOT NULL DEFAULT 0,
  rows_done integer NOT NULL DEFAULT 0,
  rows_failed integer NOT NULL DEFAULT 0,
  bytes bigint NOT NULL,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX file_imports_created ON file_imports (tenant_id, created_at DESC, id DESC);
CALL enable_tenant_rls('file_imports');

-- Rows not yet applied: the record as parsed (`data`), or why it could not be parsed.
CREATE TABLE file_import_rows (
  tenant_id uuid NOT NULL,
  import_id text NOT NULL,
  row_number integer NOT NULL,
  data jsonb,
  parse_error text,
  PRIMARY KEY (tenant_id, import_id, row_number),
  FOREIGN KEY (tenant_id, import_id) REFERENCES file_imports (tenant_id, id) ON DELETE CASCADE
);
CALL enable_tenant_rls('file_import_rows');

-- The per-row error report: one row per problem (a row may have several).
CREATE TABLE file_import_errors (
  tenant_id uuid NOT NULL,
  import_id text NOT NULL,
  row_number integer NOT NULL,
  position smallint NOT NULL,
  field text,
  code text NOT NULL,
  detail text NOT NULL,
  PRIMARY KEY (tenant_id, import_id, row_number, position),
  FOREIGN KEY (tenant_id, import_id) REFERENCES file_imports (tenant_id, id) ON DELETE CASCADE
);
CALL enable_tenant_rls('file_import_errors');

-- An export: a job reads the source through a keyset cursor (`cursor`) and
-- appends the file in chunks, each chunk and the cursor move in one transaction.
CREATE TABLE file_exports (
  tenant_id uuid NOT NULL,
  id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('participants', 'ledger', 'contest_results', 'webhook_deliveries')),
  format text NOT NULL CHECK (format IN ('csv', 'jsonl')),
  status text NOT NULL CHECK (status IN ('queued', 'running', 'completed')),
  filters jsonb NOT NULL,
  requested_by jsonb NOT NULL,
  -- CSV columns, fixed when the export starts (participants: the custom fields defined then).
  columns text[],
  cursor jsonb,
  rows_written bigint NOT NULL DEFAULT 0,
  chunks integer NOT NULL DEFAULT 0,
  bytes bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX file_exports_created ON file_exports (tenant_id, created_at DESC, id DESC);
CALL enable_tenant_rls('file_exports');

CREATE TABLE file_export_chunks (
  tenant_id uuid NOT NULL,
  export_id text NOT NULL,
  seq integer NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (tenant_id, export_id, seq),
  FOREIGN KEY (tenant_id, export_id) REFERENCES file_exports (tenant_id, id) ON DELETE CASCADE
);
CALL enable_tenant_rls('file_export_chunks');
