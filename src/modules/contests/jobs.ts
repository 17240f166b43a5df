import type { JobHandler } from '../../platform/jobs.js';
import { ADVANCE_TASK, SWEEP_TASK, advanceContest, enqueueDueContests } from './service.js';

/**
 * The lifecycle worker. Each published contest has one pending
 * `contests.advance` job, scheduled with run_at at its next due moment
 * (starts_at, the next rank tick, ends_at, the end of verification). The
 * `contests:sweep` cron job runs every minute as a safety net: it re-queues
 * any contest whose step is due, should a job have been lost.
 */
export const tasks: Record<string, JobHandler> = {
  [ADVANCE_TASK]: async (payload, { db, config }) => {
    const { tenant_id: tenantId, contest_id: contestId } = payload as { tenant_id: string; contest_id: string };
    await advanceContest(db, config, tenantId, contestId);
  },
  [SWEEP_TASK]: async (_payload, { db, config }) => {
    await enqueueDueContests(db, config);
  },
};

export const crontab = [`* * * * * ${SWEEP_TASK}`];
