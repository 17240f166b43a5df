import fs from 'node:fs';
import os from 'node:os';
import type pg from 'pg';

/**
 * The nice value on the embedded server unless DB_BACKGROUND_NICE says otherwise: a CPU share of about a tenth
 * (the kernel's weights: 110 against 1,024) while the API keeps both cores busy, all of what it leaves otherwise.
 */
export const EMBEDDED_BACKGROUND_NICE = 10;

/**
 * Bulk work whose result may come a little later (a leaderboard's scheduled
 * rebuild) runs on the database's `background` connections. When PostgreSQL
 * runs on this machine (the embedded server of `npm start`), the backends of
 * those connections get a higher nice value (DB_BACKGROUND_NICE), so that on
 * a machine with both saturated the API's requests and their statements are
 * scheduled first and the rebuild takes the cores they leave. A rebuild of a
 * million rows takes one core for 10 s or more; at the same priority as the
 * API it took the top page's p99 at 5,000 reads/s on two cores from 14–19 ms
 * to 1.7–4.0 s (docs/performance/leaderboards.md).
 *
 * Only a process of this machine called `postgres` is reniced: the pid that a
 * server elsewhere reports names some unrelated process here. A nice value is
 * only ever raised, and only on a connection that keeps it for its life.
 * Returns whether the backend now runs at `nice` against the service.
 */
export async function lowerBackendPriority(client: Pick<pg.ClientBase, 'query'>, nice: number): Promise<boolean> {
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const pid = Number(rows[0]?.pid);
  if (!Number.isInteger(pid) || pid <= 0 || processName(pid) !== 'postgres') return false;
  try {
    os.setPriority(pid, nice);
    // With Linux's autogroups on, the CPU is shared between sessions first, and a backend is a session of its own
    // (PostgreSQL calls setsid): its nice value only ranks it within that session, against nobody. The session's
    // nice value ranks it against the service's. Written only for a backend that leads its session, so alone in it.
    if (readOr('/proc/sys/kernel/sched_autogroup_enabled', '0') === '1') {
      if (sessionOf(pid) !== pid) return false;
      fs.writeFileSync(`/proc/${pid}/autogroup`, String(nice));
      if (!readOr(`/proc/${pid}/autogroup`, '').endsWith(` nice ${nice}`)) return false;
    }
    return os.getPriority(pid) === nice;
  } catch {
    // Another user's process (a packaged server run as `postgres` while this one is not root): left as it is.
    return false;
  }
}

/** The process's session id (the sixth field of `/proc/<pid>/stat`, after the name in parentheses). */
function sessionOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[3]);
}

/** The process's executable name on Linux (`/proc/<pid>/comm`), null where there is none. */
function processName(pid: number): string | null {
  return readOr(`/proc/${pid}/comm`, null);
}

function readOr<T>(file: string, otherwise: T): string | T {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return otherwise;
  }
}
