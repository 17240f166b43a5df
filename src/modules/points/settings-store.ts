import type { Tx } from '../../platform/db.js';

/** The statements on the tenant's points settings, and their defaults. */

export type ExpiryPolicy = 'fifo' | 'lifo' | 'none';

export interface SettingsRow {
  expiry_policy: ExpiryPolicy;
  default_ttl_days: number;
  reminder_days: number[];
  currency_name: string;
  /** Money per point in the tenant's currency; null when not set. */
  point_value: number | null;
  updated_at: Date | null;
}

export const DEFAULT_SETTINGS: SettingsRow = {
  expiry_policy: 'fifo',
  default_ttl_days: 365,
  reminder_days: [60, 30, 7, 1],
  currency_name: 'points',
  point_value: null,
  updated_at: null,
};

/** numeric comes back from pg as text: the value is read as a number (six decimals fit a double exactly enough for money per point). */
const COLUMNS = 'expiry_policy, default_ttl_days, reminder_days, currency_name, point_value::float8 AS point_value, updated_at';

export async function readSettings(tx: Tx, tenantId: string): Promise<SettingsRow> {
  const { rows } = await tx.query<SettingsRow>(
    `SELECT ${COLUMNS} FROM points_settings WHERE tenant_id = $1`,
    [tenantId],
  );
  return rows[0] ?? DEFAULT_SETTINGS;
}

/** `point_value` is set when the patch has the key (null clears it); the other fields when they are given. */
export async function upsertSettings(tx: Tx, tenantId: string, patch: Partial<Omit<SettingsRow, 'updated_at'>>, now: Date): Promise<SettingsRow> {
  const setsPointValue = Object.prototype.hasOwnProperty.call(patch, 'point_value');
  const { rows } = await tx.query<SettingsRow>(
    `INSERT INTO points_settings AS s (tenant_id, expiry_policy, default_ttl_days, reminder_days, currency_name, point_value, updated_at)
     VALUES ($1, coalesce($2, $7::text), coalesce($3, $8::int), coalesce($4::int[], $9::int[]), coalesce($5, $10::text), $12::numeric, $6)
     ON CONFLICT (tenant_id) DO UPDATE SET
       expiry_policy = coalesce($2, s.expiry_policy),
       default_ttl_days = coalesce($3, s.default_ttl_days),
       reminder_days = coalesce($4::int[], s.reminder_days),
       currency_name = coalesce($5, s.currency_name),
       point_value = CASE WHEN $11::boolean THEN $12::numeric ELSE s.point_value END,
       updated_at = $6
     RETURNING ${COLUMNS}`,
    [
      tenantId,
      patch.expiry_policy ?? null,
      patch.default_ttl_days ?? null,
      patch.reminder_days ?? null,
      patch.currency_name ?? null,
      now,
      // A tenant's first change keeps the defaults of what it does not set.
      DEFAULT_SETTINGS.expiry_policy,
      DEFAULT_SETTINGS.default_ttl_days,
      DEFAULT_SETTINGS.reminder_days,
      DEFAULT_SETTINGS.currency_name,
      setsPointValue,
      patch.point_value ?? null,
    ],
  );
  return rows[0];
}
