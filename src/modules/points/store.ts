import type { Database, Tx } from '../../platform/db.js';
import { currentTraceparent } from '../../platform/tracing.js';

/**
 * Every SQL statement on the points tables. Each function is one statement
 * (a CTE where a change touches several tables) and takes the transaction and
 * the tenant first; every statement filters by tenant.
 */
export type ExpiryPolicy = 'fifo' | 'lifo' | 'none';

export interface GrantRow {
  available: number;
  lifetime: number;
  previous_tier: string | null;
  tier: string | null;
  expires_at: Date | null;
}

export interface GrantValues {
  participantId: string;
  amount: number;
  entryId: string;
  type: string;
  reason: string;
  memo: string | null;
  sourceKind: string;
  sourceId: string | null;
  activityId: string | null;
  engagementId: string | null;
  multiplier: number | null;
  now: Date;
}

/**
 * The whole grant in one statement: the participant on first sight, the
 * balance (locked by the upsert, so concurrent grants serialise on it), the
 * tier for the new lifetime, a lot with the tenant's expiry and the ledger
 * entry. The upsert keeps the tier it replaces in `tier_code_before` and
 * returns it (PostgreSQL before 18 has no `RETURNING old.…`; migration 0105).
 */
export async function insertGrant(tx: Tx, tenantId: string, v: GrantValues): Promise<GrantRow> {
  return (await insertGrants(tx, tenantId, [v]))[0];
}

/**
 * Grants in one statement, each as `insertGrant` describes: a processing
 * batch writes its held grants with it (service.ts, `awardInTx`). The
 * participants must be distinct (a balance row can change once per
 * statement); the caller splits a batch into rounds. Returns one row per
 * grant, in the order given.
 */
export async function insertGrants(tx: Tx, tenantId: string, list: GrantValues[]): Promise<GrantRow[]> {
  const { rows } = await tx.query<GrantRow>(
    `WITH settings AS (
       SELECT coalesce((SELECT expiry_policy FROM points_settings WHERE tenant_id = $1), 'fifo') AS policy,
              coalesce((SELECT default_ttl_days FROM points_settings WHERE tenant_id = $1), 365) AS ttl_days
     ),
     input AS (
       SELECT * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                            $10::text[], $11::text[], $12::timestamptz[], $13::numeric[])
         WITH ORDINALITY AS i (participant_id, amount, entry_id, type, reason, memo, source_kind, source_id,
                               activity_id, engagement_id, at, multiplier, n)
     ),
     participant AS (
       INSERT INTO participants (tenant_id, participant_id) SELECT $1, participant_id FROM input ON CONFLICT DO NOTHING
     ),
     balance AS (
       INSERT INTO points_balances AS b (tenant_id, participant_id, available, lifetime, last_earned_at, tier_code, updated_at)
       SELECT $1, i.participant_id, i.amount, i.amount, i.at,
              (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= i.amount
               ORDER BY t.min_lifetime_points DESC LIMIT 1), i.at
       FROM input i
       ON CONFLICT (tenant_id, participant_id) DO UPDATE
         SET available = b.available + EXCLUDED.available,
             lifetime = b.lifetime + EXCLUDED.lifetime,
             last_earned_at = EXCLUDED.last_earned_at,
             updated_at = EXCLUDED.updated_at,
             tier_code_before = b.tier_code,
             tier_code = (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= b.lifetime + EXCLUDED.lifetime
                          ORDER BY t.min_lifetime_points DESC LIMIT 1)
       RETURNING b.participant_id, b.tier_code_before AS previous_tier, b.tier_code AS tier, b.available, b.lifetime
     ),
     lot AS (
       INSERT INTO points_lots (tenant_id, participant_id, amount, remaining, ledger_entry_id, created_at, expires_at)
       SELECT $1, i.participant_id, i.amount, i.amount, i.entry_id, i.at,
              CASE WHEN s.policy = 'none' THEN NULL ELSE i.at + make_interval(days => s.ttl_days) END
       FROM input i CROSS JOIN settings s
       RETURNING ledger_entry_id, expires_at
     ),
     entry AS (
       INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, memo, source_kind, source_id, activity_id,
                                  engagement_id, multiplier, available_after, lifetime_after, created_at)
       SELECT $1, i.participant_id, i.entry_id, i.type, i.amount, i.reason, i.memo, i.source_kind, i.source_id, i.activity_id,
              i.engagement_id, i.multiplier, b.available, b.lifetime, i.at
       FROM input i JOIN balance b ON b.participant_id = i.participant_id
       ORDER BY i.n
     )
     SELECT b.available, b.lifetime, b.previous_tier, b.tier, l.expires_at
     FROM input i
     JOIN balance b ON b.participant_id = i.participant_id
     JOIN lot l ON l.ledger_entry_id = i.entry_id
     ORDER BY i.n`,
    [
      tenantId,
      list.map((v) => v.participantId),
      list.map((v) => v.amount),
      list.map((v) => v.entryId),
      list.map((v) => v.type),
      list.map((v) => v.reason),
      list.map((v) => v.memo),
      list.map((v) => v.sourceKind),
      list.map((v) => v.sourceId),
      list.map((v) => v.activityId),
      list.map((v) => v.engagementId),
      list.map((v) => v.now.toISOString()),
      list.map((v) => v.multiplier),
    ],
  );
  if (rows.length !== list.length) throw new Error(`a batch of ${list.length} grants wrote ${rows.length}`);
  return rows;
}

