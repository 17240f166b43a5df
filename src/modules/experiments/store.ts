import type { Tx } from '../../platform/db.js';
import type { ExperimentStatus, Goal, SubjectType, VariantInput } from './schemas.js';

/** The statements on experiments and their assignments (tenant RLS). */
export interface ExperimentRow {
  id: string;
  name: string;
  description: string | null;
  subject_type: SubjectType;
  status: ExperimentStatus;
  holdout_percent: number;
  variants: VariantInput[];
  goal: Goal;
  segment_id: string | null;
  started_at: Date | null;
  ended_at: Date | null;
  rolled_out_variant: string | null;
  created_at: Date;
  updated_at: Date;
}

export type ExperimentDraft = Pick<ExperimentRow, 'name' | 'description' | 'subject_type' | 'holdout_percent' | 'variants' | 'goal' | 'segment_id'>;

const COLUMNS =
  'id, name, description, subject_type, status, holdout_percent, variants, goal, segment_id, started_at, ended_at, rolled_out_variant, created_at, updated_at';

export async function insertExperiment(tx: Tx, tenantId: string, id: string, draft: ExperimentDraft, at: Date): Promise<ExperimentRow> {
  const { rows } = await tx.query<ExperimentRow>(
    `INSERT INTO experiments (tenant_id, id, name, description, subject_type, holdout_percent, variants, goal, segment_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING ${COLUMNS}`,
    [tenantId, id, draft.name, draft.description, draft.subject_type, draft.holdout_percent, JSON.stringify(draft.variants), JSON.stringify(draft.goal), draft.segment_id, at],
  );
  return rows[0];
}

export async function findExperiment(tx: Tx, tenantId: string, id: string, forUpdate = false): Promise<ExperimentRow | null> {
  const { rows } = await tx.query<ExperimentRow>(`SELECT ${COLUMNS} FROM experiments WHERE tenant_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [tenantId, id]);
  return rows[0] ?? null;
}

export async function replaceExperiment(tx: Tx, tenantId: string, id: string, draft: ExperimentDraft, at: Date): Promise<ExperimentRow> {
  const { rows } = await tx.query<ExperimentRow>(
    `UPDATE experiments SET name = $3, description = $4, subject_type = $5, holdout_percent = $6, variants = $7, goal = $8, segment_id = $9, updated_at = $10
     WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [tenantId, id, draft.name, draft.description, draft.subject_type, draft.holdout_percent, JSON.stringify(draft.variants), JSON.stringify(draft.goal), draft.segment_id, at],
  );
  return rows[0];
}

export async function moveExperiment(
  tx: Tx,
  tenantId: string,
  id: string,
  move: { status: ExperimentStatus; startedAt?: Date; endedAt: Date | null; rolledOutVariant?: string },
  at: Date,
): Promise<ExperimentRow> {
  const { rows } = await tx.query<ExperimentRow>(
    `UPDATE experiments SET status = $3, started_at = COALESCE(started_at, $4), ended_at = $5, rolled_out_variant = $6, updated_at = $7
     WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [tenantId, id, move.status, move.startedAt ?? null, move.endedAt, move.rolledOutVariant ?? null, at],
  );
  return rows[0];
}

export async function deleteExperiment(tx: Tx, tenantId: string, id: string): Promise<void> {
  await tx.query('DELETE FROM experiments WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
}

export async function listExperiments(
  tx: Tx,
  tenantId: string,
  filter: { status?: string; subjectType?: string },
  after: { created_at: string; id: string } | null,
  limit: number,
): Promise<ExperimentRow[]> {
  const { rows } = await tx.query<ExperimentRow>(
    `SELECT ${COLUMNS} FROM experiments
     WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR subject_type = $3)
       AND ($4::timestamptz IS NULL OR (created_at, id) < ($4::timestamptz, $5::text))
     ORDER BY created_at DESC, id DESC LIMIT $6`,
    [tenantId, filter.status ?? null, filter.subjectType ?? null, after?.created_at ?? null, after?.id ?? null, limit],
  );
  return rows;
}

/** The running experiments of the tenant (the exposure cache reads them). */
export async function runningExperiments(tx: Tx, tenantId: string): Promise<ExperimentRow[]> {
  const { rows } = await tx.query<ExperimentRow>(`SELECT ${COLUMNS} FROM experiments WHERE tenant_id = $1 AND status = 'running'`, [tenantId]);
  return rows;
}

/** Running experiments other than `exceptId` that use any of the subjects: [{ experiment id, name, subject id }]. */
export async function runningUsesOf(tx: Tx, tenantId: string, subjectType: SubjectType, subjectIds: string[], exceptId: string) {
  const { rows } = await tx.query<{ id: string; name: string; subject_id: string }>(
    `SELECT e.id, e.name, v->>'subject_id' AS subject_id FROM experiments e, jsonb_array_elements(e.variants) v
     WHERE e.tenant_id = $1 AND e.status = 'running' AND e.subject_type = $2 AND e.id <> $4 AND v->>'subject_id' = ANY($3::text[])`,
    [tenantId, subjectType, subjectIds, exceptId],
  );
  return rows;
}

/**
 * The participant's variant in the experiment: the recorded one, or `proposed`
 * recorded now (first exposure). Concurrent first exposures of one participant
 * meet on the primary key: one inserts, the other reads the row it wrote.
 */
export async function recordAssignment(tx: Tx, tenantId: string, experimentId: string, participantId: string, proposed: string, at: Date): Promise<{ variantKey: string; first: boolean }> {
  const inserted = await tx.query<{ variant_key: string }>(
    `INSERT INTO experiment_assignments (tenant_id, experiment_id, participant_id, variant_key, exposed_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant_id, experiment_id, participant_id) DO NOTHING RETURNING variant_key`,
    [tenantId, experimentId, participantId, proposed, at],
  );
  if (inserted.rows[0]) return { variantKey: inserted.rows[0].variant_key, first: true };
  const existing = await tx.query<{ variant_key: string }>(
    'SELECT variant_key FROM experiment_assignments WHERE tenant_id = $1 AND experiment_id = $2 AND participant_id = $3',
    [tenantId, experimentId, participantId],
  );
  return { variantKey: existing.rows[0].variant_key, first: false };
}
