import { randomInt } from 'node:crypto';
import type { Database, Statement, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { AppError, conflict, fieldError, invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { prefixedId } from '../../platform/ids.js';
import { compileCheck, type Problems } from '../../platform/validation.js';
import { emit, type OutboxEvent } from '../../platform/outbox.js';
import { createMultiplierInTx } from '../points/index.js';
import { DISPLAY_TYPE, METADATA_SCHEMAS, type ClaimedReward, type CreateRewardBody, type RewardType, type UpdateRewardBody } from './schemas.js';
import * as store from './store.js';
import type { ClaimRow, RewardRow } from './store.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
// Generated codes: 10 characters from an alphabet without look-alikes (0/O, 1/I/L): about 50 bits.
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const GENERATED_CODE_LENGTH = 10;

export function displayTypeOf(type: RewardType): string {
  return DISPLAY_TYPE[type];
}

/** Each reward type's metadata check; paths in `errors` are the body's (`/metadata/currency`). */
const metadataChecks = Object.fromEntries(
  Object.entries(METADATA_SCHEMAS).map(([type, schema]) => [type, compileCheck(schema, { in: 'body', label: 'metadata', pointer: '/metadata' })]),
) as Record<RewardType, (value: unknown) => Problems | null>;

function checkMetadata(type: RewardType, metadata: unknown): void {
  const problems = metadataChecks[type](metadata);
  if (problems) throw invalid(`${problems.detail}, for a ${type} reward`, 'VALIDATION_INVALID_VALUE', { errors: problems.errors });
}

function generateCode(prefix: string): string {
  let code = prefix;
  for (let i = 0; i < GENERATED_CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

function presentReward(row: RewardRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    image_url: row.image_url,
    type: row.type as RewardType,
    display_type: displayTypeOf(row.type as RewardType),
    metadata: row.metadata,
    code_source: row.code_source,
    code_prefix: row.code_prefix,
    inventory: row.inventory,
    claimed_count: row.claimed_count,
    codes_available: row.codes_available ?? null,
    available_until: row.available_until?.toISOString() ?? null,
    valid_for_days: row.valid_for_days,
    active: row.active,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export async function createReward(db: Database, tenantId: string, body: CreateRewardBody) {
  return db.tenant(tenantId, (tx) => createRewardInTx(tx, tenantId, body));
}

/** Adds a reward to the catalogue in the caller's transaction (a sandbox promotion adds several in one). */
export async function createRewardInTx(tx: Tx, tenantId: string, body: CreateRewardBody) {
  const metadata = body.metadata ?? {};
  checkMetadata(body.type, metadata);
  const codeSource = body.code_source ?? (body.type === 'physical' || body.type === 'points_multiplier' ? 'none' : 'generated');
  if (body.code_prefix && codeSource !== 'generated') throw invalid('code_prefix applies to generated codes only', undefined, { errors: [fieldError('/code_prefix', 'not_allowed', 'applies to generated codes only (code_source: generated)')] });
  const id = body.id ?? prefixedId('rwd', 8);
  const inserted = await store.insertReward(
    tx,
    tenantId,
    {
      id,
      name: body.name,
      description: body.description ?? null,
      image_url: body.image_url ?? null,
      type: body.type,
      metadata,
      code_source: codeSource,
      code_prefix: body.code_prefix ?? '',
      inventory: body.inventory ?? null,
      available_until: body.available_until ? new Date(body.available_until) : null,
      valid_for_days: body.valid_for_days ?? null,
      active: body.active ?? true,
    },
    clock.now(),
  );
  if (!inserted) throw conflict(`a reward with the id ${JSON.stringify(id)} already exists`, 'REWARD_EXISTS');
  return presentReward((await store.findRewardWithCounts(tx, tenantId, id))!);
}

export async function updateReward(db: Database, tenantId: string, id: string, body: UpdateRewardBody) {
  return db.tenant(tenantId, (tx) => updateRewardInTx(tx, tenantId, id, body));
}

/** `updateReward` in the caller's transaction. */
export async function updateRewardInTx(tx: Tx, tenantId: string, id: string, body: UpdateRewardBody) {
  const row = await store.findReward(tx, tenantId, id, true);
  if (!row) throw notFound('reward', 'REWARD_NOT_FOUND');
  if (body.metadata !== undefined) checkMetadata(row.type as RewardType, body.metadata);
  const changes: Record<string, unknown> = { ...body };
  if (body.inventory !== undefined && body.inventory !== null) {
    // Claims of an unlimited reward take no stock, so its claimed_count column
    // stays 0: a new limit starts from the claims already made.
    const claimed = row.inventory === null ? (await store.findRewardWithCounts(tx, tenantId, id))!.claimed_count : row.claimed_count;
    if (body.inventory < claimed) throw ruleViolation(`inventory cannot go below the ${claimed} units already claimed`, 'INVENTORY_BELOW_CLAIMED');
    if (row.inventory === null) changes.claimed_count = claimed;
  }
  if (body.available_until) changes.available_until = new Date(body.available_until);
  await store.updateReward(tx, tenantId, id, changes, clock.now());
  return presentReward((await store.findRewardWithCounts(tx, tenantId, id))!);
}

export async function readReward(db: Database, tenantId: string, id: string) {
  const row = await db.tenant(tenantId, (tx) => store.findRewardWithCounts(tx, tenantId, id));
  if (!row) throw notFound('reward', 'REWARD_NOT_FOUND');
  return presentReward(row);
}

export async function listRewards(db: Database, tenantId: string, query: { type?: string; limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, { id: 'text' });
  const rows = await db.tenant(tenantId, (tx) => store.listRewards(tx, tenantId, { type: query.type, afterId: after?.id ?? null, limit: query.limit + 1 }));
  const page = rows.slice(0, query.limit);
  return { rewards: page.map(presentReward), next_cursor: rows.length > query.limit ? encodeCursor({ id: page.at(-1)!.id }) : null };
}

export async function uploadCodes(db: Database, tenantId: string, id: string, codes: string[]) {
  return db.tenant(tenantId, async (tx) => {
    const added = await uploadCodesInTx(tx, tenantId, id, codes);
    const after = (await store.findRewardWithCounts(tx, tenantId, id))!;
    return { added, duplicates: codes.length - added, codes_available: after.codes_available ?? 0 };
  });
}

/** Adds codes to a pool reward in the caller's transaction; codes already in the pool are ignored. Returns how many were added. */
export async function uploadCodesInTx(tx: Tx, tenantId: string, id: string, codes: string[]): Promise<number> {
  const row = await store.findReward(tx, tenantId, id, true);
  if (!row) throw notFound('reward', 'REWARD_NOT_FOUND');
  if (row.code_source !== 'pool') throw ruleViolation(`the reward's code_source is ${row.code_source}; codes can be uploaded to pool rewards only`, 'NOT_A_POOL_REWARD');
  return store.insertCodes(tx, tenantId, id, codes, clock.now());
}

// ---------------------------------------------------------------------------
// Claims.

function presentClaim(row: ClaimRow, now: Date): ClaimedReward {
  return {
    reward_id: row.reward_id,
    claim_id: row.id,
    name: row.name,
    type: row.type as RewardType,
    code: row.code,
    display_type: row.display_type,
    claimed_at: row.claimed_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    status: row.expires_at && row.expires_at <= now ? 'expired' : 'active',
    metadata: row.metadata,
    image_url: row.image_url,
  };
}

export interface ClaimInput {
  rewardId: string;
  participantId: string;
  engagementId?: string | null;
  activityId?: string | null;
  attemptId?: string | null;
}

/**
 * Claims one unit of a reward for a participant inside the caller's
 * transaction: checks availability and expiry, takes stock and a code
 * without ever overselling, creates the participant-scoped multiplier of a
 * `points_multiplier` reward, and emits `reward.claimed.v1` (or hands the
 * event to `events` so the caller can emit everything in one statement).
 * The participant must exist.
 */
export async function claimRewardInTx(tx: Tx, tenantId: string, input: ClaimInput, events?: OutboxEvent[]): Promise<ClaimedReward> {
  const now = clock.now();
  const reward = await store.findReward(tx, tenantId, input.rewardId);
  if (!reward) throw notFound(`reward ${JSON.stringify(input.rewardId)}`, 'REWARD_NOT_FOUND');
  if (!reward.active) throw ruleViolation(`the reward ${JSON.stringify(reward.id)} is not active`, 'REWARD_UNAVAILABLE');
  if (reward.available_until && reward.available_until <= now) throw ruleViolation(`the reward ${JSON.stringify(reward.id)} expired at ${reward.available_until.toISOString()}`, 'REWARD_EXPIRED');
  const type = reward.type as RewardType;
  let expiresAt = reward.valid_for_days ? new Date(now.getTime() + reward.valid_for_days * DAY_MS) : null;
  if (type === 'points_multiplier') {
    // The claim lasts as long as the multiplier it grants.
    const multiplierEnds = new Date(now.getTime() + Number(reward.metadata.duration_hours) * HOUR_MS);
    expiresAt = expiresAt && expiresAt < multiplierEnds ? expiresAt : multiplierEnds;
  }
  const claimId = prefixedId('clm', 12);
  const claim = await store.insertClaim(tx, tenantId, {
    id: claimId,
    reward,
    participantId: input.participantId,
    engagementId: input.engagementId ?? null,
    activityId: input.activityId ?? null,
    attemptId: input.attemptId ?? null,
    displayType: displayTypeOf(type),
    generatedCode: reward.code_source === 'generated' ? generateCode(reward.code_prefix) : null,
    claimedAt: now,
    expiresAt,
  });
  if (!claim) throw new AppError('rule_violation', 'REWARD_OUT_OF_STOCK', `the reward ${JSON.stringify(reward.id)} is out of stock`);
  if (type === 'points_multiplier') {
    const multiplier = await createMultiplierInTx(tx, tenantId, {
      multiplier: Number(reward.metadata.multiplier),
      startsAt: now,
      endsAt: expiresAt!,
      match: { event_type: reward.metadata.event_type as string, attributes: (reward.metadata.attributes as Record<string, unknown> | undefined) ?? {} },
      participantId: input.participantId,
    });
    await store.setClaimMultiplier(tx, tenantId, claimId, multiplier.id);
  }
  const event: OutboxEvent = {
    event: 'reward.claimed.v1',
    participantId: input.participantId,
    engagementId: input.engagementId ?? null,
    data: {
      participant_id: input.participantId,
      reward_id: reward.id,
      claim_id: claimId,
      reward_type: type,
      code: claim.code,
      display_type: claim.display_type,
      claimed_at: claim.claimed_at.toISOString(),
      expires_at: claim.expires_at?.toISOString() ?? null,
      activity_id: input.activityId ?? null,
    },
  };
  if (events) events.push(event);
  else await emit(tx, tenantId, event);
  return presentClaim(claim, now);
}

/**
 * What a claim would give, for a draft's preview (src/modules/engagements/preview.ts): the claim's checks,
 * but nothing is taken or written: no code from the pool, no stock, no multiplier, no event. The code
 * shown is a placeholder that redeems nothing.
 */
export async function previewClaimInTx(tx: Tx, tenantId: string, rewardId: string): Promise<ClaimedReward> {
  const now = clock.now();
  const reward = await store.findReward(tx, tenantId, rewardId);
  if (!reward) throw notFound(`reward ${JSON.stringify(rewardId)}`, 'REWARD_NOT_FOUND');
  if ((await store.unavailableRewardIds(tx, tenantId, [rewardId], now)).length) {
    throw ruleViolation(`the reward ${JSON.stringify(reward.id)} cannot be claimed now (inactive, expired or out of stock)`, 'REWARD_UNAVAILABLE');
  }
  const type = reward.type as RewardType;
  const displayType = displayTypeOf(type);
  return {
    reward_id: reward.id,
    claim_id: `preview_${prefixedId('clm', 12)}`,
    name: reward.name,
    type,
    code: reward.code_source === 'pool' || reward.code_source === 'generated' ? generateCode('PREVIEW-') : null,
    display_type: displayType,
    claimed_at: now.toISOString(),
    expires_at: reward.valid_for_days ? new Date(now.getTime() + reward.valid_for_days * DAY_MS).toISOString() : null,
    status: 'active',
    metadata: reward.metadata,
    image_url: reward.image_url,
  };
}

export async function missingRewardIdsInTx(tx: Tx, tenantId: string, ids: string[]): Promise<string[]> {
  return store.missingRewardIds(tx, tenantId, ids);
}

export async function unavailableRewardIdsInTx(tx: Tx, tenantId: string, ids: string[]): Promise<Set<string>> {
  return new Set(await store.unavailableRewardIds(tx, tenantId, ids, clock.now()));
}

/** `unavailableRewardIdsInTx` as a statement, for a caller that sends it with others (`unavailableRewardIdsOf` reads its rows). */
export function unavailableRewardIdsStatement(tenantId: string, ids: string[]): Statement {
  return store.unavailableRewardIdsStatement(tenantId, ids, clock.now());
}

export function unavailableRewardIdsOf(rows: readonly unknown[]): Set<string> {
  return new Set(store.unavailableIdsOf(rows));
}

export async function listClaimedInTx(tx: Tx, tenantId: string, participantId: string, limit: number, cursor?: string) {
  const after = decodeCursor(cursor, { claimed_at: 'timestamp', id: 'text' });
  const rows = await store.listClaims(tx, tenantId, participantId, after, limit + 1);
  const page = rows.slice(0, limit);
  const now = clock.now();
  const last = page.at(-1);
  return {
    rewards: page.map((row) => presentClaim(row, now)),
    next_cursor: rows.length > limit && last ? encodeCursor({ claimed_at: last.claimed_at.toISOString(), id: last.id }) : null,
  };
}

export async function listClaimed(db: Database, tenantId: string, participantId: string, limit: number, cursor?: string) {
  return db.tenant(tenantId, (tx) => listClaimedInTx(tx, tenantId, participantId, limit, cursor));
}
