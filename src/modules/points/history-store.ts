import type { Tx } from '../../platform/db.js';

/** Reads of the ledger: the history, the awards since a moment, the participant's transactions, and the state read's statement. */

export interface LedgerEntryRow {
  id: string;
  seq: number;
  participant_id: string;
  type: 'award' | 'bonus' | 'adjustment' | 'redemption' | 'expiry';
  delta: number;
  reason: string;
  memo: string | null;
  source_kind: string;
  source_id: string | null;
  activity_id: string | null;
  engagement_id: string | null;
  multiplier: number | null;
  available_after: number;
  lifetime_after: number;
  created_at: Date;
}

/** Who caused an entry, as the history shows it: the person or key that asked (directly or by an import), or the rule. */
export interface LedgerEntryActorRow {
  actor_type: 'user' | 'api_key' | 'rule' | null;
  actor_id: string | null;
  actor_name: string | null;
}

const LEDGER_COLUMNS = `id, seq, participant_id, type, delta, reason, memo, source_kind, source_id, activity_id, engagement_id,
  multiplier, available_after, lifetime_after, created_at`;

export interface HistoryFilter {
  participantId: string | null;
  types: string[] | null;
  from: Date | null;
  to: Date | null;
  /** Expiry entries older than this are not returned (the 90-day window). */
  expiryVisibleFrom: Date;
  after: { createdAt: string; seq: number } | null;
  limit: number;
}

/**
 * The history page, each entry with who caused it: the API key or person of a
 * direct grant or deduct (kept on its entry), of the bulk grant job
 * (points_bulk_grants) or of the import a row came from
 * (file_imports.requested_by), else the earning rule; named by the key's,
 * the person's or the rule's current name (null once it is gone).
 */
export async function history(tx: Tx, tenantId: string, f: HistoryFilter): Promise<Array<LedgerEntryRow & LedgerEntryActorRow>> {
  const { rows } = await tx.query<LedgerEntryRow & LedgerEntryActorRow>(
    `WITH page AS (
       SELECT ${LEDGER_COLUMNS}, actor_type AS direct_actor_type, actor_id AS direct_actor_id FROM points_ledger
       WHERE tenant_id = $1
         AND ($2::text IS NULL OR participant_id = $2)
         AND ($3::text[] IS NULL OR type = ANY($3))
         AND ($4::timestamptz IS NULL OR created_at >= $4)
         AND ($5::timestamptz IS NULL OR created_at < $5)
         AND (type <> 'expiry' OR created_at >= $6)
         AND ($7::timestamptz IS NULL OR (created_at, seq) < ($7::timestamptz, $8::bigint))
       ORDER BY created_at DESC, seq DESC
       LIMIT $9
     )
     SELECT p.*, who.actor_type, who.actor_id,
            CASE who.actor_type
              WHEN 'user' THEN (SELECT coalesce(u.name, u.email) FROM admin_users u WHERE u.tenant_id = $1 AND u.id::text = who.actor_id)
              WHEN 'api_key' THEN (SELECT k.name FROM api_keys k WHERE k.tenant_id = $1 AND k.id::text = who.actor_id)
              WHEN 'rule' THEN (SELECT r.name FROM earn_rules r WHERE r.tenant_id = $1 AND r.id = who.actor_id)
            END AS actor_name
     FROM page p
     LEFT JOIN points_bulk_grants g ON p.source_kind = 'bulk' AND p.source_id LIKE 'bgj\\_%' AND g.tenant_id = $1 AND g.id = p.source_id
     LEFT JOIN file_imports i ON p.source_kind = 'bulk' AND p.source_id LIKE 'imp\\_%:%' AND i.tenant_id = $1 AND i.id = split_part(p.source_id, ':', 1)
     CROSS JOIN LATERAL (SELECT
       CASE WHEN p.direct_actor_type IS NOT NULL THEN p.direct_actor_type
            WHEN g.actor_type IS NOT NULL THEN g.actor_type
            WHEN i.id IS NOT NULL THEN CASE i.requested_by->>'kind' WHEN 'key' THEN 'api_key' ELSE 'user' END
            WHEN p.source_kind = 'rule' AND p.source_id IS NOT NULL THEN 'rule' END AS actor_type,
       CASE WHEN p.direct_actor_type IS NOT NULL THEN p.direct_actor_id
            WHEN g.actor_type IS NOT NULL THEN g.actor_id
            WHEN i.id IS NOT NULL THEN i.requested_by->>'actor_id'
            WHEN p.source_kind = 'rule' THEN p.source_id END AS actor_id) who
     ORDER BY p.created_at DESC, p.seq DESC`,
    [tenantId, f.participantId, f.types, f.from, f.to, f.expiryVisibleFrom, f.after?.createdAt ?? null, f.after?.seq ?? null, f.limit],
  );
  return rows;
}

/** The participant's grants (positive ledger entries) since `since`, oldest first. */
export async function awardsSince(tx: Tx, tenantId: string, participantId: string, since: Date): Promise<Array<{ amount: number; at: Date }>> {
  const { rows } = await tx.query<{ amount: number; at: Date }>(
    `SELECT delta AS amount, created_at AS at FROM points_ledger
     WHERE tenant_id = $1 AND participant_id = $2 AND created_at >= $3 AND delta > 0
     ORDER BY created_at, seq`,
    [tenantId, participantId, since],
  );
  return rows;
}

export async function transactionsPage(
  tx: Tx,
  tenantId: string,
  participantId: string,
  limit: number,
  offset: number,
): Promise<{ total: number; rows: LedgerEntryRow[] }> {
  const { rows } = await tx.query(
    `SELECT (SELECT count(*)::int FROM points_ledger WHERE tenant_id = $1 AND participant_id = $2) AS total,
            coalesce((SELECT json_agg(p ORDER BY p.created_at DESC, p.seq DESC) FROM (
              SELECT ${LEDGER_COLUMNS} FROM points_ledger WHERE tenant_id = $1 AND participant_id = $2
              ORDER BY created_at DESC, seq DESC LIMIT $3 OFFSET $4) p), '[]'::json) AS rows`,
    [tenantId, participantId, limit, offset],
  );
  return { total: rows[0].total, rows: rows[0].rows };
}

/** The participant's balance with their tier and the next tier up, for the state read (`$1` the tenant, `$2` the participant). */
export const POINTS_STATE_STATEMENT = `SELECT p.participant_id, b.available, b.lifetime, b.last_earned_at, b.tier_code,
            (SELECT currency_name FROM points_settings WHERE tenant_id = $1) AS currency_name,
            (SELECT row_to_json(t) FROM (SELECT code, name, min_lifetime_points FROM points_tiers
               WHERE tenant_id = $1 AND code = b.tier_code) t) AS tier,
            (SELECT row_to_json(t) FROM (SELECT code, name, min_lifetime_points FROM points_tiers
               WHERE tenant_id = $1 AND min_lifetime_points > coalesce(b.lifetime, 0) ORDER BY min_lifetime_points LIMIT 1) t) AS next_tier
     FROM participants p
     LEFT JOIN points_balances b ON b.tenant_id = p.tenant_id AND b.participant_id = p.participant_id
     WHERE p.tenant_id = $1 AND p.participant_id = $2`;
