import type { Tx } from '../../platform/db.js';
import type { BatchQuestion } from '../../platform/batch.js';

/** The statements on multipliers: the one that applies to an event, and their definitions. */

/** The event names any multiplier of the tenant is for (a superset of those that apply now): a batch question (platform/batch.ts). */
export const multiplierEventTypes: BatchQuestion<ReadonlySet<string>> = {
  name: 'points:multiplier-event-names',
  text: 'SELECT DISTINCT event_type FROM points_multipliers WHERE tenant_id = $1',
  answer: (rows) => new Set(rows.map((r) => r.event_type as string)),
};

/** How many matching multipliers one event considers at most (the highest first). */
const CANDIDATES_MAX = 100;

/**
 * The matching multipliers, highest factor first (ties: the oldest), up to and
 * including the first that targets no segment and is in no running experiment
 * (`inExperiments`): the caller keeps the first whose segment (if any) the
 * participant is in and whose experiment (if any) assigns them its variant.
 */
export async function matchingMultipliers(
  tx: Tx,
  tenantId: string,
  participantId: string,
  eventName: string,
  attributes: Record<string, unknown>,
  at: Date,
  inExperiments: ReadonlySet<string> = new Set(),
): Promise<Array<{ id: string; multiplier: number; segment_id: string | null }>> {
  const { rows } = await tx.query(
    `SELECT id, multiplier, segment_id FROM points_multipliers
     WHERE tenant_id = $1 AND event_type = $2 AND starts_at <= $3 AND ends_at > $3
       AND attributes <@ $4::jsonb AND (participant_id IS NULL OR participant_id = $5)
     ORDER BY multiplier DESC, created_at, id
     LIMIT ${CANDIDATES_MAX}`,
    [tenantId, eventName, at, JSON.stringify(attributes ?? {}), participantId],
  );
  const firstForEveryone = rows.findIndex((r) => r.segment_id === null && !inExperiments.has(r.id));
  return firstForEveryone === -1 ? rows : rows.slice(0, firstForEveryone + 1);
}

export interface MultiplierRow {
  id: string;
  multiplier: number;
  starts_at: Date;
  ends_at: Date;
  event_type: string;
  attributes: Record<string, unknown>;
  participant_id: string | null;
  /** Set when the multiplier applies to the members of one segment only. */
  segment_id: string | null;
  created_at: Date;
}

const MULTIPLIER_COLUMNS = 'id, multiplier, starts_at, ends_at, event_type, attributes, participant_id, segment_id, created_at';

export async function insertMultiplier(tx: Tx, tenantId: string, m: MultiplierRow): Promise<MultiplierRow> {
  const { rows } = await tx.query<MultiplierRow>(
    `INSERT INTO points_multipliers (tenant_id, id, multiplier, starts_at, ends_at, event_type, attributes, participant_id, segment_id, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${MULTIPLIER_COLUMNS}`,
    [tenantId, m.id, m.multiplier, m.starts_at, m.ends_at, m.event_type, JSON.stringify(m.attributes), m.participant_id, m.segment_id, m.created_at],
  );
  return rows[0];
}

export async function listMultipliers(
  tx: Tx,
  tenantId: string,
  after: { createdAt: string; id: string } | null,
  limit: number,
  activeAt: Date | null,
): Promise<MultiplierRow[]> {
  const { rows } = await tx.query<MultiplierRow>(
    `SELECT ${MULTIPLIER_COLUMNS} FROM points_multipliers
     WHERE tenant_id = $1
       AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::text))
       AND ($5::timestamptz IS NULL OR (starts_at <= $5 AND ends_at > $5))
     ORDER BY created_at DESC, id DESC LIMIT $4`,
    [tenantId, after?.createdAt ?? null, after?.id ?? null, limit, activeAt],
  );
  return rows;
}

export async function readMultiplier(tx: Tx, tenantId: string, id: string): Promise<MultiplierRow | null> {
  const { rows } = await tx.query<MultiplierRow>(`SELECT ${MULTIPLIER_COLUMNS} FROM points_multipliers WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
  return rows[0] ?? null;
}

export async function deleteMultiplier(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM points_multipliers WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
  return rowCount === 1;
}
