-- The outbox pump's take reads outbox_pending from where its last take ended
-- (a heap position, p_from), not from the start of the heap.
--
-- Read from the start, a take passed every row the takes before it had
-- deleted, dead until a vacuum frees them (once a minute at most: autovacuum
-- visits a database once per autovacuum_naptime). In a minute's crowd of 1,000
-- spins a second the take grew from 1.3 to 3.1 ms a call (7 s of the minute's
-- statements). From p_from on (a TID range scan: the pages before it are not
-- read), a take reads the rows inserted since the last one. A row that went
-- into space a vacuum freed before p_from is found by a take from the start,
-- which the caller makes at least every quarter second (src/platform/outbox.ts,
-- TakeCursor). Reading from the start whenever nothing was found after p_from
-- was tried: an idle pump's every look then read past the dead rows again (a
-- third of a crowd's takes, 1.5 ms each). Deliveries are not ordered
-- (docs/webhooks.md), so which pending rows a take finds first changes nothing
-- a receiver can rely on.
--
-- Each row returned carries next_from, the heap position of the last row taken:
-- where the next take starts. Otherwise as migration
-- 1500: the rows locked with SKIP LOCKED, deleted by their addresses, with their
-- events read in the same query.
DROP FUNCTION IF EXISTS take_outbox_pending(integer);
CREATE OR REPLACE FUNCTION take_outbox_pending(p_limit integer, p_from tid)
  RETURNS TABLE (tenant_id uuid, event_id text, seq bigint, event text, participant_id text, engagement_id uuid, created_at timestamptz, traceparent text, next_from tid)
  LANGUAGE plpgsql
  ROWS 500
  SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
  v_taken tid[];
BEGIN
  v_taken := ARRAY(SELECT p.ctid FROM outbox_pending p WHERE p.ctid >= p_from LIMIT p_limit FOR UPDATE SKIP LOCKED);
  RETURN QUERY
  WITH taken AS (
    DELETE FROM outbox_pending
    WHERE ctid = ANY (v_taken)
    RETURNING outbox_pending.tenant_id, outbox_pending.event_id
  )
  SELECT t.tenant_id, t.event_id, e.seq, e.event, e.participant_id, e.engagement_id, e.created_at, e.traceparent,
         v_taken[cardinality(v_taken)]
  FROM taken t
  LEFT JOIN LATERAL (SELECT o.seq, o.event, o.participant_id, o.engagement_id, o.created_at, o.traceparent
                     FROM outbox_events o WHERE o.tenant_id = t.tenant_id AND o.id = t.event_id LIMIT 1) e ON true;
END $$;
