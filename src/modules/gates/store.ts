import type { Tx } from '../../platform/db.js';

export async function visitedScreens(tx: Tx, tenantId: string, engagementId: string, participantId: string): Promise<Set<string>> {
  const { rows } = await tx.query('SELECT screen_id FROM screen_visits WHERE tenant_id = $1 AND engagement_id = $2 AND participant_id = $3', [
    tenantId,
    engagementId,
    participantId,
  ]);
  return new Set(rows.map((r) => r.screen_id as string));
}

export async function recordVisit(
  tx: Tx,
  tenantId: string,
  visit: { engagementId: string; participantId: string; screenId: string; at: Date },
): Promise<{ first_visited_at: Date; last_visited_at: Date; visit_count: number }> {
  const { rows } = await tx.query(
    `INSERT INTO screen_visits AS v (tenant_id, engagement_id, participant_id, screen_id, first_visited_at, last_visited_at)
     VALUES ($1, $2, $3, $4, $5, $5)
     ON CONFLICT (tenant_id, engagement_id, participant_id, screen_id) DO UPDATE
       SET last_visited_at = EXCLUDED.last_visited_at, visit_count = v.visit_count + 1
     RETURNING first_visited_at, last_visited_at, visit_count`,
    [tenantId, visit.engagementId, visit.participantId, visit.screenId, visit.at],
  );
  return rows[0];
}
