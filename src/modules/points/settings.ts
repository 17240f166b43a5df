import type { Database } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { fieldError, invalid } from '../../platform/errors.js';
import * as store from './store.js';

/** The tenant's points settings: expiry, reminders, currency name, the money a point is worth. */

export const REMINDER_DAYS_MAX = 10;
/** The days before expiry a reminder may be set at: what `reminder_days` accepts and `points.expiring.v1` carries. */
export const REMINDER_DAY_RANGE = { minimum: 1, maximum: 365 } as const;
/** The point value's precision: a millionth of a currency unit per point (the column is numeric(14, 6)). */
export const POINT_VALUE_STEP = 0.000001;

export interface SettingsBody {
  expiry_policy?: store.ExpiryPolicy;
  default_ttl_days?: number;
  reminder_days?: number[];
  currency_name?: string;
  point_value?: number | null;
}

export function presentSettings(row: store.SettingsRow) {
  return {
    expiry_policy: row.expiry_policy,
    default_ttl_days: row.default_ttl_days,
    reminder_days: row.reminder_days,
    currency_name: row.currency_name,
    point_value: row.point_value,
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
  if (typeof body.point_value === 'number' && Math.abs(Math.round(body.point_value / POINT_VALUE_STEP) * POINT_VALUE_STEP - body.point_value) > POINT_VALUE_STEP / 1000) {
    throw invalid('point_value has more than 6 decimal places', undefined, {
      // No `limit`: a bound of 0.000001 reads "0" in a console's default number format, so the words say it.
      errors: [fieldError('/point_value', 'multiple_of', 'must have at most 6 decimal places')],
    });
  }
  const row = await db.tenant(tenantId, (tx) => store.upsertSettings(tx, tenantId, { ...body, reminder_days: reminderDays }, clock.now()));
  return presentSettings(row);
}
