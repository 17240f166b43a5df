import type pg from 'pg';
import type { Logger } from './logger.js';

/**
 * Pumps hand work written by hot transactions to the job queue in batches.
 * A hot path (a ledger change, an accepted event) writes a pending marker
 * row in its own transaction instead of adding a queue job: a job insert
 * sends a NOTIFY, which serialises the commits of every notifying
 * transaction, and graphile-worker's `add_jobs` costs a scan of its job
 * table per call. Every worker process runs each pump: it takes pending
 * markers and adds their jobs in one transaction, so a crash leaves either
 * the markers (taken again) or the jobs (run by the queue) — never neither.
 */
export interface Pump {
  /** For the log. */
  name: string;
  /** Moves one batch of pending markers into jobs (owner connection); returns how many it moved. */
  move(pool: pg.Pool): Promise<number>;
}

/** How often an idle pump looks for pending markers; a pump that moved some looks again at once. */
export const PUMP_INTERVAL_MS = 100;

export interface RunningPump {
  stop(): Promise<void>;
}

/** Runs the pump until stopped: at once again after a tick that moved markers, otherwise every `intervalMs`. */
export function startPump(pump: Pump, pool: pg.Pool, log: Logger, intervalMs: number = PUMP_INTERVAL_MS): RunningPump {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  const schedule = (delay: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      running = tick().finally(() => {
        running = null;
      });
    }, delay);
  };
  const tick = async () => {
    let moved = 0;
    try {
      moved = await pump.move(pool);
    } catch (error) {
      if (!stopped) log.warn({ err: error, pump: pump.name }, 'pump failed; it retries');
    }
    schedule(moved > 0 ? 0 : intervalMs);
  };
  schedule(0);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (running) await running;
    },
  };
}
