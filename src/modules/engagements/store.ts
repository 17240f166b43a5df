import type pg from 'pg';
import type { Statement, Tx } from '../../platform/db.js';
import type { EngagementDefinition } from './schemas.js';

export interface EngagementRow {
  id: string;
  site_slug: string;
  name: string;
  status: 'draft' | 'published';
  definition: EngagementDefinition;
  version: number;
  published_definition: EngagementDefinition | null;
  published_version: number | null;
  published_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, site_slug, name, status, definition, version, published_definition, published_version, published_at, created_at, updated_at';

export async function insertEngagement(tx: Tx, tenantId: string, id: string, definition: EngagementDefinition, now: Date): Promise<EngagementRow> {
  const { rows } = await tx.query(
    `INSERT INTO engagements (tenant_id, id, site_slug, name, definition, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING ${COLUMNS}`,
    [tenantId, id, definition.site_slug, definition.name, JSON.stringify(definition), now],
  );
  return rows[0];
}

export async function findEngagement(tx: Tx, tenantId: string, id: string, forUpdate = false): Promise<EngagementRow | null> {
  const { rows } = await tx.query(`SELECT ${COLUMNS} FROM engagements WHERE tenant_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [tenantId, id]);
  return rows[0] ?? null;
}

/**
 * Saves the draft. The `site_slug` column is the site the engagement serves:
 * while published it stays the published one, and a new slug in the draft
 * takes effect at the next publication.
 */
export async function updateDefinition(tx: Tx, tenantId: string, id: string, definition: EngagementDefinition, now: Date): Promise<EngagementRow> {
  const { rows } = await tx.query(
    `UPDATE engagements
     SET definition = $3, site_slug = CASE WHEN status = 'published' THEN site_slug ELSE $4 END, name = $5, version = version + 1, updated_at = $6
     WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [tenantId, id, JSON.stringify(definition), definition.site_slug, definition.name, now],
  );
  return rows[0];
}

export async function listEngagements(
  tx: Tx,
  tenantId: string,
  filter: { status?: string; siteSlug?: string; after: { created_at: string; id: string } | null; limit: number },
): Promise<EngagementRow[]> {
  const { rows } = await tx.query(
    `SELECT ${COLUMNS} FROM engagements
     WHERE tenant_id = $1
       AND ($2::text IS NULL OR status = $2)
       AND ($3::text IS NULL OR site_slug = $3)
       AND ($4::timestamptz IS NULL OR (created_at, id) < ($4, $5::uuid))
     ORDER BY created_at DESC, id DESC LIMIT $6`,
    [tenantId, filter.status ?? null, filter.siteSlug ?? null, filter.after?.created_at ?? null, filter.after?.id ?? null, filter.limit],
  );
  return rows;
}

/** Serialises the tenant's publications until this transaction ends, so the plan quota is counted by one at a time. */
export async function lockPublications(tx: Tx, tenantId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('engagements.publish:' || $1, 0))", [tenantId]);
}

export async function countPublished(tx: Tx, tenantId: string, exceptId: string): Promise<number> {
  const { rows } = await tx.query("SELECT count(*)::int AS n FROM engagements WHERE tenant_id = $1 AND status = 'published' AND id <> $2", [tenantId, exceptId]);
  return rows[0].n;
}

/** Takes the snapshot and replaces the runtime's activity rows (publication is rare: two statements). */
export async function publish(tx: Tx, tenantId: string, id: string, now: Date): Promise<EngagementRow> {
  await tx.query('DELETE FROM engagement_activities WHERE tenant_id = $1 AND engagement_id = $2', [tenantId, id]);
  const { rows } = await tx.query(
    `WITH published AS (
       UPDATE engagements
       SET status = 'published', site_slug = definition->>'site_slug', published_definition = definition, published_version = version, published_at = $3
       WHERE tenant_id = $1 AND id = $2
       RETURNING ${COLUMNS}
     ), added AS (
       INSERT INTO engagement_activities (tenant_id, engagement_id, activity_id, activity_type, config)
       SELECT $1, $2, a->>'id', a->>'type', a
       FROM published p, jsonb_array_elements(p.definition->'activities') a
     )
     SELECT * FROM published`,
    [tenantId, id, now],
  );
  return rows[0];
}

