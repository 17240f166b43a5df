import type { Database } from '../../platform/db.js';
import { currentTraceparent } from '../../platform/tracing.js';

/** Direct grant and deduct in one round trip (SQL functions of migration 0102, last defined in 0105 and 0104). */

export interface DirectValues {
  key: string;
  fingerprint: string;
  now: Date;
  keyExpires: Date;
  participantId: string;
  amount: number;
  entryId: string;
  type: string;
  reason: string;
  memo: string | null;
  eventId: string;
  /** Used only when the grant changes the participant's tier. */
  tierEventId: string;
}

export interface DirectOutcome {
  outcome: 'applied' | 'duplicate' | 'reused' | 'in_progress';
  response: Record<string, unknown> | null;
}

/**
 * Calls `points_direct_grant` or `points_direct_deduct` as ONE statement on
 * the application pool, outside BEGIN/COMMIT: the statement is its own
 * transaction, and the function sets the tenant for it (row-level security
 * applies as in `db.tenant`). Claim, ledger change, outbox row and stored
 * response commit together, in one round trip instead of six.
 *
 * While a traced request calls it, the call runs in a transaction that first
 * sets `app.traceparent`: the outbox rows the function writes take it as their
 * column default (migration 1310), so the webhook jobs link to the request.
 * Three round trips then, only while tracing is on.
 */
export async function directOperation(db: Database, operation: 'grant' | 'deduct', tenantId: string, v: DirectValues): Promise<DirectOutcome> {
  const common = [tenantId, v.key, v.fingerprint, v.now, v.keyExpires, v.participantId, v.amount, v.entryId, v.type, v.reason, v.memo, v.eventId];
  const [text, values] =
    operation === 'grant'
      ? ['SELECT outcome, response FROM points_direct_grant($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)', [...common, v.tierEventId]]
      : ['SELECT outcome, response FROM points_direct_deduct($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)', common];
  const traceparent = currentTraceparent();
  if (traceparent === null) return (await db.app.query<DirectOutcome>(text, values)).rows[0];
  return db.tenantStartingWith(tenantId, "SELECT set_config('app.traceparent', $1, true)", [traceparent], async (tx) => (await tx.query<DirectOutcome>(text, values)).rows[0]);
}
