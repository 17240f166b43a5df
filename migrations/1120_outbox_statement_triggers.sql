-- The outbox triggers run once per statement instead of once per row.
--
-- A processing batch writes all its outbox rows with one INSERT (holdEmits in
-- src/platform/outbox.ts). Row triggers would still run their look-ups and
-- upserts once per row; these statement triggers read the statement's new
-- rows (a transition table) and do each kind of write once. What they write
-- is what the row triggers of 0520 and 0502 wrote, row after row:
-- - lifetime points: the highest `lifetime` announced, reached at the first
--   row that announced it, and only if higher than the stored score;
-- - period points: the sum of the positive amounts per weekly and monthly
--   period (tenant time zone), reached at the latest of those rows;
-- - a challenge re-evaluation job per participant with an open enrollment in
--   a challenge with a state objective, once per participant.
-- Rows of an unexpected shape and participants that do not exist are skipped,
-- and the award never fails because of them, as before.
--
-- The functions run as the schema owner (SECURITY DEFINER). Under the
-- service's role, row-level security kept the planner from joining the
-- transition table to participants by index: 80 rows took 400 ms instead of
-- 13. They only read the rows the statement inserted, which row-level
-- security has already checked (WITH CHECK on outbox_events), and write the
-- totals of those rows' tenant and participants.

DROP TRIGGER leaderboard_points_awarded ON outbox_events;
DROP TRIGGER challenge_progression_event ON outbox_events;
DROP FUNCTION leaderboard_track_points_awarded();
DROP FUNCTION challenge_queue_reevaluation();

CREATE FUNCTION leaderboard_track_points_awarded() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  WITH awarded AS (
    SELECT n.tenant_id, n.participant_id, n.created_at, n.seq,
           floor((n.data ->> 'amount')::numeric)::bigint AS amount,
           floor((n.data ->> 'lifetime')::numeric)::bigint AS lifetime
    FROM new_outbox_rows n
    WHERE n.event = 'points.awarded.v1'
      AND n.participant_id IS NOT NULL
      AND jsonb_typeof(n.data -> 'amount') = 'number'
      AND jsonb_typeof(n.data -> 'lifetime') = 'number'
      AND EXISTS (SELECT 1 FROM participants p WHERE p.tenant_id = n.tenant_id AND p.participant_id = n.participant_id)
  ),
  highest AS (
    SELECT DISTINCT ON (tenant_id, participant_id) tenant_id, participant_id, lifetime, created_at
    FROM awarded
    ORDER BY tenant_id, participant_id, lifetime DESC, seq
  ),
  lifetime_points AS (
    INSERT INTO leaderboard_lifetime_points AS l (tenant_id, participant_id, score, reached_at)
    SELECT tenant_id, participant_id, lifetime, created_at FROM highest
    ON CONFLICT (tenant_id, participant_id) DO UPDATE
      SET score = EXCLUDED.score, reached_at = EXCLUDED.reached_at
      WHERE EXCLUDED.score > l.score
  ),
  earned AS (
    SELECT a.tenant_id, k.period,
           date_trunc(CASE k.period WHEN 'weekly' THEN 'week' ELSE 'month' END,
                      a.created_at AT TIME ZONE coalesce(t.timezone, 'UTC'))::date AS period_start,
           a.participant_id, a.amount, a.created_at
    FROM awarded a
    LEFT JOIN tenants t ON t.id = a.tenant_id
    CROSS JOIN (VALUES ('weekly'), ('monthly')) AS k (period)
    WHERE a.amount > 0
  )
  INSERT INTO leaderboard_period_points AS p (tenant_id, period, period_start, participant_id, score, reached_at)
  SELECT tenant_id, period, period_start, participant_id, sum(amount), max(created_at)
  FROM earned
  GROUP BY tenant_id, period, period_start, participant_id
  ON CONFLICT (tenant_id, period, period_start, participant_id) DO UPDATE
    SET score = p.score + EXCLUDED.score, reached_at = greatest(p.reached_at, EXCLUDED.reached_at);
  RETURN NULL;
END $$;

CREATE TRIGGER leaderboard_points_awarded
  AFTER INSERT ON outbox_events
  REFERENCING NEW TABLE AS new_outbox_rows
  FOR EACH STATEMENT
  EXECUTE FUNCTION leaderboard_track_points_awarded();

CREATE FUNCTION challenge_queue_reevaluation() RETURNS trigger
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  PERFORM graphile_worker.add_job(
    'challenges.reevaluate',
    json_build_object('tenant_id', x.tenant_id, 'participant_id', x.participant_id),
    job_key => 'challenges.reevaluate:' || x.tenant_id || ':' || x.participant_id,
    job_key_mode => 'replace'
  )
  FROM (
    SELECT DISTINCT n.tenant_id, n.participant_id
    FROM new_outbox_rows n
    WHERE n.event IN ('points.awarded.v1', 'badge.earned.v1') AND n.participant_id IS NOT NULL
      AND EXISTS (
        SELECT 1 FROM challenge_enrollments e
        JOIN challenges c ON c.tenant_id = e.tenant_id AND c.id = e.challenge_id
        WHERE e.tenant_id = n.tenant_id AND e.participant_id = n.participant_id AND e.completed_at IS NULL
          AND c.objectives @? '$[*] ? (@.evaluator == "points_earned" || @.evaluator == "badge_earned")'
      )
  ) x;
  RETURN NULL;
END $$;

CREATE TRIGGER challenge_progression_event
  AFTER INSERT ON outbox_events
  REFERENCING NEW TABLE AS new_outbox_rows
  FOR EACH STATEMENT
  EXECUTE FUNCTION challenge_queue_reevaluation();
