-- Accepted events not yet handed to the job queue.
--
-- The accept statement writes one row here per event it stores (in the same
-- statement), instead of adding a processing job per participant queue: a job
-- insert NOTIFYs, which serialises committing transactions, and
-- graphile-worker's add_jobs scans its job table on every call, so accepting
-- slowed down as a backlog of jobs grew (measured: 1.5 ms of database time per
-- event with a backlog of ~20,000 jobs). An ingestion pump, in every worker
-- process, moved these rows into `ingestion.process` jobs in batches, deleting
-- them in the same transaction; `seq` keeps each participant queue's events in
-- accept order. Since migration 1100 the rows also carry a lane,
-- and the lane pump (src/modules/ingestion/lanes.ts) applies a lane's rows in
-- batches and deletes them in the transaction that applies them.
CREATE TABLE ingestion_pending (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id uuid NOT NULL,
  event_id text NOT NULL,
  queue text NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 1000);
CALL enable_tenant_rls('ingestion_pending');

-- Events accepted before this migration already have their jobs; nothing to move.
