/**
 * The one source of "now" for the whole service. Tests move it; schedules,
 * windows, cooldowns and expiry read it. In production it is the system clock.
 *
 * A sandbox tenant may also have a test clock (decisions/foundation.md, Test
 * controls): an offset ahead of the service clock, kept here per process so
 * that `clock.now(tenantId)` costs one lookup in a map that holds only the
 * tenants whose clock was advanced. A live tenant is never in it, so its
 * "now" is the service clock.
 */
let offsetMs = 0;
let frozenAt: number | null = null;
const tenantOffsetsMs = new Map<string, number>();

function serviceNowMs(): number {
  return frozenAt ?? Date.now() + offsetMs;
}

export const clock = {
  /** The service's now, or the tenant's when a tenant is named (the two differ only for a sandbox tenant with an advanced test clock). */
  nowMs(tenantId?: string): number {
    const now = serviceNowMs();
    if (tenantId === undefined || tenantOffsetsMs.size === 0) return now;
    return now + (tenantOffsetsMs.get(tenantId) ?? 0);
  },
  now(tenantId?: string): Date {
    return new Date(clock.nowMs(tenantId));
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
  /** How far the tenant's test clock is ahead of the service clock (0 without one). */
  tenantOffsetMs(tenantId: string): number {
    return tenantOffsetsMs.get(tenantId) ?? 0;
  },
  /** Sets (or, with 0, removes) a tenant's test clock offset in this process; platform/test-clock.ts keeps it in step with the database. */
  setTenantOffset(tenantId: string, ms: number): void {
    if (ms === 0) tenantOffsetsMs.delete(tenantId);
    else tenantOffsetsMs.set(tenantId, ms);
  },
  /** Replaces every tenant offset (after reading them all from the database). */
  replaceTenantOffsets(offsets: Iterable<[string, number]>): void {
    tenantOffsetsMs.clear();
    for (const [tenantId, ms] of offsets) if (ms !== 0) tenantOffsetsMs.set(tenantId, ms);
  },
  /** Tenants whose test clock runs ahead: the cross-tenant sweeps look at their due work on their own clock. */
  tenantsWithTestClock(): string[] {
    return [...tenantOffsetsMs.keys()];
  },
};
