-- The tenant's own figures for the plan quotas the operator may set
-- (PATCH /api/v1/operator/tenants/{tenant_id}/limits). NULL is the plan's
-- figure; rate_limit_per_minute and event_ingestion_per_day (0001, 0800) are
-- the two overrides that existed before. Bounds keep a typing slip from
-- becoming a limit; the service checks the same bounds and answers 400.
ALTER TABLE tenants
  ADD COLUMN api_keys_max integer CHECK (api_keys_max BETWEEN 1 AND 100000),
  ADD COLUMN concurrent_engagements_max integer CHECK (concurrent_engagements_max BETWEEN 1 AND 100000),
  ADD COLUMN participants_per_month integer CHECK (participants_per_month BETWEEN 1 AND 1000000000),
  ADD COLUMN headless_sdk boolean;
