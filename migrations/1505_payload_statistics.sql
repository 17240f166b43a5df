-- The payloads of the rows written on every request get no planner statistics.
--
-- Autovacuum analyzes a table after every tenth of it has changed: in a crowd of
-- 1,000 spins a second, the tables a spin writes are analyzed about once a
-- minute, each by an autovacuum worker at the API's priority. For a jsonb
-- column ANALYZE sorts and compares the sampled documents to find their most
-- common values and histogram, a third to a half of its work on these tables:
-- of a 20 s crowd's tables (docs/performance.md, "Spins: ... the payloads'
-- statistics"), outbox_events took 320-384 ms with statistics on `data` and
-- 215-232 ms without; activity_attempts 295-331 ms with them on `result` and
-- `response`, 157-165 ms without; activity_facts 120-122 ms with them on
-- `properties`, 91-94 ms without. No statement filters, joins or sorts on these
-- columns by their value: the rows are found by their keys and the payloads
-- read, or a key of a payload read from rows found so (as migration 1485 did
-- for the rank pages' arrays).
ALTER TABLE outbox_events ALTER COLUMN data SET STATISTICS 0;
ALTER TABLE activity_attempts ALTER COLUMN result SET STATISTICS 0, ALTER COLUMN response SET STATISTICS 0;
ALTER TABLE activity_facts ALTER COLUMN properties SET STATISTICS 0;
ALTER TABLE ingested_events ALTER COLUMN properties SET STATISTICS 0, ALTER COLUMN outcome SET STATISTICS 0;
ALTER TABLE idempotency_keys ALTER COLUMN response SET STATISTICS 0;
ALTER TABLE audit_log ALTER COLUMN details SET STATISTICS 0, ALTER COLUMN before SET STATISTICS 0, ALTER COLUMN after SET STATISTICS 0;
ALTER TABLE file_import_rows ALTER COLUMN data SET STATISTICS 0;