export async function unpublish(tx: Tx, tenantId: string, id: string): Promise<EngagementRow> {
  const { rows } = await tx.query(
    `WITH removed AS (DELETE FROM engagement_activities WHERE tenant_id = $1 AND engagement_id = $2)
     UPDATE engagements SET status = 'draft', site_slug = definition->>'site_slug', published_definition = NULL, published_at = NULL
     WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [tenantId, id],
  );
  return rows[0];
}

export async function findPublishedBySite(tx: Tx, tenantId: string, siteSlug: string): Promise<EngagementRow | null> {
  const { rows } = await tx.query(`SELECT ${COLUMNS} FROM engagements WHERE tenant_id = $1 AND site_slug = $2 AND status = 'published'`, [tenantId, siteSlug]);
  return rows[0] ?? null;
}

export interface ActivityLookup {
  engagementFound: boolean;
  published: boolean;
  /** The segment the published engagement is for (null: everyone). */
  segmentId: string | null;
  activity: { activity_id: string; activity_type: string; config: Record<string, unknown> } | null;
}

/** The engagement's state and the published activity, in one statement (`activityLookupOf` reads its rows). */
export function findActivityStatement(tenantId: string, engagementId: string, activityId: string): Statement {
  return {
    text: `SELECT e.status, e.published_definition->>'segment_id' AS segment_id, a.activity_id, a.activity_type, a.config
     FROM engagements e
     LEFT JOIN engagement_activities a ON a.tenant_id = e.tenant_id AND a.engagement_id = e.id AND a.activity_id = $3
     WHERE e.tenant_id = $1 AND e.id = $2`,
    values: [tenantId, engagementId, activityId],
  };
}

export function activityLookupOf(rows: readonly unknown[]): ActivityLookup {
  const row = rows[0] as { status: string; segment_id: string | null; activity_id: string | null; activity_type: string; config: Record<string, unknown> } | undefined;
  if (!row) return { engagementFound: false, published: false, segmentId: null, activity: null };
  return {
    engagementFound: true,
    published: row.status === 'published',
    segmentId: row.segment_id ?? null,
    activity: row.activity_id ? { activity_id: row.activity_id, activity_type: row.activity_type, config: row.config } : null,
  };
}

export async function findActivity(tx: Tx, tenantId: string, engagementId: string, activityId: string): Promise<ActivityLookup> {
  const { text, values } = findActivityStatement(tenantId, engagementId, activityId);
  const { rows } = await tx.query(text, [...values]);
  return activityLookupOf(rows);
}

export async function insertImpression(
  tx: Tx,
  tenantId: string,
  input: { id: string; engagementId: string; visitorId: string; url: string | null; at: Date },
): Promise<void> {
  await tx.query(
    'INSERT INTO engagement_impressions (tenant_id, id, engagement_id, visitor_id, url, occurred_at) VALUES ($1, $2, $3, $4, $5, $6)',
    [tenantId, input.id, input.engagementId, input.visitorId, input.url, input.at],
  );
}

export async function countImpressions(tx: Tx, tenantId: string, engagementId: string, visitorId: string, since: Date | null): Promise<number> {
  const { rows } = await tx.query(
    `SELECT count(*)::int AS n FROM engagement_impressions
     WHERE tenant_id = $1 AND engagement_id = $2 AND visitor_id = $3 AND ($4::timestamptz IS NULL OR occurred_at >= $4)`,
    [tenantId, engagementId, visitorId, since],
  );
  return rows[0].n;
}

export async function engagementExists(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  return (await tx.query('SELECT 1 FROM engagements WHERE tenant_id = $1 AND id = $2', [tenantId, id])).rowCount === 1;
}

/** The tenant of a public site address, looked up before any tenant is known (owner connection, through the foundation's auth_find_tenant_by_slug). */
export async function tenantBySlug(system: pg.Pool, tenantSlug: string): Promise<{ id: string; slug: string } | null> {
  const { rows } = await system.query('SELECT id, slug FROM auth_find_tenant_by_slug($1)', [tenantSlug]);
  return rows[0] ?? null;
}

export async function tenantSlug(tx: Tx, tenantId: string): Promise<string> {
  const { rows } = await tx.query('SELECT slug FROM tenants WHERE id = $1', [tenantId]);
  return rows[0].slug;
}

/** The segment an engagement's sessions are for: the published snapshot's, else the draft's (null: everyone). One small read per session. */
export async function sessionSegment(tx: Tx, tenantId: string, id: string): Promise<string | null> {
  const { rows } = await tx.query<{ segment_id: string | null }>(
    "SELECT coalesce(published_definition, definition)->>'segment_id' AS segment_id FROM engagements WHERE tenant_id = $1 AND id = $2",
    [tenantId, id],
  );
  return rows[0]?.segment_id ?? null;
}
