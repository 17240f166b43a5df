import type { Database } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { invalid, notFound } from '../../platform/errors.js';
import * as store from './store.js';
import { calendarItems, type CalendarRow } from './calendar-store.js';
import { CALENDAR_DAYS_MAX, CALENDAR_ITEMS_MAX, type Calendar, type CalendarItem, type CalendarQuery } from './calendar-schemas.js';
import { checkedDate, dateText, DAY_MS } from './service.js';

/**
 * The campaign calendar: every rule, multiplier, engagement, challenge and
 * contest whose window meets a range of the tenant's days, with the overlaps
 * of earn-affecting items of one event (docs/decisions.md, "Campaign calendar").
 */

/** The window asked for: `from` defaults to the first day of today's month, `to` to the last day of `from`'s month. */
export function resolveWindow(query: CalendarQuery, today: string): { from: string; to: string } {
  const from = checkedDate('from', query.from ?? `${today.slice(0, 7)}-01`);
  const start = new Date(from);
  const to = query.to === undefined ? Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 0) : checkedDate('to', query.to);
  if (from > to) throw invalid(`from (${dateText(from)}) is after to (${dateText(to)}); the window must run forward`);
  const days = Math.round((to - from) / DAY_MS) + 1;
  if (days > CALENDAR_DAYS_MAX) throw invalid(`the window from ${dateText(from)} to ${dateText(to)} covers ${days} days; at most ${CALENDAR_DAYS_MAX} are allowed`);
  return { from: dateText(from), to: dateText(to) };
}

const NEVER = Number.POSITIVE_INFINITY;
const since = (at: Date | null) => (at ? at.getTime() : -NEVER);
const until = (at: Date | null) => (at ? at.getTime() : NEVER);

/** An event rule that is not paused, or a multiplier: what changes the points an event earns. */
function earns(row: CalendarRow): boolean {
  return row.event_name !== null && (row.kind === 'multiplier' || (row.kind === 'rule' && row.state !== 'paused'));
}

/** Each earn-affecting item's overlaps with the others of its event: pairs whose windows share a stretch of time. */
export function overlapsOf(rows: readonly CalendarRow[]): Map<CalendarRow, CalendarItem['overlaps']> {
  const overlaps = new Map<CalendarRow, CalendarItem['overlaps']>(rows.map((row) => [row, []]));
  const byEvent = new Map<string, CalendarRow[]>();
  for (const row of rows) {
    if (!earns(row)) continue;
    byEvent.set(row.event_name!, [...(byEvent.get(row.event_name!) ?? []), row]);
  }
  for (const group of byEvent.values()) {
    for (let i = 0; i < group.length; i += 1) {
      for (let j = i + 1; j < group.length; j += 1) {
        const [a, b] = [group[i], group[j]];
        const start = Math.max(since(a.starts_at), since(b.starts_at));
        const end = Math.min(until(a.ends_at), until(b.ends_at));
        if (start >= end) continue;
        const stretch = { starts_at: Number.isFinite(start) ? new Date(start).toISOString() : null, ends_at: Number.isFinite(end) ? new Date(end).toISOString() : null };
        overlaps.get(a)!.push({ kind: b.kind as 'rule' | 'multiplier', id: b.id, ...stretch });
        overlaps.get(b)!.push({ kind: a.kind as 'rule' | 'multiplier', id: a.id, ...stretch });
      }
    }
  }
  return overlaps;
}

export async function calendar(db: Database, tenantId: string, query: CalendarQuery): Promise<Calendar> {
  const now = clock.now();
  const tenant = await store.tenantDay(db, tenantId, now);
  if (!tenant) throw notFound('tenant');
  const { from, to } = resolveWindow(query, tenant.today);
  const rows = await calendarItems(db, tenantId, from, to, tenant.timezone, now);
  const listed = rows.slice(0, CALENDAR_ITEMS_MAX);
  const overlaps = overlapsOf(listed);
  return {
    from,
    to,
    timezone: tenant.timezone,
    items: listed.map((row) => ({
      kind: row.kind,
      id: row.id,
      name: row.name,
      status: row.status,
      state: row.state,
      starts_at: row.starts_at ? row.starts_at.toISOString() : null,
      ends_at: row.ends_at ? row.ends_at.toISOString() : null,
      event_name: row.event_name,
      multiplier: row.multiplier,
      overlaps: overlaps.get(row)!,
    })),
    truncated: rows.length > CALENDAR_ITEMS_MAX,
  };
}
