-- Points: per-tenant settings, balances, append-only ledger entries, lots with
-- their expiry, expiry reminders, multipliers, tiers and bulk grant jobs.
--
-- Lock order, kept by every writer so that no two transactions deadlock:
-- the participant's balance row first, then that participant's lots.

CREATE TABLE points_settings (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  -- fifo: deducts take the oldest lot first; lifo: the newest first; none: points never expire
  -- (lots get no expiry) and deducts take the oldest lot first.
  expiry_policy text NOT NULL DEFAULT 'fifo' CHECK (expiry_policy IN ('fifo', 'lifo', 'none')),
  default_ttl_days integer NOT NULL DEFAULT 365 CHECK (default_ttl_days BETWEEN 1 AND 36500),
  reminder_days integer[] NOT NULL DEFAULT '{60,30,7,1}',
  currency_name text NOT NULL DEFAULT 'points' CHECK (char_length(currency_name) BETWEEN 1 AND 50),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id)
);
CALL enable_tenant_rls('points_settings');

-- Tier definitions: a participant holds the tier with the highest threshold at or below their lifetime points.
CREATE TABLE points_tiers (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  code text NOT NULL CHECK (code ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
  min_lifetime_points bigint NOT NULL CHECK (min_lifetime_points >= 0),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, code),
  UNIQUE (tenant_id, min_lifetime_points)
);
CALL enable_tenant_rls('points_tiers');

