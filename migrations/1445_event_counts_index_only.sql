-- Issue 36 (segments, experiment goals): "at least 3 purchase in the last 30
-- days" counts one event name's events in a window per participant. The name
-- index already finds those events; with the participant carried in it, the
-- count is an index-only scan (a few thousand index pages for a month of one
-- event over a million participants) instead of fetching each event's row
-- (bench/segments.bench.ts: the table read whole, 2 GB at 4,000,000 events,
-- where the planner judged that cheaper than 270,000 row fetches). Same key,
-- same number of indexes on the table: ingestion writes one index entry per
-- event here, as before, a few bytes wider.
DROP INDEX ingested_events_name;
CREATE INDEX ingested_events_name ON ingested_events (tenant_id, event_name, occurred_at, seq) INCLUDE (participant_id);
