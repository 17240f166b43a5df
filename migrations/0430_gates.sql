-- Screen visits, recorded by the runtime, for `screen_visited:<screen_id>` gate conditions.
CREATE TABLE screen_visits (
  tenant_id uuid NOT NULL,
  engagement_id uuid NOT NULL,
  participant_id text NOT NULL,
  screen_id text NOT NULL,
  first_visited_at timestamptz NOT NULL,
  last_visited_at timestamptz NOT NULL,
  visit_count integer NOT NULL DEFAULT 1,
  PRIMARY KEY (tenant_id, engagement_id, participant_id, screen_id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CALL enable_tenant_rls('screen_visits');
