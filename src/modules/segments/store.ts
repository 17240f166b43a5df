import type { Tx } from '../../platform/db.js';
import type { FactContext } from './facts.js';
import type { SegmentFilter } from './schemas.js';

/** SQL of the segments module, on the tenant's transaction (row-level security applies). */
export interface SegmentRow {
  id: string;
  name: string;
  description: string | null;
  filter: SegmentFilter;
  materialized: boolean;
  /** A change waiting for review (a segment used by a live program; migration 1450): both set, or both null. */
  draft_filter: SegmentFilter | null;
  draft_materialized: boolean | null;
  size: string | null;
  refreshed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, name, description, filter, materialized, draft_filter, draft_materialized, size::text AS size, refreshed_at, created_at, updated_at';

/** What the tenant defined that filters read: custom fields, tier, badge and streak codes. One round trip. */
export async function factContext(tx: Tx, tenantId: string): Promise<FactContext> {
  const { rows } = await tx.query(
    `SELECT
       (SELECT coalesce(jsonb_agg(jsonb_build_object('key', f.key, 'type', f.type, 'personal', f.personal) ORDER BY f.key), '[]'::jsonb)
          FROM participant_custom_fields f WHERE f.tenant_id = $1) AS custom,
       ARRAY(SELECT t.code FROM points_tiers t WHERE t.tenant_id = $1 ORDER BY t.min_lifetime_points) AS tiers,
       ARRAY(SELECT b.code FROM badge_definitions b WHERE b.tenant_id = $1 ORDER BY b.code) AS badges,
       ARRAY(SELECT s.code FROM streak_definitions s WHERE s.tenant_id = $1 ORDER BY s.code) AS streaks`,
    [tenantId],
  );
  return rows[0] as FactContext;
}

export async function insertSegment(
  tx: Tx,
  tenantId: string,
  row: { id: string; name: string; description: string | null; filter: SegmentFilter; materialized: boolean },
  now: Date,
): Promise<SegmentRow> {
  const { rows } = await tx.query(
    `INSERT INTO segments (tenant_id, id, name, description, filter, materialized, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING ${COLUMNS}`,
    [tenantId, row.id, row.name, row.description, JSON.stringify(row.filter), row.materialized, now],
  );
  return rows[0];
}

export async function readSegment(tx: Tx, tenantId: string, id: string, options: { lock?: boolean } = {}): Promise<SegmentRow | null> {
  const { rows } = await tx.query(`SELECT ${COLUMNS} FROM segments WHERE tenant_id = $1 AND id = $2${options.lock ? ' FOR UPDATE' : ''}`, [tenantId, id]);
  return rows[0] ?? null;
}

export async function listSegments(tx: Tx, tenantId: string, after: { created_at: string; id: string } | null, limit: number): Promise<SegmentRow[]> {
  const { rows } = await tx.query(
    `SELECT ${COLUMNS}, to_json(created_at) #>> '{}' AS created_cursor FROM segments
     WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) > ($2::timestamptz, $3::text))
     ORDER BY created_at, id LIMIT $4`,
    [tenantId, after?.created_at ?? null, after?.id ?? null, limit],
  );
  return rows;
}

export async function updateSegment(
  tx: Tx,
  tenantId: string,
  id: string,
  changes: { name?: string; description?: string | null; filter?: SegmentFilter; materialized?: boolean; draft?: { filter: SegmentFilter; materialized: boolean } | null },
  now: Date,
): Promise<SegmentRow | null> {
  const { rows } = await tx.query(
    `UPDATE segments SET
       name = coalesce($3, name),
       description = CASE WHEN $4::boolean THEN $5 ELSE description END,
       filter = coalesce($6::jsonb, filter),
       materialized = coalesce($7, materialized),
       size = CASE WHEN coalesce($7, materialized) THEN size END,
       refreshed_at = CASE WHEN coalesce($7, materialized) THEN refreshed_at END,
       draft_filter = CASE WHEN $9::boolean THEN $10::jsonb ELSE draft_filter END,
       draft_materialized = CASE WHEN $9::boolean THEN $11::boolean ELSE draft_materialized END,
       updated_at = $8
     WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [
      tenantId,
      id,
      changes.name ?? null,
      changes.description !== undefined,
      changes.description ?? null,
      changes.filter ? JSON.stringify(changes.filter) : null,
      changes.materialized ?? null,
      now,
      changes.draft !== undefined,
      changes.draft ? JSON.stringify(changes.draft.filter) : null,
      changes.draft?.materialized ?? null,
    ],
  );
  return rows[0] ?? null;
}

export async function deleteSegment(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM segments WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  return (rowCount ?? 0) > 0;
}

export async function existingIds(tx: Tx, tenantId: string, ids: readonly string[]): Promise<Set<string>> {
  const { rows } = await tx.query('SELECT id FROM segments WHERE tenant_id = $1 AND id = ANY($2::text[])', [tenantId, ids]);
  return new Set(rows.map((r: { id: string }) => r.id));
}

/** Members of a materialized segment after a participant id, in id order. */
export async function materializedPage(tx: Tx, tenantId: string, segmentId: string, after: string | null, limit: number): Promise<string[]> {
  const { rows } = await tx.query(
    `SELECT participant_id FROM segment_members WHERE tenant_id = $1 AND segment_id = $2 AND ($3::text IS NULL OR participant_id > $3)
     ORDER BY participant_id LIMIT $4`,
    [tenantId, segmentId, after, limit],
  );
  return rows.map((r: { participant_id: string }) => r.participant_id);
}

// ---- what references a segment ------------------------------------------------------------

interface ReferencingTable {
  table: string;
  idColumn: string;
  nameColumn: string | null;
}

/**
 * Tables whose `segment_id` only records where rows came from, not a live use:
 * this module's own membership, and a bulk grant's job (the members at the
 * time it was accepted; it stays readable after the segment is deleted).
 * Every other table with a `segment_id` holds its segment in use.
 */
const NOT_USERS = ['segment_members', 'points_bulk_grants'];

let referencingTables: Promise<ReferencingTable[]> | null = null;

/**
 * Every table (other than this module's) with a `segment_id` column, with its
 * id column (the primary key's column after tenant_id) and its name column if
 * it has one: found in the catalog once per process, so that a module that
 * adds a `segment_id` is covered without a list kept here.
 */
function tablesWithSegmentId(tx: Tx): Promise<ReferencingTable[]> {
  referencingTables ??= tx
    .query(
      `SELECT c.table_name AS table,
              (SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
                WHERE i.indrelid = format('%I.%I', c.table_schema, c.table_name)::regclass AND i.indisprimary AND a.attname <> 'tenant_id'
                ORDER BY array_position(i.indkey::int2[], a.attnum) LIMIT 1) AS id_column,
              (SELECT n.column_name FROM information_schema.columns n
                WHERE n.table_schema = c.table_schema AND n.table_name = c.table_name AND n.column_name = 'name') AS name_column
         FROM information_schema.columns c
         JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
        WHERE c.table_schema = current_schema() AND c.column_name = 'segment_id' AND NOT (c.table_name = ANY($1::text[]))
          AND EXISTS (SELECT 1 FROM information_schema.columns k WHERE k.table_schema = c.table_schema AND k.table_name = c.table_name AND k.column_name = 'tenant_id')
        ORDER BY c.table_name`,
      [NOT_USERS],
    )
    .then(({ rows }) =>
      rows.filter((r: { id_column: string | null }) => r.id_column !== null).map((r: { table: string; id_column: string; name_column: string | null }) => ({ table: r.table, idColumn: r.id_column, nameColumn: r.name_column })),
    )
    .catch((error: unknown) => {
      referencingTables = null;
      throw error;
    });
  return referencingTables;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * When a user of a segment is live, so that changing the segment changes what
 * a live program does (who it pays, who may enrol), per table, on the row `x`
 * ($2 the segment id, $3 now): an active rule (not a draft or paused one), a
 * published engagement whose published definition names the segment, a
 * multiplier not yet over (running or scheduled), a published challenge
 * (scheduled or active) not yet over, a running experiment. A table that gains
 * a `segment_id` later and is not listed here counts as live: the safe side.
 */
const LIVE_WHEN: Record<string, string> = {
  earn_rules: `x.status = 'active'`,
  engagements: `x.status = 'published' AND strpos(coalesce(x.published_definition::text, ''), $2) > 0`,
  points_multipliers: 'x.ends_at > $3',
  challenges: `x.status IN ('scheduled', 'active') AND x.ends_at > $3`,
  experiments: `x.status = 'running'`,
};
const liveWhen = (table: string) => `(${LIVE_WHEN[table] ?? 'true'})`;

/** A user of a segment, and whether it is live (`LIVE_WHEN`). */
export interface SegmentUser {
  type: string;
  id: string;
  name: string | null;
  live: boolean;
}

/**
 * What uses a segment: rules whose conditions name it, engagements whose draft
 * or published definition names it anywhere (activities and gates included),
 * and rows of every table with a `segment_id` column that hold it (at most 20
 * of each); each with whether it is live.
 */
export async function usedBy(tx: Tx, tenantId: string, segmentId: string, now: Date): Promise<SegmentUser[]> {
  const tables = await tablesWithSegmentId(tx);
  const selects = [
    `(SELECT 'rule'::text AS type, x.id::text AS id, x.name::text AS name, ${liveWhen('earn_rules')} AS live FROM earn_rules x WHERE x.tenant_id = $1 AND strpos(x.conditions::text, $2) > 0 ORDER BY x.id LIMIT 20)`,
    // An engagement names segments inside its definitions (its own, an activity's, a gate's `in_segment:`), draft or published.
    `(SELECT 'engagement'::text AS type, x.id::text AS id, x.name::text AS name, ${liveWhen('engagements')} AS live FROM engagements x
       WHERE x.tenant_id = $1 AND (strpos(x.definition::text, $2) > 0 OR strpos(coalesce(x.published_definition::text, ''), $2) > 0) ORDER BY 2 LIMIT 20)`,
    ...tables.map(
      (t) =>
        `(SELECT ${escapeText(singular(t.table))} AS type, x.${quote(t.idColumn)}::text AS id, ${t.nameColumn ? `x.${quote(t.nameColumn)}::text` : 'NULL::text'} AS name, ${liveWhen(t.table)} AS live
          FROM ${quote(t.table)} x WHERE x.tenant_id = $1 AND x.segment_id::text = $2 ORDER BY 2 LIMIT 20)`,
    ),
  ];
  // UNION: an engagement found both by its definitions and by its generated `segment_id` column is one user.
  const { rows } = await tx.query(`${selects.join('\nUNION\n')}\nORDER BY 1, 2`, [tenantId, segmentId, now]);
  return rows;
}

const escapeText = (text: string) => `'${text.replaceAll("'", "''")}'::text`;

/** `multipliers` → `multiplier`, `challenges` → `challenge`: the type a referencing row is shown as. */
function singular(table: string): string {
  if (table.endsWith('ies')) return `${table.slice(0, -3)}y`;
  if (table.endsWith('ses')) return table.slice(0, -2);
  return table.endsWith('s') ? table.slice(0, -1) : table;
}
