/**
 * The console edits times in the browser's own time zone (`datetime-local`
 * inputs) and sends them as ISO 8601 instants.
 */
export function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return '';
  const at = new Date(iso);
  const offset_ms = at.getTimezoneOffset() * 60_000;
  return new Date(at.getTime() - offset_ms).toISOString().slice(0, 16);
}

export function fromLocalInput(local: string): string {
  return local ? new Date(local).toISOString() : '';
}

export function formatTime(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

/** A start and an end a given number of days from now, for a new schedule's defaults. */
export function defaultWindow(start_days: number, length_days: number): { starts_at: string; ends_at: string } {
  const day_ms = 86_400_000;
  const start = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + start_days * day_ms);
  return { starts_at: start.toISOString(), ends_at: new Date(start.getTime() + length_days * day_ms).toISOString() };
}
