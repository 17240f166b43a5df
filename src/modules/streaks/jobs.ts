import type { JobHandler } from '../../platform/jobs.js';
import { sweepLapsedStreaks } from './service.js';

// graphile-worker's crontab accepts no dots in task names, so recurring tasks use a colon.
export const SWEEP_TASK = 'streaks:sweep';

/** Hourly, so that a streak breaks within an hour of its period (plus grace) ending in any time zone. */
export const sweepLapsedStreaksJob: JobHandler = async (_payload, { db, log }) => {
  const broken = await sweepLapsedStreaks(db);
  if (broken > 0) log.info({ broken }, 'lapsed streaks broken');
};
