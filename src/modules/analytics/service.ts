import type { Database } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { invalid, notFound } from '../../platform/errors.js';
import * as store from './store.js';
import { RANGE_DAYS_DEFAULT, RANGE_DAYS_MAX, type AnalyticsOverview, type OverviewQuery } from './schemas.js';

export const DAY_MS = 86_400_000;
const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Milliseconds since the epoch of a YYYY-MM-DD calendar date (as UTC midnight), or null when it is not a real date. */
function dateValue(text: string): number | null {
  const match = DATE_PATTERN.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const value = Date.UTC(year, month - 1, day);
  const back = new Date(value);
  // Date.UTC rolls 2026-02-30 over into March; a real date survives the round trip.
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day) return null;
  return value;
}

export function checkedDate(name: string, text: string): number {
  const value = dateValue(text);
  if (value === null) throw invalid(`${name} must be a calendar date written YYYY-MM-DD; "${text}" is not`);
  return value;
}

export const dateText = (value: number) => new Date(value).toISOString().slice(0, 10);

/**
 * The range asked for, with the defaults filled in: `to` today in the
 * tenant's time zone, `from` RANGE_DAYS_DEFAULT - 1 days before `to`.
 */
export function resolveRange(query: OverviewQuery, today: string): { from: string; to: string } {
  const to = checkedDate('to', query.to ?? today);
  const from = query.from === undefined ? to - (RANGE_DAYS_DEFAULT - 1) * DAY_MS : checkedDate('from', query.from);
  if (from > to) throw invalid(`from (${dateText(from)}) is after to (${dateText(to)}); the range must run forward`);
  const days = Math.round((to - from) / DAY_MS) + 1;
  if (days > RANGE_DAYS_MAX) throw invalid(`the range from ${dateText(from)} to ${dateText(to)} covers ${days} days; at most ${RANGE_DAYS_MAX} are allowed`);
  return { from: dateText(from), to: dateText(to) };
}

/** The Overview figures of the tenant for a range of its calendar days (docs/decisions/analytics.md; money: docs/decisions.md "Liability in money"). */
export async function overview(db: Database, tenantId: string, query: OverviewQuery): Promise<AnalyticsOverview> {
  const now = clock.now();
  const tenant = await store.tenantDay(db, tenantId, now);
  if (!tenant) throw notFound('tenant');
  const { from, to } = resolveRange(query, tenant.today);
  const { overview: row, money } = await store.overview(db, tenantId, from, to, tenant.timezone, now);
  const sum = (field: keyof Omit<store.DayRow, 'date' | 'active_participants'>) => row.days.reduce((total, day) => total + day[field], 0);
  const value = valueOf(money.point_value, money.currency);
  const issued = sum('points_issued');
  const expired = sum('points_expired');
  return {
    from,
    to,
    timezone: tenant.timezone,
    days: row.days,
    totals: {
      points_issued: issued,
      points_redeemed: sum('points_redeemed'),
      points_expired: expired,
      active_participants: row.active_participants_total,
      events_ingested: sum('events_ingested'),
      events_rejected: sum('events_rejected'),
      webhooks_succeeded: sum('webhooks_succeeded'),
      webhooks_failed: sum('webhooks_failed'),
    },
    currency: money.currency,
    point_value: money.point_value,
    liability: {
      outstanding_points: row.outstanding_points,
      outstanding_value: value(row.outstanding_points),
      participants_with_balance: row.participants_with_balance,
      as_of: now.toISOString(),
      history: liabilityHistory(row.days, row.outstanding_points - money.net_after_range).map((day) => ({ ...day, outstanding_value: value(day.outstanding_points) })),
    },
    expiry_forecast: {
      months: money.forecast.map((month) => ({ ...month, value: value(month.points) })),
      later_points: money.later_points,
      later_value: value(money.later_points),
      never_points: money.never_points,
    },
    breakage: {
      points_issued: issued,
      points_expired: expired,
      rate: issued > 0 ? Math.round((expired / issued) * 10_000) / 10_000 : null,
      value: value(expired),
    },
    top_rules: row.top_rules,
  };
}

/**
 * The outstanding points at the end of each day, from the points outstanding
 * at the end of the last day (`atEnd`) walking back: the end of a day is the
 * end of the next one less that next day's net change.
 */
export function liabilityHistory(days: ReadonlyArray<Pick<store.DayRow, 'date' | 'points_issued' | 'points_redeemed' | 'points_expired'>>, atEnd: number): Array<{ date: string; outstanding_points: number }> {
  const history: Array<{ date: string; outstanding_points: number }> = [];
  let outstanding = atEnd;
  for (let index = days.length - 1; index >= 0; index -= 1) {
    history.push({ date: days[index].date, outstanding_points: outstanding });
    const day = days[index];
    outstanding -= day.points_issued - day.points_redeemed - day.points_expired;
  }
  return history.reverse();
}

/** Points to money at the point value, rounded to the currency's minor unit (2 for EUR, 0 for JPY); null without a point value. */
export function valueOf(pointValue: number | null, currency: string): (points: number) => number | null {
  if (pointValue === null) return () => null;
  let digits = 2;
  try {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    // A currency Intl does not know keeps two decimals.
  }
  const scale = 10 ** digits;
  return (points) => Math.round(points * pointValue * scale) / scale;
}
