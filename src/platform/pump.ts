import pg from 'pg';
import type { Database } from './db.js';
import type { Logger } from './logger.js';
import type { Config } from '../config.js';

/**
 * Pumps hand work written by hot transactions to the job queue or process it
 * in batches. A hot path (a ledger change, an accepted event) writes a
 * pending marker row in its own transaction instead of adding a queue job: a
 * job insert sends a NOTIFY, which serialises the commits of every notifying
 * transaction, and graphile-worker's `add_jobs` costs a scan of its job
 * table per call. Every worker process runs each pump: it takes pending
 * markers and does their work in one transaction, so a crash leaves either
 * the markers (taken again) or the work done — never neither.
 */
export interface Pump {
  /** For the log, and the name `wakePump` is called with. */
  name: string;
  /** Moves one batch of pending markers (owner pool for cross-tenant reads; `db` for tenant transactions); returns how many it moved. */
  move(pool: pg.Pool, db: Database, log: Logger): Promise<number>;
  /** Loops per process (default 1): each takes its own batches, so batches of different keys run side by side. */
  loops?: number;
  /** How often an idle loop looks (default PUMP_INTERVAL_MS); a pump that is woken on arrival can look seldom. */
  intervalMs?: (config: Config) => number;
}

/** How often an idle pump looks for pending markers; a pump that moved some looks again at once, and a woken one at once. */
export const PUMP_INTERVAL_MS = 100;
/** The channel on which a process without the pump's loops wakes the processes that run them. */
export const PUMP_WAKE_CHANNEL = 'pump_wake';

export interface RunningPump {
  stop(): Promise<void>;
}

const localWakers = new Map<string, Set<() => void>>();
let remoteWaker: ((name: string) => void) | null = null;

/**
 * Tells the loops of a pump that markers were committed, so that they look at once instead of at their next interval.
 * Loops in this process are woken directly; when this process runs none (an API-only process), the worker processes
 * are woken through NOTIFY (see `sendPumpWakeUps`). Call it after the commit, never inside the transaction: a NOTIFY
 * in a transaction serialises its commit with every other notifying one.
 */
export function wakePump(name: string): void {
  const local = localWakers.get(name);
  if (local && local.size > 0) for (const wake of local) wake();
  else remoteWaker?.(name);
}

/**
 * Sends the wake-ups of this process over NOTIFY, each pump's at most one at a time: the wake-ups that come while one
 * is in flight become one more after it. Returns the function that stops sending.
 */
export function sendPumpWakeUps(pool: pg.Pool, log: Logger): () => void {
  const state = new Map<string, 'sending' | 'again'>();
  const send = (name: string): void => {
    const now = state.get(name);
    if (now) {
      state.set(name, 'again');
      return;
    }
    state.set(name, 'sending');
    pool
      .query('SELECT pg_notify($1, $2)', [PUMP_WAKE_CHANNEL, name])
      .catch((error) => log.warn({ err: error, pump: name }, 'pump wake-up failed; the pump finds the work at its next interval'))
      .finally(() => {
        const again = state.get(name) === 'again';
        state.delete(name);
        if (again) send(name);
      });
  };
  remoteWaker = send;
  return () => {
    if (remoteWaker === send) remoteWaker = null;
  };
}

/** Listens for wake-ups sent by other processes and wakes this process's loops; returns the function that stops listening. */
export async function listenForPumpWakeUps(connectionString: string, log: Logger): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString, application_name: 'loyalty-pump-wake' });
  client.on('error', (error) => log.warn({ err: error }, 'pump wake-up listener failed; pumps still look at their interval'));
  await client.connect();
  client.on('notification', (message) => {
    for (const wake of localWakers.get(message.payload ?? '') ?? []) wake();
  });
  await client.query(`LISTEN ${PUMP_WAKE_CHANNEL}`);
  return () => client.end().catch(() => undefined);
}

/** Runs the pump until stopped: at once again after a tick that moved markers or a wake-up, otherwise every `intervalMs`. */
export function startPump(pump: Pump, db: Database, log: Logger, config: Config): RunningPump {
  const intervalMs = pump.intervalMs?.(config) ?? PUMP_INTERVAL_MS;
  const loops = Array.from({ length: pump.loops ?? 1 }, () => startLoop(pump, db, log, intervalMs));
  return {
    async stop() {
      await Promise.all(loops.map((loop) => loop.stop()));
    },
  };
}

function startLoop(pump: Pump, db: Database, log: Logger, intervalMs: number): RunningPump {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let woken = false;
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
    woken = false;
    let moved = 0;
    try {
      moved = await pump.move(db.system, db, log);
    } catch (error) {
      if (!stopped) log.warn({ err: error, pump: pump.name }, 'pump failed; it retries');
    }
    schedule(moved > 0 || woken ? 0 : intervalMs);
  };
  const wake = () => {
    if (stopped) return;
    if (running) {
      woken = true;
      return;
    }
    if (timer) {
      clearTimeout(timer);
      timer = null;
      schedule(0);
    }
  };
  const wakers = localWakers.get(pump.name) ?? new Set();
  localWakers.set(pump.name, wakers);
  wakers.add(wake);
  schedule(0);
  return {
    async stop() {
      stopped = true;
      wakers.delete(wake);
      if (timer) clearTimeout(timer);
      if (running) await running;
    },
  };
}
