/**
 * `Retry-After` in seconds, from either of its forms (a number of seconds or
 * an HTTP date), or null when the header is missing or unreadable. Shared by
 * the request retries and the event stream's reconnects.
 */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}
