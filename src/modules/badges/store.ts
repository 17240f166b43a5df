import type { Tx } from '../../platform/db.js';

/** Every SQL statement on badge_definitions and participant_badges. */
export interface BadgeRow {
  code: string;
  name: string;
  description: string | null;
  image_url: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertBadge(tx: Tx, tenantId: string, badge: Omit<BadgeRow, 'updated_at'>): Promise<BadgeRow | null> {
  const { rows } = await tx.query<BadgeRow>(
    `INSERT INTO badge_definitions (tenant_id, code, name, description, image_url, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT DO NOTHING
     RETURNING code, name, description, image_url, created_at, updated_at`,
    [tenantId, badge.code, badge.name, badge.description, badge.image_url, badge.created_at],
  );
  return rows[0] ?? null;
}

export async function findBadge(tx: Tx, tenantId: string, code: string): Promise<BadgeRow | null> {
  const { rows } = await tx.query<BadgeRow>(
    'SELECT code, name, description, image_url, created_at, updated_at FROM badge_definitions WHERE tenant_id = $1 AND code = $2',
    [tenantId, code],
  );
  return rows[0] ?? null;
}

export async function findBadges(tx: Tx, tenantId: string, codes: string[]): Promise<BadgeRow[]> {
  const { rows } = await tx.query<BadgeRow>(
    'SELECT code, name, description, image_url, created_at, updated_at FROM badge_definitions WHERE tenant_id = $1 AND code = ANY($2::text[])',
    [tenantId, codes],
  );
  return rows;
}

export async function listBadges(tx: Tx, tenantId: string, afterCode: string | null, limit: number): Promise<BadgeRow[]> {
  const { rows } = await tx.query<BadgeRow>(
    `SELECT code, name, description, image_url, created_at, updated_at FROM badge_definitions
     WHERE tenant_id = $1 AND ($2::text IS NULL OR code > $2) ORDER BY code LIMIT $3`,
    [tenantId, afterCode, limit],
  );
  return rows;
}

export async function updateBadge(
  tx: Tx,
  tenantId: string,
  code: string,
  changes: { name?: string; description?: string | null; image_url?: string | null },
  now: Date,
): Promise<BadgeRow | null> {
  const { rows } = await tx.query<BadgeRow>(
    `UPDATE badge_definitions SET
       name = CASE WHEN $3 THEN $4 ELSE name END,
       description = CASE WHEN $5 THEN $6 ELSE description END,
       image_url = CASE WHEN $7 THEN $8 ELSE image_url END,
       updated_at = $9
     WHERE tenant_id = $1 AND code = $2
     RETURNING code, name, description, image_url, created_at, updated_at`,
    [
      tenantId,
      code,
      changes.name !== undefined,
      changes.name ?? null,
      changes.description !== undefined,
      changes.description ?? null,
      changes.image_url !== undefined,
      changes.image_url ?? null,
      now,
    ],
  );
  return rows[0] ?? null;
}

export async function deleteBadge(tx: Tx, tenantId: string, code: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM badge_definitions WHERE tenant_id = $1 AND code = $2', [tenantId, code]);
  return rowCount === 1;
}

/** Records the badge unless already earned; returns the stored row and whether this call inserted it. */
export async function insertEarnedBadge(
  tx: Tx,
  tenantId: string,
  input: { participantId: string; badgeCode: string; earnedAt: Date; sourceKind: string; sourceId: string },
): Promise<{ inserted: boolean; earnedAt: Date }> {
  const { rows } = await tx.query<{ earned_at: Date; inserted: boolean }>(
    `WITH inserted AS (
       INSERT INTO participant_badges (tenant_id, participant_id, badge_code, earned_at, source_kind, source_id)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT DO NOTHING
       RETURNING earned_at
     )
     SELECT earned_at, true AS inserted FROM inserted
     UNION ALL
     SELECT earned_at, false FROM participant_badges
     WHERE tenant_id = $1 AND participant_id = $2 AND badge_code = $3 AND NOT EXISTS (SELECT 1 FROM inserted)`,
    [tenantId, input.participantId, input.badgeCode, input.earnedAt, input.sourceKind, input.sourceId],
  );
  const row = rows[0];
  if (row) return { inserted: row.inserted, earnedAt: row.earned_at };
  // A concurrent transaction inserted the row after this statement's snapshot was taken: read it now.
  const again = await tx.query<{ earned_at: Date }>(
    'SELECT earned_at FROM participant_badges WHERE tenant_id = $1 AND participant_id = $2 AND badge_code = $3',
    [tenantId, input.participantId, input.badgeCode],
  );
  return { inserted: false, earnedAt: again.rows[0].earned_at };
}

export async function hasEarned(tx: Tx, tenantId: string, participantId: string, badgeCode: string): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM participant_badges WHERE tenant_id = $1 AND participant_id = $2 AND badge_code = $3', [
    tenantId,
    participantId,
    badgeCode,
  ]);
  return rowCount === 1;
}

export interface BadgeStatusRow extends BadgeRow {
  earned_at: Date | null;
}

/** Every badge of the tenant (or those named) with the participant's earned time, in code order. */
export async function badgeStatuses(tx: Tx, tenantId: string, participantId: string, codes: string[] | null, limit: number): Promise<BadgeStatusRow[]> {
  const { rows } = await tx.query<BadgeStatusRow & { earned_at: Date | null }>(
    `SELECT d.code, d.name, d.description, d.image_url, d.created_at, d.updated_at, pb.earned_at
     FROM badge_definitions d
     LEFT JOIN participant_badges pb ON pb.tenant_id = d.tenant_id AND pb.badge_code = d.code AND pb.participant_id = $2
     WHERE d.tenant_id = $1 AND ($3::text[] IS NULL OR d.code = ANY($3::text[]))
     ORDER BY d.code
     LIMIT $4`,
    [tenantId, participantId, codes, limit],
  );
  return rows;
}

/** The badges the participant earned, oldest first (`$1` the tenant, `$2` the participant). */
export const EARNED_BADGES_STATEMENT = `SELECT d.code, d.name, d.description, d.image_url, d.created_at, d.updated_at, pb.earned_at
     FROM participant_badges pb
     JOIN badge_definitions d ON d.tenant_id = pb.tenant_id AND d.code = pb.badge_code
     WHERE pb.tenant_id = $1 AND pb.participant_id = $2
     ORDER BY pb.earned_at, d.code`;

export async function earnedBadges(tx: Tx, tenantId: string, participantId: string): Promise<BadgeStatusRow[]> {
  const { rows } = await tx.query<BadgeStatusRow>(EARNED_BADGES_STATEMENT, [tenantId, participantId]);
  return rows;
}

export async function earnedBadgeCodes(tx: Tx, tenantId: string, participantId: string): Promise<string[]> {
  const { rows } = await tx.query<{ badge_code: string }>(
    'SELECT badge_code FROM participant_badges WHERE tenant_id = $1 AND participant_id = $2 ORDER BY badge_code',
    [tenantId, participantId],
  );
  return rows.map((r) => r.badge_code);
}
