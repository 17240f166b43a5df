import type { Database, Tx } from '../../platform/db.js';
import { DEFAULT_SETTINGS } from './settings-store.js';

/**
 * The statements that change and read a balance: grants (one, or a batch in
 * one statement), the guarded deduct, and the balance reads.
 */

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
 * entry. The upsert keeps the tier it replaces in `tier_code_before` and
 * returns it (PostgreSQL before 18 has no `RETURNING old.…`; migration 0105).
 */
export async function insertGrant(tx: Tx, tenantId: string, v: GrantValues): Promise<GrantRow> {
  return (await insertGrants(tx, tenantId, [v]))[0];
}

/**
 * Grants in one statement, each as `insertGrant` describes: a processing
 * batch writes its held grants with it (service.ts, `awardInTx`). The
 * participants must be distinct (a balance row can change once per
 * statement); the caller splits a batch into rounds. Returns one row per
 * grant, in the order given.
 */
export async function insertGrants(tx: Tx, tenantId: string, list: GrantValues[]): Promise<GrantRow[]> {
  const { rows } = await tx.query<GrantRow>(
    `WITH settings AS (
       SELECT coalesce((SELECT expiry_policy FROM points_settings WHERE tenant_id = $1), 'fifo') AS policy,
              coalesce((SELECT default_ttl_days FROM points_settings WHERE tenant_id = $1), 365) AS ttl_days
     ),
     input AS (
       SELECT * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                            $10::text[], $11::text[], $12::timestamptz[], $13::numeric[])
         WITH ORDINALITY AS i (participant_id, amount, entry_id, type, reason, memo, source_kind, source_id,
                               activity_id, engagement_id, at, multiplier, n)
     ),
     participant AS (
       INSERT INTO participants (tenant_id, participant_id) SELECT $1, participant_id FROM input ON CONFLICT DO NOTHING
     ),
     balance AS (
       INSERT INTO points_balances AS b (tenant_id, participant_id, available, lifetime, last_earned_at, tier_code, updated_at)
       SELECT $1, i.participant_id, i.amount, i.amount, i.at,
              (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= i.amount
               ORDER BY t.min_lifetime_points DESC LIMIT 1), i.at
       FROM input i
       ON CONFLICT (tenant_id, participant_id) DO UPDATE
         SET available = b.available + EXCLUDED.available,
             lifetime = b.lifetime + EXCLUDED.lifetime,
             last_earned_at = EXCLUDED.last_earned_at,
             updated_at = EXCLUDED.updated_at,
             tier_code_before = b.tier_code,
             tier_code = (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= b.lifetime + EXCLUDED.lifetime
                          ORDER BY t.min_lifetime_points DESC LIMIT 1)
       RETURNING b.participant_id, b.tier_code_before AS previous_tier, b.tier_code AS tier, b.available, b.lifetime
     ),
     lot AS (
       INSERT INTO points_lots (tenant_id, participant_id, amount, remaining, ledger_entry_id, created_at, expires_at)
       SELECT $1, i.participant_id, i.amount, i.amount, i.entry_id, i.at,
              CASE WHEN s.policy = 'none' THEN NULL ELSE i.at + make_interval(days => s.ttl_days) END
       FROM input i CROSS JOIN settings s
       RETURNING ledger_entry_id, expires_at
     ),
     entry AS (
       INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, memo, source_kind, source_id, activity_id,
                                  engagement_id, multiplier, available_after, lifetime_after, created_at)
       SELECT $1, i.participant_id, i.entry_id, i.type, i.amount, i.reason, i.memo, i.source_kind, i.source_id, i.activity_id,
              i.engagement_id, i.multiplier, b.available, b.lifetime, i.at
       FROM input i JOIN balance b ON b.participant_id = i.participant_id
       ORDER BY i.n
     )
     SELECT b.available, b.lifetime, b.previous_tier, b.tier, l.expires_at
     FROM input i
     JOIN balance b ON b.participant_id = i.participant_id
     JOIN lot l ON l.ledger_entry_id = i.entry_id
     ORDER BY i.n`,
    [
      tenantId,
      list.map((v) => v.participantId),
      list.map((v) => v.amount),
      list.map((v) => v.entryId),
      list.map((v) => v.type),
      list.map((v) => v.reason),
      list.map((v) => v.memo),
      list.map((v) => v.sourceKind),
      list.map((v) => v.sourceId),
      list.map((v) => v.activityId),
      list.map((v) => v.engagementId),
      list.map((v) => v.now.toISOString()),
      list.map((v) => v.multiplier),
    ],
  );
  if (rows.length !== list.length) throw new Error(`a batch of ${list.length} grants wrote ${rows.length}`);
  return rows;
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

/**
 * A participant's balance with the tenant's currency name in ONE round trip
 * (`db.tenantRead`: read-only, tenant set, identical concurrent reads
 * coalesced), for the participant-facing balance read that pages poll.
 */
export async function readSessionBalance(db: Database, tenantId: string, participantId: string) {
  const [row] = await db.tenantRead<{ available: number | null; lifetime: number | null; last_earned_at: Date | null; currency_name: string | null }>(
    tenantId,
    `SELECT b.available, b.lifetime, b.last_earned_at, s.currency_name
     FROM (SELECT 1) AS one
     LEFT JOIN points_balances b ON b.tenant_id = $1 AND b.participant_id = $2
     LEFT JOIN points_settings s ON s.tenant_id = $1`,
    [tenantId, participantId],
  );
  return { ...row, currency_name: row.currency_name ?? DEFAULT_SETTINGS.currency_name };
}
