import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { bodyChecker } from '../../platform/body-check.js';
import { emit } from '../../platform/outbox.js';
import { conflict, invalid, notFound } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { ensureParticipant } from '../participants/index.js';
import type { StatementStatePart } from '../../platform/module.js';
import * as store from './store.js';
import { BADGE_CODES_FILTER_MAX, CreateBadgeBody, UpdateBadgeBody, type BadgeDefinition, type BadgeStatus } from './schemas.js';

/**
 * Badges: definitions made by the tenant's admins, and the badges each
 * participant earned, through earn rules, activities, challenges or a direct
 * award. A badge is earned once; earning it again changes nothing.
 */

/** The most badges one status read returns; a tenant with more pages through the admin list. */
export const BADGE_STATUS_MAX = 500;

export interface BadgeSource {
  kind: string;
  id: string;
}

function toDefinition(row: store.BadgeRow): BadgeDefinition {
  return {
    code: row.code,
    name: row.name,
    description: row.description,
    image_url: row.image_url,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function toStatus(row: store.BadgeStatusRow): BadgeStatus {
  return {
    code: row.code,
    name: row.name,
    description: row.description,
    image_url: row.image_url,
    earned: row.earned_at !== null,
    earned_at: row.earned_at ? row.earned_at.toISOString() : null,
  };
}

export async function createBadge(db: Database, tenantId: string, body: CreateBadgeBody): Promise<BadgeDefinition> {
  return db.tenant(tenantId, (tx) => createBadgeInTx(tx, tenantId, body));
}

/* The admin routes validate with these schemas too; other modules (a sandbox promotion) call the `…InTx` forms directly. */
const checkCreateBody = bodyChecker(CreateBadgeBody, 'badge');
const checkUpdateBody = bodyChecker(UpdateBadgeBody, 'badge');

/** Defines a badge in the caller's transaction (a sandbox promotion defines several in one). */
export async function createBadgeInTx(tx: Tx, tenantId: string, body: CreateBadgeBody): Promise<BadgeDefinition> {
  checkCreateBody(body, body.code);
  const row = await store.insertBadge(tx, tenantId, {
    code: body.code,
    name: body.name,
    description: body.description ?? null,
    image_url: body.image_url ?? null,
    created_at: clock.now(),
  });
  if (!row) throw conflict(`a badge with the code "${body.code}" already exists`, 'BADGE_EXISTS');
  return toDefinition(row);
}

export async function readBadge(db: Database, tenantId: string, code: string): Promise<BadgeDefinition> {
  return db.tenant(tenantId, async (tx) => {
    const row = await store.findBadge(tx, tenantId, code);
    if (!row) throw notFound(`badge "${code}"`);
    return toDefinition(row);
  });
}

export async function listBadges(db: Database, tenantId: string, query: { limit?: number; cursor?: string }) {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { code: 'text' });
  return db.tenant(tenantId, async (tx) => {
    const rows = await store.listBadges(tx, tenantId, after?.code ?? null, limit + 1);
    const page = rows.slice(0, limit);
    return {
      badges: page.map(toDefinition),
      next_cursor: rows.length > limit ? encodeCursor({ code: page[page.length - 1].code }) : null,
    };
  });
}

export async function updateBadge(db: Database, tenantId: string, code: string, body: UpdateBadgeBody): Promise<BadgeDefinition> {
  return db.tenant(tenantId, (tx) => updateBadgeInTx(tx, tenantId, code, body));
}

/** `updateBadge` in the caller's transaction. */
export async function updateBadgeInTx(tx: Tx, tenantId: string, code: string, body: UpdateBadgeBody): Promise<BadgeDefinition> {
  checkUpdateBody(body, code);
  const row = await store.updateBadge(tx, tenantId, code, body, clock.now());
  if (!row) throw notFound(`badge "${code}"`);
  return toDefinition(row);
}

/** Deletes the definition and, with it, every participant's earned record of it. */
export async function deleteBadge(db: Database, tenantId: string, code: string): Promise<void> {
  await db.tenant(tenantId, async (tx) => {
    if (!(await store.deleteBadge(tx, tenantId, code))) throw notFound(`badge "${code}"`);
  });
}

/**
 * Awards a badge inside the caller's transaction. Idempotent: when the
 * participant already holds the badge nothing changes and `awarded` is false.
 * A new award emits `badge.earned.v1` in the same transaction.
 */
export async function awardBadgeInTx(
  tx: Tx,
  tenantId: string,
  input: { participantId: string; badgeCode: string; source: BadgeSource },
): Promise<{ awarded: boolean; earnedAt: Date; name: string; imageUrl: string | null }> {
  const badge = await store.findBadge(tx, tenantId, input.badgeCode);
  if (!badge) throw notFound(`badge "${input.badgeCode}"`, 'BADGE_NOT_FOUND');
  await ensureParticipant(tx, tenantId, input.participantId);
  const earned = await store.insertEarnedBadge(tx, tenantId, {
    participantId: input.participantId,
    badgeCode: input.badgeCode,
    earnedAt: clock.now(),
    sourceKind: input.source.kind,
    sourceId: input.source.id,
  });
  if (earned.inserted) {
    await emit(tx, tenantId, {
      event: 'badge.earned.v1',
      participantId: input.participantId,
      data: {
        participant_id: input.participantId,
        badge_code: badge.code,
        badge_name: badge.name,
        earned_at: earned.earnedAt.toISOString(),
        source_kind: input.source.kind,
        source_id: input.source.id,
      },
    });
  }
  return { awarded: earned.inserted, earnedAt: earned.earnedAt, name: badge.name, imageUrl: badge.image_url };
}

export async function hasBadgeInTx(tx: Tx, tenantId: string, participantId: string, badgeCode: string): Promise<boolean> {
  return store.hasEarned(tx, tenantId, participantId, badgeCode);
}

/** The codes among `codes` that are not defined for the tenant (for validating rules that reference badges). */
export async function missingBadgeCodesInTx(tx: Tx, tenantId: string, codes: string[]): Promise<string[]> {
  if (codes.length === 0) return [];
  const found = new Set((await store.findBadges(tx, tenantId, codes)).map((b) => b.code));
  return codes.filter((code) => !found.has(code));
}

export async function awardBadgeDirectly(db: Database, tenantId: string, badgeCode: string, participantId: string, actorId: string) {
  return db.tenant(tenantId, async (tx) => {
    const result = await awardBadgeInTx(tx, tenantId, { participantId, badgeCode, source: { kind: 'grant', id: actorId } });
    return { participant_id: participantId, badge_code: badgeCode, awarded: result.awarded, earned_at: result.earnedAt.toISOString() };
  });
}

function parseCodeFilter(raw: string | undefined): string[] | null {
  if (raw === undefined) return null;
  const codes = [...new Set(raw.split(',').map((c) => c.trim()).filter((c) => c !== ''))];
  if (codes.length > BADGE_CODES_FILTER_MAX) throw invalid(`badge_codes names ${codes.length} codes; at most ${BADGE_CODES_FILTER_MAX} are allowed`);
  const bad = codes.find((c) => !/^[A-Za-z0-9_.:-]{1,64}$/.test(c));
  if (bad !== undefined) throw invalid(`badge_codes contains "${bad}", which is not a badge code`);
  return codes;
}

/** The participant's view: every configured badge (or those filtered) with earned and earned_at. */
export async function badgeStatus(db: Database, tenantId: string, participantId: string, badgeCodes: string | undefined) {
  const codes = parseCodeFilter(badgeCodes);
  return db.tenant(tenantId, async (tx) => {
    const rows = await store.badgeStatuses(tx, tenantId, participantId, codes, BADGE_STATUS_MAX);
    return { badges: rows.map(toStatus) };
  });
}

/** The `badges` part of the participant state read: the badges earned, oldest first. */
/** The state read's `badges` part: one statement, so that a read of statement parts only takes one round trip. */
export const badgesStatePart: StatementStatePart = {
  statement: store.EARNED_BADGES_STATEMENT,
  shape: (rows) => (rows as store.BadgeStatusRow[]).map(toStatus),
};

export async function earnedBadgesInTx(tx: Tx, tenantId: string, participantId: string): Promise<BadgeStatus[]> {
  return (await store.earnedBadges(tx, tenantId, participantId)).map(toStatus);
}

/** The codes of the badges the participant holds (for rule conditions on `participant.badges`). */
export async function earnedBadgeCodesInTx(tx: Tx, tenantId: string, participantId: string): Promise<string[]> {
  return store.earnedBadgeCodes(tx, tenantId, participantId);
}
