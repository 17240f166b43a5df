import type pg from 'pg';
import type { Plan } from './plans.js';

/** A row of `auth_find_sessions` (migration 1495), without the hash it answers. */
export interface SessionRow {
  tenant_id: string;
  id: string;
  participant_id: string;
  engagement_id: string;
  expires_at: Date;
  revoked_at: Date | null;
  plan: Plan;
  tenant_rate_limit_per_minute: number | null;
}

/**
 * Participant sessions looked up together. A crowd's requests each carry a
 * session that this process may not hold (issued by another process, or too
 * long ago), and each look-up alone is a round trip, which on two busy cores
 * costs more than the statement (docs/performance/activities.md). So while a
 * look-up is in the database, the sessions asked for meanwhile wait and go in
 * the next one, a single statement for all of them; a lone look-up goes at
 * once. Answers each hash with the rows `auth_find_sessions` gives for it.
 */
/** Named, so that each connection plans it once (migration 1495 keeps the function's own plan generic). */
const FIND_SESSIONS = { name: 'auth_find_sessions', text: 'SELECT * FROM auth_find_sessions($1::text[])' };

export class SessionLookups {
  private readonly waiting = new Map<string, Array<{ resolve(rows: SessionRow[]): void; reject(error: unknown): void }>>();
  private inFlight = false;

  constructor(private readonly pool: pg.Pool) {}

  find(hash: string): Promise<SessionRow[]> {
    return new Promise((resolve, reject) => {
      const callers = this.waiting.get(hash);
      if (callers) callers.push({ resolve, reject });
      else this.waiting.set(hash, [{ resolve, reject }]);
      this.send();
    });
  }

  private send(): void {
    if (this.inFlight || this.waiting.size === 0) return;
    const asked = new Map(this.waiting);
    this.waiting.clear();
    this.inFlight = true;
    const hashes = [...asked.keys()];
    const lookup = this.pool.query<SessionRow & { token_hash: string }>({ ...FIND_SESSIONS, values: [hashes] });
    lookup
      .then(
        ({ rows }) => {
          const found = new Map<string, SessionRow[]>();
          for (const { token_hash: hash, ...row } of rows) found.set(hash, [...(found.get(hash) ?? []), row]);
          for (const [hash, callers] of asked) for (const caller of callers) caller.resolve(found.get(hash) ?? []);
        },
        (error: unknown) => {
          for (const callers of asked.values()) for (const caller of callers) caller.reject(error);
        },
      )
      .finally(() => {
        this.inFlight = false;
        this.send();
      });
  }
}
