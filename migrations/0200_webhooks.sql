-- Outbound webhooks: destinations, deliveries (one per event and destination,
-- plus one per replay), every attempt of every delivery, and bulk replay jobs.

CREATE TABLE webhook_destinations (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id text NOT NULL,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
  url text NOT NULL,
  events text[] NOT NULL,
  engagement_id uuid,
  custom_headers jsonb NOT NULL DEFAULT '{}'::jsonb,
  retry_count integer NOT NULL CHECK (retry_count BETWEEN 0 AND 5),
  timeout_seconds integer NOT NULL CHECK (timeout_seconds BETWEEN 3 AND 60),
  active boolean NOT NULL DEFAULT true,
  -- The signing secret. It must be readable to sign, so it is not hashed;
  -- the API returns it once, at creation.
  secret text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
-- The dispatcher looks up the active destinations of a tenant for each batch of events.
CREATE INDEX webhook_destinations_active ON webhook_destinations (tenant_id) WHERE active;
CALL enable_tenant_rls('webhook_destinations');

-- One delivery of one event to one destination. `event_id` is the envelope id
-- and the X-Service-Delivery-Id header: stable across retries and replays.
CREATE TABLE webhook_deliveries (
  tenant_id uuid NOT NULL,
  id text NOT NULL,
  destination_id text NOT NULL,
  event_id text NOT NULL,
  event text NOT NULL,
  participant_id text,
  engagement_id uuid,
  occurred_at timestamptz NOT NULL,
  status text NOT NULL CHECK (status IN ('PENDING', 'DELIVERING', 'RETRYING', 'SUCCEEDED', 'EXHAUSTED', 'CANCELLED')),
  -- Attempts that finished with an outcome (an attempt cut short by a crash is not counted).
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 6),
  next_attempt_at timestamptz,
  -- Set while an attempt is in flight; a worker that died leaves it behind and
  -- the next run of the delivery job takes over once the deadline has passed.
  attempt_token text,
  attempt_deadline timestamptz,
  last_response_status integer,
  last_error text,
  replay_of text,
  replay_job_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  completed_at timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, destination_id) REFERENCES webhook_destinations (tenant_id, id) ON DELETE CASCADE
);
-- The dispatcher may run twice for one batch (at-least-once job execution); this
-- keeps it to one original delivery per event and destination. Replays are extra.
CREATE UNIQUE INDEX webhook_deliveries_original ON webhook_deliveries (tenant_id, destination_id, event_id) WHERE replay_of IS NULL;
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (tenant_id, destination_id, created_at DESC, id DESC);
CALL enable_tenant_rls('webhook_deliveries');

CREATE TABLE webhook_delivery_attempts (
  tenant_id uuid NOT NULL,
  delivery_id text NOT NULL,
  attempt integer NOT NULL,
  -- 'succeeded', 'failed', or 'interrupted' (the worker died during the attempt).
  outcome text NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'interrupted')),
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  response_status integer,
  response_body text,
  error text,
  PRIMARY KEY (tenant_id, delivery_id, attempt, started_at),
  FOREIGN KEY (tenant_id, delivery_id) REFERENCES webhook_deliveries (tenant_id, id) ON DELETE CASCADE
);
CALL enable_tenant_rls('webhook_delivery_attempts');

CREATE TABLE webhook_replay_jobs (
  tenant_id uuid NOT NULL,
  id text NOT NULL,
  destination_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  filter jsonb NOT NULL,
  matched integer NOT NULL DEFAULT 0,
  replayed integer NOT NULL DEFAULT 0,
  error text,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  completed_at timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, destination_id) REFERENCES webhook_destinations (tenant_id, id) ON DELETE CASCADE
);
CALL enable_tenant_rls('webhook_replay_jobs');
