/** A time as the person's browser shows times (their locale and zone). */
export function formatTime(iso: string): string {
  return new Date(iso).toLocaleString();
}

/** A `datetime-local` field's value as an ISO instant, or undefined when empty or not a time. */
export function instantOf(local: string): string | undefined {
  if (!local) return undefined;
  const at = new Date(local);
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
}
