import { createHash } from 'node:crypto';
import type { Statement, Tx } from './db.js';
import { clock } from './clock.js';
import { conflict, ruleViolation } from './errors.js';

/**
 * Idempotency keys. `(tenant, scope, key)` is stored with a fingerprint of the
 * request and its response for 24 hours, in the same transaction as the
 * change. A concurrent repeat of a key that is still running blocks on the
 * unique index until the first transaction ends, then reads its response: the
 * caller waits instead of getting an error. After 24 hours a key is new again.
 */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export function fingerprint(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}

export type Claim<T> = { fresh: true } | { fresh: false; response: T };

/**
 * The claim as a statement: inserts the key, or takes over one whose 24 hours
 * are over. Answers one row, `claimed` 'true' or 'false', and sets the same
 * in the transaction's `app.idempotency_claimed`, which `CLAIMED` reads: a
 * statement sent in the same message as the claim does its work only when
 * the claim was fresh.
 */
const CLAIM = `WITH claimed AS (
    INSERT INTO idempotency_keys (tenant_id, scope, key, fingerprint, created_at, expires_at)
    VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (tenant_id, scope, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, response = NULL, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
      WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
    RETURNING 1
  )
  SELECT set_config('app.idempotency_claimed', (count(*) = 1)::text, true) AS claimed FROM claimed`;
/**
 * The key's earlier use. Sent after the claim in the same transaction, it is
 * read only when the claim was not fresh (a fresh claim's own row is not
 * worth sending back); read later, in a transaction of its own, it reads the
 * key as it stands.
 */
const STORED = 'SELECT fingerprint, response, created_at FROM idempotency_keys WHERE tenant_id = $1 AND scope = $2 AND key = $3';

/** A condition true in the transaction whose last claim (`claimStatements`) was fresh. */
export const CLAIMED = "current_setting('app.idempotency_claimed', true) = 'true'";

const STORED_AFTER_CLAIM = `${STORED} AND NOT (${CLAIMED})`;

/** The claim of a key: one row, `claimed` 'true' when it was fresh (`isFreshClaim`). */
export function claimStatement(tenantId: string, scope: string, key: string, requestFingerprint: string, now: Date): Statement {
  const expires = new Date(now.getTime() + IDEMPOTENCY_WINDOW_MS);
  // ISO strings: node-postgres formats a Date in local time, field by field, for every parameter.
  return { text: CLAIM, values: [tenantId, scope, key, requestFingerprint, now.toISOString(), expires.toISOString()] };
}

export function isFreshClaim(claimRows: unknown[]): boolean {
  return (claimRows[0] as { claimed: string }).claimed === 'true';
}

/** The read of a key's earlier use in a transaction of its own, after a claim that was not fresh; `claimOutcome` reads its rows. */
export function storedStatement(tenantId: string, scope: string, key: string): Statement {
  return { text: STORED, values: [tenantId, scope, key] };
}

/** The claim of a key and the read of its earlier use, as two statements for one message; `claimOutcome` reads their rows. */
export function claimStatements(tenantId: string, scope: string, key: string, requestFingerprint: string, now: Date): [Statement, Statement] {
  return [claimStatement(tenantId, scope, key, requestFingerprint, now), { text: STORED_AFTER_CLAIM, values: [tenantId, scope, key] }];
}

/** What the rows of `claimStatements` mean: a fresh claim, the stored response of an earlier use, or a refusal (thrown). */
export function claimOutcome<T>(claimRows: unknown[], storedRows: unknown[], requestFingerprint: string): Claim<T> {
  if (isFreshClaim(claimRows)) return { fresh: true };
  const row = storedRows[0] as { fingerprint: string; response: unknown } | undefined;
  if (!row) throw conflict('the idempotency key is in use by a request that is still running', 'IDEMPOTENCY_IN_PROGRESS');
  if (row.fingerprint !== requestFingerprint) {
    throw ruleViolation('this idempotency key was already used with a different request body', 'IDEMPOTENCY_KEY_REUSED');
  }
  if (row.response === null) throw conflict('the idempotency key is in use by a request that is still running', 'IDEMPOTENCY_IN_PROGRESS');
  return { fresh: false, response: row.response as T };
}

/** Claims a key for this transaction, or returns the stored response of an earlier use. */
export async function claimKey<T>(tx: Tx, tenantId: string, scope: string, key: string, requestFingerprint: string): Promise<Claim<T>> {
  const [claim, stored] = claimStatements(tenantId, scope, key, requestFingerprint, clock.now());
  const claimed = await tx.query(claim.text, [...claim.values]);
  if (isFreshClaim(claimed.rows)) return { fresh: true };
  return claimOutcome(claimed.rows, (await tx.query(stored.text, [...stored.values])).rows, requestFingerprint);
}

/** Stores the response of a fresh claim; call it in the same transaction. */
export async function storeResponse(tx: Tx, tenantId: string, scope: string, key: string, response: unknown): Promise<void> {
  await tx.query('UPDATE idempotency_keys SET response = $4 WHERE tenant_id = $1 AND scope = $2 AND key = $3', [tenantId, scope, key, JSON.stringify(response)]);
}
