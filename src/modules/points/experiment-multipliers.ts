import type { Tx } from '../../platform/db.js';
import { experimentVariantInTx, runningExperimentSubjectsInTx } from '../../platform/experiments.js';
import * as store from './store.js';

/**
 * What the experiments module (issue 36) needs of multipliers: whether one
 * exists (a variant's subject), and ending one when another variant is rolled
 * out (a multiplier has no paused state: it stops by its window); and what the
 * multiplier choice asks of experiments (platform/experiments.ts).
 */
export async function multiplierForExperimentInTx(tx: Tx, tenantId: string, id: string): Promise<{ multiplier: number; event_type: string; ends_at: Date } | null> {
  const row = await store.readMultiplier(tx, tenantId, id);
  return row ? { multiplier: row.multiplier, event_type: row.event_type, ends_at: row.ends_at } : null;
}

/** Ends the multiplier at `at`: its window closes then (one that had not begun is deleted). Returns whether it was live or due. */
export async function endMultiplierInTx(tx: Tx, tenantId: string, id: string, at: Date): Promise<boolean> {
  const ended = await tx.query('UPDATE points_multipliers SET ends_at = $3 WHERE tenant_id = $1 AND id = $2 AND starts_at < $3 AND ends_at > $3', [tenantId, id, at]);
  if (ended.rowCount === 1) return true;
  const removed = await tx.query('DELETE FROM points_multipliers WHERE tenant_id = $1 AND id = $2 AND starts_at >= $3', [tenantId, id, at]);
  return removed.rowCount === 1;
}

/** The multipliers that are variants of the tenant's running experiments (no query when it runs none: a short cache). */
export function multipliersInExperimentsInTx(tx: Tx, tenantId: string): Promise<ReadonlySet<string>> {
  return runningExperimentSubjectsInTx(tx, tenantId, 'multiplier');
}

/** Whether a multiplier in a running experiment serves the participant (their variant's); records their assignment at this first exposure. */
export async function multiplierServesInTx(tx: Tx, tenantId: string, multiplierId: string, participantId: string): Promise<boolean> {
  const answer = await experimentVariantInTx(tx, tenantId, 'multiplier', multiplierId, participantId);
  return answer === null || answer.applies;
}
