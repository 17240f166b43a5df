-- Participant sessions by token hash, several in one call (src/platform/session-lookups.ts),
-- in place of auth_find_session (one hash a call; migration 1110).
--
-- A crowd's requests each carry a session that the process may not hold, and
-- their look-ups go together in one statement on the owner's connection
-- (which sees every tenant's sessions). auth_find_session was SECURITY DEFINER
-- with its own search_path, which PostgreSQL cannot inline: each statement
-- planned the function's body again, and a crowd's look-ups cost 0.06 ms a
-- spin at 1,000 spins/s, more than the index look-ups they wrap. This one is
-- a plain SQL function, inlined into the caller's statement and planned with
-- it once per connection (the statement is named). Called by the
-- application role, row-level security leaves it nothing to see. As before, a
-- hash answers up to two rows, so that the caller refuses a hash two tenants
-- share instead of picking one (migration 1110).
CREATE FUNCTION auth_find_sessions(p_token_hashes text[])
  RETURNS TABLE (token_hash text, tenant_id uuid, id uuid, participant_id text, engagement_id uuid, expires_at timestamptz,
                 revoked_at timestamptz, plan text, tenant_rate_limit_per_minute integer)
  LANGUAGE sql STABLE
  AS $$
    SELECT h.token_hash, f.tenant_id, f.id, f.participant_id, f.engagement_id, f.expires_at, f.revoked_at, f.plan, f.rate_limit_per_minute
    FROM unnest(p_token_hashes) AS h (token_hash)
    CROSS JOIN LATERAL (
      SELECT s.tenant_id, s.id, s.participant_id, s.engagement_id, s.expires_at, s.revoked_at, t.plan, t.rate_limit_per_minute
      FROM sessions s JOIN tenants t ON t.id = s.tenant_id
      WHERE s.token_hash = h.token_hash
      LIMIT 2
    ) f
  $$;

DROP FUNCTION auth_find_session(text);
