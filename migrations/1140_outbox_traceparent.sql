-- The trace context (W3C traceparent) of the request, job or event batch that emitted an outbox
-- event, while tracing is on: the dispatch and delivery jobs that carry the event link their spans
-- to it (webhooks/service.ts, delivery.ts). NULL when tracing is off.
ALTER TABLE outbox_events ADD COLUMN traceparent text;
