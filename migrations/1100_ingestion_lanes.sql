-- Batch processing of accepted events by lane.
--
-- Processing no longer goes through a graphile-worker job per participant
-- queue: a worker takes up to a batch of one tenant's lane straight from
-- `ingestion_pending` and applies them in one transaction (see
-- src/modules/ingestion/lanes.ts). A participant's events are always in the
-- same lane (a hash of the participant), a lane is processed by one
-- transaction at a time, and its rows are taken in `seq` (accept) order, so
-- each participant's events keep their order.
--
-- The key is (tenant_id, lane, seq): the processor reads a lane in seq order
-- through it, and it is a key that distributes by tenant_id (Citus).
ALTER TABLE ingestion_pending ADD COLUMN lane smallint;
-- The lane of a pending row of an older release: its queue bucket (normalize.ts) modulo the lane count, as the accept statement computes it (ingestion/store.ts).
UPDATE ingestion_pending SET lane = (split_part(queue, ':', 2)::int % 4);
ALTER TABLE ingestion_pending ALTER COLUMN lane SET NOT NULL;
ALTER TABLE ingestion_pending DROP CONSTRAINT ingestion_pending_pkey;
ALTER TABLE ingestion_pending ADD PRIMARY KEY (tenant_id, lane, seq);
