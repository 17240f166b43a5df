-- The event names a tenant has sent, with how many events of each were
-- accepted and when the latest occurred: what the rule editor offers as event
-- names (GET /api/v1/admin/events/names). Kept by the ingestion module in the
-- transaction that stores the events, after the tenant's quota row is locked,
-- so that it adds no lock wait of its own. Participant erasure deletes events
-- but leaves these counts: they count what was received, not what is kept.
CREATE TABLE event_names_seen (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  event_name text NOT NULL,
  events bigint NOT NULL,
  first_seen_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, event_name)
);
CALL enable_tenant_rls('event_names_seen');

INSERT INTO event_names_seen (tenant_id, event_name, events, first_seen_at, last_seen_at)
SELECT tenant_id, event_name, count(*), min(occurred_at), max(occurred_at) FROM ingested_events GROUP BY tenant_id, event_name;
