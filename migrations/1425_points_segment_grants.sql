-- A bulk grant to the members of a segment (POST /admin/points/segment-grants, issue 36): the job
-- names the segment its items were taken from. The items are the members at acceptance; the job
-- stays readable when the segment is deleted later, so no foreign key.
ALTER TABLE points_bulk_grants
  ADD COLUMN segment_id text CHECK (segment_id ~ '^seg_[0-9a-f]{32}$');
