import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { emit } from '../../platform/outbox.js';
import { conflict, invalid, notFound } from '../../platform/errors.js';
import { addJob } from '../../platform/jobs.js';
import * as store from './store.js';
import { tierChangedEvent } from './ledger.js';

/**
 * Tiers: their definitions, and the background re-evaluation of every
 * participant's tier after a definition changes.
 */

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
