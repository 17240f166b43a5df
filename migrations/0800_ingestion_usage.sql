-- Events accepted per tenant and UTC day, for the plan's daily ingestion quota
-- (spec, Limits, Plan quotas). A tenant's own figure (enterprise "custom")
-- overrides the plan's.
CREATE TABLE ingestion_usage (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  day date NOT NULL,
  events bigint NOT NULL CHECK (events >= 0),
  PRIMARY KEY (tenant_id, day)
);
CALL enable_tenant_rls('ingestion_usage');

ALTER TABLE tenants ADD COLUMN event_ingestion_per_day integer CHECK (event_ingestion_per_day > 0);
