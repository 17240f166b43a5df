import type pg from 'pg';

/**
 * Seeds `count` participants of a tenant (`p1` … `p<count>`, "Player i"), each
 * with lifetime points spread over 1..100,000 (many ties) and reached at a
 * random moment of the last 30 days: what a progression leaderboard of that
 * size ranks. One statement per table, then VACUUM ANALYZE; on the owner pool.
 * Shared by the leaderboard benchmarks.
 */
export async function seedLifetimePoints(owner: pg.Pool, tenantId: string, count: number): Promise<void> {
  await owner.query(
    `INSERT INTO participants (tenant_id, participant_id, display_name) SELECT $1, 'p' || i, 'Player ' || i FROM generate_series(1, $2) i`,
    [tenantId, count],
  );
  // Balances only, as lifetime boards read them (no ledger entries or lots: a ranking reads neither).
  await owner.query(
    `INSERT INTO points_balances (tenant_id, participant_id, available, lifetime, last_earned_at, updated_at)
     SELECT $1, 'p' || i, points, points, at, at
     FROM (SELECT i, (random() * 100000)::bigint + 1 AS points, now() - random() * interval '30 days' AS at FROM generate_series(1, $2) i) s`,
    [tenantId, count],
  );
  await owner.query('VACUUM ANALYZE participants, points_balances');
}
