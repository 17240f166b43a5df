-- The rank tables' arrays get no planner statistics.
--
-- Each rebuild inserts a generation and deletes the previous one (20,000 rows
-- each for 1M participants), so autovacuum analyzes both tables after every
-- rebuild. For an array column ANALYZE also counts the most common elements:
-- 100 ids, scores or ranks per sampled row, 0.8-1.0 s of a core for both tables
-- of a 1M ranking, in an autovacuum worker that competes with the API at full
-- priority (a rebuild's own backend runs at a lower one). No statement filters,
-- joins or sorts on these arrays: they are read from rows found by their key.
-- Without statistics on them ANALYZE took 0.13-0.14 s (docs/performance/leaderboards.md).
ALTER TABLE leaderboard_rank_pages ALTER COLUMN participant_ids SET STATISTICS 0, ALTER COLUMN scores SET STATISTICS 0;
ALTER TABLE leaderboard_rank_lookup ALTER COLUMN participant_ids SET STATISTICS 0, ALTER COLUMN ranks SET STATISTICS 0;
