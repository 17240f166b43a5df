import type { Tx } from '../../platform/db.js';

/** The statements on tiers: their definitions, and the re-evaluation of every participant's tier. */

export interface TierRow {
  code: string;
  name: string;
  min_lifetime_points: number;
  level: number;
  created_at: Date;
  updated_at: Date;
}

const TIER_SELECT = `SELECT code, name, min_lifetime_points, created_at, updated_at,
  (row_number() OVER (ORDER BY min_lifetime_points))::int AS level FROM points_tiers WHERE tenant_id = $1`;

export async function listTiers(tx: Tx, tenantId: string): Promise<TierRow[]> {
  const { rows } = await tx.query<TierRow>(`${TIER_SELECT} ORDER BY min_lifetime_points`, [tenantId]);
  return rows;
}

export async function countTiers(tx: Tx, tenantId: string): Promise<number> {
  const { rows } = await tx.query('SELECT count(*)::int AS n FROM points_tiers WHERE tenant_id = $1', [tenantId]);
  return rows[0].n;
}

/** Inserts a tier; null when the code or the threshold is already taken. */
export async function insertTier(tx: Tx, tenantId: string, tier: { code: string; name: string; min_lifetime_points: number }, now: Date): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO points_tiers (tenant_id, code, name, min_lifetime_points, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT DO NOTHING`,
    [tenantId, tier.code, tier.name, tier.min_lifetime_points, now],
  );
  return rowCount === 1;
}

export async function updateTier(tx: Tx, tenantId: string, code: string, patch: { name?: string; min_lifetime_points?: number }, now: Date): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE points_tiers SET name = coalesce($3, name), min_lifetime_points = coalesce($4, min_lifetime_points), updated_at = $5
     WHERE tenant_id = $1 AND code = $2`,
    [tenantId, code, patch.name ?? null, patch.min_lifetime_points ?? null, now],
  );
  return rowCount === 1;
}

export async function deleteTier(tx: Tx, tenantId: string, code: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM points_tiers WHERE tenant_id = $1 AND code = $2', [tenantId, code]);
  return rowCount === 1;
}

export interface TierChangeRow {
  participant_id: string;
  previous_tier: string | null;
  tier: string | null;
  lifetime: number;
}

/**
 * Re-evaluates the tiers of one page of participants (by id, after `afterId`)
 * against the current definitions; returns the changes and the page's last id.
 */
export async function reevaluateTiers(
  tx: Tx,
  tenantId: string,
  afterId: string,
  limit: number,
  now: Date,
): Promise<{ lastId: string | null; changes: TierChangeRow[] }> {
  const { rows } = await tx.query(
    `WITH page AS (
       SELECT participant_id, lifetime, tier_code FROM points_balances WHERE tenant_id = $1 AND participant_id > $2
       ORDER BY participant_id LIMIT $3 FOR UPDATE
     ),
     target AS (
       SELECT p.participant_id, p.tier_code AS previous,
              (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= p.lifetime
               ORDER BY t.min_lifetime_points DESC LIMIT 1) AS code
       FROM page p
     ),
     changed AS (
       UPDATE points_balances b SET tier_code = target.code, updated_at = $4
       FROM target
       WHERE b.tenant_id = $1 AND b.participant_id = target.participant_id AND b.tier_code IS DISTINCT FROM target.code
       RETURNING b.participant_id, target.previous AS previous_tier, b.tier_code AS tier, b.lifetime
     )
     SELECT (SELECT max(participant_id) FROM page) AS last_id,
            coalesce((SELECT json_agg(changed) FROM changed), '[]'::json) AS changes`,
    [tenantId, afterId, limit, now],
  );
  return { lastId: rows[0].last_id, changes: rows[0].changes };
}
