import type { Tx } from '../../platform/db.js';

/** The statements on destinations, and on the tenant's webhook settings. */

export interface DestinationRow {
  tenant_id: string;
  id: string;
  name: string;
  /** A free note (migration 1405). */
  description: string | null;
  url: string;
  events: string[];
  engagement_id: string | null;
  custom_headers: Record<string, string>;
  retry_count: number;
  timeout_seconds: number;
  active: boolean;
  /** A sandbox tenant's opt-in to a receiver on the private network (migration 0205). */
  allow_private_network: boolean;
  secret: string;
  created_at: Date;
  updated_at: Date;
}

export async function insertDestination(tx: Tx, row: DestinationRow): Promise<DestinationRow> {
  const { rows } = await tx.query<DestinationRow>(
    `INSERT INTO webhook_destinations (tenant_id, id, name, url, events, engagement_id, custom_headers, retry_count, timeout_seconds, active, secret, created_at, updated_at, allow_private_network, description)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13, $14)
     RETURNING *`,
    [
      row.tenant_id, row.id, row.name, row.url, row.events, row.engagement_id, JSON.stringify(row.custom_headers), row.retry_count, row.timeout_seconds, row.active, row.secret, row.created_at,
      row.allow_private_network, row.description,
    ],
  );
  return rows[0];
}

export async function findDestination(tx: Tx, tenantId: string, id: string, lock = false): Promise<DestinationRow | null> {
  const { rows } = await tx.query<DestinationRow>(
    `SELECT * FROM webhook_destinations WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`,
    [tenantId, id],
  );
  return rows[0] ?? null;
}

export async function listDestinations(tx: Tx, tenantId: string, limit: number, after: { created_at: string; id: string } | null): Promise<DestinationRow[]> {
  const { rows } = await tx.query<DestinationRow>(
    `SELECT * FROM webhook_destinations
     WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) > ($2::timestamptz, $3::text))
     ORDER BY created_at, id
     LIMIT $4`,
    [tenantId, after?.created_at ?? null, after?.id ?? null, limit],
  );
  return rows;
}

export async function updateDestination(
  tx: Tx,
  tenantId: string,
  id: string,
  /** `description: null` clears it; undefined leaves every field as it is. */
  patch: { url?: string; events?: string[]; description?: string | null; retry_count?: number; timeout_seconds?: number; active?: boolean; allow_private_network?: boolean },
  now: Date,
): Promise<DestinationRow | null> {
  const { rows } = await tx.query<DestinationRow>(
    `UPDATE webhook_destinations SET
       url = COALESCE($3, url),
       events = COALESCE($4, events),
       retry_count = COALESCE($5, retry_count),
       timeout_seconds = COALESCE($6, timeout_seconds),
       active = COALESCE($7, active),
       allow_private_network = COALESCE($9, allow_private_network),
       description = CASE WHEN $10::boolean THEN $11::text ELSE description END,
       updated_at = $8
     WHERE tenant_id = $1 AND id = $2
     RETURNING *`,
    [tenantId, id, patch.url ?? null, patch.events ?? null, patch.retry_count ?? null, patch.timeout_seconds ?? null, patch.active ?? null, now, patch.allow_private_network ?? null,
     patch.description !== undefined, patch.description ?? null],
  );
  return rows[0] ?? null;
}

export async function deleteDestination(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM webhook_destinations WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  return rowCount === 1;
}

// ---- tenant settings (migration 0205) --------------------------------------------

export interface SettingsRow {
  backoff_scale: number;
  updated_at: Date | null;
}

/** The tenant's webhook settings; the defaults when it never changed them. */
export async function readSettings(tx: Tx, tenantId: string): Promise<SettingsRow> {
  const { rows } = await tx.query<SettingsRow>('SELECT backoff_scale, updated_at FROM webhook_settings WHERE tenant_id = $1', [tenantId]);
  return rows[0] ?? { backoff_scale: 1, updated_at: null };
}

/** The factor on the retry schedule: 1 unless the (sandbox) tenant set another. */
export async function backoffScale(tx: Tx, tenantId: string): Promise<number> {
  return (await readSettings(tx, tenantId)).backoff_scale;
}

export async function upsertSettings(tx: Tx, tenantId: string, backoffScaleValue: number, now: Date): Promise<SettingsRow> {
  const { rows } = await tx.query<SettingsRow>(
    `INSERT INTO webhook_settings (tenant_id, backoff_scale, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (tenant_id) DO UPDATE SET backoff_scale = EXCLUDED.backoff_scale, updated_at = EXCLUDED.updated_at
     RETURNING backoff_scale, updated_at`,
    [tenantId, backoffScaleValue, now],
  );
  return rows[0];
}
