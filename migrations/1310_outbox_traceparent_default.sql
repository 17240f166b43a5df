-- The single grant and deduct SQL functions (0102-0105) write their outbox rows without naming
-- `traceparent`. While tracing is on, the service calls them in a transaction that sets
-- `app.traceparent` first (points/store.ts, directOperation); the column takes it as its default, so
-- the webhook jobs of those events link to the request that made them. Without the setting (tracing
-- off, or any other writer) the default is NULL, as before. The functions' signatures stay as they are.
ALTER TABLE outbox_events ALTER COLUMN traceparent SET DEFAULT nullif(current_setting('app.traceparent', true), '');
