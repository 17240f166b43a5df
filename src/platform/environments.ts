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

/** The environment when this process already knows it (no query): for hot paths that fall back to `tenantEnvironment`. */
export function cachedTenantEnvironment(tenantId: string): TenantEnvironment | undefined {
  return known.get(tenantId);
}

export async function isSandboxTenant(db: Database, tenantId: string): Promise<boolean> {
  return (await tenantEnvironment(db, tenantId)) === 'sandbox';
}

/** A live tenant's sandbox, or a sandbox's live tenant: the two tenants of one program. */
export interface SandboxPair {
  liveTenantId: string;
  sandboxTenantId: string;
  sandboxSlug: string;
  sandboxCreatedAt: string;
}

interface PairRow {
  live_tenant_id: string;
  sandbox_tenant_id: string;
  slug: string;
  created_at: Date;
}

function toPair(row: PairRow): SandboxPair {
  return { liveTenantId: row.live_tenant_id, sandboxTenantId: row.sandbox_tenant_id, sandboxSlug: row.slug, sandboxCreatedAt: row.created_at.toISOString() };
}

const PAIR_SQL = `SELECT live_tenant_id, id AS sandbox_tenant_id, slug, created_at FROM tenants WHERE environment = 'sandbox' AND live_tenant_id IS NOT NULL`;

/**
 * The pair a tenant belongs to, asked from either side; null for a live
 * tenant without a sandbox yet and for a sandbox made on its own
 * (`tenant:create --sandbox`), which has no live tenant.
 */
export async function sandboxPairOf(db: Database, tenantId: string): Promise<SandboxPair | null> {
  const { rows } = await db.system.query<PairRow>(`${PAIR_SQL} AND (live_tenant_id = $1 OR id = $1)`, [tenantId]);
  return rows[0] ? toPair(rows[0]) : null;
}

const SANDBOX_SLUG_MAX = 46;

/**
 * The live tenant's sandbox, made on first use with the live tenant's plan,
 * time zone, currency and locale. Safe to call concurrently: the unique index
 * on `live_tenant_id` lets one creation win and the others read it.
 */
export async function ensureSandbox(db: Database, liveTenantId: string): Promise<SandboxPair & { created: boolean }> {
  const existing = await sandboxPairOf(db, liveTenantId);
  if (existing) {
    if (existing.liveTenantId !== liveTenantId) throw new Error('ensureSandbox is asked for with a sandbox tenant');
    return { ...existing, created: false };
  }
  const { rows } = await db.system.query<PairRow>(
    `INSERT INTO tenants (id, slug, name, plan, timezone, currency, locale, environment, live_tenant_id)
     SELECT gen_random_uuid(), left(slug, ${SANDBOX_SLUG_MAX}) || '-sandbox-' || substr(md5(random()::text), 1, 8),
            left(name, 190) || ' (sandbox)', plan, timezone, currency, locale, 'sandbox', id
       FROM tenants WHERE id = $1 AND environment = 'live'
     ON CONFLICT (live_tenant_id) WHERE live_tenant_id IS NOT NULL DO NOTHING
     RETURNING live_tenant_id, id AS sandbox_tenant_id, slug, created_at`,
    [liveTenantId],
  );
  if (rows[0]) return { ...toPair(rows[0]), created: true };
  const raced = await sandboxPairOf(db, liveTenantId);
  if (!raced) throw new Error(`tenant ${liveTenantId} is not a live tenant`);
  return { ...raced, created: false };
}
