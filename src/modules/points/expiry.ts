import { countLedgerWrite } from '../../platform/metrics.js';
import type { Database } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { emit } from '../../platform/outbox.js';
import * as store from './store.js';
import { useBatchMemory } from './batch-memory.js';

/**
 * Expiry and reminders: due lots expired in parallel batches per tenant, and
 * the expiry reminders sent once per lot and reminder day.
 */

export const EXPIRY_BATCH_LOTS = 20_000;
export const REMINDER_BATCH = 5_000;
/** Expired points stay visible in the history for this long (spec: Limits). */
export const EXPIRED_VISIBLE_DAYS = 90;

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
