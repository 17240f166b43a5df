-- The lifecycle tick's rank snapshots move out of contest_entries: the tick
-- rewrote every entry row while scoring updated the same rows, so the two
-- blocked (and deadlocked) each other. Scoring writes contest_entries; only
-- the tick writes this table.
CREATE TABLE contest_rank_snapshots (
  tenant_id uuid NOT NULL,
  contest_id text NOT NULL,
  participant_id text NOT NULL,
  -- The rank at the last tick, and the rank at the start of the rank-jump window.
  rank integer NOT NULL,
  window_rank integer NOT NULL,
  window_at timestamptz NOT NULL,
  jump_flagged_at timestamptz,
  ticked_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, contest_id, participant_id),
  FOREIGN KEY (tenant_id, contest_id, participant_id) REFERENCES contest_entries (tenant_id, contest_id, participant_id) ON DELETE CASCADE
);
CALL enable_tenant_rls('contest_rank_snapshots');

ALTER TABLE contest_entries
  DROP COLUMN rank,
  DROP COLUMN rank_window_rank,
  DROP COLUMN rank_window_at,
  DROP COLUMN rank_jump_flagged_at;
