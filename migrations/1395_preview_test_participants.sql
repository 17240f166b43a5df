-- A draft engagement is previewed in the console with a test participant
-- (src/modules/engagements/preview.ts). The participant is flagged here so
-- that lists leave it out by default and a reset can delete it with every
-- row that cascades from it; a preview's completions write no points, reward
-- claims, badges, challenge progress or events (src/modules/activities).
ALTER TABLE participants ADD COLUMN test boolean NOT NULL DEFAULT false;
CREATE INDEX participants_test ON participants (tenant_id) WHERE test;