export interface DeductValues {
  participantId: string;
  amount: number;
  entryId: string;
  type: string;
  reason: string;
  memo: string | null;
  sourceKind: string;
  sourceId: string | null;
  now: Date;
}

/** The guarded deduct (the SQL function `points_deduct` of migration 0100), one round trip. */
export async function deduct(tx: Tx, tenantId: string, v: DeductValues): Promise<{ applied: boolean; available: number; lifetime: number }> {
  const { rows } = await tx.query(
    'SELECT applied, available, lifetime FROM points_deduct($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
    [tenantId, v.participantId, v.amount, v.entryId, v.type, v.reason, v.memo, v.sourceKind, v.sourceId, v.now],
  );
  return rows[0];
}

export async function readBalance(
  tx: Tx,
  tenantId: string,
  participantId: string,
): Promise<{ available: number; lifetime: number; last_earned_at: Date | null; tier_code: string | null } | null> {
  const { rows } = await tx.query(
    'SELECT available, lifetime, last_earned_at, tier_code FROM points_balances WHERE tenant_id = $1 AND participant_id = $2',
    [tenantId, participantId],
  );
  return rows[0] ?? null;
}

/**
 * A participant's balance with the tenant's currency name in ONE round trip
 * (`db.tenantRead`: read-only, tenant set, identical concurrent reads
 * coalesced), for the participant-facing balance read that pages poll.
 */
export async function readSessionBalance(db: Database, tenantId: string, participantId: string) {
  const [row] = await db.tenantRead<{ available: number | null; lifetime: number | null; last_earned_at: Date | null; currency_name: string | null }>(
    tenantId,
    `SELECT b.available, b.lifetime, b.last_earned_at, s.currency_name
     FROM (SELECT 1) AS one
     LEFT JOIN points_balances b ON b.tenant_id = $1 AND b.participant_id = $2
     LEFT JOIN points_settings s ON s.tenant_id = $1`,
    [tenantId, participantId],
  );
  return { ...row, currency_name: row.currency_name ?? DEFAULT_SETTINGS.currency_name };
}

/** The matching multiplier with the highest factor (ties: the oldest), or none. */
/** The event names any multiplier of the tenant is for (a superset of those that apply now). */
export async function multiplierEventTypes(tx: Tx, tenantId: string): Promise<string[]> {
  const { rows } = await tx.query<{ event_type: string }>('SELECT DISTINCT event_type FROM points_multipliers WHERE tenant_id = $1', [tenantId]);
  return rows.map((r) => r.event_type);
}

export async function bestMultiplier(
  tx: Tx,
  tenantId: string,
  participantId: string,
  eventName: string,
  attributes: Record<string, unknown>,
  at: Date,
): Promise<{ id: string; multiplier: number } | null> {
  const { rows } = await tx.query(
    `SELECT id, multiplier FROM points_multipliers
     WHERE tenant_id = $1 AND event_type = $2 AND starts_at <= $3 AND ends_at > $3
       AND attributes <@ $4::jsonb AND (participant_id IS NULL OR participant_id = $5)
     ORDER BY multiplier DESC, created_at, id
     LIMIT 1`,
    [tenantId, eventName, at, JSON.stringify(attributes ?? {}), participantId],
  );
  return rows[0] ?? null;
}

