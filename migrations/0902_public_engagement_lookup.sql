-- Public reads that carry no credential name their tenant through a globally
-- unique id: the progression leaderboard through its `engagement_id`, the
-- challenge leaderboard through the challenge id. Both ids are UUIDs the
-- service generates, so one id belongs to one tenant. These functions run as
-- the owner (the tenant is not known yet, so row-level security would hide
-- every row) and return only the tenant id, and for an engagement whether it
-- is published; the callers cache what they return (platform/auth.ts).
--
-- Each returns at most two rows, so that a caller can tell an id that two
-- tenants share (impossible for generated ids, possible only for rows written
-- by hand) from a unique one, and refuse it.

CREATE INDEX engagements_by_id ON engagements (id);
CREATE INDEX challenges_by_id ON challenges (id);

CREATE FUNCTION public_find_engagement_tenants(p_engagement_id uuid)
  RETURNS TABLE (tenant_id uuid, published boolean)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT e.tenant_id, e.status = 'published' FROM engagements e WHERE e.id = p_engagement_id LIMIT 2 $$;

CREATE FUNCTION public_find_challenge_tenants(p_challenge_id uuid)
  RETURNS TABLE (tenant_id uuid)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
  AS $$ SELECT c.tenant_id FROM challenges c WHERE c.id = p_challenge_id LIMIT 2 $$;
