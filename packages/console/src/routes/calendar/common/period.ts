/**
 * Calendar days of the tenant written YYYY-MM-DD, and the periods of the
 * calendar's views. Days are counted as UTC dates: they are labels of the
 * tenant's days (lib/format.tsx turns instants into them), not instants.
 */
const DAY_MS = 86_400_000;

const asUtc = (day: string) => Date.parse(`${day}T00:00:00Z`);
const text = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function addDays(day: string, days: number): string {
  return text(asUtc(day) + days * DAY_MS);
}

export function daysBetween(from: string, to: string): number {
  return Math.round((asUtc(to) - asUtc(from)) / DAY_MS);
}

export type View = 'month' | 'week';

/** The first and last day of the month or the week (Monday to Sunday) holding `anchor`. */
export function periodOf(view: View, anchor: string): { from: string; to: string } {
  const at = new Date(asUtc(anchor));
  if (view === 'month') {
    return { from: text(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)), to: text(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 0)) };
  }
  const from = addDays(anchor, -((at.getUTCDay() + 6) % 7));
  return { from, to: addDays(from, 6) };
}

/** The anchor of the period before (-1) or after (+1). */
export function shift(view: View, anchor: string, step: -1 | 1): string {
  if (view === 'week') return addDays(anchor, 7 * step);
  const at = new Date(asUtc(anchor));
  return text(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + step, 1));
}

/** Every day of the period, in order. */
export function daysOf(period: { from: string; to: string }): string[] {
  return Array.from({ length: daysBetween(period.from, period.to) + 1 }, (_, index) => addDays(period.from, index));
}
