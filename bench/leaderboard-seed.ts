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
  await owner.query(
    `INSERT INTO leaderboard_lifetime_points (tenant_id, participant_id, score, reached_at)
     SELECT $1, 'p' || i, (random() * 100000)::bigint + 1, now() - random() * interval '30 days' FROM generate_series(1, $2) i`,
    [tenantId, count],
  );
  await owner.query('VACUUM ANALYZE participants, leaderboard_lifetime_points');
}
