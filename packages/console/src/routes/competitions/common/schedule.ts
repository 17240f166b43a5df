/** A start and an end a given number of days from now (on the hour), as instants, for a new schedule's defaults. */
export function defaultWindow(start_days: number, length_days: number): { starts_at: string; ends_at: string } {
  const day_ms = 86_400_000;
  const start = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000 + start_days * day_ms);
  return { starts_at: start.toISOString(), ends_at: new Date(start.getTime() + length_days * day_ms).toISOString() };
}
