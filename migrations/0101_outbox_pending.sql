-- Outbox events not yet handed to the dispatcher.
--
-- `emit` writes the event and one row here in the emitting transaction, so a
-- committed change always leaves its pending row behind, whatever happens to
-- the process afterwards. The outbox pump (src/platform/outbox.ts), running in
-- every worker process, moves pending rows into `outbox.dispatch` jobs of the
-- job queue, deleting them in the same transaction as the job insert.
--
-- Why a table instead of one queue job per emit: adding a graphile-worker job
-- sends a NOTIFY, and PostgreSQL serialises the commits of every notifying
-- transaction on one global lock held across the WAL flush. One job per
-- emitting transaction therefore capped every ledger change at the rate of
-- serial fsyncs (measured: grant statement + outbox row 1,163/s, with a NOTIFY
-- 571/s, with add_job 489/s at 64 connections). The pump adds one job per
-- batch of events instead.
CREATE TABLE outbox_pending (
  tenant_id uuid NOT NULL,
  event_id text NOT NULL,
  PRIMARY KEY (tenant_id, event_id)
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 1000);
CALL enable_tenant_rls('outbox_pending');
