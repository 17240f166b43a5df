-- A segment used by a live program is live itself (issue 36): a change of its
-- filter or materialization by someone who may not publish is kept as the
-- segment's draft (both columns set, or neither) until a publisher approves it
-- through the review queue, which then applies it; the live filter keeps
-- deciding membership meanwhile.
ALTER TABLE segments
  ADD COLUMN draft_filter jsonb,
  ADD COLUMN draft_materialized boolean,
  ADD CONSTRAINT segments_draft_whole CHECK ((draft_filter IS NULL) = (draft_materialized IS NULL));

-- Segments are reviewed like the programs that use them.
ALTER TABLE publication_reviews DROP CONSTRAINT publication_reviews_kind_check;
ALTER TABLE publication_reviews ADD CONSTRAINT publication_reviews_kind_check CHECK (kind IN ('rule', 'engagement', 'challenge', 'contest', 'segment'));
