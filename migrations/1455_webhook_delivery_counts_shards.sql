-- Issue 37 (webhook deliveries to one receiver): every batch's outcome
-- transaction added its count to one row per tenant and quarter hour, and held
-- that row's lock until it committed, so a tenant's concurrent batches
-- finished one after the other behind it (bench/webhooks.bench.ts: the upsert
-- was the costliest statement of a burst, 3.2 ms of mostly waiting per
-- batch). A bucket's count is now kept in up to 16 rows, one per shard; a
-- transaction adds to the shard of its database connection
-- (pg_backend_pid() % 16), so concurrent batches, which run on different
-- connections, seldom share a row. Readers sum a bucket's shards, as they
-- already summed its buckets into days. Existing rows become shard 0.
ALTER TABLE analytics_webhook_delivery_counts ADD COLUMN shard smallint NOT NULL DEFAULT 0 CHECK (shard BETWEEN 0 AND 15);
ALTER TABLE analytics_webhook_delivery_counts DROP CONSTRAINT analytics_webhook_delivery_counts_pkey;
ALTER TABLE analytics_webhook_delivery_counts ADD PRIMARY KEY (tenant_id, bucket_start, shard);
ALTER TABLE analytics_webhook_delivery_counts ALTER COLUMN shard DROP DEFAULT;
