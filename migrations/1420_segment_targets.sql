-- Segments as targets (issue 36): a multiplier or a challenge may name one
-- segment of its tenant; NULL is everyone. A multiplier then raises only the
-- events of the segment's members; a challenge enrols only members. The
-- foreign key keeps a segment that something targets from being deleted
-- (the segments service answers 409 SEGMENT_IN_USE first, naming the user).
ALTER TABLE points_multipliers
  ADD COLUMN segment_id text,
  ADD FOREIGN KEY (tenant_id, segment_id) REFERENCES segments (tenant_id, id);
CREATE INDEX points_multipliers_segment ON points_multipliers (tenant_id, segment_id) WHERE segment_id IS NOT NULL;

ALTER TABLE challenges
  ADD COLUMN segment_id text,
  ADD FOREIGN KEY (tenant_id, segment_id) REFERENCES segments (tenant_id, id);
CREATE INDEX challenges_segment ON challenges (tenant_id, segment_id) WHERE segment_id IS NOT NULL;
