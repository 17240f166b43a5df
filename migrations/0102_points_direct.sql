-- Balances stay within the integers a JSON number carries exactly (2^53 - 1):
-- a grant that would pass it fails (direct grant: 422 POINTS_BALANCE_LIMIT;
-- bulk grant: that participant counts as failed). available <= lifetime, so
-- one bound covers both.
ALTER TABLE points_balances ADD CONSTRAINT points_balances_lifetime_max CHECK (lifetime <= 9007199254740991);

-- The direct grant and deduct (POST /gamify/points/grant and /deduct) in ONE
-- round trip each: the service calls one of these functions as a single
-- statement outside BEGIN/COMMIT, so the statement is its own transaction.
-- Each function sets the tenant for that transaction (the set_config(..., true)
-- form `db.tenant` uses; row-level security applies, the functions run as the
-- caller), claims the idempotency key, changes the ledger, writes the outbox
-- event and its pending marker (as `emit` does) and stores the response.
--
-- Failures after the claim RAISE, so the whole transaction — key included —
-- rolls back: a failed operation never burns its key. PT402 = insufficient
-- points (DETAIL: the available balance).
-- Outcomes returned: applied | duplicate (response = the stored one) |
-- reused (same key, different request) | in_progress (never in practice: the
-- claim waits for a concurrent holder of the key to finish).

CREATE FUNCTION points_claim_key(p_tenant uuid, p_scope text, p_key text, p_fingerprint text, p_now timestamptz, p_expires timestamptz)
  RETURNS TABLE (outcome text, response jsonb)
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_fingerprint text;
  v_response jsonb;
BEGIN
  INSERT INTO idempotency_keys AS k (tenant_id, scope, key, fingerprint, created_at, expires_at)
  VALUES (p_tenant, p_scope, p_key, p_fingerprint, p_now, p_expires)
  ON CONFLICT (tenant_id, scope, key) DO UPDATE
    SET fingerprint = EXCLUDED.fingerprint, response = NULL, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
    WHERE k.expires_at <= EXCLUDED.created_at;
  IF FOUND THEN
    RETURN QUERY SELECT 'claimed'::text, NULL::jsonb;
    RETURN;
  END IF;
  SELECT k.fingerprint, k.response INTO v_fingerprint, v_response
  FROM idempotency_keys k WHERE k.tenant_id = p_tenant AND k.scope = p_scope AND k.key = p_key;
  IF NOT FOUND OR (v_fingerprint = p_fingerprint AND v_response IS NULL) THEN
    RETURN QUERY SELECT 'in_progress'::text, NULL::jsonb;
  ELSIF v_fingerprint <> p_fingerprint THEN
    RETURN QUERY SELECT 'reused'::text, NULL::jsonb;
  ELSE
    RETURN QUERY SELECT 'duplicate'::text, v_response;
  END IF;
END $$;