// ---------------------------------------------------------------------------
// Settings

export interface SettingsRow {
  expiry_policy: ExpiryPolicy;
  default_ttl_days: number;
  reminder_days: number[];
  currency_name: string;
  updated_at: Date | null;
}

export const DEFAULT_SETTINGS: SettingsRow = {
  expiry_policy: 'fifo',
  default_ttl_days: 365,
  reminder_days: [60, 30, 7, 1],
  currency_name: 'points',
  updated_at: null,
};

export async function readSettings(tx: Tx, tenantId: string): Promise<SettingsRow> {
  const { rows } = await tx.query<SettingsRow>(
    'SELECT expiry_policy, default_ttl_days, reminder_days, currency_name, updated_at FROM points_settings WHERE tenant_id = $1',
    [tenantId],
  );
  return rows[0] ?? DEFAULT_SETTINGS;
}

export async function upsertSettings(tx: Tx, tenantId: string, patch: Partial<Omit<SettingsRow, 'updated_at'>>, now: Date): Promise<SettingsRow> {
  const { rows } = await tx.query<SettingsRow>(
    `INSERT INTO points_settings AS s (tenant_id, expiry_policy, default_ttl_days, reminder_days, currency_name, updated_at)
     VALUES ($1, coalesce($2, 'fifo'), coalesce($3, 365), coalesce($4::int[], '{60,30,7,1}'), coalesce($5, 'points'), $6)
     ON CONFLICT (tenant_id) DO UPDATE SET
       expiry_policy = coalesce($2, s.expiry_policy),
       default_ttl_days = coalesce($3, s.default_ttl_days),
       reminder_days = coalesce($4::int[], s.reminder_days),
       currency_name = coalesce($5, s.currency_name),
       updated_at = $6
     RETURNING expiry_policy, default_ttl_days, reminder_days, currency_name, updated_at`,
    [tenantId, patch.expiry_policy ?? null, patch.default_ttl_days ?? null, patch.reminder_days ?? null, patch.currency_name ?? null, now],
  );
  return rows[0];
}

// ---------------------------------------------------------------------------
// Multipliers

export interface MultiplierRow {
  id: string;
  multiplier: number;
  starts_at: Date;
  ends_at: Date;
  event_type: string;
  attributes: Record<string, unknown>;
  participant_id: string | null;
  created_at: Date;
}

const MULTIPLIER_COLUMNS = 'id, multiplier, starts_at, ends_at, event_type, attributes, participant_id, created_at';

export async function insertMultiplier(tx: Tx, tenantId: string, m: MultiplierRow): Promise<MultiplierRow> {
  const { rows } = await tx.query<MultiplierRow>(
    `INSERT INTO points_multipliers (tenant_id, id, multiplier, starts_at, ends_at, event_type, attributes, participant_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${MULTIPLIER_COLUMNS}`,
    [tenantId, m.id, m.multiplier, m.starts_at, m.ends_at, m.event_type, JSON.stringify(m.attributes), m.participant_id, m.created_at],
  );
  return rows[0];
}

export async function listMultipliers(
  tx: Tx,
  tenantId: string,
  after: { createdAt: string; id: string } | null,
  limit: number,
  activeAt: Date | null,
): Promise<MultiplierRow[]> {
  const { rows } = await tx.query<MultiplierRow>(
    `SELECT ${MULTIPLIER_COLUMNS} FROM points_multipliers
     WHERE tenant_id = $1
       AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::text))
       AND ($5::timestamptz IS NULL OR (starts_at <= $5 AND ends_at > $5))
     ORDER BY created_at DESC, id DESC LIMIT $4`,
    [tenantId, after?.createdAt ?? null, after?.id ?? null, limit, activeAt],
  );
  return rows;
}

