import type { Tx } from '../../platform/db.js';

/** The statements of expiry and reminders: the tenants with due lots, the expiry batches, the reminders. */

/** Tenants that have at least one due lot, found with a loose index scan. */
export async function tenantsWithDueLots(pool: { query: Tx['query'] }, now: Date): Promise<string[]> {
  const { rows } = await pool.query(
    `WITH RECURSIVE t AS (
       (SELECT tenant_id FROM points_lots WHERE remaining > 0 AND expires_at <= $1 ORDER BY tenant_id LIMIT 1)
       UNION ALL
       SELECT (SELECT l.tenant_id FROM points_lots l WHERE l.remaining > 0 AND l.expires_at <= $1 AND l.tenant_id > t.tenant_id
               ORDER BY l.tenant_id LIMIT 1)
       FROM t WHERE t.tenant_id IS NOT NULL
     )
     SELECT tenant_id FROM t WHERE tenant_id IS NOT NULL`,
    [now],
  );
  return rows.map((r) => r.tenant_id as string);
}

/** Tenants that have lots expiring within `horizonDays` (reminder candidates). */
export async function tenantsWithExpiringLots(pool: { query: Tx['query'] }, now: Date, horizonDays: number): Promise<string[]> {
  const { rows } = await pool.query(
    `WITH RECURSIVE t AS (
       (SELECT tenant_id FROM points_lots WHERE remaining > 0 AND expires_at > $1 AND expires_at <= $1 + make_interval(days => $2)
        ORDER BY tenant_id LIMIT 1)
       UNION ALL
       SELECT (SELECT l.tenant_id FROM points_lots l WHERE l.remaining > 0 AND l.expires_at > $1 AND l.expires_at <= $1 + make_interval(days => $2)
                 AND l.tenant_id > t.tenant_id ORDER BY l.tenant_id LIMIT 1)
       FROM t WHERE t.tenant_id IS NOT NULL
     )
     SELECT tenant_id FROM t WHERE tenant_id IS NOT NULL`,
    [now, horizonDays],
  );
  return rows.map((r) => r.tenant_id as string);
}

export interface ExpiredRow {
  participant_id: string;
  available: number;
  lifetime: number;
  points: number;
  lots: number;
  ledger_entry_id: string;
}

/**
 * Expires the due lots of one batch of participants in one statement (of one
 * partition of the participants, by a hash of their id, when several batches
 * run in parallel, so that they never reach for the same rows): balance
 * rows first (skipping any held by a running grant or deduct; the next run
 * takes them), then their due lots, the balances and one expiry ledger entry
 * per participant.
 */
export async function expireBatch(
  tx: Tx,
  tenantId: string,
  now: Date,
  lotsPerBatch: number,
  partition: { index: number; count: number } = { index: 0, count: 1 },
): Promise<ExpiredRow[]> {
  const { rows } = await tx.query<ExpiredRow>(
    `WITH due AS (
       SELECT DISTINCT participant_id FROM (
         SELECT participant_id FROM points_lots
         WHERE tenant_id = $1 AND remaining > 0 AND expires_at <= $2
           AND ($5::int = 1 OR mod(abs(hashtext(participant_id)), $5::int) = $4::int)
         ORDER BY expires_at LIMIT $3
       ) d
     ),
     locked AS (
       SELECT b.participant_id FROM points_balances b
       WHERE b.tenant_id = $1 AND b.participant_id IN (SELECT participant_id FROM due)
       ORDER BY b.participant_id
       FOR UPDATE SKIP LOCKED
     ),
     -- The due lots, locked: FOR UPDATE reads their current remaining (the statement's snapshot may predate a deduct that
     -- committed before the balances were locked), which the update returns as the points expired.
     due_lots AS (
       SELECT l.participant_id, l.id, l.remaining FROM points_lots l
       WHERE l.tenant_id = $1 AND l.participant_id IN (SELECT participant_id FROM locked) AND l.remaining > 0 AND l.expires_at <= $2
       FOR UPDATE OF l
     ),
     expired AS (
       UPDATE points_lots l SET expired = l.expired + d.remaining, remaining = 0
       FROM due_lots d
       WHERE l.tenant_id = $1 AND l.participant_id = d.participant_id AND l.id = d.id
       RETURNING l.participant_id, d.remaining AS points
     ),
     totals AS (
       SELECT participant_id, sum(points)::bigint AS points, count(*)::int AS lots FROM expired GROUP BY participant_id
     ),
     balances AS (
       UPDATE points_balances b SET available = b.available - t.points, updated_at = $2
       FROM totals t
       WHERE b.tenant_id = $1 AND b.participant_id = t.participant_id
       RETURNING b.participant_id, b.available, b.lifetime, t.points, t.lots,
                 'ple_' || replace(gen_random_uuid()::text, '-', '') AS ledger_entry_id
     ),
     entries AS (
       INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, source_kind, available_after, lifetime_after, created_at)
       SELECT $1, participant_id, ledger_entry_id, 'expiry', -points, 'points expired', 'expiry', available, lifetime, $2 FROM balances
     )
     SELECT participant_id, available, lifetime, points, lots, ledger_entry_id FROM balances`,
    [tenantId, now, lotsPerBatch, partition.index, partition.count],
  );
  return rows;
}

export interface ReminderRow {
  participant_id: string;
  lot_id: number;
  days_before: number;
  points: number;
  expires_at: Date;
}

/**
 * Records the next batch of due expiry reminders: for each open lot, the
 * smallest configured day whose moment has come and that was not yet sent
 * for that lot. A reminder day passed while the job was down is skipped in
 * favour of the nearer one.
 */
export async function recordReminders(tx: Tx, tenantId: string, now: Date, limit: number): Promise<ReminderRow[]> {
  const { rows } = await tx.query<ReminderRow>(
    `WITH settings AS (
       SELECT coalesce((SELECT reminder_days FROM points_settings WHERE tenant_id = $1), '{60,30,7,1}'::int[]) AS days
     ),
     horizon AS (SELECT coalesce((SELECT max(d) FROM settings, unnest(days) d), 0) AS days),
     candidates AS (
       SELECT l.participant_id, l.id AS lot_id, l.remaining AS points, l.expires_at,
              (SELECT min(d) FROM settings, unnest(days) d WHERE l.expires_at - make_interval(days => d) <= $2) AS days_before
       FROM points_lots l, horizon h
       WHERE l.tenant_id = $1 AND l.remaining > 0 AND l.expires_at > $2 AND l.expires_at <= $2 + make_interval(days => h.days)
     ),
     due AS (
       SELECT c.* FROM candidates c
       WHERE c.days_before IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM points_lot_reminders r WHERE r.tenant_id = $1 AND r.participant_id = c.participant_id
                           AND r.lot_id = c.lot_id AND r.days_before = c.days_before)
       ORDER BY c.expires_at, c.lot_id LIMIT $3
     ),
     sent AS (
       INSERT INTO points_lot_reminders (tenant_id, participant_id, lot_id, days_before, sent_at)
       SELECT $1, participant_id, lot_id, days_before, $2 FROM due
       ON CONFLICT DO NOTHING
       RETURNING participant_id, lot_id, days_before
     )
     SELECT d.participant_id, d.lot_id, d.days_before, d.points, d.expires_at
     FROM sent s JOIN due d ON d.participant_id = s.participant_id AND d.lot_id = s.lot_id`,
    [tenantId, now, limit],
  );
  return rows;
}
