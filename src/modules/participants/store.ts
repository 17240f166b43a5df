import type { Tx } from '../../platform/db.js';

/** Creates the participant on first sight; later calls only refresh the display name when one is given. */
export async function ensureParticipant(tx: Tx, tenantId: string, participantId: string, displayName?: string | null): Promise<void> {
  if (!displayName) {
    await tx.query('INSERT INTO participants (tenant_id, participant_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [tenantId, participantId]);
    return;
  }
  await tx.query(
    `INSERT INTO participants (tenant_id, participant_id, display_name)
     VALUES ($1, $2, $3)
     ON CONFLICT (tenant_id, participant_id) DO UPDATE
       SET display_name = COALESCE(EXCLUDED.display_name, participants.display_name), updated_at = now()
       WHERE EXCLUDED.display_name IS NOT NULL AND EXCLUDED.display_name IS DISTINCT FROM participants.display_name`,
    [tenantId, participantId, displayName ?? null],
  );
}

export async function participantExists(tx: Tx, tenantId: string, participantId: string): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM participants WHERE tenant_id = $1 AND participant_id = $2', [tenantId, participantId]);
  return rowCount === 1;
}
