import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { emit, type OutboxEvent } from '../../platform/outbox.js';
import { prefixedId } from '../../platform/ids.js';
import { AppError, invalid } from '../../platform/errors.js';
import { claimKey, fingerprint, storeResponse } from '../../platform/idempotency.js';
import * as store from './store.js';

/**
 * The points use-cases. `…InTx` functions do the work inside a caller's
 * transaction (other modules compose them through index.ts); the others open
 * one transaction per call.
 */

/** The largest amount one operation may move; far below 2^53, so sums stay exact. */
export const POINTS_PER_OPERATION_MAX = 1_000_000_000;
export const REASON_LENGTH_MAX = 500;
export const MEMO_LENGTH_MAX = 1000;

export const GRANT_TYPES = ['award', 'bonus', 'adjustment'] as const;
export const DEDUCT_TYPES = ['redemption', 'adjustment'] as const;
export const SOURCE_KINDS = ['grant', 'rule', 'activity', 'bulk', 'challenge', 'contest', 'referral', 'reward'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
export type DeductType = (typeof DEDUCT_TYPES)[number];
export type SourceKind = (typeof SOURCE_KINDS)[number];

export interface Source {
  kind: SourceKind;
  id: string;
}

export interface GrantInput {
  participantId: string;
  amount: number;
  reason: string;
  type?: GrantType;
  memo?: string | null;
  source?: Source;
  activityId?: string | null;
  engagementId?: string | null;
  /** The multiplier already applied to `amount` by the caller (rules engine), reported in the event. */
  multiplier?: number | null;
}

export interface DeductInput {
  participantId: string;
  amount: number;
  reason: string;
  type?: DeductType;
  memo?: string | null;
  source?: Source;
  engagementId?: string | null;
}

export interface LedgerResult {
  ledgerEntryId: string;
  available: number;
  lifetime: number;
  delta: number;
}

function checkAmount(amount: unknown): number {
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 1 || amount > POINTS_PER_OPERATION_MAX) {
    throw invalid(`amount must be a whole number from 1 to ${POINTS_PER_OPERATION_MAX}`);
  }
  return amount;
}

function checkText(name: string, value: unknown, max: number, required: boolean): string | null {
  if (value === undefined || value === null) {
    if (required) throw invalid(`${name} is required`);
    return null;
  }
  if (typeof value !== 'string' || (required && value.length === 0) || value.length > max) {
    throw invalid(`${name} must be a string of ${required ? 1 : 0} to ${max} characters`);
  }
  return value;
}

/**
 * Grants points: creates the participant if new, a lot with the tenant's
 * expiry, a ledger entry, the new balance and tier — one statement — and
 * emits points.awarded.v1 (and tier.changed.v1 when the tier moves).
 */
export async function grantInTx(tx: Tx, tenantId: string, input: GrantInput): Promise<LedgerResult> {
  const amount = checkAmount(input.amount);
  const reason = checkText('reason', input.reason, REASON_LENGTH_MAX, true)!;
  const memo = checkText('memo', input.memo, MEMO_LENGTH_MAX, false);
  const type = input.type ?? 'award';
  if (!GRANT_TYPES.includes(type)) throw invalid(`type must be one of ${GRANT_TYPES.join(', ')}`);
  const source = input.source ?? { kind: 'grant' as const, id: '' };
  if (!SOURCE_KINDS.includes(source.kind)) throw invalid(`source.kind must be one of ${SOURCE_KINDS.join(', ')}`);
  const now = clock.now();
  const entryId = prefixedId('ple', 12);
  const row = await store.insertGrant(tx, tenantId, {
    participantId: input.participantId,
    amount,
    entryId,
    type,
    reason,
    memo,
    sourceKind: source.kind,
    sourceId: source.id || null,
    activityId: input.activityId ?? null,
    engagementId: input.engagementId ?? null,
    multiplier: input.multiplier ?? null,
    now,
  });
  const events: OutboxEvent[] = [
    {
      event: 'points.awarded.v1',
      participantId: input.participantId,
      engagementId: input.engagementId ?? null,
      data: {
        participant_id: input.participantId,
        amount,
        available: row.available,
        lifetime: row.lifetime,
        reason,
        ledger_entry_id: entryId,
        source_kind: source.kind,
        source_id: source.id || null,
        multiplier: input.multiplier ?? null,
        type,
        activity_id: input.activityId ?? null,
        expires_at: row.expires_at ? row.expires_at.toISOString() : null,
      },
    },
  ];
  if (row.tier !== null && row.tier !== row.previous_tier) {
    events.push(tierChangedEvent(input.participantId, row.previous_tier, row.tier, row.lifetime, input.engagementId ?? null));
  }
  await emit(tx, tenantId, events);
  return { ledgerEntryId: entryId, available: row.available, lifetime: row.lifetime, delta: amount };
}

export function tierChangedEvent(participantId: string, previousTier: string | null, tier: string | null, lifetime: number, engagementId: string | null = null): OutboxEvent {
  return {
    event: 'tier.changed.v1',
    participantId,
    engagementId,
    data: { participant_id: participantId, previous_tier: previousTier, tier, lifetime },
  };
}

