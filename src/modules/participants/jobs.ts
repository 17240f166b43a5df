import type { JobContext } from '../../platform/jobs.js';
import { clock } from '../../platform/clock.js';
import { purgeAccessLog } from './store.js';

/**
 * Retention of the personal-data access log: rows older than
 * PII_ACCESS_LOG_RETENTION_MONTHS (at least 12) are deleted, in bounded
 * batches so that one run never holds a long lock.
 */
// graphile-worker's crontab accepts letters, digits, `_`, `-`, `:` and `/` in a task name, no dot.
export const PURGE_ACCESS_LOG_TASK = 'participants:purge_pii_access_log';
const PURGE_BATCH_ROWS = 5_000;
const PURGE_BATCHES_MAX = 200;

/** The oldest moment still kept: `months` calendar months before `now`. */
export function retentionCutoff(now: Date, months: number): Date {
  const cutoff = new Date(now.getTime());
  cutoff.setUTCMonth(cutoff.getUTCMonth() - months);
  return cutoff;
}

export async function purgeExpiredAccessLog(_payload: unknown, context: JobContext): Promise<void> {
  const cutoff = retentionCutoff(clock.now(), context.config.piiAccessLogRetentionMonths);
  let purged = 0;
  for (let batch = 0; batch < PURGE_BATCHES_MAX; batch++) {
    const deleted = await purgeAccessLog(context.db.system, cutoff, PURGE_BATCH_ROWS);
    purged += deleted;
    if (deleted < PURGE_BATCH_ROWS) break;
  }
  if (purged > 0) context.log.info({ purged, cutoff: cutoff.toISOString() }, 'purged personal-data access log rows past retention');
}
