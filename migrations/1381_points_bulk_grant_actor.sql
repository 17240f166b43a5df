-- Who asked for a bulk grant (an API key or a console person), so that the
-- ledger names who granted the entries of its job as it does for a direct
-- grant (migration 1380). Null for jobs started before it was kept.
ALTER TABLE points_bulk_grants
  ADD COLUMN actor_type text CHECK (actor_type IN ('user', 'api_key')),
  ADD COLUMN actor_id text CHECK (char_length(actor_id) BETWEEN 1 AND 200);
