import type { Database, Tx } from '../../platform/db.js';
import type { Plan } from '../../platform/plans.js';
import type { TenantEnvironment } from '../../platform/environments.js';
import { LIMIT_COLUMNS, type LimitRow } from '../../platform/tenant-limits.js';
import { daysBefore, deleteBatch, type RetentionRule } from '../../platform/retention.js';
import { WAITING_COUNTED_MAX, type ApiKeyRecord } from './schemas.js';

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

/** Writes the settings given (null keeps the stored value); false when the tenant is not there. */
export async function updateTenantSettings(
  tx: Tx,
  tenantId: string,
  changes: { timezone: string | null; currency: string | null; locale: string | null; requireFourEyes: boolean | null },
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE tenants SET timezone = COALESCE($2::text, timezone), currency = COALESCE($3::text, currency), locale = COALESCE($4::text, locale),
       require_four_eyes = COALESCE($5::boolean, require_four_eyes)
     WHERE id = $1`,
    [tenantId, changes.timezone, changes.currency, changes.locale, changes.requireFourEyes],
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
  const rows = await db.tenantRead<
    LimitRow & {
      id: string;
      slug: string;
      name: string;
      timezone: string;
      currency: string;
      locale: string;
      require_four_eyes: boolean;
      environment: TenantEnvironment;
    }
  >(tenantId, `SELECT id, slug, name, timezone, currency, locale, require_four_eyes, environment, ${LIMIT_COLUMNS} FROM tenants WHERE id = $1`, [tenantId]);
  return rows[0] ?? null;
}

/** The tenant's plan and overrides, locked until the transaction ends (the operator's change). */
export async function lockTenantLimits(tx: Tx, tenantId: string): Promise<LimitRow | null> {
  const { rows } = await tx.query<LimitRow>(`SELECT ${LIMIT_COLUMNS} FROM tenants WHERE id = $1 FOR UPDATE`, [tenantId]);
  return rows[0] ?? null;
}

/** The columns the operator's change may write, by the name the API gives them. */
const LIMIT_COLUMN_OF = {
  plan: 'plan',
  requests_per_minute: 'rate_limit_per_minute',
  event_ingestion_per_day: 'event_ingestion_per_day',
  api_keys: 'api_keys_max',
  concurrent_engagements: 'concurrent_engagements_max',
  participants_per_month: 'participants_per_month',
  headless_sdk: 'headless_sdk',
} as const;
export type LimitChanges = Partial<{ [K in keyof typeof LIMIT_COLUMN_OF]: K extends 'plan' ? Plan : K extends 'headless_sdk' ? boolean | null : number | null }>;

/** Writes the plan and the overrides given (null clears an override); the others keep their value. */
export async function updateTenantLimits(tx: Tx, tenantId: string, changes: LimitChanges): Promise<LimitRow> {
  const names = (Object.keys(changes) as Array<keyof LimitChanges>).filter((name) => name in LIMIT_COLUMN_OF);
  const assignments = names.map((name, i) => `${LIMIT_COLUMN_OF[name]} = $${i + 2}`);
  const { rows } = await tx.query<LimitRow>(`UPDATE tenants SET ${assignments.join(', ')} WHERE id = $1 RETURNING ${LIMIT_COLUMNS}`, [
    tenantId,
    ...names.map((name) => changes[name]),
  ]);
  return rows[0];
}

/** The live tenant's plan, given to its sandbox (if it has one): a sandbox tries what its live tenant's plan allows. */
export async function followPlanInSandbox(tx: Tx, liveTenantId: string, plan: Plan): Promise<void> {
  await tx.query('UPDATE tenants SET plan = $2 WHERE live_tenant_id = $1', [liveTenantId, plan]);
}

/**
 * An audit row for a change made outside the credentialed routes (the
 * operator's), written in the change's own transaction so that the change and
 * its record commit together.
 */
export async function insertAuditEntry(
  tx: Tx,
  tenantId: string,
  entry: { at: Date; actorId: string; actorLabel: string; action: string; method: string; route: string; resourceType: string; resourceId: string; before: unknown; after: unknown; details: unknown; requestId: string },
): Promise<void> {
  await tx.query(
    `INSERT INTO audit_log (tenant_id, occurred_at, actor_type, actor_id, actor_label, action, method, route, resource_type, resource_id, status, before, after, details, request_id)
     VALUES ($1, $13, 'system', $2, $3, $4, $5, $6, $7, $8, 200, $9, $10, $11, $12)`,
    [
      tenantId,
      entry.actorId,
      entry.actorLabel,
      entry.action,
      entry.method,
      entry.route,
      entry.resourceType,
      entry.resourceId,
      JSON.stringify(entry.before),
      JSON.stringify(entry.after),
      JSON.stringify(entry.details),
      entry.requestId,
      entry.at,
    ],
  );
}

/** The counts behind the tenant's usage read, in one statement; `events_waiting` stops at WAITING_COUNTED_MAX + 1. */
export async function readUsage(db: Database, tenantId: string, day: string, monthStart: Date) {
  const rows = await db.tenantRead<
    LimitRow & {
    events_today: number;
    participants_this_month: number;
    api_keys: number;
    published_engagements: number;
    events_waiting: number;
    oldest_waiting_received_at: Date | null;
  }
  >(
    tenantId,
    `SELECT t.plan, t.rate_limit_per_minute, t.event_ingestion_per_day, t.api_keys_max, t.concurrent_engagements_max, t.participants_per_month, t.headless_sdk,
            COALESCE((SELECT events FROM ingestion_usage u WHERE u.tenant_id = t.id AND u.day = $2::date), 0) AS events_today,
            (SELECT count(*) FROM participants p WHERE p.tenant_id = t.id AND p.created_at >= $3::timestamptz)::int AS participants_this_month,
            (SELECT count(*) FROM api_keys k WHERE k.tenant_id = t.id AND k.revoked_at IS NULL)::int AS api_keys,
            (SELECT count(*) FROM engagements e WHERE e.tenant_id = t.id AND e.status = 'published')::int AS published_engagements,
            (SELECT count(*) FROM (SELECT FROM ingestion_pending ip WHERE ip.tenant_id = t.id LIMIT ${WAITING_COUNTED_MAX + 1}) w)::int AS events_waiting,
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
