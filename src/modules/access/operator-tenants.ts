import { Type, type Static } from '@sinclair/typebox';
import type { Database } from '../../platform/db.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { PLANS } from '../../platform/plans.js';

/**
 * The platform operator's list of tenants (`GET /operator/tenants`): what the
 * operator needs to find a tenant's id before reading or changing its limits.
 * Newest first, keyset-paginated on (created_at, id).
 */
export const OperatorTenantsQuery = Type.Object(
  {
    environment: Type.Optional(Type.Union([Type.Literal('live'), Type.Literal('sandbox')])),
    plan: Type.Optional(Type.Union(PLANS.map((plan) => Type.Literal(plan)))),
    slug_prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9-]+$', description: 'Only tenants whose slug starts with this.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);
type OperatorTenantsQuery = Static<typeof OperatorTenantsQuery>;

const OperatorTenant = Type.Object({
  tenant_id: Type.String({ format: 'uuid' }),
  slug: Type.String(),
  name: Type.String(),
  plan: Type.String(),
  environment: Type.Union([Type.Literal('live'), Type.Literal('sandbox')]),
  live_tenant_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: "A paired sandbox's live tenant; null for live tenants and for sandboxes made alone." }),
  created_at: Type.String({ format: 'date-time' }),
});

export const OperatorTenantList = Type.Object({
  tenants: Type.Array(OperatorTenant),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
type OperatorTenantList = Static<typeof OperatorTenantList>;

export async function listTenantsAsOperator(db: Database, query: OperatorTenantsQuery): Promise<OperatorTenantList> {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'uuid' });
  const { rows } = await db.system.query<{ id: string; slug: string; name: string; plan: string; environment: 'live' | 'sandbox'; live_tenant_id: string | null; created_at: Date }>(
    `SELECT id, slug, name, plan, environment, live_tenant_id, created_at FROM tenants
      WHERE ($1::text IS NULL OR environment = $1)
        AND ($2::text IS NULL OR plan = $2)
        AND ($3::text IS NULL OR starts_with(slug, $3))
        AND ($4::timestamptz IS NULL OR (created_at, id) < ($4::timestamptz, $5::uuid))
      ORDER BY created_at DESC, id DESC LIMIT $6`,
    [query.environment ?? null, query.plan ?? null, query.slug_prefix ?? null, after?.created_at ?? null, after?.id ?? null, limit + 1],
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    tenants: page.map((row) => ({
      tenant_id: row.id,
      slug: row.slug,
      name: row.name,
      plan: row.plan,
      environment: row.environment,
      live_tenant_id: row.live_tenant_id,
      created_at: row.created_at.toISOString(),
    })),
    next_cursor: rows.length > limit && last ? encodeCursor({ created_at: last.created_at.toISOString(), id: last.id }) : null,
  };
}
