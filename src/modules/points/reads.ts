import type { Database } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { invalid } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import type { StatementStatePart } from '../../platform/module.js';
import * as store from './store.js';
import { EXPIRED_VISIBLE_DAYS } from './expiry.js';

/**
 * The ledger history, the participant-facing reads (balance, transactions)
 * and the parts of the participant state read.
 */

export const HISTORY_PAGE_MAX = 100;
export const HISTORY_PAGE_DEFAULT = 50;
export const TRANSACTIONS_PAGE_MAX = 100;
export const TRANSACTIONS_PAGE_DEFAULT = 20;
export const TRANSACTIONS_OFFSET_MAX = 10_000;
export const LEDGER_TYPES = ['award', 'bonus', 'adjustment', 'redemption', 'expiry'] as const;

function presentEntry(row: store.LedgerEntryRow & store.LedgerEntryActorRow) {
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
    actor: row.actor_type && row.actor_id ? { type: row.actor_type, id: row.actor_id, name: row.actor_name } : null,
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
