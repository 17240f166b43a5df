import type { Database } from '../../platform/db.js';
import { CALENDAR_ITEMS_MAX } from './calendar-schemas.js';

/**
 * The campaign calendar's read: the windows of earn rules, multipliers,
 * engagements, challenges and contests, read only from the tables of the
 * modules that own them (as the overview reads the ledger), in one statement
 * and one snapshot. `$2`/`$3` are the first and last local day, `$4` the
 * tenant's zone, `$5` now; an item is listed when its window meets [local
 * midnight of $2, local midnight after $3), a NULL bound being open.
 *
 * Statuses are each module's own; `state` puts them in common words at `$5`
 * (a challenge's status through its module's challenge_effective_status).
 * Multipliers of one participant (a reward's personal multiplier) are no
 * campaign and are left out.
 */
export const CALENDAR_STATEMENT = `
WITH items AS (
  SELECT 'rule' AS kind, r.id, r.name, r.status,
         CASE WHEN r.status IN ('draft', 'paused') THEN r.status
              WHEN r.ends_at IS NOT NULL AND r.ends_at <= $5::timestamptz THEN 'ended'
              WHEN r.starts_at IS NOT NULL AND r.starts_at > $5::timestamptz THEN 'scheduled'
              ELSE 'live' END AS state,
         r.starts_at, r.ends_at, r.event_name, NULL::float8 AS multiplier
  FROM earn_rules r WHERE r.tenant_id = $1
  UNION ALL
  SELECT 'multiplier', m.id, NULL, CASE WHEN m.ends_at <= $5::timestamptz THEN 'ended' WHEN m.starts_at > $5::timestamptz THEN 'scheduled' ELSE 'active' END,
         CASE WHEN m.ends_at <= $5::timestamptz THEN 'ended' WHEN m.starts_at > $5::timestamptz THEN 'scheduled' ELSE 'live' END,
         m.starts_at, m.ends_at, m.event_type, m.multiplier::float8
  FROM points_multipliers m WHERE m.tenant_id = $1 AND m.participant_id IS NULL
  UNION ALL
  SELECT 'engagement', e.id::text, e.name, e.status,
         CASE WHEN e.status = 'draft' THEN 'draft'
              WHEN w.ends_at IS NOT NULL AND w.ends_at <= $5::timestamptz THEN 'ended'
              WHEN w.starts_at IS NOT NULL AND w.starts_at > $5::timestamptz THEN 'scheduled'
              ELSE 'live' END,
         w.starts_at, w.ends_at, NULL, NULL
  FROM engagements e
  CROSS JOIN LATERAL (
    SELECT (d -> 'trigger_rules' ->> 'starts_at')::timestamptz AS starts_at, (d -> 'trigger_rules' ->> 'ends_at')::timestamptz AS ends_at
    FROM (SELECT CASE WHEN e.status = 'published' THEN e.published_definition ELSE e.definition END AS d) def
  ) w
  WHERE e.tenant_id = $1
  UNION ALL
  SELECT 'challenge', c.id::text, c.name, s.status,
         CASE s.status WHEN 'active' THEN 'live' WHEN 'archived' THEN 'ended' ELSE s.status END,
         c.starts_at, c.ends_at, NULL, NULL
  FROM challenges c CROSS JOIN LATERAL (SELECT challenge_effective_status(c.status, c.starts_at, c.ends_at, $5::timestamptz) AS status) s
  WHERE c.tenant_id = $1
  UNION ALL
  SELECT 'contest', k.id, k.title, k.status,
         CASE k.status WHEN 'active' THEN 'live' WHEN 'scoring' THEN 'ended' WHEN 'completed' THEN 'ended' ELSE k.status END,
         k.starts_at, k.ends_at, k.event_type, NULL
  FROM contests k WHERE k.tenant_id = $1
)
SELECT i.kind, i.id, i.name, i.status, i.state, i.starts_at, i.ends_at, i.event_name, i.multiplier
FROM items i
WHERE (i.starts_at IS NULL OR i.starts_at < (($3::date + 1)::timestamp AT TIME ZONE $4))
  AND (i.ends_at IS NULL OR i.ends_at > ($2::date::timestamp AT TIME ZONE $4))
ORDER BY i.starts_at ASC NULLS FIRST, i.kind, i.id
LIMIT ${CALENDAR_ITEMS_MAX + 1}
`;

export interface CalendarRow {
  kind: 'rule' | 'multiplier' | 'engagement' | 'challenge' | 'contest';
  id: string;
  name: string | null;
  status: string;
  state: 'draft' | 'scheduled' | 'live' | 'paused' | 'ended';
  starts_at: Date | null;
  ends_at: Date | null;
  event_name: string | null;
  multiplier: number | null;
}

/** The items whose window meets the local days `from` to `to` (inclusive) in `timezone`, up to one more than CALENDAR_ITEMS_MAX. */
export async function calendarItems(db: Database, tenantId: string, from: string, to: string, timezone: string, now: Date): Promise<CalendarRow[]> {
  const [rows] = await db.staleReadAll(tenantId, [CALENDAR_STATEMENT], [tenantId, from, to, timezone, now]);
  return rows as CalendarRow[];
}
