-- A destination's description (issue 35, item 8): a free note on what the
-- receiver is and who runs it, edited in the console beside the URL and the
-- event filter. Optional; at most 500 characters (the service says so first,
-- with the field named; the check is the last line of defence).
ALTER TABLE webhook_destinations
  ADD COLUMN description text CHECK (description IS NULL OR char_length(description) <= 500);
