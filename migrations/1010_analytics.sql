-- Analytics (the console's Overview, issue 18): counters of finished webhook
-- deliveries, kept for good.
--
-- Finished deliveries are deleted WEBHOOK_LOG_RETENTION_DAYS after they finish
-- (migration 0201, webhooks retention), so a chart read from
-- webhook_deliveries would lose its older days. Instead, a trigger counts each
-- delivery when it reaches SUCCEEDED or EXHAUSTED, in the transaction that
-- records the outcome, into a bucket of 15 minutes (UTC). Fifteen minutes
-- because every time zone in use today is a whole number of quarter hours
-- from UTC: each bucket falls inside one local day of any tenant, and a tenant
-- whose time zone changes still gets exact days. At most 96 rows per tenant
-- and day, only for quarter hours in which a delivery finished.
--
-- CANCELLED deliveries (destination deactivated before the attempt) and the
-- test ping (`ping`) are not counted: neither is traffic to a receiver.
CREATE TABLE analytics_webhook_delivery_counts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  -- Start of the quarter hour (UTC) in which the deliveries finished.
  bucket_start timestamptz NOT NULL,
  succeeded bigint NOT NULL DEFAULT 0 CHECK (succeeded >= 0),
  -- Deliveries that ended EXHAUSTED (every attempt failed).
  failed bigint NOT NULL DEFAULT 0 CHECK (failed >= 0),
  PRIMARY KEY (tenant_id, bucket_start)
);
CALL enable_tenant_rls('analytics_webhook_delivery_counts');

-- Runs as the caller: the delivery's transaction has the tenant set, so the
-- counter row passes row-level security like any other write of that tenant.
-- The quarter hour is that of completed_at, which the webhooks module sets
-- from the service clock when the delivery finishes.
CREATE FUNCTION analytics_count_webhook_delivery() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO analytics_webhook_delivery_counts AS c (tenant_id, bucket_start, succeeded, failed)
  VALUES (NEW.tenant_id,
          date_bin('15 minutes', coalesce(NEW.completed_at, NEW.updated_at), TIMESTAMPTZ '2000-01-01 00:00:00+00'),
          (NEW.status = 'SUCCEEDED')::int, (NEW.status = 'EXHAUSTED')::int)
  ON CONFLICT (tenant_id, bucket_start) DO UPDATE
    SET succeeded = c.succeeded + EXCLUDED.succeeded, failed = c.failed + EXCLUDED.failed;
  RETURN NULL;
END $$;

-- A delivery finishes once: a replay is a new row, and the terminal states are never left.
CREATE TRIGGER analytics_webhook_delivery_finished
  AFTER UPDATE OF status ON webhook_deliveries
  FOR EACH ROW
  WHEN (OLD.status NOT IN ('SUCCEEDED', 'EXHAUSTED', 'CANCELLED') AND NEW.status IN ('SUCCEEDED', 'EXHAUSTED') AND NEW.event <> 'ping')
  EXECUTE FUNCTION analytics_count_webhook_delivery();

-- Deliveries are inserted PENDING today; a row born finished is counted too.
CREATE TRIGGER analytics_webhook_delivery_inserted_finished
  AFTER INSERT ON webhook_deliveries
  FOR EACH ROW
  WHEN (NEW.status IN ('SUCCEEDED', 'EXHAUSTED') AND NEW.event <> 'ping')
  EXECUTE FUNCTION analytics_count_webhook_delivery();

-- The deliveries that finished before this migration and are still kept.
INSERT INTO analytics_webhook_delivery_counts (tenant_id, bucket_start, succeeded, failed)
SELECT tenant_id,
       date_bin('15 minutes', coalesce(completed_at, updated_at), TIMESTAMPTZ '2000-01-01 00:00:00+00'),
       count(*) FILTER (WHERE status = 'SUCCEEDED'),
       count(*) FILTER (WHERE status = 'EXHAUSTED')
FROM webhook_deliveries
WHERE status IN ('SUCCEEDED', 'EXHAUSTED') AND event <> 'ping'
GROUP BY 1, 2;
