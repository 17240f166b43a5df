import type pg from 'pg';
import type { Tx } from '../../platform/db.js';

/** Every SQL statement on the referral tables. */
export interface CodeRow {
  code: string;
  participant_id: string;
  campaign_id: string;
  email_hash: string | null;
  device_hash: string | null;
  ip_address: string | null;
  created_at: Date;
}

/** Inserts the code unless the participant already has one for the campaign (or the code is taken); returns the row now stored for them. */
export async function insertOrFindCode(
  tx: Tx,
  tenantId: string,
  input: { code: string; participantId: string; campaignId: string; emailHash: string | null; deviceHash: string | null; ip: string | null; now: Date },
): Promise<{ row: CodeRow | null; created: boolean }> {
  const { rows } = await tx.query(
    `WITH inserted AS (
       INSERT INTO referral_codes (tenant_id, code, participant_id, campaign_id, email_hash, device_hash, ip_address, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT DO NOTHING
       RETURNING code, participant_id, campaign_id, email_hash, device_hash, host(ip_address) AS ip_address, created_at, true AS created
     )
     SELECT * FROM inserted
     UNION ALL
     SELECT code, participant_id, campaign_id, email_hash, device_hash, host(ip_address) AS ip_address, created_at, false
     FROM referral_codes WHERE tenant_id = $1 AND participant_id = $3 AND campaign_id = $4 AND NOT EXISTS (SELECT 1 FROM inserted)`,
    [tenantId, input.code, input.participantId, input.campaignId, input.emailHash, input.deviceHash, input.ip, input.now],
  );
  if (!rows[0]) return { row: null, created: false };
  const { created, ...row } = rows[0];
  return { row, created };
}

/** Signals of the referrer given on a later generate call fill in the ones still unknown. */
export async function fillCodeSignals(tx: Tx, tenantId: string, code: string, emailHash: string | null, deviceHash: string | null, ip: string | null): Promise<void> {
  if (!emailHash && !deviceHash && !ip) return;
  await tx.query(
    `UPDATE referral_codes SET email_hash = coalesce(email_hash, $3), device_hash = coalesce(device_hash, $4), ip_address = coalesce(ip_address, $5::inet)
     WHERE tenant_id = $1 AND code = $2`,
    [tenantId, code, emailHash, deviceHash, ip],
  );
}

/** The tenant whose code this is, looked up before any tenant is known. */
export async function codeTenants(pool: pg.Pool, code: string): Promise<string[]> {
  const { rows } = await pool.query('SELECT tenant_id FROM referral_find_code_tenant($1)', [code]);
  return rows.map((r) => r.tenant_id as string);
}

export async function findCode(tx: Tx, tenantId: string, code: string, lock = false): Promise<CodeRow | null> {
  const { rows } = await tx.query(
    `SELECT code, participant_id, campaign_id, email_hash, device_hash, host(ip_address) AS ip_address, created_at
     FROM referral_codes WHERE tenant_id = $1 AND code = $2${lock ? ' FOR UPDATE' : ''}`,
    [tenantId, code],
  );
  return rows[0] ?? null;
}

export interface SettingsRow {
  velocity_per_hour: number;
  velocity_per_day: number;
  review_same_device: boolean;
  review_same_ip: boolean;
  milestones: Array<{ conversions: number; badge_code?: string; points?: number }>;
}

export async function readSettings(tx: Tx, tenantId: string): Promise<SettingsRow | null> {
  const { rows } = await tx.query(
    'SELECT velocity_per_hour, velocity_per_day, review_same_device, review_same_ip, milestones FROM referral_settings WHERE tenant_id = $1',
    [tenantId],
  );
  return rows[0] ?? null;
}

export async function writeSettings(tx: Tx, tenantId: string, s: SettingsRow, now: Date): Promise<void> {
  await tx.query(
    `INSERT INTO referral_settings (tenant_id, velocity_per_hour, velocity_per_day, review_same_device, review_same_ip, milestones, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (tenant_id) DO UPDATE SET velocity_per_hour = $2, velocity_per_day = $3, review_same_device = $4, review_same_ip = $5, milestones = $6, updated_at = $7`,
    [tenantId, s.velocity_per_hour, s.velocity_per_day, s.review_same_device, s.review_same_ip, JSON.stringify(s.milestones), now],
  );
}

/** Conversions of the referrer that count or wait (not rejected) since each moment. */
export async function recentConversions(tx: Tx, tenantId: string, referrerId: string, hourAgo: Date, dayAgo: Date) {
  const { rows } = await tx.query(
    `SELECT count(*) FILTER (WHERE created_at > $3)::int AS last_hour, count(*)::int AS last_day
     FROM referral_conversions
     WHERE tenant_id = $1 AND referrer_id = $2 AND status <> 'rejected' AND created_at > $4`,
    [tenantId, referrerId, hourAgo, dayAgo],
  );
  return rows[0] as { last_hour: number; last_day: number };
}

