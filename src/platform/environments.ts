import type { Database } from './db.js';

/**
 * A tenant is `live` or a `sandbox`. The environment is chosen when the tenant
 * is created and never changes, so a process may keep what it read for as long
 * as it runs. Test controls (the tenant test clock, private webhook receivers,
 * a faster webhook backoff) ask `isSandboxTenant` and refuse live tenants.
 */
export const TENANT_ENVIRONMENTS = ['live', 'sandbox'] as const;
export type TenantEnvironment = (typeof TENANT_ENVIRONMENTS)[number];

const ENVIRONMENT_CACHE_ENTRIES_MAX = 10_000;
const known = new Map<string, TenantEnvironment>();

/** The tenant's environment, or null for an unknown tenant (not cached). */
export async function tenantEnvironment(db: Database, tenantId: string): Promise<TenantEnvironment | null> {
  const cached = known.get(tenantId);
  if (cached) return cached;
  const { rows } = await db.system.query<{ environment: TenantEnvironment }>('SELECT environment FROM tenants WHERE id = $1', [tenantId]);
  const environment = rows[0]?.environment ?? null;
  if (environment) {
    if (known.size >= ENVIRONMENT_CACHE_ENTRIES_MAX) known.clear();
    known.set(tenantId, environment);
  }
  return environment;
}

export async function isSandboxTenant(db: Database, tenantId: string): Promise<boolean> {
  return (await tenantEnvironment(db, tenantId)) === 'sandbox';
}
