-- Per-participant failures of bulk grants. An item is pending (no ledger
-- entry, no failure), granted (ledger_entry_id set) or failed (failure set, in
-- the same transaction as its batch's grants). The job's `failed` counter
-- counts failed items; participants erased while the job waits or runs lose
-- their item with the rest of their rows, and the status read counts them as
-- failed too (total - done - failed items - pending).
ALTER TABLE points_bulk_grant_items ADD COLUMN failure text CHECK (failure IN ('balance_limit'));
DROP INDEX points_bulk_grant_items_pending;
CREATE INDEX points_bulk_grant_items_pending ON points_bulk_grant_items (tenant_id, job_id, participant_id)
  WHERE ledger_entry_id IS NULL AND failure IS NULL;
CREATE INDEX points_bulk_grant_items_failed ON points_bulk_grant_items (tenant_id, job_id, participant_id) WHERE failure IS NOT NULL;
