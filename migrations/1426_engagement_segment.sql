-- The segment an engagement is for (issue 36), as a column the segments module finds in the
-- catalog (its `used_by`, and 409 SEGMENT_IN_USE on delete): the draft's, else the published
-- snapshot's. Derived from the definitions, so no code writes it. An activity's segment and an
-- `in_segment:` gate condition stay inside the definition only (docs/decisions.md).
ALTER TABLE engagements
  ADD COLUMN segment_id text GENERATED ALWAYS AS (coalesce(definition->>'segment_id', published_definition->>'segment_id')) STORED;
