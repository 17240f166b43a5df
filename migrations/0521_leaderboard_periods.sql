-- Period arithmetic of progression leaderboards, in the tenant's time zone.
-- Weeks start on Monday (ISO), months on the 1st; a period is identified by
-- its start date in the tenant's zone and ends where the next one starts.

CREATE FUNCTION leaderboard_period_start(p_period text, p_at timestamptz, p_zone text)
  RETURNS date LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT date_trunc(CASE p_period WHEN 'weekly' THEN 'week' ELSE 'month' END, p_at AT TIME ZONE p_zone)::date
$$;

CREATE FUNCTION leaderboard_period_end(p_period text, p_start date, p_zone text)
  RETURNS timestamptz LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT (p_start::timestamp + CASE p_period WHEN 'weekly' THEN interval '1 week' ELSE interval '1 month' END) AT TIME ZONE p_zone
$$;

CREATE FUNCTION leaderboard_period_previous(p_period text, p_start date)
  RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (p_start - CASE p_period WHEN 'weekly' THEN interval '1 week' ELSE interval '1 month' END)::date
$$;
