import type { Database, Tx } from '../../platform/db.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { PROPERTY_SAMPLE_EVENTS, PROPERTY_PATHS_MAX, PROPERTY_DEPTH_SAMPLED } from './schemas.js';

/**
 * The event names a tenant has sent (a summary table kept in the storing
 * transaction) and the properties seen on one of them (read from a sample of
 * its latest stored events): what the rule editor offers instead of free text.
 */

/**
 * Counts stored events by name. Called after the tenant's quota row is locked
 * in the same transaction (countAcceptedEventsInTx), so every write of a
 * tenant is already ordered and this upsert waits for no one; names are
 * upserted in name order all the same. The accept path counts both in its one
 * statement (store.ts, insertEventsStatement), where the order of the two is
 * the executor's: a process writes one tenant's events one write at a time
 * (writer.ts), and a deadlock between processes is retried like any other.
 */
export async function countEventNamesInTx(tx: Tx, tenantId: string, events: ReadonlyArray<{ eventName: string; occurredAt: Date }>): Promise<void> {
  if (events.length === 0) return;
  await tx.query(eventNamesUpsertSql('$1::uuid', 'unnest($2::text[], $3::timestamptz[]) AS e (name, at)'), [
    tenantId,
    events.map((e) => e.eventName),
    events.map((e) => e.occurredAt.toISOString()),
  ]);
}

/** The names' upsert from `from`, a FROM source with columns `name` and `at`; also a data-modifying CTE of the accept statement (store.ts). */
export function eventNamesUpsertSql(tenant: string, from: string): string {
  return `INSERT INTO event_names_seen AS s (tenant_id, event_name, events, first_seen_at, last_seen_at)
     SELECT ${tenant}, name, count(*), min(at), max(at) FROM ${from}
     GROUP BY name ORDER BY name
     ON CONFLICT (tenant_id, event_name) DO UPDATE
       SET events = s.events + EXCLUDED.events,
           first_seen_at = least(s.first_seen_at, EXCLUDED.first_seen_at),
           last_seen_at = greatest(s.last_seen_at, EXCLUDED.last_seen_at)`;
}

type JsonType = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'null';

interface NameRow {
  event_name: string;
  events: string;
  first_seen_at: Date;
  last_seen_at: Date;
}

/** `q` matches anywhere in the name, case-insensitively; LIKE's wildcards in it are taken literally. */
const likePattern = (q: string) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function listEventNames(db: Database, tenantId: string, query: { q?: string; limit?: number; cursor?: string }) {
  const limit = query.limit ?? 50;
  const after = decodeCursor(query.cursor, { name: 'text' });
  return db.tenant(tenantId, async (tx) => {
    const { rows } = await tx.query<NameRow>(
      `SELECT event_name, events::text, first_seen_at, last_seen_at FROM event_names_seen
       WHERE tenant_id = $1 AND ($2::text IS NULL OR event_name ILIKE $2) AND ($3::text IS NULL OR event_name > $3)
       ORDER BY event_name LIMIT $4`,
      [tenantId, query.q ? likePattern(query.q) : null, after?.name ?? null, limit + 1],
    );
    const page = rows.slice(0, limit);
    return {
      names: page.map((r) => ({ event_name: r.event_name, events: Number(r.events), first_seen_at: r.first_seen_at.toISOString(), last_seen_at: r.last_seen_at.toISOString() })),
      next_cursor: rows.length > limit ? encodeCursor({ name: page[page.length - 1].event_name }) : null,
    };
  });
}

/**
 * The properties of the latest PROPERTY_SAMPLE_EVENTS events of a name (read
 * backwards along the (tenant, name, occurred_at) index), nested objects
 * walked to PROPERTY_DEPTH_SAMPLED levels, each path with the JSON types seen
 * at it, most frequent first. Values are not returned: properties may hold
 * personal data.
 */
export async function eventNameProperties(db: Database, tenantId: string, eventName: string) {
  return db.tenant(tenantId, async (tx) => {
    const { rows } = await tx.query<{ path: string; type: JsonType; seen: number; sampled: number }>(
      `WITH RECURSIVE sample AS (
         SELECT properties FROM ingested_events WHERE tenant_id = $1 AND event_name = $2
         ORDER BY occurred_at DESC, seq DESC LIMIT $3
       ),
       walk (path, value, depth) AS (
         SELECT e.key, e.value, 1 FROM sample s CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(s.properties) = 'object' THEN s.properties ELSE '{}' END) e
         UNION ALL
         SELECT w.path || '.' || e.key, e.value, w.depth + 1
         FROM walk w CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(w.value) = 'object' THEN w.value ELSE '{}' END) e
         WHERE w.depth < $4
       )
       SELECT path, jsonb_typeof(value) AS type, count(*)::int AS seen, (SELECT count(*)::int FROM sample) AS sampled
       FROM walk GROUP BY path, jsonb_typeof(value) ORDER BY path, seen DESC, type LIMIT $5`,
      [tenantId, eventName, PROPERTY_SAMPLE_EVENTS, PROPERTY_DEPTH_SAMPLED, PROPERTY_PATHS_MAX * 7],
    );
    const byPath = new Map<string, { fact: string; types: JsonType[]; seen: number }>();
    for (const row of rows) {
      const entry = byPath.get(row.path) ?? { fact: `properties.${row.path}`, types: [], seen: 0 };
      entry.types.push(row.type);
      entry.seen += row.seen;
      byPath.set(row.path, entry);
    }
    const sampled = rows[0]?.sampled ?? (await sampleSize(tx, tenantId, eventName));
    return { event_name: eventName, sampled, properties: [...byPath.values()].slice(0, PROPERTY_PATHS_MAX) };
  });
}

async function sampleSize(tx: Tx, tenantId: string, eventName: string): Promise<number> {
  const { rows } = await tx.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM (SELECT 1 FROM ingested_events WHERE tenant_id = $1 AND event_name = $2 LIMIT $3) s',
    [tenantId, eventName, PROPERTY_SAMPLE_EVENTS],
  );
  return rows[0].n;
}
