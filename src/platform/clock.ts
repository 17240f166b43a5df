/**
 * The one source of "now" for the whole service. Tests move it; schedules,
 * windows, cooldowns and expiry read it. In production it is the system clock.
 */
let offsetMs = 0;
let frozenAt: number | null = null;

export const clock = {
  nowMs(): number {
    return frozenAt ?? Date.now() + offsetMs;
  },
  now(): Date {
    return new Date(clock.nowMs());
  },
  /** Moves the clock forward (tests and demos only). */
  advance(ms: number): void {
    if (frozenAt !== null) frozenAt += ms;
    else offsetMs += ms;
  },
  freeze(at: Date | number = Date.now()): void {
    frozenAt = typeof at === 'number' ? at : at.getTime();
  },
  reset(): void {
    offsetMs = 0;
    frozenAt = null;
  },
};
