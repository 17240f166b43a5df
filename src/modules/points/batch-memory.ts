import type { Tx } from '../../platform/db.js';

/** The working memory of the batch statements that expiry and bulk grants run. */

/** Batch statements aggregate tens of thousands of rows; enough sort memory keeps them off disk (this transaction only). */
const BATCH_WORK_MEM = '64MB';
export async function useBatchMemory(tx: Tx): Promise<void> {
  await tx.query(`SELECT set_config('work_mem', $1, true)`, [BATCH_WORK_MEM]);
}
