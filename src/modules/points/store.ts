import type { Tx } from '../../platform/db.js';

/**
 * Every SQL statement on the points tables. Each function is one statement
 * (a CTE where a change touches several tables) and takes the transaction and
 * the tenant first; every statement filters by tenant.
 */
export type ExpiryPolicy = 'fifo' | 'lifo' | 'none';

export interface GrantRow {
  available: number;
  lifetime: number;
  previous_tier: string | null;
  tier: string | null;
  expires_at: Date | null;
}

export interface GrantValues {
  participantId: string;
  amount: number;
  entryId: string;
  type: string;
  reason: string;
  memo: string | null;
  sourceKind: string;
  sourceId: string | null;
  activityId: string | null;
  engagementId: string | null;
  multiplier: number | null;
  now: Date;
}

/**
 * The whole grant in one statement: the participant on first sight, the
 * balance (locked by the upsert, so concurrent grants serialise on it), the
 * tier for the new lifetime, a lot with the tenant's expiry and the ledger
 * entry. PostgreSQL 18's `RETURNING old.…` gives the tier before the change.
 */
export async function insertGrant(tx: Tx, tenantId: string, v: GrantValues): Promise<GrantRow> {
  const { rows } = await tx.query<GrantRow>(
    `WITH settings AS (
       SELECT coalesce((SELECT expiry_policy FROM points_settings WHERE tenant_id = $1), 'fifo') AS policy,
              coalesce((SELECT default_ttl_days FROM points_settings WHERE tenant_id = $1), 365) AS ttl_days
     ),
     participant AS (
       INSERT INTO participants (tenant_id, participant_id) VALUES ($1, $2) ON CONFLICT DO NOTHING
     ),
     balance AS (
       INSERT INTO points_balances AS b (tenant_id, participant_id, available, lifetime, last_earned_at, tier_code, updated_at)
       VALUES ($1, $2, $3, $3, $12, (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= $3
                                     ORDER BY t.min_lifetime_points DESC LIMIT 1), $12)
       ON CONFLICT (tenant_id, participant_id) DO UPDATE
         SET available = b.available + EXCLUDED.available,
             lifetime = b.lifetime + EXCLUDED.lifetime,
             last_earned_at = EXCLUDED.last_earned_at,
             updated_at = EXCLUDED.updated_at,
             tier_code = (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= b.lifetime + EXCLUDED.lifetime
                          ORDER BY t.min_lifetime_points DESC LIMIT 1)
       RETURNING old.tier_code AS previous_tier, new.tier_code AS tier, new.available, new.lifetime
     ),
     lot AS (
       INSERT INTO points_lots (tenant_id, participant_id, amount, remaining, ledger_entry_id, created_at, expires_at)
       SELECT $1, $2, $3, $3, $4, $12, CASE WHEN s.policy = 'none' THEN NULL ELSE $12::timestamptz + make_interval(days => s.ttl_days) END
       FROM settings s
       RETURNING expires_at
     ),
     entry AS (
       INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, memo, source_kind, source_id, activity_id,
                                  engagement_id, multiplier, available_after, lifetime_after, created_at)
       SELECT $1, $2, $4, $5, $3, $6, $7, $8, $9, $10, $11, $13, b.available, b.lifetime, $12 FROM balance b
     )
     SELECT b.available, b.lifetime, b.previous_tier, b.tier, (SELECT expires_at FROM lot) AS expires_at FROM balance b`,
    [
      tenantId,
      v.participantId,
      v.amount,
      v.entryId,
      v.type,
      v.reason,
      v.memo,
      v.sourceKind,
      v.sourceId,
      v.activityId,
      v.engagementId,
      v.now,
      v.multiplier,
    ],
  );
  return rows[0];
}

export interface DeductValues {
  participantId: string;
  amount: number;
  entryId: string;
  type: string;
  reason: string;
  memo: string | null;
  sourceKind: string;
  sourceId: string | null;
  now: Date;
}

/** The guarded deduct (the SQL function `points_deduct` of migration 0100), one round trip. */
export async function deduct(tx: Tx, tenantId: string, v: DeductValues): Promise<{ applied: boolean; available: number; lifetime: number }> {
  const { rows } = await tx.query(
    'SELECT applied, available, lifetime FROM points_deduct($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
    [tenantId, v.participantId, v.amount, v.entryId, v.type, v.reason, v.memo, v.sourceKind, v.sourceId, v.now],
  );
  return rows[0];
}

export async function readBalance(
  tx: Tx,
  tenantId: string,
  participantId: string,
): Promise<{ available: number; lifetime: number; last_earned_at: Date | null; tier_code: string | null } | null> {
  const { rows } = await tx.query(
    'SELECT available, lifetime, last_earned_at, tier_code FROM points_balances WHERE tenant_id = $1 AND participant_id = $2',
    [tenantId, participantId],
  );
  return rows[0] ?? null;
}

/** The matching multiplier with the highest factor (ties: the oldest), or none. */
export async function bestMultiplier(
  tx: Tx,
  tenantId: string,
  participantId: string,
  eventName: string,
  attributes: Record<string, unknown>,
  at: Date,
): Promise<{ id: string; multiplier: number } | null> {
  const { rows } = await tx.query(
    `SELECT id, multiplier FROM points_multipliers
     WHERE tenant_id = $1 AND event_type = $2 AND starts_at <= $3 AND ends_at > $3
       AND attributes <@ $4::jsonb AND (participant_id IS NULL OR participant_id = $5)
     ORDER BY multiplier DESC, created_at, id
     LIMIT 1`,
    [tenantId, eventName, at, JSON.stringify(attributes ?? {}), participantId],
  );
  return rows[0] ?? null;
}
