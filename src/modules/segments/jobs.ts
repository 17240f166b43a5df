import type { JobHandler } from '../../platform/jobs.js';
import { refreshAllMaterialized } from './materialize.js';

// graphile-worker's crontab accepts no dots in task names, so recurring tasks use a colon.
export const REFRESH_TASK = 'segments:refresh';

/** Every minute: each materialized segment's membership, with segment.entered.v1 / segment.left.v1 for who moved. */
export const refreshSegmentsJob: JobHandler = async (_payload, { db, log }) => {
  const totals = await refreshAllMaterialized(db);
  if (totals.entered > 0 || totals.left > 0) log.info(totals, 'segments refreshed');
};
