import { countLedgerWrite } from '../../platform/metrics.js';
import { batchState, mayMatchInBatch, onBatchEnd } from '../../platform/batch.js';
import { RETRYABLE_SQLSTATES, TX_ATTEMPTS_MAX, type Database, type Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { emit, reserveEmit, type OutboxEvent, type OutboxSlot } from '../../platform/outbox.js';
import { isUuid, prefixedId } from '../../platform/ids.js';
import { AppError, conflict, invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { addJob } from '../../platform/jobs.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { IDEMPOTENCY_WINDOW_MS, claimKey, fingerprint, storeResponse } from '../../platform/idempotency.js';
import * as store from './store.js';
import type { StatementStatePart } from '../../platform/module.js';

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
 * emits points.awarded.v1 (and tier.changed.v1 when the tier moves) — or hands
 * them to `events`, so that the caller emits everything in one statement.
 */
export async function grantInTx(tx: Tx, tenantId: string, input: GrantInput, events?: OutboxEvent[]): Promise<LedgerResult> {
  await writeHeldGrants(tx);
  const values = grantValues(tenantId, input);
  const row = await store.insertGrant(tx, tenantId, values).catch((error: unknown) => {
    throw isBalanceLimit(error) ? balanceLimit() : error;
  });
  const emitted = grantEvents(input, values, row);
  if (events) events.push(...emitted);
  else await emit(tx, tenantId, emitted);
  countLedgerWrite('grant', values.amount);
  return { ledgerEntryId: values.entryId, available: row.available, lifetime: row.lifetime, delta: values.amount };
}

/** The checked input of a grant, with its ledger entry id and time. */
function grantValues(tenantId: string, input: GrantInput): store.GrantValues {
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
    now: clock.now(tenantId),
  };
}

/** points.awarded.v1, and tier.changed.v1 when the grant moved the tier. */
function grantEvents(input: GrantInput, values: store.GrantValues, row: store.GrantRow): OutboxEvent[] {
  const emitted: OutboxEvent[] = [
    {
      event: 'points.awarded.v1',
      participantId: input.participantId,
      engagementId: input.engagementId ?? null,
      data: {
        participant_id: input.participantId,
        amount: values.amount,
        available: row.available,
        lifetime: row.lifetime,
        reason: values.reason,
        ledger_entry_id: values.entryId,
        source_kind: values.sourceKind,
        source_id: values.sourceId,
        multiplier: values.multiplier,
        type: values.type,
        activity_id: values.activityId,
        expires_at: row.expires_at ? row.expires_at.toISOString() : null,
      },
    },
  ];
  if (row.tier !== null && row.tier !== row.previous_tier) {
    emitted.push(tierChangedEvent(input.participantId, row.previous_tier, row.tier, row.lifetime, input.engagementId ?? null));
  }
  return emitted;
}

/**
 * Grants held in a processing batch (`awardInTx`), in the order they were
 * made, until the batch ends or anything reads or changes points state in
 * the same transaction: every other points function of this file that takes
 * a transaction writes them first, so nothing ever sees the points state
 * without them.
 */
interface HeldGrant {
  tenantId: string;
  input: GrantInput;
  values: store.GrantValues;
  slot: OutboxSlot;
  emittedAt: Date;
}
const HELD_GRANTS = 'points:held-grants';

/** The batch's held grants (null outside a batch); the batch writes what is left of them when it ends. */
function heldGrantsOf(tx: Tx): { grants: HeldGrant[] } | null {
  return batchState(tx, HELD_GRANTS, () => {
    onBatchEnd(tx, () => writeHeldGrants(tx));
    return { grants: [] as HeldGrant[] };
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
async function writeHeldGrants(tx: Tx): Promise<void> {
  const state = heldGrantsOf(tx);
  if (!state || state.grants.length === 0) return;
  const held = state.grants;
  state.grants = [];
  // Rounds: the n-th grant of each participant goes in round n.
  const rounds: HeldGrant[][] = [];
  const seen = new Map<string, number>();
  for (const grant of held) {
    const key = `${grant.tenantId}\u0000${grant.values.participantId}`;
    const round = seen.get(key) ?? 0;
    seen.set(key, round + 1);
    (rounds[round] ??= []).push(grant);
  }
  for (const round of rounds) {
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
        grant.slot.fill(grantEvents(grant.input, grant.values, rows[i]), grant.emittedAt);
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
  await writeHeldGrants(tx);
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
    now: clock.now(tenantId),
  });
  if (!result.applied) throw insufficientPoints(result.available, amount);
  countLedgerWrite('deduct', amount);
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

/** Points granted to the participant since `since` (every grant: direct, bulk, rules, activities, challenges), oldest first. */
export async function awardsSinceInTx(tx: Tx, tenantId: string, participantId: string, since: Date): Promise<Array<{ amount: number; at: Date }>> {
  await writeHeldGrants(tx);
  return store.awardsSince(tx, tenantId, participantId, since);
}

export async function readBalanceInTx(
  tx: Tx,
  tenantId: string,
  participantId: string,
): Promise<{ available: number; lifetime: number; lastEarnedAt: Date | null }> {
  await writeHeldGrants(tx);
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
  // Most events have no multiplier at all: a batch reads the event names that have one once.
  if (!(await mayMatchInBatch(tx, `points:multiplier-events:${tenantId}`, input.eventName, () => store.multiplierEventTypes(tx, tenantId)))) {
    return { multiplier: 1, multiplierId: null };
  }
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

/** The largest balance or lifetime total: the largest integer a JSON number carries exactly (2^53 - 1; a CHECK of points_balances). */
export const POINTS_BALANCE_MAX = Number.MAX_SAFE_INTEGER;
const BALANCE_LIMIT_CONSTRAINT = 'points_balances_lifetime_max';

function isBalanceLimit(error: unknown): boolean {
  return (error as { constraint?: string }).constraint === BALANCE_LIMIT_CONSTRAINT;
}

function balanceLimit(): AppError {
  return ruleViolation(`this grant would take the participant's lifetime points above ${POINTS_BALANCE_MAX}`, 'POINTS_BALANCE_LIMIT');
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

// ---------------------------------------------------------------------------
// Settings (expiry, reminders, currency name)

export const REMINDER_DAYS_MAX = 10;

export interface SettingsBody {
  expiry_policy?: store.ExpiryPolicy;
  default_ttl_days?: number;
  reminder_days?: number[];
  currency_name?: string;
}

export function presentSettings(row: store.SettingsRow) {
  return {
    expiry_policy: row.expiry_policy,
    default_ttl_days: row.default_ttl_days,
    reminder_days: row.reminder_days,
    currency_name: row.currency_name,
    updated_at: row.updated_at ? row.updated_at.toISOString() : null,
  };
}

export async function readSettings(db: Database, tenantId: string) {
  return presentSettings(await db.tenant(tenantId, (tx) => store.readSettings(tx, tenantId)));
}

/** Changes apply to lots granted from now on; existing lots keep the expiry they were given. */
export async function updateSettings(db: Database, tenantId: string, body: SettingsBody) {
  let reminderDays = body.reminder_days;
  if (reminderDays) {
    if (new Set(reminderDays).size !== reminderDays.length) throw invalid('reminder_days must not repeat a day');
    reminderDays = [...reminderDays].sort((a, b) => b - a);
  }
  const row = await db.tenant(tenantId, (tx) => store.upsertSettings(tx, tenantId, { ...body, reminder_days: reminderDays }, clock.now()));
  return presentSettings(row);
}

// ---------------------------------------------------------------------------
// Multipliers

export interface MultiplierBody {
  multiplier: number;
  starts_at: string;
  ends_at: string;
  match: { event_type: string; attributes?: Record<string, string | number | boolean> };
  participant_id?: string;
}

export function presentMultiplier(row: store.MultiplierRow) {
  return {
    id: row.id,
    multiplier: row.multiplier,
    starts_at: row.starts_at.toISOString(),
    ends_at: row.ends_at.toISOString(),
    match: { event_type: row.event_type, attributes: row.attributes },
    participant_id: row.participant_id,
    created_at: row.created_at.toISOString(),
  };
}

export async function createMultiplier(db: Database, tenantId: string, body: MultiplierBody) {
  const startsAt = new Date(body.starts_at);
  const endsAt = new Date(body.ends_at);
  const row = await db.tenant(tenantId, (tx) =>
    createMultiplierRowInTx(tx, tenantId, {
      multiplier: body.multiplier,
      startsAt,
      endsAt,
      match: { event_type: body.match.event_type, attributes: body.match.attributes ?? {} },
      participantId: body.participant_id,
    }),
  );
  return presentMultiplier(row);
}

export interface MultiplierInput {
  multiplier: number;
  startsAt: Date;
  endsAt: Date;
  match: { event_type: string; attributes: Record<string, unknown> };
  /** Limits the multiplier to one participant (a `points_multiplier` reward). */
  participantId?: string;
}

async function createMultiplierRowInTx(tx: Tx, tenantId: string, input: MultiplierInput): Promise<store.MultiplierRow> {
  if (!(input.endsAt.getTime() > input.startsAt.getTime())) throw invalid('ends_at must be after starts_at');
  if (!(Number.isFinite(input.multiplier) && input.multiplier > 0)) throw invalid('multiplier must be a positive number');
  return store.insertMultiplier(tx, tenantId, {
    id: prefixedId('mul', 12),
    multiplier: input.multiplier,
    starts_at: input.startsAt,
    ends_at: input.endsAt,
    event_type: input.match.event_type,
    attributes: input.match.attributes,
    participant_id: input.participantId ?? null,
    created_at: clock.now(),
  });
}

/** Creates a multiplier inside the caller's transaction; used by `points_multiplier` rewards for one participant. */
export async function createMultiplierInTx(tx: Tx, tenantId: string, input: MultiplierInput): Promise<{ id: string }> {
  const row = await createMultiplierRowInTx(tx, tenantId, input);
  return { id: row.id };
}

export async function listMultipliers(db: Database, tenantId: string, query: { limit: number; cursor?: string; active_at?: string }) {
  const after = decodeCursor(query.cursor, { c: 'timestamp', i: 'text' });
  const rows = await db.tenant(tenantId, (tx) =>
    store.listMultipliers(tx, tenantId, after ? { createdAt: after.c, id: after.i } : null, query.limit + 1, query.active_at ? new Date(query.active_at) : null),
  );
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    multipliers: page.map(presentMultiplier),
    next_cursor: rows.length > query.limit && last ? encodeCursor({ c: last.created_at.toISOString(), i: last.id }) : null,
  };
}

export async function readMultiplier(db: Database, tenantId: string, id: string) {
  const row = await db.tenant(tenantId, (tx) => store.readMultiplier(tx, tenantId, id));
  if (!row) throw notFound('multiplier');
  return presentMultiplier(row);
}

export async function deleteMultiplier(db: Database, tenantId: string, id: string): Promise<void> {
  const deleted = await db.tenant(tenantId, (tx) => store.deleteMultiplier(tx, tenantId, id));
  if (!deleted) throw notFound('multiplier');
}

// ---------------------------------------------------------------------------
// Tiers

export const TIERS_PER_TENANT_MAX = 50;
export const TIER_REEVALUATION_TASK = 'points.tiers_reevaluate';
export const TIER_REEVALUATION_BATCH = 5_000;

export function presentTier(row: store.TierRow) {
  return {
    code: row.code,
    name: row.name,
    min_lifetime_points: row.min_lifetime_points,
    level: row.level,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** After any change to the definitions every participant's tier is re-evaluated in the background. */
async function scheduleTierReevaluation(tx: Tx, tenantId: string): Promise<void> {
  await addJob(tx, TIER_REEVALUATION_TASK, { tenant_id: tenantId }, { jobKey: `points.tiers:${tenantId}`, maxAttempts: 10 });
}

async function tierOrThrow(tx: Tx, tenantId: string, code: string) {
  const tier = (await store.listTiers(tx, tenantId)).find((t) => t.code === code);
  if (!tier) throw notFound('tier');
  return presentTier(tier);
}

export async function listTiers(db: Database, tenantId: string) {
  const rows = await db.tenant(tenantId, (tx) => store.listTiers(tx, tenantId));
  return { tiers: rows.map(presentTier) };
}

export async function readTier(db: Database, tenantId: string, code: string) {
  return db.tenant(tenantId, (tx) => tierOrThrow(tx, tenantId, code));
}

export async function createTier(db: Database, tenantId: string, body: { code: string; name: string; min_lifetime_points: number }) {
  return db.tenant(tenantId, async (tx) => {
    if ((await store.countTiers(tx, tenantId)) >= TIERS_PER_TENANT_MAX) throw invalid(`a tenant may define at most ${TIERS_PER_TENANT_MAX} tiers`);
    const inserted = await store.insertTier(tx, tenantId, body, clock.now());
    if (!inserted) throw conflict('a tier with this code or this min_lifetime_points already exists', 'TIER_EXISTS');
    await scheduleTierReevaluation(tx, tenantId);
    return tierOrThrow(tx, tenantId, body.code);
  });
}

export async function updateTier(db: Database, tenantId: string, code: string, body: { name?: string; min_lifetime_points?: number }) {
  return db.tenant(tenantId, async (tx) => {
    let updated: boolean;
    try {
      updated = await store.updateTier(tx, tenantId, code, body, clock.now());
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw conflict('another tier already has this min_lifetime_points', 'TIER_EXISTS');
      throw error;
    }
    if (!updated) throw notFound('tier');
    await scheduleTierReevaluation(tx, tenantId);
    return tierOrThrow(tx, tenantId, code);
  });
}

export async function deleteTier(db: Database, tenantId: string, code: string): Promise<void> {
  await db.tenant(tenantId, async (tx) => {
    if (!(await store.deleteTier(tx, tenantId, code))) throw notFound('tier');
    await scheduleTierReevaluation(tx, tenantId);
  });
}

/**
 * Re-evaluates every participant of the tenant against the current tier
 * definitions, one page per transaction, and emits tier.changed.v1 for each
 * change (down as well as up: a definition change can lower a tier). A
 * participant left without any tier gets no event (the event's `tier` is a string).
 */
export async function reevaluateTiers(db: Database, tenantId: string): Promise<number> {
  let afterId = '';
  let changed = 0;
  for (;;) {
    const page = await db.tenant(tenantId, async (tx) => {
      const result = await store.reevaluateTiers(tx, tenantId, afterId, TIER_REEVALUATION_BATCH, clock.now());
      const events = result.changes
        .filter((c) => c.tier !== null)
        .map((c) => tierChangedEvent(c.participant_id, c.previous_tier, c.tier, c.lifetime));
      await emit(tx, tenantId, events);
      return result;
    });
    changed += page.changes.length;
    if (page.lastId === null) return changed;
    afterId = page.lastId;
  }
}

// ---------------------------------------------------------------------------
// Expiry and reminders

export const EXPIRY_BATCH_LOTS = 20_000;
export const REMINDER_BATCH = 5_000;
/** Expired points stay visible in the history for this long (spec: Limits). */
export const EXPIRED_VISIBLE_DAYS = 90;

/** Batch statements aggregate tens of thousands of rows; enough sort memory keeps them off disk (this transaction only). */
const BATCH_WORK_MEM = '64MB';
async function useBatchMemory(tx: Tx): Promise<void> {
  await tx.query(`SELECT set_config('work_mem', $1, true)`, [BATCH_WORK_MEM]);
}

/** Expiry batches of one tenant run in parallel, each over its own partition of the participants. */
export const EXPIRY_PARALLEL = 2;

/**
 * Expires every due lot of every tenant; returns what it did. Without `now`,
 * each tenant's lots are expired on the tenant's clock, and sandbox tenants
 * whose test clock runs ahead are looked at too.
 */
export async function expireDuePoints(db: Database, now?: Date): Promise<{ participants: number; lots: number; points: number }> {
  const totals = { participants: 0, lots: 0, points: 0 };
  for (const tenantId of await tenantsToLookAt(store.tenantsWithDueLots(db.system, now ?? clock.now()), now)) {
    const done = await expireTenantPoints(db, tenantId, now ?? clock.now(tenantId));
    totals.participants += done.participants;
    totals.lots += done.lots;
    totals.points += done.points;
  }
  return totals;
}

async function tenantsToLookAt(found: Promise<string[]>, now: Date | undefined): Promise<Set<string>> {
  const tenants = new Set(await found);
  if (now === undefined) for (const tenantId of clock.tenantsWithTestClock()) tenants.add(tenantId);
  return tenants;
}

/**
 * Expires one tenant's lots due at `now`. Its due lots are taken in batches by
 * EXPIRY_PARALLEL loops over disjoint partitions of its participants, each
 * batch one transaction, until none is left. Safe to run concurrently with
 * itself and with grants (SKIP LOCKED: a participant busy elsewhere is taken
 * by the next run).
 */
export async function expireTenantPoints(db: Database, tenantId: string, now: Date): Promise<{ participants: number; lots: number; points: number }> {
  const totals = { participants: 0, lots: 0, points: 0 };
  const expirePartition = async (index: number) => {
    for (;;) {
      const batch = await db.tenant(tenantId, async (tx) => {
        await useBatchMemory(tx);
        const rows = await store.expireBatch(tx, tenantId, now, EXPIRY_BATCH_LOTS, { index, count: EXPIRY_PARALLEL });
        await emit(
          tx,
          tenantId,
          rows.map((r) => ({
            event: 'reward.points_expired.v1',
            participantId: r.participant_id,
            data: {
              participant_id: r.participant_id,
              expired_points: r.points,
              available: r.available,
              lifetime: r.lifetime,
              ledger_entry_id: r.ledger_entry_id,
              lots: r.lots,
            },
            occurredAt: now,
          })),
        );
        return rows;
      });
      if (batch.length === 0) return;
      totals.participants += batch.length;
      for (const r of batch) {
        totals.lots += r.lots;
        totals.points += r.points;
        countLedgerWrite('expiry', r.points);
      }
    }
  };
  await Promise.all(Array.from({ length: EXPIRY_PARALLEL }, (_, index) => expirePartition(index)));
  return totals;
}

const REMINDER_HORIZON_DAYS = 366;

/** Sends the due expiry reminders (points.expiring.v1), once per lot and reminder day; each tenant on its own clock unless `now` is given. */
export async function sendExpiryReminders(db: Database, now?: Date): Promise<number> {
  let sent = 0;
  for (const tenantId of await tenantsToLookAt(store.tenantsWithExpiringLots(db.system, now ?? clock.now(), REMINDER_HORIZON_DAYS), now)) {
    sent += await sendTenantExpiryReminders(db, tenantId, now ?? clock.now(tenantId));
  }
  return sent;
}

export async function sendTenantExpiryReminders(db: Database, tenantId: string, now: Date): Promise<number> {
  let sent = 0;
  for (;;) {
    const rows = await db.tenant(tenantId, async (tx) => {
      const due = await store.recordReminders(tx, tenantId, now, REMINDER_BATCH);
      await emit(
        tx,
        tenantId,
        due.map((r) => ({
          event: 'points.expiring.v1',
          participantId: r.participant_id,
          data: {
            participant_id: r.participant_id,
            points: r.points,
            expires_at: r.expires_at.toISOString(),
            days_before: r.days_before,
            lot_id: String(r.lot_id),
          },
          occurredAt: now,
        })),
      );
      return due;
    });
    sent += rows.length;
    if (rows.length < REMINDER_BATCH) return sent;
  }
}

// ---------------------------------------------------------------------------
// History and participant-facing reads

export const HISTORY_PAGE_MAX = 100;
export const HISTORY_PAGE_DEFAULT = 50;
export const TRANSACTIONS_PAGE_MAX = 100;
export const TRANSACTIONS_PAGE_DEFAULT = 20;
export const TRANSACTIONS_OFFSET_MAX = 10_000;
export const LEDGER_TYPES = ['award', 'bonus', 'adjustment', 'redemption', 'expiry'] as const;

function presentEntry(row: store.LedgerEntryRow) {
  return {
    id: row.id,
    participant_id: row.participant_id,
    type: row.type,
    amount: row.delta,
    reason: row.reason,
    memo: row.memo,
    source_kind: row.source_kind,
    source_id: row.source_id,
    activity_id: row.activity_id,
    engagement_id: row.engagement_id,
    multiplier: row.multiplier,
    available_after: row.available_after,
    lifetime_after: row.lifetime_after,
    created_at: new Date(row.created_at).toISOString(),
  };
}

export async function readHistory(
  db: Database,
  tenantId: string,
  query: { participant_id?: string; type?: string; from?: string; to?: string; limit: number; cursor?: string },
) {
  let types: string[] | null = null;
  if (query.type) {
    types = query.type.split(',').map((t) => t.trim());
    const unknown = types.filter((t) => !(LEDGER_TYPES as readonly string[]).includes(t));
    if (unknown.length) throw invalid(`type has unknown values ${unknown.map((t) => JSON.stringify(t)).join(', ')}; use ${LEDGER_TYPES.join(', ')}`);
  }
  const from = query.from ? new Date(query.from) : null;
  const to = query.to ? new Date(query.to) : null;
  if (from && to && from.getTime() >= to.getTime()) throw invalid('from must be before to');
  const after = decodeCursor(query.cursor, { c: 'timestamp', s: 'int64' });
  const now = clock.now();
  // History may lag (decisions/operations.md, Replica reads): read from the replica when there is one.
  const rows = await db.staleRead(tenantId, (tx) =>
    store.history(tx, tenantId, {
      participantId: query.participant_id ?? null,
      types,
      from,
      to,
      expiryVisibleFrom: new Date(now.getTime() - EXPIRED_VISIBLE_DAYS * 86_400_000),
      after: after ? { createdAt: after.c, seq: after.s } : null,
      limit: query.limit + 1,
    }),
  );
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    entries: page.map(presentEntry),
    next_cursor: rows.length > query.limit && last ? encodeCursor({ c: new Date(last.created_at).toISOString(), s: last.seq }) : null,
  };
}

export async function sessionBalance(db: Database, tenantId: string, participantId: string) {
  const balance = await store.readSessionBalance(db, tenantId, participantId);
  return {
    available_points: balance.available ?? 0,
    total_points: balance.lifetime ?? 0,
    currency_name: balance.currency_name,
    last_earned_at: balance.last_earned_at ? balance.last_earned_at.toISOString() : null,
  };
}

export async function sessionTransactions(db: Database, tenantId: string, participantId: string, limit: number, offset: number) {
  const page = await db.tenant(tenantId, (tx) => store.transactionsPage(tx, tenantId, participantId, limit, offset));
  return {
    transactions: page.rows.map((row) => ({
      id: row.id,
      type: row.type,
      amount: row.delta,
      reason: row.reason,
      ...(row.activity_id ? { activity_id: row.activity_id } : {}),
      created_at: new Date(row.created_at).toISOString(),
    })),
    total: page.total,
    has_more: offset + page.rows.length < page.total,
  };
}

// ---------------------------------------------------------------------------
// State parts contributed to GET /gamify/state/{participant_id}

/** The state read's `points` part: one statement, so that a read of statement parts only takes one round trip. */
export const pointsStatePart: StatementStatePart = {
  statement: store.POINTS_STATE_STATEMENT,
  shape([row]) {
    return {
      available: row?.available ?? 0,
      lifetime: row?.lifetime ?? 0,
      currency_name: row?.currency_name ?? store.DEFAULT_SETTINGS.currency_name,
      last_earned_at: row?.last_earned_at ? new Date(row.last_earned_at).toISOString() : null,
    };
  },
};

/** The state read's `tier` part (the same statement as `points`). */
export const tierStatePart: StatementStatePart = {
  statement: store.POINTS_STATE_STATEMENT,
  shape([row]) {
    const lifetime = row?.lifetime ?? 0;
    const next = row?.next_tier ?? null;
    return {
      current: row?.tier ?? null,
      next,
      points_to_next: next ? next.min_lifetime_points - lifetime : null,
      lifetime,
    };
  },
};

// ---------------------------------------------------------------------------
// Bulk grants

export const BULK_GRANT_TASK = 'points.bulk_grant';
export const BULK_GRANT_PARTICIPANTS_MAX = 100_000;
export const BULK_GRANT_BATCH = 5_000;
export const BULK_IDEMPOTENCY_SCOPE = 'points.bulk';

export interface BulkGrantBody {
  idempotency_key: string;
  reason: string;
  memo?: string;
  type?: GrantType;
  grants: Array<{ participant_id: string; amount: number }>;
}

/** Failed items listed by the status read (the first ones by participant id); the counts cover all. */
export const BULK_FAILURES_LISTED_MAX = 100;
/** Batches of one job run in parallel (disjoint items through SKIP LOCKED). */
export const BULK_GRANT_PARALLEL = 2;
export const BULK_FAILURE_BALANCE_LIMIT = 'balance_limit';

export function presentBulkJob(row: store.BulkJobRow) {
  // Participants erased while the job waited or ran lost their item with the rest of their rows: neither done, failed nor pending.
  const erased = Math.max(0, row.total - row.done - row.failed - row.pending);
  return {
    job_id: row.id,
    status: row.status,
    total: row.total,
    done: row.done,
    failed: row.failed + erased,
    pending: row.pending,
    failure_counts: { balance_limit: row.failed, participant_erased: erased },
    failures: row.failures,
    error: row.error,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at ? row.started_at.toISOString() : null,
    finished_at: row.finished_at ? row.finished_at.toISOString() : null,
  };
}

export async function startBulkGrant(db: Database, tenantId: string, body: BulkGrantBody) {
  const seen = new Set<string>();
  for (const grant of body.grants) {
    if (seen.has(grant.participant_id)) throw invalid(`grants lists participant ${JSON.stringify(grant.participant_id)} twice; one grant per participant per job`);
    seen.add(grant.participant_id);
  }
  return db.tenant(tenantId, async (tx) => {
    const claim = await claimKey<{ job_id: string }>(tx, tenantId, BULK_IDEMPOTENCY_SCOPE, body.idempotency_key, fingerprint(body));
    if (!claim.fresh) {
      const existing = await store.readBulkJob(tx, tenantId, claim.response.job_id, BULK_FAILURES_LISTED_MAX);
      if (!existing) throw notFound('bulk grant job');
      return { ...presentBulkJob(existing), duplicate: true };
    }
    const id = prefixedId('bgj', 12);
    const job = await store.insertBulkJob(
      tx,
      tenantId,
      { id, reason: body.reason, memo: body.memo ?? null, type: body.type ?? 'bonus', now: clock.now(tenantId) },
      body.grants.map((g) => g.participant_id),
      body.grants.map((g) => g.amount),
    );
    await addJob(tx, BULK_GRANT_TASK, { tenant_id: tenantId, job_id: id }, { jobKey: `points.bulk:${id}`, maxAttempts: 10 });
    await storeResponse(tx, tenantId, BULK_IDEMPOTENCY_SCOPE, body.idempotency_key, { job_id: id });
    return { ...presentBulkJob(job), duplicate: false };
  });
}

export async function readBulkGrant(db: Database, tenantId: string, jobId: string) {
  const row = await db.tenant(tenantId, (tx) => store.readBulkJob(tx, tenantId, jobId, BULK_FAILURES_LISTED_MAX));
  if (!row) throw notFound('bulk grant job');
  return presentBulkJob(row);
}

/**
 * Runs a bulk grant job to the end, one batch per transaction, BULK_GRANT_PARALLEL
 * batches at a time; a retry continues where it stopped (granted and failed
 * items are marked in their batch's transaction). A participant whose
 * lifetime points would pass POINTS_BALANCE_MAX is not granted and counts as
 * failed (`balance_limit`).
 */
export async function runBulkGrant(db: Database, tenantId: string, jobId: string): Promise<void> {
  const job = await db.tenant(tenantId, async (tx) => {
    const row = await store.readBulkJob(tx, tenantId, jobId, 0);
    if (row && row.status !== 'completed') await store.markBulkJob(tx, tenantId, jobId, 'running', clock.now());
    return row;
  });
  if (!job || job.status === 'completed') return;
  const runBatches = async () => {
    for (;;) {
      const taken = await db.tenant(tenantId, async (tx) => {
        await useBatchMemory(tx);
        const batch = await store.takeBulkBatch(tx, tenantId, jobId, BULK_GRANT_BATCH, POINTS_BALANCE_MAX - POINTS_PER_OPERATION_MAX);
        if (batch.participantIds.length === 0) return 0;
        const grants = { participantIds: [] as string[], amounts: [] as number[] };
        const failed: string[] = [];
        batch.participantIds.forEach((participantId, i) => {
          const lifetime = BigInt(batch.lifetimesNearLimit[participantId] ?? 0);
          if (lifetime + BigInt(batch.amounts[i]) > BigInt(POINTS_BALANCE_MAX)) {
            failed.push(participantId);
          } else {
            grants.participantIds.push(participantId);
            grants.amounts.push(batch.amounts[i]);
          }
        });
        const granted = await store.grantBulkBatch(tx, tenantId, jobId, grants, { participantIds: failed, reason: BULK_FAILURE_BALANCE_LIMIT }, clock.now(tenantId));
        await store.countBulkProgress(tx, tenantId, jobId, granted, failed.length);
        return batch.participantIds.length;
      });
      if (taken === 0) return;
    }
  };
  try {
    await Promise.all(Array.from({ length: BULK_GRANT_PARALLEL }, runBatches));
    await db.tenant(tenantId, (tx) => store.markBulkJob(tx, tenantId, jobId, 'completed', clock.now()));
  } catch (error) {
    await db.tenant(tenantId, (tx) => store.markBulkJob(tx, tenantId, jobId, 'running', clock.now(), (error as Error).message)).catch(() => undefined);
    throw error;
  }
}
