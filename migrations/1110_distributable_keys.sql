-- Keys that Citus can keep when the tenant tables are distributed by tenant_id
-- (docs/operations/scaling.md; test/citus-distribution.test.ts checks the rules).
--
-- A participant session's token hash was unique across tenants. Citus enforces a
-- unique key only within a shard, so it must include the distribution column:
-- the key becomes (token_hash, tenant_id). Token hash first, so that the same
-- index serves the look-up by token hash that authenticates a session before
-- its tenant is known (auth_find_session); a second index on token_hash alone
-- would only add a write to every session issued.
ALTER TABLE sessions DROP CONSTRAINT sessions_token_hash_key;
ALTER TABLE sessions ADD CONSTRAINT sessions_token_hash_tenant_key UNIQUE (token_hash, tenant_id);

-- One token hash could now belong to two tenants. Tokens carry 192 random bits,
-- so only rows written by hand can share one; like the public look-ups of
-- migration 0902, the function returns up to two rows so that the caller can
-- refuse such a token instead of picking one tenant at random.
CREATE OR REPLACE FUNCTION auth_find_session(p_token_hash text)
  RETURNS TABLE (tenant_id uuid, id uuid, participant_id text, engagement_id uuid, expires_at timestamptz,
                 revoked_at timestamptz, plan text, tenant_rate_limit_per_minute integer)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
    SELECT s.tenant_id, s.id, s.participant_id, s.engagement_id, s.expires_at, s.revoked_at, t.plan, t.rate_limit_per_minute
    FROM sessions s JOIN tenants t ON t.id = s.tenant_id
    WHERE s.token_hash = p_token_hash
    LIMIT 2
  $$;