export async function readMultiplier(tx: Tx, tenantId: string, id: string): Promise<MultiplierRow | null> {
  const { rows } = await tx.query<MultiplierRow>(`SELECT ${MULTIPLIER_COLUMNS} FROM points_multipliers WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
  return rows[0] ?? null;
}

export async function deleteMultiplier(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM points_multipliers WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  return rowCount === 1;
}

// ---------------------------------------------------------------------------
// Tiers

export interface TierRow {
  code: string;
  name: string;
  min_lifetime_points: number;
  level: number;
  created_at: Date;
  updated_at: Date;
}

const TIER_SELECT = `SELECT code, name, min_lifetime_points, created_at, updated_at,
  (row_number() OVER (ORDER BY min_lifetime_points))::int AS level FROM points_tiers WHERE tenant_id = $1`;

export async function listTiers(tx: Tx, tenantId: string): Promise<TierRow[]> {
  const { rows } = await tx.query<TierRow>(`${TIER_SELECT} ORDER BY min_lifetime_points`, [tenantId]);
  return rows;
}

export async function countTiers(tx: Tx, tenantId: string): Promise<number> {
  const { rows } = await tx.query('SELECT count(*)::int AS n FROM points_tiers WHERE tenant_id = $1', [tenantId]);
  return rows[0].n;
}

/** Inserts a tier; null when the code or the threshold is already taken. */
export async function insertTier(tx: Tx, tenantId: string, tier: { code: string; name: string; min_lifetime_points: number }, now: Date): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO points_tiers (tenant_id, code, name, min_lifetime_points, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT DO NOTHING`,
    [tenantId, tier.code, tier.name, tier.min_lifetime_points, now],
  );
  return rowCount === 1;
}

