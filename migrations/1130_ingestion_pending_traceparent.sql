-- The trace context of the request that accepted an event (W3C traceparent), kept with its pending
-- row while tracing is on, so that the span of the lane batch that processes it links back to the
-- request (lanes.ts). NULL when tracing is off; the row, and the value, go once the event is processed.
ALTER TABLE ingestion_pending ADD COLUMN traceparent text;
