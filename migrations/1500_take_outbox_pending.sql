-- The outbox pump's take (src/modules/webhooks/dispatcher.ts, and the fallback
-- src/platform/outbox.ts): up to p_limit pending markers of any tenant, deleted,
-- with their events' columns (null where the event is gone).
--
-- The events are read in the same query as the delete: a function's query
-- sees what was committed when it starts, which may be more than the calling
-- statement sees, so an event read by the caller could be missing for a
-- marker the function took (the webhooks concurrency test lost 20 of 400
-- events that way).
--
-- Several pumps at once take disjoint rows (SKIP LOCKED); the rows are deleted
-- by their addresses (a locked row cannot move under the delete). The take
-- reads the heap from its start, past the dead rows of earlier takes until a
-- vacuum frees them (docs/performance.md, "a minute's crowd"). A take in key
-- order through the primary key was tried: the index entries of rows deleted
-- moments before cannot be marked dead while older transactions run, so each
-- take fetched them all again, and once the pump fell behind its takes grew,
-- and each took longer per row (114 ms a take in a crowd instead of 2).
--
-- PL/pgSQL, whose statement is planned on each call (plan_cache_mode) for the
-- tables as they are: a SQL function called from a statement is parsed and
-- planned again on every call as well, and a plan kept from a quiet start
-- would look the events up as if outbox_events still held a few rows.
-- OR REPLACE (and IF EXISTS): runnable again over its own result, as every migration after 1480
-- is (src/modules/leaderboards/rank-pages.test.ts runs them again on a schema that has them).
CREATE OR REPLACE FUNCTION take_outbox_pending(p_limit integer)
  RETURNS TABLE (tenant_id uuid, event_id text, seq bigint, event text, participant_id text, engagement_id uuid, created_at timestamptz, traceparent text)
  LANGUAGE plpgsql
  ROWS 500
  SET plan_cache_mode = force_custom_plan
AS $$
BEGIN
  RETURN QUERY
  WITH taken AS (
    DELETE FROM outbox_pending
    WHERE ctid = ANY (ARRAY(SELECT p.ctid FROM outbox_pending p LIMIT p_limit FOR UPDATE SKIP LOCKED))
    RETURNING outbox_pending.tenant_id, outbox_pending.event_id
  )
  SELECT t.tenant_id, t.event_id, e.seq, e.event, e.participant_id, e.engagement_id, e.created_at, e.traceparent
  FROM taken t
  LEFT JOIN LATERAL (SELECT o.seq, o.event, o.participant_id, o.engagement_id, o.created_at, o.traceparent
                     FROM outbox_events o WHERE o.tenant_id = t.tenant_id AND o.id = t.event_id LIMIT 1) e ON true;
END $$;
