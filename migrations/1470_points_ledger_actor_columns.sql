-- Who asked for a direct grant or deduct is kept on the ledger entry itself
-- (actor_type, actor_id; null for every other entry, whose source_kind and
-- source_id name their cause), written by the entry's own insert. Until now
-- it was a row of points_ledger_actors (migration 1380), one more statement,
-- row, index entry and foreign-key check in every direct grant's and
-- deduct's transaction. The rows move here and the table is dropped.
ALTER TABLE points_ledger
  ADD COLUMN actor_type text,
  ADD COLUMN actor_id text,
  ADD CONSTRAINT points_ledger_actor_check CHECK (
    (actor_type IS NULL AND actor_id IS NULL)
    OR (actor_type IN ('user', 'api_key') AND char_length(actor_id) BETWEEN 1 AND 200)
  );

UPDATE points_ledger l SET actor_type = a.actor_type, actor_id = a.actor_id
FROM points_ledger_actors a
WHERE l.tenant_id = a.tenant_id AND l.id = a.ledger_entry_id;

DROP TABLE points_ledger_actors;
