-- Issue 36 (segments): a segment's size starts from the tenant's participants
-- that are not test participants (test ones are never members). Most filters
-- need only their ids (balances, badges, event counts, custom fields are in
-- other tables), and this partial index gives them as an index-only scan of
-- about 40 MB per million participants instead of a scan of the participants
-- table (about 470 MB per million with profiles). On the data of
-- bench/segments.bench.ts (1,000,000 participants, load average 12), a
-- count(*) of "available_points gte 5,000" took 570–670 ms before, 230–370 ms
-- with it; an `any` group of four facts as semi-joins 2.0–3.1 s, 0.8–1.8 s.
CREATE INDEX participants_members ON participants (tenant_id, participant_id) WHERE NOT test;
