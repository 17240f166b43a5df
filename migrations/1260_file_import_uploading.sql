-- An import is stored while its upload streams in (docs/decisions/files.md):
-- its row is inserted with status `uploading` when the first data row
-- arrives, its rows are written in short transactions as they arrive, and a
-- last short transaction claims the Idempotency-Key and moves it to `queued`
-- with its job. A refused or broken upload deletes the import and its rows;
-- an upload whose process died is found by the retention job through the
-- partial index below and deleted after a day.
ALTER TABLE file_imports DROP CONSTRAINT file_imports_status_check;
ALTER TABLE file_imports ADD CONSTRAINT file_imports_status_check CHECK (status IN ('uploading', 'queued', 'running', 'completed'));
CREATE INDEX file_imports_uploading ON file_imports (created_at) WHERE status = 'uploading';
