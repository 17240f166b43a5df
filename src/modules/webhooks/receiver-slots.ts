import { CONNECTIONS_PER_ORIGIN } from '../../platform/safe-http.js';

/**
 * Requests in flight to one receiver from this process. A receiver (a URL
 * origin: scheme, host and port) gets at most IN_FLIGHT_PER_RECEIVER_MAX
 * requests at once from a process, whichever jobs they come from, the promise
 * of docs/webhooks.md ("Concurrency"). It is also the size of the connection
 * pool safe-http keeps per origin, so a POST that has its slot never waits for
 * a connection; a POST waiting for a slot has not started, so its timeout does
 * not run yet. Slots are handed on in the order they were asked for.
 */
export const IN_FLIGHT_PER_RECEIVER_MAX = CONNECTIONS_PER_ORIGIN;

interface Slots {
  active: number;
  waiting: Array<() => void>;
}

const receivers = new Map<string, Slots>();

function receiverOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** Runs `send` once the receiver of `url` has fewer than IN_FLIGHT_PER_RECEIVER_MAX requests from this process in flight. */
export async function withReceiverSlot<T>(url: string, send: () => Promise<T>): Promise<T> {
  const key = receiverOf(url);
  let slots = receivers.get(key);
  if (!slots) receivers.set(key, (slots = { active: 0, waiting: [] }));
  if (slots.active < IN_FLIGHT_PER_RECEIVER_MAX) slots.active += 1;
  else await new Promise<void>((resolve) => slots.waiting.push(resolve));
  try {
    return await send();
  } finally {
    // The slot passes to the next in line (active unchanged), or is given back.
    const next = slots.waiting.shift();
    if (next) next();
    else if (--slots.active === 0) receivers.delete(key);
  }
}

/** Requests in flight to the receiver of `url` from this process (tests). */
export function inFlightTo(url: string): number {
  return receivers.get(receiverOf(url))?.active ?? 0;
}
