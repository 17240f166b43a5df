import { countLedgerWrite } from '../../platform/metrics.js';
import { roundsOf } from '../../platform/batch.js';
import type { Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { emit, reserveEmit, type OutboxEvent, type OutboxSlot } from '../../platform/outbox.js';
import { prefixedId } from '../../platform/ids.js';
import { AppError, invalid, ruleViolation } from '../../platform/errors.js';
import * as store from './store.js';

/**
 * The ledger use-cases other modules compose inside their own transaction:
 * grant (held in a processing batch by `awardInTx`), deduct, and the balance
 * and award reads, with the input checks and the limits they share with the
 * direct and bulk paths.
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
  /** The trace context of the request the grant is for, when the caller works for several (OutboxEvent.traceparent). */
  traceparent?: string | null;
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

export function checkAmount(amount: unknown): number {
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 1 || amount > POINTS_PER_OPERATION_MAX) {
    throw invalid(`amount must be a whole number from 1 to ${POINTS_PER_OPERATION_MAX}`);
  }
  return amount;
}

export function checkText(name: string, value: unknown, max: number, required: boolean): string | null {
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
 * emits points.awarded.v1 (and tier.changed.v1 when the tier moves) — or hands
 * them to `events`, so that the caller emits everything in one statement.
 */
export async function grantInTx(tx: Tx, tenantId: string, input: GrantInput, events?: OutboxEvent[]): Promise<LedgerResult> {
  const [granted] = await grantEachInTx(tx, tenantId, [input], events);
  return granted;
}

/**
 * `grantInTx` of several grants, in one round trip: one statement per round
 * (`roundsOf`: a balance row can change once per statement, so a
 * participant's second grant goes in the second round), the rounds sent as
 * one message. A completion's prize and its on-completion points, and a
 * batch of completions' points, travel together this way. The results and
 * events are in the order of `inputs`.
 */
export async function grantEachInTx(tx: Tx, tenantId: string, inputs: GrantInput[], events?: OutboxEvent[]): Promise<LedgerResult[]> {
  const list = inputs.map((input, n) => ({ n, values: grantValues(tenantId, input) }));
  // Each round in the order of its participants: concurrent batches lock balance rows in one order.
  const rounds = roundsOf(list, ({ values }) => values.participantId).map((round) => round.sort((a, b) => compare(a.values.participantId, b.values.participantId)));
  const answers = await store
    .insertGrantRounds(
      tx,
      tenantId,
      rounds.map((round) => round.map(({ values }) => values)),
    )
    .catch((error: unknown) => {
      throw isBalanceLimit(error) ? balanceLimit() : error;
    });
  const rows: store.GrantRow[] = [];
  rounds.forEach((round, r) => round.forEach(({ n }, i) => (rows[n] = answers[r][i])));
  const emitted = rows.flatMap((row, n) => outboxEvents(inputs[n], row.events));
  if (events) events.push(...emitted);
  else await emit(tx, tenantId, emitted);
  return list.map(({ values }, n) => {
    countLedgerWrite('grant', values.amount);
    return { ledgerEntryId: values.entryId, available: rows[n].available, lifetime: rows[n].lifetime, delta: values.amount };
  });
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);


/** The checked input of a grant, with its ledger entry id and time. */
export function grantValues(tenantId: string, input: GrantInput, now: Date = clock.now(tenantId)): store.GrantValues {
  const amount = checkAmount(input.amount);
  const reason = checkText('reason', input.reason, REASON_LENGTH_MAX, true)!;
  const memo = checkText('memo', input.memo, MEMO_LENGTH_MAX, false);
  const type = input.type ?? 'award';
  if (!GRANT_TYPES.includes(type)) throw invalid(`type must be one of ${GRANT_TYPES.join(', ')}`);
  const source = input.source ?? { kind: 'grant' as const, id: '' };
  if (!SOURCE_KINDS.includes(source.kind)) throw invalid(`source.kind must be one of ${SOURCE_KINDS.join(', ')}`);
  return {
    participantId: input.participantId,
    amount,
    entryId: prefixedId('ple', 12),
    type,
    reason,
    memo,
    sourceKind: source.kind,
    sourceId: source.id || null,
    activityId: input.activityId ?? null,
    engagementId: input.engagementId ?? null,
    multiplier: input.multiplier ?? null,
    now,
  };
}

/** The events a grant or deduct statement built (`grantStatement`, `deductStatements`), to emit. */
function outboxEvents(input: { participantId: string; engagementId?: string | null; traceparent?: string | null }, events: store.LedgerEvent[]): OutboxEvent[] {
  const traced = input.traceparent === undefined ? {} : { traceparent: input.traceparent };
  return events.map(({ event, data }) => ({ event, participantId: input.participantId, engagementId: input.engagementId ?? null, data, ...traced }));
}

/**
 * Grants held in a processing batch (`awardInTx`), in the order they were
 * made, until the batch ends or a statement on the points tables runs in it
 * (the batch sends them first; see heldGrantsOf).
 */
interface HeldGrant {
  tenantId: string;
  input: GrantInput;
  values: store.GrantValues;
  slot: OutboxSlot;
  emittedAt: Date;
}
const HELD_GRANTS = 'points:held-grants';

/** The statements that read or change points state: a batch sends its held grants before any of them. */
const POINTS_STATE = /\bpoints_(balances|ledger|lots)\b/;

/**
 * The batch's held grants (null outside a batch). The batch writes them
 * before any statement on the points tables runs in it (`holdWrites`), so
 * nothing in the batch sees the points state without them, and writes what is
 * left of them when it ends.
 */
function heldGrantsOf(tx: Tx): { grants: HeldGrant[] } | null {
  const batch = tx.batch;
  if (!batch) return null;
  return batch.state(HELD_GRANTS, () => {
    const state = { grants: [] as HeldGrant[] };
    batch.holdWrites(POINTS_STATE, () => writeHeldGrants(tx, state));
    batch.onEnd(() => writeHeldGrants(tx, state));
    return state;
  });
}

/**
 * A grant whose result the caller does not need (the rules engine's
 * award_points). Inside a processing batch whose emits are held it is held
 * too, and the batch's grants are written with one statement per round (a
 * round has each participant once, so a participant's grants keep their
 * order); its events keep their place among the batch's events. Elsewhere
 * it is `grantInTx`. Input errors are thrown here either way.
 */
export async function awardInTx(tx: Tx, tenantId: string, input: GrantInput): Promise<void> {
  const held = heldGrantsOf(tx);
  if (!held) {
    await grantInTx(tx, tenantId, input);
    return;
  }
  // Checked before a slot is reserved: a refused grant leaves no empty slot behind.
  const values = grantValues(tenantId, input);
  const slot = reserveEmit(tx, tenantId);
  if (!slot) {
    await grantInTx(tx, tenantId, input);
    return;
  }
  held.grants.push({ tenantId, input, values, slot, emittedAt: clock.now() });
}

/** Writes the grants held on `tx`, if any (see HeldGrant). */
async function writeHeldGrants(tx: Tx, state: { grants: HeldGrant[] }): Promise<void> {
  if (state.grants.length === 0) return;
  const held = state.grants;
  state.grants = [];
  for (const round of roundsOf(held, (grant) => `${grant.tenantId}\u0000${grant.values.participantId}`)) {
    for (const tenantId of new Set(round.map((g) => g.tenantId))) {
      const grants = round.filter((g) => g.tenantId === tenantId);
      const rows = await store
        .insertGrants(
          tx,
          tenantId,
          grants.map((g) => g.values),
        )
        .catch((error: unknown) => {
          throw isBalanceLimit(error) ? balanceLimit() : error;
        });
      grants.forEach((grant, i) => {
        grant.slot.fill(outboxEvents(grant.input, rows[i].events), grant.emittedAt);
        countLedgerWrite('grant', grant.values.amount);
      });
    }
  }
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
  const values = deductValues(tenantId, input);
  const result = await store.deduct(tx, tenantId, values);
  if (!result.applied) throw insufficientPoints(result.available, values.amount);
  countLedgerWrite('deduct', values.amount);
  await emit(tx, tenantId, outboxEvents(input, result.events));
  return { ledgerEntryId: values.entryId, available: result.available, lifetime: result.lifetime, delta: -values.amount };
}

/** The checked input of a deduct, with its ledger entry id and time. */
export function deductValues(tenantId: string, input: DeductInput, now: Date = clock.now(tenantId)): store.DeductValues {
  const amount = checkAmount(input.amount);
  const reason = checkText('reason', input.reason, REASON_LENGTH_MAX, true)!;
  const memo = checkText('memo', input.memo, MEMO_LENGTH_MAX, false);
  const type = input.type ?? 'redemption';
  if (!DEDUCT_TYPES.includes(type)) throw invalid(`type must be one of ${DEDUCT_TYPES.join(', ')}`);
  const source = input.source ?? { kind: 'grant' as const, id: '' };
  return {
    participantId: input.participantId,
    amount,
    entryId: prefixedId('ple', 12),
    type,
    reason,
    memo,
    sourceKind: source.kind,
    sourceId: source.id || null,
    now,
  };
}

/** Points granted to the participant since `since` (every grant: direct, bulk, rules, activities, challenges), oldest first. */
export async function awardsSinceInTx(tx: Tx, tenantId: string, participantId: string, since: Date): Promise<Array<{ amount: number; at: Date }>> {
  return store.awardsSince(tx, tenantId, participantId, since);
}

export async function readBalanceInTx(
  tx: Tx,
  tenantId: string,
  participantId: string,
): Promise<{ available: number; lifetime: number; lastEarnedAt: Date | null }> {
  const row = await store.readBalance(tx, tenantId, participantId);
  return { available: row?.available ?? 0, lifetime: row?.lifetime ?? 0, lastEarnedAt: row?.last_earned_at ?? null };
}

/** The largest balance or lifetime total: the largest integer a JSON number carries exactly (2^53 - 1; a CHECK of points_balances). */
export const POINTS_BALANCE_MAX = Number.MAX_SAFE_INTEGER;
const BALANCE_LIMIT_CONSTRAINT = 'points_balances_lifetime_max';

export function isBalanceLimit(error: unknown): boolean {
  return (error as { constraint?: string }).constraint === BALANCE_LIMIT_CONSTRAINT;
}

export function balanceLimit(): AppError {
  return ruleViolation(`this grant would take the participant's lifetime points above ${POINTS_BALANCE_MAX}`, 'POINTS_BALANCE_LIMIT');
}
