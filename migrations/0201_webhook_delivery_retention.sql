-- The retention job deletes finished deliveries (and, by cascade, their attempts)
-- some days after they finished; this index finds them without scanning the log.
CREATE INDEX webhook_deliveries_completed ON webhook_deliveries (completed_at) WHERE completed_at IS NOT NULL;
