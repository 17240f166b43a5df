-- Period totals (leaderboard_period_points) are written only for the tenants
-- listed here: those that have had a period board. Two upserts per award were
-- a tenth of a grant's cost for every tenant, with or without such a board.
-- A tenant's first period board lists it and fills its totals from the ledger
-- (leaderboards/totals.ts, ensurePeriodTotals; ready_at is set once filled).
CREATE TABLE leaderboard_period_tenants (
  tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
  ready_at timestamptz
);
CALL enable_tenant_rls('leaderboard_period_tenants');

-- Tenants with a period board keep the totals written so far: complete, since
-- every award wrote them until now.
INSERT INTO leaderboard_period_tenants (tenant_id, ready_at)
SELECT DISTINCT tenant_id, now() FROM leaderboards WHERE metric = 'period_points';

-- The rest stop being kept; a later first period board fills them afresh.
DELETE FROM leaderboard_period_points p
WHERE NOT EXISTS (SELECT 1 FROM leaderboard_period_tenants t WHERE t.tenant_id = p.tenant_id);
