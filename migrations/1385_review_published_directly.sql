-- Publishing, second round (issue 35): a pending review request is closed when
-- its item is published directly from its own page or route (status
-- `published`, with who published it and when in decided_by/decided_at), so a
-- later approval answers the closed request instead of failing. A rule's review
-- request carries the author's latest backtest (the simulation result the
-- author saw), shown to the approver.
ALTER TABLE publication_reviews DROP CONSTRAINT publication_reviews_status_check;
ALTER TABLE publication_reviews ADD CONSTRAINT publication_reviews_status_check CHECK (status IN ('pending', 'approved', 'returned', 'published'));
ALTER TABLE publication_reviews ADD COLUMN backtest jsonb;
