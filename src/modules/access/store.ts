import type { Database, Tx } from '../../platform/db.js';
import type { Plan } from '../../platform/plans.js';
import type { TenantEnvironment } from '../../platform/environments.js';
import { daysBefore, deleteBatch, type RetentionRule } from '../../platform/retention.js';
import type { ApiKeyRecord } from './schemas.js';

const KEY_COLUMNS = 'id, name, environment, prefix, scopes, rate_limit_per_minute, created_at, updated_at, last_used_at, revoked_at';

function toRecord(row: Record<string, unknown>): ApiKeyRecord {
  const iso = (value: unknown) => (value === null ? null : (value as Date).toISOString());
  return {
    id: row.id as string,
    name: row.name as string,
    environment: row.environment as 'live' | 'test',
    prefix: row.prefix as string,
    scopes: row.scopes as ApiKeyRecord['scopes'],
    rate_limit_per_minute: row.rate_limit_per_minute as number | null,
    created_at: (row.created_at as Date).toISOString(),
    updated_at: (row.updated_at as Date).toISOString(),
    last_used_at: iso(row.last_used_at),
    revoked_at: iso(row.revoked_at),
  };
}

export async function insertApiKey(
  tx: Tx,
  tenantId: string,
  key: { id: string; name: string; environment: string; prefix: string; hash: string; scopes: string[]; rateLimitPerMinute: number | null },
): Promise<ApiKeyRecord> {
  const { rows } = await tx.query(
    `INSERT INTO api_keys (tenant_id, id, name, environment, prefix, key_hash, scopes, rate_limit_per_minute)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${KEY_COLUMNS}`,
    [tenantId, key.id, key.name, key.environment, key.prefix, key.hash, key.scopes, key.rateLimitPerMinute],
  );
  return toRecord(rows[0]);
}

/** Counts the keys that are not revoked, under a lock on the tenant row so that concurrent creations cannot pass the quota together. */
export async function countActiveKeysLocked(tx: Tx, tenantId: string): Promise<number> {
  await tx.query('SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE', [tenantId]);
  const { rows } = await tx.query('SELECT count(*)::int AS n FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL', [tenantId]);
  return rows[0].n as number;
}

export async function listApiKeys(tx: Tx, tenantId: string, includeRevoked: boolean, after: { created_at: string; id: string } | null, limit: number) {
  const { rows } = await tx.query(
    `SELECT ${KEY_COLUMNS} FROM api_keys
     WHERE tenant_id = $1 AND ($2 OR revoked_at IS NULL)
       AND ($3::timestamptz IS NULL OR (created_at, id) > ($3::timestamptz, $4::uuid))
     ORDER BY created_at, id LIMIT $5`,
    [tenantId, includeRevoked, after?.created_at ?? null, after?.id ?? null, limit + 1],
  );
  return rows.map(toRecord);
}

