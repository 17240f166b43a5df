-- The tables whose rows are deleted in bulk while requests read and write them
-- keep their empty pages: VACUUM does not truncate them.
--
-- When the last pages of a table are empty after a vacuum, VACUUM returns them
-- to the operating system. To do so it takes an ACCESS EXCLUSIVE lock on the
-- table, which waits for every transaction using it and holds back every one
-- that comes after, then scans the empty pages again backwards and drops them
-- from shared buffers. The outbox pump deletes the pending markers that every
-- state change inserts (outbox_pending), an ingestion lane the markers every
-- accepted event inserts (ingestion_pending), a ranking's rebuild the previous
-- generation the public leaderboard reads (leaderboard_rank_pages and _lookup),
-- a segment's refresh the members a rule condition reads (segment_members): so
-- autovacuum's visit stopped the requests writing or reading them for a moment.
-- In a minute's crowd of 1,000 spins a second, the seconds in which autovacuum
-- visited had a p50 of 43-143 ms (20-35 in the others) in four runs; with
-- truncation off for the whole server (`vacuum_truncate=off`) 33-44 ms in two
-- (docs/performance.md, "Spins: ... truncation"). These tables stay about the
-- same size, so the pages they keep are filled again by the next inserts.
ALTER TABLE outbox_pending SET (vacuum_truncate = false);
ALTER TABLE ingestion_pending SET (vacuum_truncate = false);
ALTER TABLE leaderboard_rank_pages SET (vacuum_truncate = false);
ALTER TABLE leaderboard_rank_lookup SET (vacuum_truncate = false);
ALTER TABLE segment_members SET (vacuum_truncate = false);