export async function updateTier(tx: Tx, tenantId: string, code: string, patch: { name?: string; min_lifetime_points?: number }, now: Date): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE points_tiers SET name = coalesce($3, name), min_lifetime_points = coalesce($4, min_lifetime_points), updated_at = $5
     WHERE tenant_id = $1 AND code = $2`,
    [tenantId, code, patch.name ?? null, patch.min_lifetime_points ?? null, now],
  );
  return rowCount === 1;
}

export async function deleteTier(tx: Tx, tenantId: string, code: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM points_tiers WHERE tenant_id = $1 AND code = $2', [tenantId, code]);
  return rowCount === 1;
}

export interface TierChangeRow {
  participant_id: string;
  previous_tier: string | null;
  tier: string | null;
  lifetime: number;
}

/**
 * Re-evaluates the tiers of one page of participants (by id, after `afterId`)
 * against the current definitions; returns the changes and the page's last id.
 */
export async function reevaluateTiers(
  tx: Tx,
  tenantId: string,
  afterId: string,
  limit: number,
  now: Date,
): Promise<{ lastId: string | null; changes: TierChangeRow[] }> {
  const { rows } = await tx.query(
    `WITH page AS (
       SELECT participant_id, lifetime, tier_code FROM points_balances WHERE tenant_id = $1 AND participant_id > $2
       ORDER BY participant_id LIMIT $3 FOR UPDATE
     ),
     target AS (
       SELECT p.participant_id, p.tier_code AS previous,
              (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= p.lifetime
               ORDER BY t.min_lifetime_points DESC LIMIT 1) AS code
       FROM page p
     ),
     changed AS (
       UPDATE points_balances b SET tier_code = target.code, updated_at = $4
       FROM target
       WHERE b.tenant_id = $1 AND b.participant_id = target.participant_id AND b.tier_code IS DISTINCT FROM target.code
       RETURNING b.participant_id, target.previous AS previous_tier, b.tier_code AS tier, b.lifetime
     )
     SELECT (SELECT max(participant_id) FROM page) AS last_id,
            coalesce((SELECT json_agg(changed) FROM changed), '[]'::json) AS changes`,
    [tenantId, afterId, limit, now],
  );
  return { lastId: rows[0].last_id, changes: rows[0].changes };
}

// ---------------------------------------------------------------------------
// Expiry and reminders

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

// ---------------------------------------------------------------------------
// Reads of the ledger

export interface LedgerEntryRow {
  id: string;
  seq: number;
  participant_id: string;
  type: 'award' | 'bonus' | 'adjustment' | 'redemption' | 'expiry';
  delta: number;
  reason: string;
  memo: string | null;
  source_kind: string;
  source_id: string | null;
  activity_id: string | null;
  engagement_id: string | null;
  multiplier: number | null;
  available_after: number;
  lifetime_after: number;
  created_at: Date;
}

const LEDGER_COLUMNS = `id, seq, participant_id, type, delta, reason, memo, source_kind, source_id, activity_id, engagement_id,
  multiplier, available_after, lifetime_after, created_at`;

export interface HistoryFilter {
  participantId: string | null;
  types: string[] | null;
  from: Date | null;
  to: Date | null;
  /** Expiry entries older than this are not returned (the 90-day window). */
  expiryVisibleFrom: Date;
  after: { createdAt: string; seq: number } | null;
  limit: number;
}

export async function history(tx: Tx, tenantId: string, f: HistoryFilter): Promise<LedgerEntryRow[]> {
  const { rows } = await tx.query<LedgerEntryRow>(
    `SELECT ${LEDGER_COLUMNS} FROM points_ledger
     WHERE tenant_id = $1
       AND ($2::text IS NULL OR participant_id = $2)
       AND ($3::text[] IS NULL OR type = ANY($3))
       AND ($4::timestamptz IS NULL OR created_at >= $4)
       AND ($5::timestamptz IS NULL OR created_at < $5)
       AND (type <> 'expiry' OR created_at >= $6)
       AND ($7::timestamptz IS NULL OR (created_at, seq) < ($7::timestamptz, $8::bigint))
     ORDER BY created_at DESC, seq DESC
     LIMIT $9`,
    [tenantId, f.participantId, f.types, f.from, f.to, f.expiryVisibleFrom, f.after?.createdAt ?? null, f.after?.seq ?? null, f.limit],
  );
  return rows;
}

/** The participant's grants (positive ledger entries) since `since`, oldest first. */
export async function awardsSince(tx: Tx, tenantId: string, participantId: string, since: Date): Promise<Array<{ amount: number; at: Date }>> {
  const { rows } = await tx.query<{ amount: number; at: Date }>(
    `SELECT delta AS amount, created_at AS at FROM points_ledger
     WHERE tenant_id = $1 AND participant_id = $2 AND created_at >= $3 AND delta > 0
     ORDER BY created_at, seq`,
    [tenantId, participantId, since],
  );
  return rows;
}

export async function transactionsPage(
  tx: Tx,
  tenantId: string,
  participantId: string,
  limit: number,
  offset: number,
): Promise<{ total: number; rows: LedgerEntryRow[] }> {
  const { rows } = await tx.query(
    `SELECT (SELECT count(*)::int FROM points_ledger WHERE tenant_id = $1 AND participant_id = $2) AS total,
            coalesce((SELECT json_agg(p ORDER BY p.created_at DESC, p.seq DESC) FROM (
              SELECT ${LEDGER_COLUMNS} FROM points_ledger WHERE tenant_id = $1 AND participant_id = $2
              ORDER BY created_at DESC, seq DESC LIMIT $3 OFFSET $4) p), '[]'::json) AS rows`,
    [tenantId, participantId, limit, offset],
  );
  return { total: rows[0].total, rows: rows[0].rows };
}

/** The participant's balance with their tier and the next tier up, for the state read (`$1` the tenant, `$2` the participant). */
export const POINTS_STATE_STATEMENT = `SELECT p.participant_id, b.available, b.lifetime, b.last_earned_at, b.tier_code,
            (SELECT currency_name FROM points_settings WHERE tenant_id = $1) AS currency_name,
            (SELECT row_to_json(t) FROM (SELECT code, name, min_lifetime_points FROM points_tiers
               WHERE tenant_id = $1 AND code = b.tier_code) t) AS tier,
            (SELECT row_to_json(t) FROM (SELECT code, name, min_lifetime_points FROM points_tiers
               WHERE tenant_id = $1 AND min_lifetime_points > coalesce(b.lifetime, 0) ORDER BY min_lifetime_points LIMIT 1) t) AS next_tier
     FROM participants p
     LEFT JOIN points_balances b ON b.tenant_id = p.tenant_id AND b.participant_id = p.participant_id
     WHERE p.tenant_id = $1 AND p.participant_id = $2`;

// ---------------------------------------------------------------------------
// Bulk grants

export interface BulkJobRow {
  id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  reason: string;
  memo: string | null;
  type: string;
  total: number;
  done: number;
  /** Items that failed (balance limit); erased participants are derived from the counts. */
  failed: number;
  /** Items neither granted nor failed yet. */
  pending: number;
  /** The first failed items by participant id. */
  failures: Array<{ participant_id: string; amount: number; reason: string }>;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

const BULK_COLUMNS = 'id, status, reason, memo, type, total, done, failed, error, created_at, started_at, finished_at';

/** The job and all its items in one statement (`unnest`). */
export async function insertBulkJob(
  tx: Tx,
  tenantId: string,
  job: { id: string; reason: string; memo: string | null; type: string; now: Date },
  participantIds: string[],
  amounts: number[],
): Promise<BulkJobRow> {
  const { rows } = await tx.query<BulkJobRow>(
    `WITH job AS (
       INSERT INTO points_bulk_grants (tenant_id, id, status, reason, memo, type, total, created_at)
       VALUES ($1, $2, 'queued', $3, $4, $5, cardinality($6::text[]), $8)
       RETURNING ${BULK_COLUMNS}
     ),
     items AS (
       INSERT INTO points_bulk_grant_items (tenant_id, job_id, participant_id, amount)
       SELECT $1, $2, p, a FROM unnest($6::text[], $7::bigint[]) AS u (p, a)
     )
     SELECT *, total AS pending, '[]'::json AS failures FROM job`,
    [tenantId, job.id, job.reason, job.memo, job.type, participantIds, amounts, job.now],
  );
  return rows[0];
}

export async function readBulkJob(tx: Tx, tenantId: string, id: string, failuresListed: number): Promise<BulkJobRow | null> {
  const { rows } = await tx.query<BulkJobRow>(
    `SELECT ${BULK_COLUMNS},
       (SELECT count(*)::int FROM points_bulk_grant_items i
        WHERE i.tenant_id = $1 AND i.job_id = $2 AND i.ledger_entry_id IS NULL AND i.failure IS NULL) AS pending,
       coalesce((SELECT json_agg(f) FROM (
         SELECT participant_id, amount, failure AS reason FROM points_bulk_grant_items i
         WHERE i.tenant_id = $1 AND i.job_id = $2 AND i.failure IS NOT NULL ORDER BY participant_id LIMIT $3) f), '[]'::json) AS failures
     FROM points_bulk_grants WHERE tenant_id = $1 AND id = $2`,
    [tenantId, id, failuresListed],
  );
  return rows[0] ?? null;
}

export async function markBulkJob(tx: Tx, tenantId: string, id: string, status: BulkJobRow['status'], now: Date, error: string | null = null): Promise<void> {
  await tx.query(
    `UPDATE points_bulk_grants SET status = $3,
       started_at = CASE WHEN $3 = 'running' THEN coalesce(started_at, $4) ELSE started_at END,
       finished_at = CASE WHEN $3 IN ('completed', 'failed') THEN $4 ELSE finished_at END,
       error = $5
     WHERE tenant_id = $1 AND id = $2`,
    [tenantId, id, status, now, error],
  );
}

export interface BulkBatch {
  participantIds: string[];
  amounts: number[];
  /** Lifetime points of the batch's participants whose lifetime is above `nearLimit` (candidates for the balance limit). */
  lifetimesNearLimit: Record<string, number>;
}

/**
 * Locks the next batch of a bulk job's pending items (SKIP LOCKED: parallel
 * batches take disjoint items), in participant order, and reads the lifetime
 * of those few participants who are close to the balance limit.
 */
export async function takeBulkBatch(tx: Tx, tenantId: string, jobId: string, limit: number, nearLimit: number): Promise<BulkBatch> {
  const { rows } = await tx.query(
    `WITH items AS MATERIALIZED (
       SELECT participant_id, amount FROM points_bulk_grant_items
       WHERE tenant_id = $1 AND job_id = $2 AND ledger_entry_id IS NULL AND failure IS NULL
       ORDER BY participant_id LIMIT $3
       FOR UPDATE SKIP LOCKED
     )
     SELECT coalesce((SELECT array_agg(participant_id ORDER BY participant_id) FROM items), '{}') AS participant_ids,
            coalesce((SELECT array_agg(amount ORDER BY participant_id) FROM items), '{}') AS amounts,
            coalesce((SELECT json_object_agg(b.participant_id, b.lifetime) FROM points_balances b
                      WHERE b.tenant_id = $1 AND b.participant_id = ANY (ARRAY(SELECT participant_id FROM items)) AND b.lifetime > $4), '{}') AS near`,
    [tenantId, jobId, limit, nearLimit],
  );
  return { participantIds: rows[0].participant_ids, amounts: rows[0].amounts.map(Number), lifetimesNearLimit: rows[0].near };
}

/**
 * Grants one batch of a bulk job in one statement, without a single join (so
 * the plan does not depend on row estimates): participants on first sight,
 * balances with tiers (in participant order, the lock order), lots, ledger
 * entries, the points.awarded.v1 and tier.changed.v1 outbox rows with their
 * pending markers, and the items marked granted or failed. The ledger entry id
 * of a participant's bulk grant is derived from the job and the participant,
 * so even a batch run twice could not write a second entry (primary key).
 */
export async function grantBulkBatch(
  tx: Tx,
  tenantId: string,
  jobId: string,
  grants: { participantIds: string[]; amounts: number[] },
  failed: { participantIds: string[]; reason: string },
  now: Date,
): Promise<number> {
  const { rows } = await tx.query(
    `WITH job AS (
       SELECT reason, memo, type FROM points_bulk_grants WHERE tenant_id = $1 AND id = $2
     ),
     settings AS (
       SELECT CASE WHEN coalesce((SELECT expiry_policy FROM points_settings WHERE tenant_id = $1), 'fifo') = 'none' THEN NULL
                   ELSE $6::timestamptz + make_interval(days => coalesce((SELECT default_ttl_days FROM points_settings WHERE tenant_id = $1), 365))
              END AS expires_at
     ),
     grants AS (
       SELECT g.participant_id, g.amount, 'ple_' || substr(md5($2 || '/' || g.participant_id), 1, 24) AS entry_id
       FROM unnest($3::text[], $4::bigint[]) AS g (participant_id, amount)
     ),
     people AS (
       INSERT INTO participants (tenant_id, participant_id) SELECT $1, participant_id FROM grants ON CONFLICT DO NOTHING
     ),
     balances AS (
       INSERT INTO points_balances AS b (tenant_id, participant_id, available, lifetime, last_earned_at, tier_code, updated_at)
       SELECT $1, g.participant_id, g.amount, g.amount, $6,
              (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= g.amount ORDER BY t.min_lifetime_points DESC LIMIT 1),
              $6
       FROM grants g ORDER BY g.participant_id
       ON CONFLICT (tenant_id, participant_id) DO UPDATE
         SET available = b.available + EXCLUDED.available,
             lifetime = b.lifetime + EXCLUDED.lifetime,
             last_earned_at = EXCLUDED.last_earned_at,
             updated_at = EXCLUDED.updated_at,
             tier_code_before = b.tier_code,
             tier_code = (SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 AND t.min_lifetime_points <= b.lifetime + EXCLUDED.lifetime
                          ORDER BY t.min_lifetime_points DESC LIMIT 1)
       RETURNING b.participant_id, b.available, b.lifetime, (SELECT g.amount FROM grants g WHERE g.participant_id = b.participant_id) AS amount,
                 b.tier_code_before AS previous_tier, b.tier_code AS tier,
                 'ple_' || substr(md5($2 || '/' || b.participant_id), 1, 24) AS entry_id
     ),
     lots AS (
       INSERT INTO points_lots (tenant_id, participant_id, amount, remaining, ledger_entry_id, created_at, expires_at)
       SELECT $1, g.participant_id, g.amount, g.amount, g.entry_id, $6, s.expires_at FROM grants g, settings s
     ),
     entries AS (
       INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, memo, source_kind, source_id,
                                  available_after, lifetime_after, created_at)
       SELECT $1, b.participant_id, b.entry_id, j.type, b.amount, j.reason, j.memo, 'bulk', $2, b.available, b.lifetime, $6
       FROM balances b, job j
     ),
     events AS (
       INSERT INTO outbox_events (tenant_id, id, event, participant_id, engagement_id, data, created_at, traceparent)
       SELECT $1, 'evt_' || replace(gen_random_uuid()::text, '-', ''), e.event, b.participant_id, NULL, e.data, $6, $8::text
       FROM balances b, job j, settings s,
            LATERAL (VALUES
              ('points.awarded.v1', jsonb_build_object(
                 'participant_id', b.participant_id, 'amount', b.amount, 'available', b.available, 'lifetime', b.lifetime,
                 'reason', j.reason, 'ledger_entry_id', b.entry_id, 'source_kind', 'bulk', 'source_id', $2::text,
                 'multiplier', NULL, 'type', j.type, 'activity_id', NULL, 'expires_at', points_iso(s.expires_at))),
              ('tier.changed.v1', jsonb_build_object(
                 'participant_id', b.participant_id, 'previous_tier', b.previous_tier, 'tier', b.tier, 'lifetime', b.lifetime))
            ) AS e (event, data)
       WHERE e.event = 'points.awarded.v1' OR (b.tier IS NOT NULL AND b.tier IS DISTINCT FROM b.previous_tier)
       RETURNING id
     ),
     pending AS (
       INSERT INTO outbox_pending (tenant_id, event_id) SELECT $1, id FROM events
     ),
     granted AS (
       UPDATE points_bulk_grant_items it SET ledger_entry_id = 'ple_' || substr(md5($2 || '/' || it.participant_id), 1, 24)
       WHERE it.tenant_id = $1 AND it.job_id = $2 AND it.participant_id = ANY ($3::text[])
     ),
     refused AS (
       UPDATE points_bulk_grant_items it SET failure = $7
       WHERE it.tenant_id = $1 AND it.job_id = $2 AND it.participant_id = ANY ($5::text[])
     )
     SELECT count(*)::int AS granted FROM balances`,
    [tenantId, jobId, grants.participantIds, grants.amounts, failed.participantIds, now, failed.reason, currentTraceparent()],
  );
  return rows[0].granted;
}

/** Adds a batch's outcome to the job's counters: its own statement at the end of the batch, so parallel batches wait on the job row only briefly. */
export async function countBulkProgress(tx: Tx, tenantId: string, jobId: string, done: number, failed: number): Promise<void> {
  await tx.query('UPDATE points_bulk_grants SET done = done + $3, failed = failed + $4 WHERE tenant_id = $1 AND id = $2', [tenantId, jobId, done, failed]);
}

// ---------------------------------------------------------------------------
// Direct grant and deduct in one round trip (SQL functions of migration 0102, last defined in 0105 and 0104)

export interface DirectValues {
  key: string;
  fingerprint: string;
  now: Date;
  keyExpires: Date;
  participantId: string;
  amount: number;
  entryId: string;
  type: string;
  reason: string;
  memo: string | null;
  eventId: string;
  /** Used only when the grant changes the participant's tier. */
  tierEventId: string;
}

export interface DirectOutcome {
  outcome: 'applied' | 'duplicate' | 'reused' | 'in_progress';
  response: Record<string, unknown> | null;
}

/**
 * Calls `points_direct_grant` or `points_direct_deduct` as ONE statement on
 * the application pool, outside BEGIN/COMMIT: the statement is its own
 * transaction, and the function sets the tenant for it (row-level security
 * applies as in `db.tenant`). Claim, ledger change, outbox row and stored
 * response commit together, in one round trip instead of six.
 *
 * While a traced request calls it, the call runs in a transaction that first
 * sets `app.traceparent`: the outbox rows the function writes take it as their
 * column default (migration 1310), so the webhook jobs link to the request.
 * Three round trips then, only while tracing is on.
 */
export async function directOperation(db: Database, operation: 'grant' | 'deduct', tenantId: string, v: DirectValues): Promise<DirectOutcome> {
  const common = [tenantId, v.key, v.fingerprint, v.now, v.keyExpires, v.participantId, v.amount, v.entryId, v.type, v.reason, v.memo, v.eventId];
  const [text, values] =
    operation === 'grant'
      ? ['SELECT outcome, response FROM points_direct_grant($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)', [...common, v.tierEventId]]
      : ['SELECT outcome, response FROM points_direct_deduct($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)', common];
  const traceparent = currentTraceparent();
  if (traceparent === null) return (await db.app.query<DirectOutcome>(text, values)).rows[0];
  return db.tenantStartingWith(tenantId, "SELECT set_config('app.traceparent', $1, true)", [traceparent], async (tx) => (await tx.query<DirectOutcome>(text, values)).rows[0]);
}
