import type pg from 'pg';

/**
 * The ledger invariants, checked across every participant (or one tenant's):
 * available = sum of remaining lots = sum of ledger deltas; lifetime = sum of
 * grants (positive entries); points removed by expiry = the lots' expired
 * points; available never below zero. Runs as the schema owner, read-only.
 */
export interface InvariantViolation {
  tenant_id: string;
  participant_id: string;
  available: number | null;
  lifetime: number | null;
  lots_remaining: number;
  ledger_sum: number;
  grants_sum: number;
  expired_entries: number;
  expired_lots: number;
}

export async function findInvariantViolations(pool: pg.Pool | pg.Client, tenantId: string | null = null): Promise<InvariantViolation[]> {
  const { rows } = await pool.query<InvariantViolation>(
    `WITH lots AS (
       SELECT tenant_id, participant_id, sum(remaining)::bigint AS remaining, sum(expired)::bigint AS expired
       FROM points_lots WHERE $1::uuid IS NULL OR tenant_id = $1 GROUP BY 1, 2
     ),
     ledger AS (
       SELECT tenant_id, participant_id, sum(delta)::bigint AS total,
              coalesce(sum(delta) FILTER (WHERE delta > 0), 0)::bigint AS grants,
              coalesce(-sum(delta) FILTER (WHERE type = 'expiry'), 0)::bigint AS expired
       FROM points_ledger WHERE $1::uuid IS NULL OR tenant_id = $1 GROUP BY 1, 2
     ),
     joined AS (
       SELECT coalesce(b.tenant_id, l.tenant_id, g.tenant_id) AS tenant_id,
              coalesce(b.participant_id, l.participant_id, g.participant_id) AS participant_id,
              b.available, b.lifetime,
              coalesce(l.remaining, 0)::bigint AS lots_remaining, coalesce(g.total, 0)::bigint AS ledger_sum,
              coalesce(g.grants, 0)::bigint AS grants_sum, coalesce(g.expired, 0)::bigint AS expired_entries,
              coalesce(l.expired, 0)::bigint AS expired_lots
       FROM (SELECT * FROM points_balances WHERE $1::uuid IS NULL OR tenant_id = $1) b
       FULL JOIN lots l ON l.tenant_id = b.tenant_id AND l.participant_id = b.participant_id
       FULL JOIN ledger g ON g.tenant_id = coalesce(b.tenant_id, l.tenant_id) AND g.participant_id = coalesce(b.participant_id, l.participant_id)
     )
     SELECT * FROM joined
     WHERE available IS NULL OR available < 0 OR available <> lots_remaining OR available <> ledger_sum
        OR lifetime <> grants_sum OR expired_entries <> expired_lots
     ORDER BY tenant_id, participant_id
     LIMIT 1000`,
    [tenantId],
  );
  return rows;
}