export async function updateApiKey(
  tx: Tx,
  tenantId: string,
  id: string,
  changes: { name?: string; scopes?: string[]; rateLimitPerMinute?: number | null },
): Promise<ApiKeyRecord | null> {
  const { rows } = await tx.query(
    `UPDATE api_keys SET
       name = COALESCE($3, name),
       scopes = COALESCE($4, scopes),
       rate_limit_per_minute = CASE WHEN $5 THEN $6::int ELSE rate_limit_per_minute END,
       updated_at = now()
     WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL
     RETURNING ${KEY_COLUMNS}`,
    [tenantId, id, changes.name ?? null, changes.scopes ?? null, changes.rateLimitPerMinute !== undefined, changes.rateLimitPerMinute ?? null],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function revokeApiKey(tx: Tx, tenantId: string, id: string): Promise<ApiKeyRecord | null> {
  const { rows } = await tx.query(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()), updated_at = now()
     WHERE tenant_id = $1 AND id = $2 RETURNING ${KEY_COLUMNS}`,
    [tenantId, id],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

export async function insertSession(
  tx: Tx,
  tenantId: string,
  session: { id: string; tokenHash: string; participantId: string; engagementId: string; expiresAt: Date },
): Promise<void> {
  await tx.query(
    `INSERT INTO sessions (tenant_id, id, token_hash, participant_id, engagement_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [tenantId, session.id, session.tokenHash, session.participantId, session.engagementId, session.expiresAt],
  );
}

export async function readTenant(tx: Tx, tenantId: string) {
  const { rows } = await tx.query('SELECT id, slug, name, plan, rate_limit_per_minute, timezone FROM tenants WHERE id = $1', [tenantId]);
  return rows[0] ?? null;
}

/** Writes the settings given (null keeps the stored value); false when the tenant is not there. */
export async function updateTenantSettings(tx: Tx, tenantId: string, changes: { timezone: string | null; currency: string | null; locale: string | null }): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE tenants SET timezone = COALESCE($2::text, timezone), currency = COALESCE($3::text, currency), locale = COALESCE($4::text, locale)
     WHERE id = $1`,
    [tenantId, changes.timezone, changes.currency, changes.locale],
  );
  return rowCount === 1;
}

/** Whether PostgreSQL knows the time zone: the calendar-day arithmetic runs there (`AT TIME ZONE`). */
export async function timeZoneKnown(tx: Tx, name: string): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM pg_timezone_names WHERE name = $1', [name]);
  return (rowCount ?? 0) > 0;
}

/** Replaces a key's secret: the old one stops matching the moment this commits. */
export async function rotateApiKey(tx: Tx, tenantId: string, id: string, secret: { prefix: string; hash: string }): Promise<ApiKeyRecord | null> {
  const { rows } = await tx.query(
    `UPDATE api_keys SET prefix = $3, key_hash = $4, updated_at = now()
     WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL
     RETURNING ${KEY_COLUMNS}`,
    [tenantId, id, secret.prefix, secret.hash],
  );
  return rows[0] ? toRecord(rows[0]) : null;
}

/** The same read in one round trip, for the hot path. */
export async function readTenantOnce(db: Database, tenantId: string) {
  const rows = await db.tenantRead<{
    id: string;
    slug: string;
    name: string;
    plan: Plan;
    rate_limit_per_minute: number | null;
    event_ingestion_per_day: number | null;
    timezone: string;
    currency: string;
    locale: string;
    environment: TenantEnvironment;
  }>(
    tenantId,
    'SELECT id, slug, name, plan, rate_limit_per_minute, event_ingestion_per_day, timezone, currency, locale, environment FROM tenants WHERE id = $1',
    [tenantId],
  );
  return rows[0] ?? null;
}

/** The counts behind the tenant's usage read, in one statement. */
export async function readUsage(db: Database, tenantId: string, day: string, monthStart: Date) {
  const rows = await db.tenantRead<{
    plan: Plan;
    event_ingestion_per_day: number | null;
    events_today: number;
    participants_this_month: number;
    api_keys: number;
    published_engagements: number;
    events_waiting: number;
    oldest_waiting_received_at: Date | null;
  }>(
    tenantId,
    `SELECT t.plan, t.event_ingestion_per_day,
            COALESCE((SELECT events FROM ingestion_usage u WHERE u.tenant_id = t.id AND u.day = $2::date), 0) AS events_today,
            (SELECT count(*) FROM participants p WHERE p.tenant_id = t.id AND p.created_at >= $3::timestamptz)::int AS participants_this_month,
            (SELECT count(*) FROM api_keys k WHERE k.tenant_id = t.id AND k.revoked_at IS NULL)::int AS api_keys,
            (SELECT count(*) FROM engagements e WHERE e.tenant_id = t.id AND e.status = 'published')::int AS published_engagements,
            (SELECT count(*) FROM ingestion_pending ip WHERE ip.tenant_id = t.id)::int AS events_waiting,
            (SELECT e.received_at FROM ingestion_pending ip JOIN ingested_events e ON e.tenant_id = ip.tenant_id AND e.event_id = ip.event_id
             WHERE ip.tenant_id = t.id ORDER BY ip.seq LIMIT 1) AS oldest_waiting_received_at
       FROM tenants t WHERE t.id = $1`,
    [tenantId, day, monthStart],
  );
  return rows[0] ?? null;
}

/** Participant sessions SESSION_RETENTION_DAYS after they expired (a revoked session expires within its TTL too). */
export const retention: RetentionRule[] = [
  {
    name: 'participant sessions',
    purge: (client, limit, now, config) => deleteBatch(client, 'sessions', 'expires_at < $2', [daysBefore(now, config.sessionRetentionDays)], limit),
  },
];