CREATE TABLE points_balances (
  tenant_id uuid NOT NULL,
  participant_id text NOT NULL,
  available bigint NOT NULL CHECK (available >= 0),
  lifetime bigint NOT NULL CHECK (lifetime >= 0),
  last_earned_at timestamptz,
  tier_code text,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, participant_id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CALL enable_tenant_rls('points_balances');

-- Append-only: rows are only ever inserted (anonymisation keeps them).
CREATE TABLE points_ledger (
  tenant_id uuid NOT NULL,
  participant_id text NOT NULL,
  id text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  type text NOT NULL CHECK (type IN ('award', 'bonus', 'adjustment', 'redemption', 'expiry')),
  delta bigint NOT NULL CHECK (delta <> 0),
  reason text NOT NULL,
  memo text,
  source_kind text NOT NULL,
  source_id text,
  activity_id text,
  engagement_id text,
  multiplier numeric,
  available_after bigint NOT NULL,
  lifetime_after bigint NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
CREATE INDEX points_ledger_participant ON points_ledger (tenant_id, participant_id, created_at DESC, seq DESC);
CREATE INDEX points_ledger_tenant_time ON points_ledger (tenant_id, created_at DESC, seq DESC);
CALL enable_tenant_rls('points_ledger');

CREATE TABLE points_lots (
  tenant_id uuid NOT NULL,
  participant_id text NOT NULL,
  id bigint GENERATED ALWAYS AS IDENTITY,
  amount bigint NOT NULL CHECK (amount > 0),
  remaining bigint NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
  -- Points of this lot removed by expiry (the rest of amount - remaining was spent).
  expired bigint NOT NULL DEFAULT 0 CHECK (expired >= 0),
  ledger_entry_id text NOT NULL,
  created_at timestamptz NOT NULL,
  -- NULL: never expires (policy none at grant time).
  expires_at timestamptz,
  PRIMARY KEY (tenant_id, participant_id, id),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE
);
-- Deducts walk a participant's open lots in policy order; the expiry job finds due lots.
CREATE INDEX points_lots_open ON points_lots (tenant_id, participant_id, id) WHERE remaining > 0;
CREATE INDEX points_lots_due ON points_lots (tenant_id, expires_at) WHERE remaining > 0 AND expires_at IS NOT NULL;
CALL enable_tenant_rls('points_lots');

-- One row per lot and reminder day sent, so that each reminder goes out once.
CREATE TABLE points_lot_reminders (
  tenant_id uuid NOT NULL,
  participant_id text NOT NULL,
  lot_id bigint NOT NULL,
  days_before integer NOT NULL,
  sent_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, participant_id, lot_id, days_before),
  FOREIGN KEY (tenant_id, participant_id, lot_id) REFERENCES points_lots (tenant_id, participant_id, id) ON DELETE CASCADE
);
CALL enable_tenant_rls('points_lot_reminders');

CREATE TABLE points_multipliers (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id text NOT NULL,
  multiplier numeric NOT NULL CHECK (multiplier > 0),
  starts_at timestamptz NOT NULL,
  ends_at timestamptz NOT NULL,
  event_type text NOT NULL,
  attributes jsonb NOT NULL DEFAULT '{}',
  -- Set for a multiplier that applies to one participant only (for example a points_multiplier reward).
  participant_id text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  CHECK (ends_at > starts_at)
);
CREATE INDEX points_multipliers_match ON points_multipliers (tenant_id, event_type, ends_at);
CALL enable_tenant_rls('points_multipliers');

CREATE TABLE points_bulk_grants (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  reason text NOT NULL,
  memo text,
  type text NOT NULL,
  total integer NOT NULL,
  done integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  error text,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz,
  PRIMARY KEY (tenant_id, id)
);
CALL enable_tenant_rls('points_bulk_grants');

-- One row per participant of a bulk grant; `ledger_entry_id` is set in the
-- transaction that grants, so a retried job never grants twice.
CREATE TABLE points_bulk_grant_items (
  tenant_id uuid NOT NULL,
  job_id text NOT NULL,
  participant_id text NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  ledger_entry_id text,
  PRIMARY KEY (tenant_id, job_id, participant_id),
  FOREIGN KEY (tenant_id, job_id) REFERENCES points_bulk_grants (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX points_bulk_grant_items_pending ON points_bulk_grant_items (tenant_id, job_id, participant_id) WHERE ledger_entry_id IS NULL;
CALL enable_tenant_rls('points_bulk_grant_items');

-- A deduct in one round trip. It runs as the caller (row-level security
-- applies) and, being VOLATILE, each statement sees a fresh snapshot, so the
-- lots read after the balance row is locked are current. Returns applied =
-- false with the current available when the balance is too low; nothing changes then.
CREATE FUNCTION points_deduct(
  p_tenant_id uuid, p_participant_id text, p_amount bigint, p_entry_id text, p_type text, p_reason text, p_memo text,
  p_source_kind text, p_source_id text, p_now timestamptz
) RETURNS TABLE (applied boolean, available bigint, lifetime bigint)
  LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_available bigint;
  v_lifetime bigint;
  v_policy text;
  v_left bigint := p_amount;
  v_take bigint;
  v_lot record;
  v_lots refcursor;
BEGIN
  UPDATE points_balances b SET available = b.available - p_amount, updated_at = p_now
  WHERE b.tenant_id = p_tenant_id AND b.participant_id = p_participant_id AND b.available >= p_amount
  RETURNING b.available, b.lifetime INTO v_available, v_lifetime;
  IF NOT FOUND THEN
    SELECT b.available, b.lifetime INTO v_available, v_lifetime
    FROM points_balances b WHERE b.tenant_id = p_tenant_id AND b.participant_id = p_participant_id;
    RETURN QUERY SELECT false, coalesce(v_available, 0::bigint), coalesce(v_lifetime, 0::bigint);
    RETURN;
  END IF;

  SELECT s.expiry_policy INTO v_policy FROM points_settings s WHERE s.tenant_id = p_tenant_id;
  v_policy := coalesce(v_policy, 'fifo');
  -- Walk the open lots in policy order (through the index) and stop once the amount is covered.
  IF v_policy = 'lifo' THEN
    OPEN v_lots FOR SELECT l.id, l.remaining FROM points_lots l
      WHERE l.tenant_id = p_tenant_id AND l.participant_id = p_participant_id AND l.remaining > 0 ORDER BY l.id DESC;
  ELSE
    OPEN v_lots FOR SELECT l.id, l.remaining FROM points_lots l
      WHERE l.tenant_id = p_tenant_id AND l.participant_id = p_participant_id AND l.remaining > 0 ORDER BY l.id;
  END IF;
  WHILE v_left > 0 LOOP
    FETCH v_lots INTO v_lot;
    EXIT WHEN NOT FOUND;
    v_take := least(v_left, v_lot.remaining);
    UPDATE points_lots l SET remaining = l.remaining - v_take
    WHERE l.tenant_id = p_tenant_id AND l.participant_id = p_participant_id AND l.id = v_lot.id;
    v_left := v_left - v_take;
  END LOOP;
  CLOSE v_lots;
  IF v_left <> 0 THEN
    RAISE EXCEPTION 'points ledger invariant broken: lots of % hold less than the balance', p_participant_id;
  END IF;

  INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, memo, source_kind, source_id,
                             available_after, lifetime_after, created_at)
  VALUES (p_tenant_id, p_participant_id, p_entry_id, p_type, -p_amount, p_reason, p_memo, p_source_kind, p_source_id,
          v_available, v_lifetime, p_now);
  RETURN QUERY SELECT true, v_available, v_lifetime;
END $$;
