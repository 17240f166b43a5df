import type { JobHandler } from '../../platform/jobs.js';
import { isUuid } from '../../platform/ids.js';
import { BULK_GRANT_TASK, TIER_REEVALUATION_TASK, expireDuePoints, reevaluateTiers, runBulkGrant, sendExpiryReminders } from './service.js';

/** Background work of the points module: expiry, reminders, tier re-evaluation, bulk grants. */
// graphile-worker's crontab accepts no dots in task names, so the two
// recurring tasks use a colon instead of the usual `area.thing`.
export const EXPIRE_TASK = 'points:expire';
export const REMIND_TASK = 'points:remind';

function tenantOf(payload: unknown): string {
  const tenantId = (payload as { tenant_id?: unknown } | null)?.tenant_id;
  if (typeof tenantId !== 'string' || !isUuid(tenantId)) throw new Error('the job payload has no valid tenant_id');
  return tenantId;
}

const expire: JobHandler = async (_payload, { db, log }) => {
  const result = await expireDuePoints(db);
  if (result.lots > 0) log.info({ ...result }, 'points expired');
};

const remind: JobHandler = async (_payload, { db, log }) => {
  const sent = await sendExpiryReminders(db);
  if (sent > 0) log.info({ sent }, 'points expiry reminders sent');
};

const tiers: JobHandler = async (payload, { db, log }) => {
  const changed = await reevaluateTiers(db, tenantOf(payload));
  log.info({ changed }, 'tiers re-evaluated');
};

const bulkGrant: JobHandler = async (payload, { db }) => {
  const jobId = (payload as { job_id?: unknown }).job_id;
  if (typeof jobId !== 'string') throw new Error('the job payload has no job_id');
  await runBulkGrant(db, tenantOf(payload), jobId);
};

export const tasks: Record<string, JobHandler> = {
  [EXPIRE_TASK]: expire,
  [REMIND_TASK]: remind,
  [TIER_REEVALUATION_TASK]: tiers,
  [BULK_GRANT_TASK]: bulkGrant,
};

/** Expiry every minute; reminders every ten minutes (they are per day, so minutes do not matter). */
export const crontab = [`* * * * * ${EXPIRE_TASK} ?max=1`, `*/10 * * * * ${REMIND_TASK} ?max=1`];
