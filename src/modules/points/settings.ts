import type { Database } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { invalid } from '../../platform/errors.js';
import * as store from './store.js';

/** The tenant's points settings: expiry, reminders, currency name. */

export const REMINDER_DAYS_MAX = 10;

export interface SettingsBody {
  expiry_policy?: store.ExpiryPolicy;
  default_ttl_days?: number;
  reminder_days?: number[];
  currency_name?: string;
}

export function presentSettings(row: store.SettingsRow) {
  return {
    expiry_policy: row.expiry_policy,
    default_ttl_days: row.default_ttl_days,
    reminder_days: row.reminder_days,
    currency_name: row.currency_name,
    updated_at: row.updated_at ? row.updated_at.toISOString() : null,
  };
}

export async function readSettings(db: Database, tenantId: string) {
  return presentSettings(await db.tenant(tenantId, (tx) => store.readSettings(tx, tenantId)));
}

/** Changes apply to lots granted from now on; existing lots keep the expiry they were given. */
export async function updateSettings(db: Database, tenantId: string, body: SettingsBody) {
  let reminderDays = body.reminder_days;
  if (reminderDays) {
    if (new Set(reminderDays).size !== reminderDays.length) throw invalid('reminder_days must not repeat a day');
    reminderDays = [...reminderDays].sort((a, b) => b - a);
  }
  const row = await db.tenant(tenantId, (tx) => store.upsertSettings(tx, tenantId, { ...body, reminder_days: reminderDays }, clock.now()));
  return presentSettings(row);
}
