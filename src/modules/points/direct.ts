import { countLedgerWrite } from '../../platform/metrics.js';
import type { AuthContext } from '../../platform/auth.js';
import type { Database, Statement } from '../../platform/db.js';
import { currentTraceparent } from '../../platform/tracing.js';
import { clock } from '../../platform/clock.js';
import { CLAIMED, claimOutcome, claimStatement, fingerprint, isFreshClaim, storedStatement, type Claim } from '../../platform/idempotency.js';
import * as store from './store.js';
import { balanceLimit, deductValues, grantValues, insufficientPoints, isBalanceLimit, type DeductType, type GrantType } from './ledger.js';

/**
 * Direct grant and deduct (the gamify escape hatch), idempotent per tenant:
 * the same statements as every other grant and deduct (`grantStatement`,
 * `deductStatements`, which build the events too), sent with the idempotency
 * claim in one message.
 */

/** Grant and deduct share one key space: a key used for a grant cannot be reused for a deduct. */
const DIRECT_SCOPE = 'points.direct';

export interface DirectRequest {
  participant_id: string;
  amount: number;
  reason: string;
  memo?: string;
  type?: string;
  idempotency_key: string;
}

/** Who asks for a direct grant or deduct, kept on its ledger entry (the ledger's "who granted"). */
type LedgerActor = store.LedgerActor;

/** The actor of a direct change: a person (console or admin token) or an API key; none for other credentials. */
export function ledgerActorOf(auth: AuthContext): LedgerActor | null {
  if (auth.user) return { type: 'user', id: auth.actorId };
  if (auth.kind === 'key') return { type: 'api_key', id: auth.actorId };
  return null;
}

export interface DirectResponse {
  available: number;
  lifetime: number;
  delta: number;
  duplicate: boolean;
  ledger_entry_id: string;
}

type Operation = 'grant' | 'deduct';

function requestFingerprint(operation: Operation, body: DirectRequest): string {
  return fingerprint([operation, body.participant_id, body.amount, body.reason, body.memo ?? null, body.type ?? null]);
}

/** The statements of the change and of its stored response (they write only when the claim was fresh), and what their rows answer. */
interface Change {
  statements: Statement[];
  /** The stored response; throws the refusal when the change was refused (its transaction then holds only a released key). */
  answer(rows: unknown[][]): DirectResponse;
}

/** The earlier answer of a claim that was not fresh (`claimOutcome` has thrown for a key still in use or reused). */
function repeatedResponse(claim: Claim<DirectResponse>): DirectResponse {
  if (claim.fresh) throw new Error('a claim that was not fresh read as fresh');
  return claim.response;
}

function responseIn(row: unknown): DirectResponse {
  return (row as { response: DirectResponse }).response;
}

function grantChange(tenantId: string, body: DirectRequest, now: Date, actor: LedgerActor | null): Change {
  const input = { participantId: body.participant_id, amount: body.amount, reason: body.reason, memo: body.memo, type: body.type as GrantType | undefined, source: { kind: 'grant' as const, id: body.idempotency_key } };
  const values = grantValues(tenantId, input, now);
  return {
    statements: [
      store.grantStatement(tenantId, [values], store.grantEventsWritten(1, currentTraceparent()), CLAIMED, actor),
      store.respondStatement(tenantId, DIRECT_SCOPE, body.idempotency_key, values.entryId, CLAIMED),
    ],
    answer: ([, responded]) => responseIn(responded[0]),
  };
}

function deductChange(tenantId: string, body: DirectRequest, now: Date, actor: LedgerActor | null): Change {
  const input = { participantId: body.participant_id, amount: body.amount, reason: body.reason, memo: body.memo, type: body.type as DeductType | undefined, source: { kind: 'grant' as const, id: body.idempotency_key } };
  const values = deductValues(tenantId, input, now);
  const respond = { scope: DIRECT_SCOPE, key: body.idempotency_key };
  return {
    statements: store.deductStatements(tenantId, values, store.deductEventsWritten(currentTraceparent()), CLAIMED, actor, respond),
    answer(rows) {
      const result = store.deductOutcome(rows, values);
      if (!result.applied) throw insufficientPoints(result.available, values.amount);
      return responseIn(rows[1][0]);
    },
  };
}

/**
 * One message, one round trip: the tenant, the claim, the change (with what
 * the outbox's followers write for its events), the stored response (or the
 * released key of a refused deduct), in one transaction. A repeat of a key
 * (its claim not fresh, so nothing was written) reads the earlier answer in a
 * second round trip, after the first transaction ended: a retry pays for it,
 * not every first request.
 */
async function direct(db: Database, tenantId: string, operation: Operation, body: DirectRequest, actor: LedgerActor | null): Promise<DirectResponse> {
  const now = clock.now(tenantId);
  const change = operation === 'grant' ? grantChange(tenantId, body, now, actor) : deductChange(tenantId, body, now, actor);
  const print = requestFingerprint(operation, body);
  const [claimed, ...rows] = await db
    .tenantInOneTrip(tenantId, [claimStatement(tenantId, DIRECT_SCOPE, body.idempotency_key, print, now), ...change.statements])
    .catch((error: unknown) => {
      throw isBalanceLimit(error) ? balanceLimit() : error;
    });
  if (!isFreshClaim(claimed)) {
    const [stored] = await db.tenantInOneTrip(tenantId, [storedStatement(tenantId, DIRECT_SCOPE, body.idempotency_key)]);
    return { ...repeatedResponse(claimOutcome<DirectResponse>(claimed, stored, print)), duplicate: true };
  }
  const response = change.answer(rows);
  countLedgerWrite(operation, body.amount);
  return response;
}

export function grantDirect(db: Database, tenantId: string, body: DirectRequest, actor: LedgerActor | null = null): Promise<DirectResponse> {
  return direct(db, tenantId, 'grant', body, actor);
}

export function deductDirect(db: Database, tenantId: string, body: DirectRequest, actor: LedgerActor | null = null): Promise<DirectResponse> {
  return direct(db, tenantId, 'deduct', body, actor);
}
