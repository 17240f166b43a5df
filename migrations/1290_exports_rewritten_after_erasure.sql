-- An export file written before a participant was erased holds that
-- participant's values. Every erasure (a row of participant_erasures, written
-- in the erasure's own transaction) sends the tenant's running and completed
-- exports back to the start: their chunks are deleted, the export is queued
-- again and its job added, so the file is written again without the erased
-- participant, in the same transaction as the erasure (docs/decisions/files.md).
-- A running export job holds its export row while it writes a page: the
-- UPDATE below waits for that page, and the job's next page finds the export
-- queued and starts over.
ALTER TABLE file_exports ADD COLUMN restarts_after_erasure integer NOT NULL DEFAULT 0;

CREATE FUNCTION files_restart_exports_after_erasure() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  restarted text[];
BEGIN
  WITH moved AS (
    UPDATE file_exports e
       SET status = 'queued', cursor = NULL, columns = NULL, rows_written = 0, chunks = 0, bytes = 0,
           started_at = NULL, finished_at = NULL, restarts_after_erasure = e.restarts_after_erasure + 1
     WHERE e.tenant_id = NEW.tenant_id AND e.status IN ('running', 'completed')
     RETURNING e.id
  )
  SELECT coalesce(array_agg(id), '{}') INTO restarted FROM moved;
  IF cardinality(restarted) = 0 THEN
    RETURN NULL;
  END IF;
  DELETE FROM file_export_chunks c WHERE c.tenant_id = NEW.tenant_id AND c.export_id = ANY (restarted);
  PERFORM graphile_worker.add_job(
    'files.export',
    json_build_object('tenant_id', NEW.tenant_id, 'export_id', x.id),
    max_attempts => 10,
    job_key => 'files.export:' || x.id,
    job_key_mode => 'replace'
  )
  FROM unnest(restarted) AS x (id);
  RETURN NULL;
END $$;

CREATE TRIGGER participant_erasures_restart_exports
  AFTER INSERT ON participant_erasures
  FOR EACH ROW EXECUTE FUNCTION files_restart_exports_after_erasure();
