import type { Statement, Tx } from '../../platform/db.js';

export interface RewardRow {
  id: string;
  name: string;
  description: string | null;
  image_url: string | null;
  type: string;
  metadata: Record<string, unknown>;
  code_source: 'pool' | 'generated' | 'none';
  code_prefix: string;
  inventory: number | null;
  claimed_count: number;
  available_until: Date | null;
  valid_for_days: number | null;
  active: boolean;
  created_at: Date;
  updated_at: Date;
  codes_available?: number | null;
}

const COLUMNS = 'id, name, description, image_url, type, metadata, code_source, code_prefix, inventory, claimed_count, available_until, valid_for_days, active, created_at, updated_at';
// Pool rewards report how many codes are left; claims of unlimited rewards are counted from the claims.
const WITH_COUNTS = `${COLUMNS.split(', ').map((c) => `r.${c}`).join(', ')},
  CASE WHEN r.code_source = 'pool' THEN (SELECT count(*)::int FROM reward_codes c WHERE c.tenant_id = r.tenant_id AND c.reward_id = r.id AND c.claim_id IS NULL) END AS codes_available,
  (SELECT count(*)::int FROM reward_claims k WHERE k.tenant_id = r.tenant_id AND k.reward_id = r.id) AS claims_made`;

function withClaims(row: RewardRow & { claims_made?: number }): RewardRow {
  const { claims_made, ...rest } = row;
  return { ...rest, claimed_count: claims_made ?? rest.claimed_count };
}

export async function insertReward(tx: Tx, tenantId: string, reward: Omit<RewardRow, 'claimed_count' | 'created_at' | 'updated_at'>, now: Date): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO rewards (tenant_id, id, name, description, type, metadata, code_source, code_prefix, inventory, available_until, valid_for_days, active, created_at, updated_at, image_url)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $14) ON CONFLICT DO NOTHING`,
    [
      tenantId,
      reward.id,
      reward.name,
      reward.description,
      reward.type,
      JSON.stringify(reward.metadata),
      reward.code_source,
      reward.code_prefix,
      reward.inventory,
      reward.available_until,
      reward.valid_for_days,
      reward.active,
      now,
      reward.image_url,
    ],
  );
  return rowCount === 1;
}

/** The reward row alone (a claim needs no counts); `forUpdate` locks it. */
export async function findReward(tx: Tx, tenantId: string, id: string, forUpdate = false): Promise<RewardRow | null> {
  const { rows } = await tx.query(`SELECT ${COLUMNS} FROM rewards WHERE tenant_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [tenantId, id]);
  return rows[0] ?? null;
}

/** The reward with its claims made and free codes counted, as the admin reads show it. */
export async function findRewardWithCounts(tx: Tx, tenantId: string, id: string): Promise<RewardRow | null> {
  const { rows } = await tx.query(`SELECT ${WITH_COUNTS} FROM rewards r WHERE r.tenant_id = $1 AND r.id = $2`, [tenantId, id]);
  return rows[0] ? withClaims(rows[0]) : null;
}

export async function updateReward(tx: Tx, tenantId: string, id: string, changes: Record<string, unknown>, now: Date): Promise<void> {
  const names = Object.keys(changes);
  const sets = names.map((name, index) => `${name} = $${index + 4}`);
  await tx.query(`UPDATE rewards SET ${[...sets, 'updated_at = $3'].join(', ')} WHERE tenant_id = $1 AND id = $2`, [
    tenantId,
    id,
    now,
    ...names.map((name) => (name === 'metadata' ? JSON.stringify(changes[name]) : changes[name])),
  ]);
}

export async function listRewards(tx: Tx, tenantId: string, filter: { type?: string; afterId: string | null; limit: number }): Promise<RewardRow[]> {
  const { rows } = await tx.query(
    `SELECT ${WITH_COUNTS} FROM rewards r
     WHERE r.tenant_id = $1 AND ($2::text IS NULL OR r.type = $2) AND ($3::text IS NULL OR r.id > $3)
     ORDER BY r.id LIMIT $4`,
    [tenantId, filter.type ?? null, filter.afterId, filter.limit],
  );
  return rows.map(withClaims);
}

/** Adds codes to a pool in one statement; repeated and existing codes are skipped. */
export async function insertCodes(tx: Tx, tenantId: string, rewardId: string, codes: string[], now: Date): Promise<number> {
  const { rowCount } = await tx.query(
    `INSERT INTO reward_codes (tenant_id, reward_id, code, uploaded_at)
     SELECT $1, $2, c, $4 FROM unnest($3::text[]) AS c ON CONFLICT DO NOTHING`,
    [tenantId, rewardId, codes, now],
  );
  return rowCount ?? 0;
}

export async function missingRewardIds(tx: Tx, tenantId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await tx.query(
    'SELECT i AS id FROM unnest($2::text[]) AS i WHERE NOT EXISTS (SELECT 1 FROM rewards r WHERE r.tenant_id = $1 AND r.id = i)',
    [tenantId, ids],
  );
  return rows.map((r) => r.id);
}