-- ISO 8601 in UTC with milliseconds, as JavaScript's toISOString writes it.
CREATE FUNCTION points_iso(p_at timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE AS $$ SELECT to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

CREATE FUNCTION points_direct_grant(
  p_tenant uuid, p_key text, p_fingerprint text, p_now timestamptz, p_key_expires timestamptz,
  p_participant text, p_amount bigint, p_entry_id text, p_type text, p_reason text, p_memo text,
  p_event_id text, p_tier_event_id text
) RETURNS TABLE (outcome text, response jsonb)
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_outcome text;
  v_response jsonb;
  v_policy text;
  v_ttl integer;
  v_available bigint;
  v_lifetime bigint;
  v_previous_tier text;
  v_tier text;
  v_expires timestamptz;
BEGIN
  PERFORM set_config('app.tenant_id', p_tenant::text, true);
  SELECT c.outcome, c.response INTO v_outcome, v_response
  FROM points_claim_key(p_tenant, 'points.direct', p_key, p_fingerprint, p_now, p_key_expires) c;
  IF v_outcome <> 'claimed' THEN
    RETURN QUERY SELECT v_outcome, v_response;
    RETURN;
  END IF;

  SELECT s.expiry_policy, s.default_ttl_days INTO v_policy, v_ttl FROM points_settings s WHERE s.tenant_id = p_tenant;
  v_expires := CASE WHEN coalesce(v_policy, 'fifo') = 'none' THEN NULL ELSE p_now + make_interval(days => coalesce(v_ttl, 365)) END;

  INSERT INTO participants (tenant_id, participant_id) VALUES (p_tenant, p_participant) ON CONFLICT DO NOTHING;
  -- The balance upsert locks the participant's row: concurrent grants and deducts of one participant serialise here.
  INSERT INTO points_balances AS b (tenant_id, participant_id, available, lifetime, last_earned_at, tier_code, updated_at)
  VALUES (p_tenant, p_participant, p_amount, p_amount, p_now,
          (SELECT t.code FROM points_tiers t WHERE t.tenant_id = p_tenant AND t.min_lifetime_points <= p_amount
           ORDER BY t.min_lifetime_points DESC LIMIT 1), p_now)
  ON CONFLICT (tenant_id, participant_id) DO UPDATE
    SET available = b.available + EXCLUDED.available,
        lifetime = b.lifetime + EXCLUDED.lifetime,
        last_earned_at = EXCLUDED.last_earned_at,
        updated_at = EXCLUDED.updated_at,
        tier_code = (SELECT t.code FROM points_tiers t WHERE t.tenant_id = p_tenant AND t.min_lifetime_points <= b.lifetime + EXCLUDED.lifetime
                     ORDER BY t.min_lifetime_points DESC LIMIT 1)
  RETURNING old.tier_code, new.tier_code, new.available, new.lifetime INTO v_previous_tier, v_tier, v_available, v_lifetime;

  INSERT INTO points_lots (tenant_id, participant_id, amount, remaining, ledger_entry_id, created_at, expires_at)
  VALUES (p_tenant, p_participant, p_amount, p_amount, p_entry_id, p_now, v_expires);
  INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, memo, source_kind, source_id,
                             available_after, lifetime_after, created_at)
  VALUES (p_tenant, p_participant, p_entry_id, p_type, p_amount, p_reason, p_memo, 'grant', p_key, v_available, v_lifetime, p_now);

  -- The outbox rows, exactly as grantInTx emits them (points.awarded.v1, and tier.changed.v1 when the tier moved).
  WITH events AS (
    INSERT INTO outbox_events (tenant_id, id, event, participant_id, engagement_id, data, created_at)
    SELECT p_tenant, e.id, e.event, p_participant, NULL, e.data, p_now
    FROM (VALUES
      (p_event_id, 'points.awarded.v1', jsonb_build_object(
         'participant_id', p_participant, 'amount', p_amount, 'available', v_available, 'lifetime', v_lifetime,
         'reason', p_reason, 'ledger_entry_id', p_entry_id, 'source_kind', 'grant', 'source_id', p_key,
         'multiplier', NULL, 'type', p_type, 'activity_id', NULL, 'expires_at', points_iso(v_expires))),
      (p_tier_event_id, 'tier.changed.v1', jsonb_build_object(
         'participant_id', p_participant, 'previous_tier', v_previous_tier, 'tier', v_tier, 'lifetime', v_lifetime))
    ) AS e (id, event, data)
    WHERE e.event = 'points.awarded.v1' OR (v_tier IS NOT NULL AND v_tier IS DISTINCT FROM v_previous_tier)
    RETURNING id
  )
  INSERT INTO outbox_pending (tenant_id, event_id) SELECT p_tenant, id FROM events;

  v_response := jsonb_build_object('available', v_available, 'lifetime', v_lifetime, 'delta', p_amount, 'duplicate', false, 'ledger_entry_id', p_entry_id);
  UPDATE idempotency_keys SET response = v_response WHERE tenant_id = p_tenant AND scope = 'points.direct' AND key = p_key;
  RETURN QUERY SELECT 'applied'::text, v_response;
END $$;

CREATE FUNCTION points_direct_deduct(
  p_tenant uuid, p_key text, p_fingerprint text, p_now timestamptz, p_key_expires timestamptz,
  p_participant text, p_amount bigint, p_entry_id text, p_type text, p_reason text, p_memo text,
  p_event_id text
) RETURNS TABLE (outcome text, response jsonb)
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_outcome text;
  v_response jsonb;
  v_applied boolean;
  v_available bigint;
  v_lifetime bigint;
BEGIN
  PERFORM set_config('app.tenant_id', p_tenant::text, true);
  SELECT c.outcome, c.response INTO v_outcome, v_response
  FROM points_claim_key(p_tenant, 'points.direct', p_key, p_fingerprint, p_now, p_key_expires) c;
  IF v_outcome <> 'claimed' THEN
    RETURN QUERY SELECT v_outcome, v_response;
    RETURN;
  END IF;

  SELECT d.applied, d.available, d.lifetime INTO v_applied, v_available, v_lifetime
  FROM points_deduct(p_tenant, p_participant, p_amount, p_entry_id, p_type, p_reason, p_memo, 'grant', p_key, p_now) d;
  IF NOT v_applied THEN
    RAISE EXCEPTION USING ERRCODE = 'PT402', MESSAGE = 'insufficient_points', DETAIL = v_available::text;
  END IF;

  WITH events AS (
    INSERT INTO outbox_events (tenant_id, id, event, participant_id, engagement_id, data, created_at)
    VALUES (p_tenant, p_event_id, 'points.deducted.v1', p_participant, NULL, jsonb_build_object(
      'participant_id', p_participant, 'amount', p_amount, 'available', v_available, 'lifetime', v_lifetime,
      'reason', p_reason, 'ledger_entry_id', p_entry_id, 'type', p_type), p_now)
    RETURNING id
  )
  INSERT INTO outbox_pending (tenant_id, event_id) SELECT p_tenant, id FROM events;

  v_response := jsonb_build_object('available', v_available, 'lifetime', v_lifetime, 'delta', -p_amount, 'duplicate', false, 'ledger_entry_id', p_entry_id);
  UPDATE idempotency_keys SET response = v_response WHERE tenant_id = p_tenant AND scope = 'points.direct' AND key = p_key;
  RETURN QUERY SELECT 'applied'::text, v_response;
END $$;
