-- Publishing (issue 18): people without the publishing permission keep rules,
-- engagements, challenges and contests as drafts and ask for a review; a
-- publisher approves (the item is published in the same transaction) or
-- returns it with a note.

-- Rules gain a draft state: never published, applied to nothing.
ALTER TABLE earn_rules DROP CONSTRAINT earn_rules_status_check;
ALTER TABLE earn_rules ADD CONSTRAINT earn_rules_status_check CHECK (status IN ('draft', 'active', 'paused'));

CREATE TABLE publication_reviews (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id text NOT NULL CHECK (id ~ '^rev_[0-9a-f]{32}$'),
  kind text NOT NULL CHECK (kind IN ('rule', 'engagement', 'challenge', 'contest')),
  item_id text NOT NULL,
  -- The item's name when it was submitted, so the list reads without a join per kind.
  item_name text NOT NULL,
  -- The item's updated_at when it was submitted: an approval publishes only the draft that was submitted.
  item_revision text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'returned')),
  note text CHECK (char_length(note) <= 2000),
  submitted_by_type text NOT NULL CHECK (submitted_by_type IN ('user', 'api_key')),
  submitted_by_id text NOT NULL,
  submitted_by_email text,
  submitted_at timestamptz NOT NULL,
  decided_by_type text CHECK (decided_by_type IN ('user', 'api_key')),
  decided_by_id text,
  decided_by_email text,
  decided_at timestamptz,
  decision_note text CHECK (char_length(decision_note) <= 2000),
  PRIMARY KEY (tenant_id, id),
  CHECK ((status = 'pending') = (decided_at IS NULL)),
  CHECK (status <> 'returned' OR decision_note IS NOT NULL)
);
-- One pending request per item.
CREATE UNIQUE INDEX publication_reviews_pending ON publication_reviews (tenant_id, kind, item_id) WHERE status = 'pending';
CREATE INDEX publication_reviews_list ON publication_reviews (tenant_id, status, submitted_at DESC, id DESC);
CREATE INDEX publication_reviews_item ON publication_reviews (tenant_id, kind, item_id, submitted_at DESC);
CALL enable_tenant_rls('publication_reviews');