/** Rewards that cannot be claimed now: unknown, inactive, past their date, out of stock or out of codes. */
/** The rewards among `ids` that cannot be claimed now (inactive, ended, out of stock or of codes); `unavailableIdsOf` reads its rows. */
export function unavailableRewardIdsStatement(tenantId: string, ids: string[], now: Date): Statement {
  return {
    text: `SELECT i AS id FROM unnest($2::text[]) AS i
     WHERE NOT EXISTS (
       SELECT 1 FROM rewards r
       WHERE r.tenant_id = $1 AND r.id = i AND r.active
         AND (r.available_until IS NULL OR r.available_until > $3)
         AND (r.inventory IS NULL OR r.claimed_count < r.inventory)
         AND (r.code_source <> 'pool' OR EXISTS (SELECT 1 FROM reward_codes c WHERE c.tenant_id = $1 AND c.reward_id = r.id AND c.claim_id IS NULL))
     )`,
    values: [tenantId, ids, now],
  };
}

export function unavailableIdsOf(rows: readonly unknown[]): string[] {
  return rows.map((row) => (row as { id: string }).id);
}

export async function unavailableRewardIds(tx: Tx, tenantId: string, ids: string[], now: Date): Promise<string[]> {
  if (ids.length === 0) return [];
  const { text, values } = unavailableRewardIdsStatement(tenantId, ids, now);
  const { rows } = await tx.query(text, [...values]);
  return unavailableIdsOf(rows);
}

export interface ClaimRow {
  id: string;
  reward_id: string;
  name: string;
  type: string;
  display_type: string;
  metadata: Record<string, unknown>;
  code: string | null;
  claimed_at: Date;
  expires_at: Date | null;
  /** The reward's image as the catalogue has it now (a claim keeps its name, not its picture). */
  image_url: string | null;
}

/**
 * Claims in one statement: takes one unit of a limited inventory (guarded
 * update), one free pool code (FOR UPDATE SKIP LOCKED, so concurrent claims
 * take different codes instead of waiting), and inserts the claim only when
 * both succeeded. Returns null when the stock or the codes ran out; the caller
 * then rolls back, which also returns a unit taken without a code.
 */
export async function insertClaim(
  tx: Tx,
  tenantId: string,
  claim: {
    id: string;
    reward: RewardRow;
    participantId: string;
    engagementId: string | null;
    activityId: string | null;
    attemptId: string | null;
    displayType: string;
    generatedCode: string | null;
    claimedAt: Date;
    expiresAt: Date | null;
  },
): Promise<ClaimRow | null> {
  const limited = claim.reward.inventory !== null;
  const pool = claim.reward.code_source === 'pool';
  const { rows } = await tx.query(
    `WITH stock AS (
       UPDATE rewards SET claimed_count = claimed_count + 1
       WHERE $13::boolean AND tenant_id = $1 AND id = $2 AND claimed_count < inventory
       RETURNING 1
     ), taken AS (
       UPDATE reward_codes SET claim_id = $3
       WHERE $14::boolean AND (tenant_id, reward_id, code) IN (
         SELECT tenant_id, reward_id, code FROM reward_codes
         WHERE tenant_id = $1 AND reward_id = $2 AND claim_id IS NULL
         ORDER BY uploaded_at, code LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING code
     )
     INSERT INTO reward_claims (tenant_id, id, reward_id, participant_id, engagement_id, activity_id, attempt_id, name, type, display_type, metadata, code, claimed_at, expires_at)
     SELECT $1, $3, $2, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $14::boolean THEN (SELECT code FROM taken) ELSE $12 END, $15, $16
     WHERE (NOT $13::boolean OR EXISTS (SELECT 1 FROM stock)) AND (NOT $14::boolean OR EXISTS (SELECT 1 FROM taken))
     RETURNING id, reward_id, name, type, display_type, metadata, code, claimed_at, expires_at, $17::text AS image_url`,
    [
      tenantId,
      claim.reward.id,
      claim.id,
      claim.participantId,
      claim.engagementId,
      claim.activityId,
      claim.attemptId,
      claim.reward.name,
      claim.reward.type,
      claim.displayType,
      JSON.stringify(claim.reward.metadata),
      claim.generatedCode,
      limited,
      pool,
      claim.claimedAt,
      claim.expiresAt,
      claim.reward.image_url,
    ],
  );
  return rows[0] ?? null;
}

export async function setClaimMultiplier(tx: Tx, tenantId: string, claimId: string, multiplierId: string): Promise<void> {
  await tx.query('UPDATE reward_claims SET multiplier_id = $3 WHERE tenant_id = $1 AND id = $2', [tenantId, claimId, multiplierId]);
}

export async function listClaims(
  tx: Tx,
  tenantId: string,
  participantId: string,
  after: { claimed_at: string; id: string } | null,
  limit: number,
): Promise<ClaimRow[]> {
  const { rows } = await tx.query(
    `SELECT k.id, k.reward_id, k.name, k.type, k.display_type, k.metadata, k.code, k.claimed_at, k.expires_at,
            (SELECT r.image_url FROM rewards r WHERE r.tenant_id = k.tenant_id AND r.id = k.reward_id) AS image_url
       FROM reward_claims k
      WHERE k.tenant_id = $1 AND k.participant_id = $2 AND ($3::timestamptz IS NULL OR (k.claimed_at, k.id) < ($3, $4::text))
      ORDER BY k.claimed_at DESC, k.id DESC LIMIT $5`,
    [tenantId, participantId, after?.claimed_at ?? null, after?.id ?? null, limit],
  );
  return rows;
}