export function insufficientPoints(available: number, required: number): AppError {
  return new AppError('rule_violation', 'INSUFFICIENT_POINTS', `the participant has ${available} points available; ${required} are required`, {
    error: 'insufficient_points',
    available,
    required,
  });
}

/**
 * Deducts points if the balance covers them, consuming lots in the tenant's
 * policy order; otherwise throws 422 insufficient_points and changes nothing.
 * Emits points.deducted.v1.
 */
export async function deductInTx(tx: Tx, tenantId: string, input: DeductInput): Promise<LedgerResult> {
  const amount = checkAmount(input.amount);
  const reason = checkText('reason', input.reason, REASON_LENGTH_MAX, true)!;
  const memo = checkText('memo', input.memo, MEMO_LENGTH_MAX, false);
  const type = input.type ?? 'redemption';
  if (!DEDUCT_TYPES.includes(type)) throw invalid(`type must be one of ${DEDUCT_TYPES.join(', ')}`);
  const source = input.source ?? { kind: 'grant' as const, id: '' };
  const entryId = prefixedId('ple', 12);
  const result = await store.deduct(tx, tenantId, {
    participantId: input.participantId,
    amount,
    entryId,
    type,
    reason,
    memo,
    sourceKind: source.kind,
    sourceId: source.id || null,
    now: clock.now(),
  });
  if (!result.applied) throw insufficientPoints(result.available, amount);
  await emit(tx, tenantId, {
    event: 'points.deducted.v1',
    participantId: input.participantId,
    engagementId: input.engagementId ?? null,
    data: {
      participant_id: input.participantId,
      amount,
      available: result.available,
      lifetime: result.lifetime,
      reason,
      ledger_entry_id: entryId,
      type,
    },
  });
  return { ledgerEntryId: entryId, available: result.available, lifetime: result.lifetime, delta: -amount };
}

export async function readBalanceInTx(
  tx: Tx,
  tenantId: string,
  participantId: string,
): Promise<{ available: number; lifetime: number; lastEarnedAt: Date | null }> {
  const row = await store.readBalance(tx, tenantId, participantId);
  return { available: row?.available ?? 0, lifetime: row?.lifetime ?? 0, lastEarnedAt: row?.last_earned_at ?? null };
}

/**
 * The multiplier for an event: among the tenant's multipliers whose window
 * holds `at`, whose `event_type` is the event's name and whose `attributes`
 * are all present with equal values in the event's attributes, the highest
 * wins (multipliers never stack). 1 when none applies.
 */
export async function multiplierForEventInTx(
  tx: Tx,
  tenantId: string,
  input: { participantId: string; eventName: string; attributes: Record<string, unknown>; at: Date },
): Promise<{ multiplier: number; multiplierId: string | null }> {
  const found = await store.bestMultiplier(tx, tenantId, input.participantId, input.eventName, input.attributes, input.at);
  return found ? { multiplier: found.multiplier, multiplierId: found.id } : { multiplier: 1, multiplierId: null };
}

// ---------------------------------------------------------------------------
// Direct grant and deduct (the gamify escape hatch), idempotent per tenant.

/** Grant and deduct share one key space: a key used for a grant cannot be reused for a deduct. */
export const DIRECT_IDEMPOTENCY_SCOPE = 'points.direct';

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

async function direct(
  db: Database,
  tenantId: string,
  operation: 'grant' | 'deduct',
  body: DirectRequest,
  apply: (tx: Tx) => Promise<LedgerResult>,
): Promise<DirectResponse> {
  return db.tenant(tenantId, async (tx) => {
    const claim = await claimKey<DirectResponse>(tx, tenantId, DIRECT_IDEMPOTENCY_SCOPE, body.idempotency_key, requestFingerprint(operation, body));
    if (!claim.fresh) return { ...claim.response, duplicate: true };
    const result = await apply(tx);
    const response: DirectResponse = {
      available: result.available,
      lifetime: result.lifetime,
      delta: result.delta,
      duplicate: false,
      ledger_entry_id: result.ledgerEntryId,
    };
    await storeResponse(tx, tenantId, DIRECT_IDEMPOTENCY_SCOPE, body.idempotency_key, response);
    return response;
  });
}

export function grantDirect(db: Database, tenantId: string, body: DirectRequest): Promise<DirectResponse> {
  return direct(db, tenantId, 'grant', body, (tx) =>
    grantInTx(tx, tenantId, {
      participantId: body.participant_id,
      amount: body.amount,
      reason: body.reason,
      memo: body.memo,
      type: (body.type as GrantType | undefined) ?? 'award',
      source: { kind: 'grant', id: body.idempotency_key },
    }),
  );
}

export function deductDirect(db: Database, tenantId: string, body: DirectRequest): Promise<DirectResponse> {
  return direct(db, tenantId, 'deduct', body, (tx) =>
    deductInTx(tx, tenantId, {
      participantId: body.participant_id,
      amount: body.amount,
      reason: body.reason,
      memo: body.memo,
      type: (body.type as DeductType | undefined) ?? 'redemption',
      source: { kind: 'grant', id: body.idempotency_key },
    }),
  );
}
