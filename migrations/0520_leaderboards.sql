-- Progression leaderboards: admin definitions, the points totals they rank
-- (kept current by a trigger on points.awarded.v1 outbox rows), and the
-- materialised rankings that a refresh job rebuilds every refresh_seconds.

CREATE TABLE leaderboards (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  leaderboard_code text NOT NULL CHECK (leaderboard_code ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  metric text NOT NULL CHECK (metric IN ('lifetime_points', 'period_points')),
  period text CHECK (period IN ('weekly', 'monthly')),
  engagement_id uuid,
  refresh_seconds integer NOT NULL CHECK (refresh_seconds BETWEEN 1 AND 3600),
  status text NOT NULL CHECK (status IN ('active', 'archived')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, leaderboard_code),
  CHECK ((metric = 'period_points') = (period IS NOT NULL))
);
CALL enable_tenant_rls('leaderboards');

-- Lifetime points per participant as last announced by points.awarded.v1.
CREATE TABLE leaderboard_lifetime_points (
  tenant_id uuid NOT NULL,
  participant_id text NOT NULL,
  score bigint NOT NULL,
  -- When the participant reached this score: earlier ranks higher among equal scores.
  reached_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, participant_id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CALL enable_tenant_rls('leaderboard_lifetime_points');

-- Points earned per participant in each weekly and monthly period (tenant time zone).
CREATE TABLE leaderboard_period_points (
  tenant_id uuid NOT NULL,
  period text NOT NULL CHECK (period IN ('weekly', 'monthly')),
  period_start date NOT NULL,
  participant_id text NOT NULL,
  score bigint NOT NULL,
  reached_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, period, period_start, participant_id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CALL enable_tenant_rls('leaderboard_period_points');

-- Keeps the totals above current in the transaction that awards the points.
-- It never fails the award: rows with an unexpected shape, or a participant
-- that does not exist, are skipped.
CREATE FUNCTION leaderboard_track_points_awarded() RETURNS trigger
  LANGUAGE plpgsql AS $$
DECLARE
  v_amount bigint;
  v_lifetime bigint;
  v_zone text;
BEGIN
  IF NEW.participant_id IS NULL
     OR jsonb_typeof(NEW.data -> 'amount') IS DISTINCT FROM 'number'
     OR jsonb_typeof(NEW.data -> 'lifetime') IS DISTINCT FROM 'number' THEN
    RETURN NULL;
  END IF;
  v_amount := floor((NEW.data ->> 'amount')::numeric);
  v_lifetime := floor((NEW.data ->> 'lifetime')::numeric);
  IF NOT EXISTS (SELECT 1 FROM participants p WHERE p.tenant_id = NEW.tenant_id AND p.participant_id = NEW.participant_id) THEN
    RETURN NULL;
  END IF;
  INSERT INTO leaderboard_lifetime_points AS l (tenant_id, participant_id, score, reached_at)
  VALUES (NEW.tenant_id, NEW.participant_id, v_lifetime, NEW.created_at)
  ON CONFLICT (tenant_id, participant_id) DO UPDATE
    SET score = EXCLUDED.score, reached_at = EXCLUDED.reached_at
    WHERE EXCLUDED.score > l.score;
  IF v_amount > 0 THEN
    SELECT t.timezone INTO v_zone FROM tenants t WHERE t.id = NEW.tenant_id;
    v_zone := coalesce(v_zone, 'UTC');
    INSERT INTO leaderboard_period_points AS p (tenant_id, period, period_start, participant_id, score, reached_at)
    VALUES
      (NEW.tenant_id, 'weekly', date_trunc('week', NEW.created_at AT TIME ZONE v_zone)::date, NEW.participant_id, v_amount, NEW.created_at),
      (NEW.tenant_id, 'monthly', date_trunc('month', NEW.created_at AT TIME ZONE v_zone)::date, NEW.participant_id, v_amount, NEW.created_at)
    ON CONFLICT (tenant_id, period, period_start, participant_id) DO UPDATE
      SET score = p.score + EXCLUDED.score, reached_at = greatest(p.reached_at, EXCLUDED.reached_at);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER leaderboard_points_awarded
  AFTER INSERT ON outbox_events
  FOR EACH ROW WHEN (NEW.event = 'points.awarded.v1')
  EXECUTE FUNCTION leaderboard_track_points_awarded();

-- One snapshot per leaderboard and period (lifetime boards use period_start 1970-01-01).
CREATE TABLE leaderboard_snapshots (
  tenant_id uuid NOT NULL,
  leaderboard_id uuid NOT NULL,
  period_start date NOT NULL,
  generation bigint NOT NULL,
  total_participants integer NOT NULL,
  refreshed_at timestamptz NOT NULL,
  refresh_ms integer NOT NULL,
  -- True once the period has ended and a refresh ran after its end: the ranking no longer changes.
  final boolean NOT NULL DEFAULT false,
  PRIMARY KEY (tenant_id, leaderboard_id, period_start),
  FOREIGN KEY (tenant_id, leaderboard_id) REFERENCES leaderboards (tenant_id, id) ON DELETE CASCADE
);
CALL enable_tenant_rls('leaderboard_snapshots');

CREATE TABLE leaderboard_rankings (
  tenant_id uuid NOT NULL,
  leaderboard_id uuid NOT NULL,
  period_start date NOT NULL,
  generation bigint NOT NULL,
  rank integer NOT NULL,
  participant_id text NOT NULL,
  score bigint NOT NULL,
  PRIMARY KEY (tenant_id, leaderboard_id, period_start, generation, rank)
);
CREATE UNIQUE INDEX leaderboard_rankings_participant ON leaderboard_rankings (tenant_id, leaderboard_id, period_start, generation, participant_id);
CALL enable_tenant_rls('leaderboard_rankings');
