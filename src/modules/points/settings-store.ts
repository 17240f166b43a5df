import type { Tx } from '../../platform/db.js';

/** The statements on the tenant's points settings, and their defaults. */

export type ExpiryPolicy = 'fifo' | 'lifo' | 'none';

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
     VALUES ($1, coalesce($2, $7::text), coalesce($3, $8::int), coalesce($4::int[], $9::int[]), coalesce($5, $10::text), $6)
     ON CONFLICT (tenant_id) DO UPDATE SET
       expiry_policy = coalesce($2, s.expiry_policy),
       default_ttl_days = coalesce($3, s.default_ttl_days),
       reminder_days = coalesce($4::int[], s.reminder_days),
       currency_name = coalesce($5, s.currency_name),
       updated_at = $6
     RETURNING expiry_policy, default_ttl_days, reminder_days, currency_name, updated_at`,
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
    ],
  );
  return rows[0];
}