/** Which earlier conversions the referred person already has (by session, participant or email). */
export async function earlierConversion(tx: Tx, tenantId: string, sessionId: string, participantId: string | null, emailHash: string | null) {
  const { rows } = await tx.query(
    `SELECT CASE WHEN referred_session_id = $2 THEN 'session' WHEN referred_participant_id = $3 THEN 'participant' ELSE 'email' END AS matched
     FROM referral_conversions
     WHERE tenant_id = $1 AND (referred_session_id = $2
       OR (status <> 'rejected' AND ((referred_participant_id = $3) OR (email_hash = $4))))
     LIMIT 1`,
    [tenantId, sessionId, participantId, emailHash],
  );
  return (rows[0]?.matched as 'session' | 'participant' | 'email' | undefined) ?? null;
}

export interface NewConversion {
  id: string;
  code: string;
  referrerId: string;
  campaignId: string;
  sessionId: string;
  participantId: string | null;
  emailHash: string | null;
  deviceHash: string | null;
  ip: string | null;
  status: 'converted' | 'pending_review';
  signals: Array<{ signal: string; observed: unknown; threshold: unknown }>;
  now: Date;
}

export async function insertConversion(tx: Tx, tenantId: string, c: NewConversion): Promise<void> {
  await tx.query(
    `INSERT INTO referral_conversions (tenant_id, id, code, referrer_id, campaign_id, referred_session_id, referred_participant_id,
       email_hash, device_hash, ip_address, status, signals, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
    [tenantId, c.id, c.code, c.referrerId, c.campaignId, c.sessionId, c.participantId, c.emailHash, c.deviceHash, c.ip, c.status, JSON.stringify(c.signals), c.now],
  );
}

const CONVERSION_COLUMNS = `id AS conversion_id, code, referrer_id, campaign_id, referred_session_id, referred_participant_id, status, signals,
  created_at, decided_at, decided_by, decision_note`;

export async function findConversion(tx: Tx, tenantId: string, id: string, lock = false) {
  const { rows } = await tx.query(`SELECT ${CONVERSION_COLUMNS} FROM referral_conversions WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [tenantId, id]);
  return rows[0] ?? null;
}

export async function decideConversion(tx: Tx, tenantId: string, id: string, status: 'converted' | 'rejected', by: string, note: string | null, now: Date): Promise<void> {
  await tx.query(
    `UPDATE referral_conversions SET status = $3, decided_at = $4, decided_by = $5, decision_note = $6 WHERE tenant_id = $1 AND id = $2`,
    [tenantId, id, status, now, by, note],
  );
}

export async function listConversions(tx: Tx, tenantId: string, options: { status?: string; after: { created_at: string; id: string } | null; limit: number }) {
  const { rows } = await tx.query(
    `SELECT ${CONVERSION_COLUMNS} FROM referral_conversions
     WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2)
       AND ($3::timestamptz IS NULL OR (created_at, id) < ($3::timestamptz, $4::uuid))
     ORDER BY created_at DESC, id DESC LIMIT $5`,
    [tenantId, options.status ?? null, options.after?.created_at ?? null, options.after?.id ?? null, options.limit],
  );
  return rows;
}

export async function countConverted(tx: Tx, tenantId: string, referrerId: string): Promise<number> {
  const { rows } = await tx.query(`SELECT count(*)::int AS n FROM referral_conversions WHERE tenant_id = $1 AND referrer_id = $2 AND status = 'converted'`, [tenantId, referrerId]);
  return rows[0].n;
}

/** Records the milestones newly reached; returns the conversion counts granted now (each at most once per participant). */
export async function claimMilestones(tx: Tx, tenantId: string, participantId: string, counts: number[], conversionId: string, now: Date): Promise<Set<number>> {
  if (counts.length === 0) return new Set();
  const { rows } = await tx.query(
    `INSERT INTO referral_milestone_grants (tenant_id, participant_id, conversions, granted_at, conversion_id)
     SELECT $1, $2, unnest($3::int[]), $4, $5
     ON CONFLICT DO NOTHING RETURNING conversions`,
    [tenantId, participantId, counts, now, conversionId],
  );
  return new Set(rows.map((r) => r.conversions as number));
}

export async function stats(tx: Tx, tenantId: string, participantId: string) {
  const { rows } = await tx.query(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'converted')::int AS converted,
            count(*) FILTER (WHERE status = 'pending_review')::int AS pending,
            count(*) FILTER (WHERE status = 'rejected')::int AS rejected
     FROM referral_conversions WHERE tenant_id = $1 AND referrer_id = $2`,
    [tenantId, participantId],
  );
  const codes = await tx.query(
    `SELECT code, campaign_id, created_at FROM referral_codes WHERE tenant_id = $1 AND participant_id = $2 ORDER BY created_at DESC, code LIMIT 100`,
    [tenantId, participantId],
  );
  return { counts: rows[0] as { total: number; converted: number; pending: number; rejected: number }, codes: codes.rows as Array<{ code: string; campaign_id: string; created_at: Date }> };
}
