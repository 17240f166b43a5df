import { countLedgerWrite } from '../../platform/metrics.js';
import { RETRYABLE_SQLSTATES, TX_ATTEMPTS_MAX, type Database } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { isUuid, prefixedId } from '../../platform/ids.js';
import { conflict, invalid, ruleViolation } from '../../platform/errors.js';
import { IDEMPOTENCY_WINDOW_MS, fingerprint } from '../../platform/idempotency.js';
import * as store from './store.js';
import {
  DEDUCT_TYPES,
  GRANT_TYPES,
  MEMO_LENGTH_MAX,
  REASON_LENGTH_MAX,
  balanceLimit,
  checkAmount,
  checkText,
  insufficientPoints,
  isBalanceLimit,
} from './ledger.js';

/**
 * Direct grant and deduct (the gamify escape hatch), idempotent per tenant:
 * one statement, one round trip each.
 */

// Grant and deduct share one idempotency key space, `points.direct`, claimed inside the SQL functions
// (migrations 0104 and 0105): a key used for a grant cannot be reused for a deduct.

export interface DirectRequest {
  participant_id: string;
  amount: number;
  reason: string;
  memo?: string;
  type?: string;
  idempotency_key: string;
}

export interface DirectResponse {
  available: number;
  lifetime: number;
  delta: number;
  duplicate: boolean;
  ledger_entry_id: string;
}

function requestFingerprint(operation: 'grant' | 'deduct', body: DirectRequest): string {
  return fingerprint([operation, body.participant_id, body.amount, body.reason, body.memo ?? null, body.type ?? null]);
}

/**
 * A direct grant or deduct: checks the request, then ONE statement (the SQL
 * function `points_direct_grant`, last defined in migration 0105, or
 * `points_direct_deduct`, last defined in 0104) claims the key, changes the ledger, writes the
 * outbox event and stores the response — its own transaction, one round trip.
 * Same rules as `grantInTx`/`deductInTx` plus the idempotency of claimKey.
 */
async function direct(db: Database, tenantId: string, operation: 'grant' | 'deduct', body: DirectRequest): Promise<DirectResponse> {
  if (!isUuid(tenantId)) throw new Error(`tenant id must be a UUID, got ${JSON.stringify(tenantId)}`);
  const amount = checkAmount(body.amount);
  const reason = checkText('reason', body.reason, REASON_LENGTH_MAX, true)!;
  const memo = checkText('memo', body.memo, MEMO_LENGTH_MAX, false);
  const type = body.type ?? (operation === 'grant' ? 'award' : 'redemption');
  const allowed: readonly string[] = operation === 'grant' ? GRANT_TYPES : DEDUCT_TYPES;
  if (!allowed.includes(type)) throw invalid(`type must be one of ${allowed.join(', ')}`);
  const now = clock.now(tenantId);
  const values: store.DirectValues = {
    key: body.idempotency_key,
    fingerprint: requestFingerprint(operation, body),
    now,
    keyExpires: new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS),
    participantId: body.participant_id,
    amount,
    entryId: prefixedId('ple', 12),
    type,
    reason,
    memo,
    eventId: prefixedId('evt'),
    tierEventId: prefixedId('evt'),
  };
  for (let attempt = 1; ; attempt++) {
    let result: store.DirectOutcome;
    try {
      result = await store.directOperation(db, operation, tenantId, values);
    } catch (error) {
      const { code, detail } = error as { code?: string; detail?: string };
      if (code === 'PT402') throw insufficientPoints(Number(detail), amount);
      if (isBalanceLimit(error)) throw balanceLimit();
      if (code && RETRYABLE_SQLSTATES.has(code) && attempt < TX_ATTEMPTS_MAX) continue;
      throw error;
    }
    switch (result.outcome) {
      case 'applied':
        countLedgerWrite(operation, amount);
        return result.response as unknown as DirectResponse;
      case 'duplicate':
        return { ...(result.response as unknown as DirectResponse), duplicate: true };
      case 'reused':
        throw ruleViolation('this idempotency key was already used with a different request body', 'IDEMPOTENCY_KEY_REUSED');
      default:
        throw conflict('the idempotency key is in use by a request that is still running', 'IDEMPOTENCY_IN_PROGRESS');
    }
  }
}

export function grantDirect(db: Database, tenantId: string, body: DirectRequest): Promise<DirectResponse> {
  return direct(db, tenantId, 'grant', body);
}

export function deductDirect(db: Database, tenantId: string, body: DirectRequest): Promise<DirectResponse> {
  return direct(db, tenantId, 'deduct', body);
}
