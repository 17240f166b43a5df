/**
 * The console's one rule for time: every time is shown and entered in the
 * tenant's time zone (its settings decide where its days start for caps,
 * streaks and the overview), written `2026-11-27 14:05`, and a screen that
 * shows or edits times names the zone once (`<ZoneNote />`). Numbers and money
 * follow the console's language. Screens never call `toLocaleString` or
 * `new Date(…).toISOString()` for display themselves.
 */
export interface Format {
  /** The tenant's IANA zone, e.g. `Europe/Berlin`. */
  timeZone: string;
  /** "Europe/Berlin (UTC+01:00)": the zone with its offset now. */
  zoneLabel: string;
  /** `2026-11-27 14:05` in the tenant's zone; `—` for none. */
  dateTime(iso: string | null | undefined): string;
  /** `2026-11-27` in the tenant's zone; `—` for none. */
  date(iso: string | null | undefined): string;
  /** A count in the console's language: `12,500` / `12.500`. */
  number(value: number | null | undefined): string;
  /** An amount in the tenant's currency (or the one given): `€1,250.00`. */
  money(amount: number | null | undefined, currency?: string): string;
  /** An instant as the value of an `<input type="datetime-local">` in the tenant's zone. */
  toZonedInput(iso: string | null | undefined): string;
  /** The value of an `<input type="datetime-local">`, read in the tenant's zone, as an ISO instant; `''` for none. */
  fromZonedInput(local: string): string;
}

function partsIn(timeZone: string, at: Date): Record<string, string> {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  return Object.fromEntries(parts.map((part) => [part.type, part.value]));
}

/** Minutes the zone is ahead of UTC at that instant. */
function offsetMinutes(timeZone: string, at: Date): number {
  const p = partsIn(timeZone, at);
  const asUtc = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
  return Math.round((asUtc - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
}

function offsetLabel(minutes: number): string {
  const sign = minutes < 0 ? '−' : '+';
  const whole = Math.abs(minutes);
  return `UTC${sign}${String(Math.floor(whole / 60)).padStart(2, '0')}:${String(whole % 60).padStart(2, '0')}`;
}

/** The format of a zone and language, outside React (tests, builders). */
export function formatFor(timeZone: string, language: string, currency = 'USD'): Format {
  const zone = isZone(timeZone) ? timeZone : 'UTC';
  const numbers = new Intl.NumberFormat(language);
  const dateTime = (iso: string | null | undefined) => {
    if (!iso) return '—';
    const at = new Date(iso);
    if (Number.isNaN(at.getTime())) return '—';
    const p = partsIn(zone, at);
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`;
  };
  return {
    timeZone: zone,
    zoneLabel: `${zone} (${offsetLabel(offsetMinutes(zone, new Date()))})`,
    dateTime,
    date: (iso) => (iso ? dateTime(iso).slice(0, 10) : '—'),
    number: (value) => (value === null || value === undefined ? '—' : numbers.format(value)),
    money: (amount, code) => {
      if (amount === null || amount === undefined) return '—';
      try {
        return new Intl.NumberFormat(language, { style: 'currency', currency: code ?? currency }).format(amount);
      } catch {
        return `${numbers.format(amount)} ${code ?? currency}`;
      }
    },
    toZonedInput: (iso) => {
      if (!iso) return '';
      const at = new Date(iso);
      if (Number.isNaN(at.getTime())) return '';
      const p = partsIn(zone, at);
      return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
    },
    fromZonedInput: (local) => {
      const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(local);
      if (!match) return '';
      const [, y, mo, d, h, mi] = match.map(Number);
      const wall = Date.UTC(y, mo - 1, d, h, mi);
      // The offset at the wall time, corrected once for a change of offset between the guess and the answer (DST).
      let instant = wall - offsetMinutes(zone, new Date(wall)) * 60_000;
      instant = wall - offsetMinutes(zone, new Date(instant)) * 60_000;
      return new Date(instant).toISOString();
    },
  };
}

function isZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return true;
  } catch {
    return false;
  }
}

