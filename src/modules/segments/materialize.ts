import type { Database, Tx } from '../../platform/db.js';
import { clock } from '../../platform/clock.js';
import { emit } from '../../platform/outbox.js';
import { compileSegmentFilter, membersSql } from './compile.js';
import type { FactContext } from './facts.js';
import * as store from './store.js';
import type { SegmentRow } from './store.js';

/**
 * Materialized segments: the membership kept as rows of segment_members,
 * refreshed by one set-based statement that inserts who entered and deletes
 * who left; each change emits `segment.entered.v1` / `segment.left.v1` in the
 * same transaction. The segment's row is locked first, so concurrent refreshes
 * of one segment run one after the other and never write a row or an event
 * twice. The first refresh (when the segment becomes materialized) sets the
 * baseline and emits nothing: no one "entered" because the segment started
 * being kept (docs/decisions.md).
 */
export interface RefreshOutcome {
  entered: number;
  left: number;
  size: number;
}

/** Events per outbox statement. */
const EMIT_CHUNK = 5_000;

/** Refreshes a materialized segment whose row the caller has locked (`readSegment(…, { lock: true })`). */
export async function refreshLockedInTx(tx: Tx, tenantId: string, segment: SegmentRow, context: FactContext): Promise<RefreshOutcome> {
  const now = clock.now(tenantId);
  const compiled = compileSegmentFilter(segment.filter, context, { tenantId, now });
  const n = compiled.params.length;
  const [segmentParam, nowParam] = [`$${n + 1}`, `$${n + 2}`];
  const silent = segment.refreshed_at === null;
  const ids = (cte: string) => (silent ? `(SELECT count(*) FROM ${cte})::int` : `ARRAY(SELECT participant_id FROM ${cte})`);
  const { rows } = await tx.query(
    `WITH members_now AS MATERIALIZED (${membersSql(compiled)}),
     entered AS (
       INSERT INTO segment_members (tenant_id, segment_id, participant_id, entered_at)
       SELECT $1, ${segmentParam}, c.participant_id, ${nowParam}::timestamptz FROM members_now c
       WHERE NOT EXISTS (SELECT 1 FROM segment_members m WHERE m.tenant_id = $1 AND m.segment_id = ${segmentParam} AND m.participant_id = c.participant_id)
       ON CONFLICT DO NOTHING
       RETURNING participant_id
     ),
     gone AS (
       DELETE FROM segment_members m
       WHERE m.tenant_id = $1 AND m.segment_id = ${segmentParam} AND NOT EXISTS (SELECT 1 FROM members_now c WHERE c.participant_id = m.participant_id)
       RETURNING m.participant_id
     )
     SELECT (SELECT count(*) FROM members_now)::int AS size, ${ids('entered')} AS entered, ${ids('gone')} AS gone`,
    [...compiled.params, segment.id, now.toISOString()],
  );
  const { size, entered, gone } = rows[0] as { size: number; entered: number | string[]; gone: number | string[] };
  await tx.query('UPDATE segments SET size = $3, refreshed_at = $4 WHERE tenant_id = $1 AND id = $2', [tenantId, segment.id, size, now]);
  if (typeof entered === 'number' || typeof gone === 'number') return { entered: Number(entered), left: Number(gone), size };
  const at = now.toISOString();
  const events = [
    ...entered.map((participantId) => ({ event: 'segment.entered.v1', participantId, data: { participant_id: participantId, segment_id: segment.id, segment_name: segment.name, at } })),
    ...gone.map((participantId) => ({ event: 'segment.left.v1', participantId, data: { participant_id: participantId, segment_id: segment.id, segment_name: segment.name, at } })),
  ];
  for (let i = 0; i < events.length; i += EMIT_CHUNK) await emit(tx, tenantId, events.slice(i, i + EMIT_CHUNK));
  return { entered: entered.length, left: gone.length, size };
}

/** Drops the membership rows of a segment that is no longer materialized. */
export async function dropMembershipInTx(tx: Tx, tenantId: string, segmentId: string): Promise<void> {
  await tx.query('DELETE FROM segment_members WHERE tenant_id = $1 AND segment_id = $2', [tenantId, segmentId]);
}

/**
 * The job's sweep: every materialized segment of every tenant, each in a
 * transaction of its own. A segment being refreshed right now (its row
 * locked by a refresh route or another worker) is skipped: that refresh is
 * as fresh as this one would be.
 */
export async function refreshAllMaterialized(db: Database): Promise<{ segments: number; entered: number; left: number }> {
  const { rows } = await db.system.query('SELECT tenant_id, id FROM segments WHERE materialized ORDER BY tenant_id, id');
  const totals = { segments: 0, entered: 0, left: 0 };
  for (const { tenant_id: tenantId, id } of rows as Array<{ tenant_id: string; id: string }>) {
    const outcome = await db.tenant(tenantId, async (tx) => {
      const { rows: locked } = await tx.query(
        `SELECT id FROM segments WHERE tenant_id = $1 AND id = $2 AND materialized FOR UPDATE SKIP LOCKED`,
        [tenantId, id],
      );
      if (locked.length === 0) return null;
      const segment = await store.readSegment(tx, tenantId, id);
      if (!segment) return null;
      return refreshLockedInTx(tx, tenantId, segment, await store.factContext(tx, tenantId));
    });
    if (!outcome) continue;
    totals.segments += 1;
    totals.entered += outcome.entered;
    totals.left += outcome.left;
  }
  return totals;
}
