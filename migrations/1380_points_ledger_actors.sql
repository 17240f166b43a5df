-- Who asked for a direct grant or deduct: an API key or a person of the console.
-- The ledger names every other source itself (source_kind, source_id: a rule, a
-- bulk job, an import row, an activity …); a direct entry's source_id is the
-- caller's idempotency key, which says nothing about the caller. Written by the
-- points module in the transaction of the entry; support reads it beside the
-- ledger ("who granted these points").
CREATE TABLE points_ledger_actors (
  tenant_id uuid NOT NULL,
  ledger_entry_id text NOT NULL,
  actor_type text NOT NULL CHECK (actor_type IN ('user', 'api_key')),
  actor_id text NOT NULL CHECK (char_length(actor_id) BETWEEN 1 AND 200),
  PRIMARY KEY (tenant_id, ledger_entry_id),
  FOREIGN KEY (tenant_id, ledger_entry_id) REFERENCES points_ledger (tenant_id, id) ON DELETE CASCADE
);
CALL enable_tenant_rls('points_ledger_actors');
