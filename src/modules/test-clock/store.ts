import type { Tx } from '../../platform/db.js';

/** The test clock's row, or null on real time. */
export async function readTestClock(tx: Tx, tenantId: string, lock = false): Promise<{ offset_ms: number; advanced_at: Date } | null> {
  const { rows } = await tx.query<{ offset_ms: string; advanced_at: Date }>(
    `SELECT offset_ms, advanced_at FROM tenant_test_clocks WHERE tenant_id = $1${lock ? ' FOR UPDATE' : ''}`,
    [tenantId],
  );
  return rows[0] ? { offset_ms: Number(rows[0].offset_ms), advanced_at: rows[0].advanced_at } : null;
}

/** Serialises the tenant's clock changes (the row may not exist yet, so a row lock is not enough). */
export async function lockTestClock(tx: Tx, tenantId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtext('tenant_test_clock'), hashtext($1::text))`, [tenantId]);
}

export async function writeTestClock(tx: Tx, tenantId: string, offsetMs: number, at: Date): Promise<void> {
  await tx.query(
    `INSERT INTO tenant_test_clocks (tenant_id, offset_ms, advanced_at, created_at) VALUES ($1, $2, $3, $3)
     ON CONFLICT (tenant_id) DO UPDATE SET offset_ms = EXCLUDED.offset_ms, advanced_at = EXCLUDED.advanced_at`,
    [tenantId, offsetMs, at],
  );
}

export async function deleteTestClock(tx: Tx, tenantId: string): Promise<void> {
  await tx.query('DELETE FROM tenant_test_clocks WHERE tenant_id = $1', [tenantId]);
}
