import type { Tx } from '../../platform/db.js';

/**
 * The statements on the contests table: the row shapes the other stores share,
 * create, read, change and list, and the due work the lifecycle sweep finds.
 */

export interface ContestRow {
  tenant_id: string;
  id: string;
  title: string;
  description: string | null;
  status: 'draft' | 'scheduled' | 'active' | 'scoring' | 'completed';
  starts_at: Date;
  ends_at: Date;
  event_type: string;
  score_attribute: string;
  weight: number;
  prize_structure: PrizeTierDefinition[];
  max_reward_liability: number;
  fraud_rules: Record<string, unknown>;
  verification_window_hours: number;
  entry_count: number;
  created_at: Date;
  updated_at: Date;
  published_at: Date | null;
  activated_at: Date | null;
  scoring_started_at: Date | null;
  completed_at: Date | null;
  final_sweep_ms: number | null;
  verification_ends_at: Date | null;
  prizes_issued_at: Date | null;
  liability_allocated: number;
  tie_break: Record<string, unknown> | null;
}

export interface PrizeTierDefinition {
  rank_from: number;
  rank_to: number;
  label?: string;
  reward: { type: string; value: number; name?: string };
}

export interface EntryRow {
  tenant_id: string;
  contest_id: string;
  participant_id: string;
  entry_id: string;
  display_name: string | null;
  entered_at: Date;
  status: string;
  score: number;
  score_events: number;
  reached_at: Date;
  last_scored_at: Date | null;
  final_rank: number | null;
  email: string | null;
  payment_method: string | null;
  device_fingerprint: string | null;
  publish_consent: boolean;
}

export interface NewContest {
  id: string;
  title: string;
  description: string | null;
  startsAt: Date;
  endsAt: Date;
  eventType: string;
  scoreAttribute: string;
  weight: number;
  prizeStructure: PrizeTierDefinition[];
  maxRewardLiability: number;
  fraudRules: Record<string, unknown>;
  verificationWindowHours: number;
  now: Date;
}

export async function insertContest(tx: Tx, tenantId: string, c: NewContest): Promise<ContestRow | null> {
  const { rows } = await tx.query<ContestRow>(
    `INSERT INTO contests (tenant_id, id, title, description, starts_at, ends_at, event_type, score_attribute, weight,
                           prize_structure, max_reward_liability, fraud_rules, verification_window_hours, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12::jsonb, $13, $14, $14)
     ON CONFLICT (tenant_id, id) DO NOTHING
     RETURNING *`,
    [
      tenantId, c.id, c.title, c.description, c.startsAt, c.endsAt, c.eventType, c.scoreAttribute, c.weight,
      JSON.stringify(c.prizeStructure), c.maxRewardLiability, JSON.stringify(c.fraudRules), c.verificationWindowHours, c.now,
    ],
  );
  return rows[0] ?? null;
}

export async function readContest(tx: Tx, tenantId: string, id: string, lock = false): Promise<ContestRow | null> {
  const { rows } = await tx.query<ContestRow>(`SELECT * FROM contests WHERE tenant_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [tenantId, id]);
  return rows[0] ?? null;
}

/** Column names that `updateContest` may set, mapped from the service's field names. */
const UPDATABLE_COLUMNS = {
  title: 'title',
  description: 'description',
  startsAt: 'starts_at',
  endsAt: 'ends_at',
  eventType: 'event_type',
  scoreAttribute: 'score_attribute',
  weight: 'weight',
  prizeStructure: 'prize_structure',
  maxRewardLiability: 'max_reward_liability',
  fraudRules: 'fraud_rules',
  verificationWindowHours: 'verification_window_hours',
  status: 'status',
  publishedAt: 'published_at',
  activatedAt: 'activated_at',
  scoringStartedAt: 'scoring_started_at',
  completedAt: 'completed_at',
  finalSweepMs: 'final_sweep_ms',
  verificationEndsAt: 'verification_ends_at',
  prizesIssuedAt: 'prizes_issued_at',
  liabilityAllocated: 'liability_allocated',
  tieBreak: 'tie_break',
} as const;
export type ContestUpdate = Partial<Record<keyof typeof UPDATABLE_COLUMNS, unknown>>;
const JSON_COLUMNS = new Set(['prize_structure', 'fraud_rules', 'tie_break']);

export async function updateContest(tx: Tx, tenantId: string, id: string, update: ContestUpdate, now: Date): Promise<ContestRow> {
  const sets: string[] = [];
  const values: unknown[] = [tenantId, id, now];
  for (const [field, value] of Object.entries(update)) {
    if (value === undefined) continue;
    const column = UPDATABLE_COLUMNS[field as keyof typeof UPDATABLE_COLUMNS];
    values.push(JSON_COLUMNS.has(column) ? JSON.stringify(value) : value);
    sets.push(`${column} = $${values.length}${JSON_COLUMNS.has(column) ? '::jsonb' : ''}`);
  }
  const { rows } = await tx.query<ContestRow>(
    `UPDATE contests SET ${[...sets, 'updated_at = $3'].join(', ')} WHERE tenant_id = $1 AND id = $2 RETURNING *`,
    values,
  );
  return rows[0];
}

export async function listContests(
  tx: Tx,
  tenantId: string,
  filter: { status?: string; limit: number; after?: { created_at: string; id: string } | null },
): Promise<ContestRow[]> {
  const { rows } = await tx.query<ContestRow>(
    `SELECT * FROM contests
     WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2)
       AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4))
     ORDER BY created_at DESC, id DESC
     LIMIT $5`,
    [tenantId, filter.status ?? null, filter.after?.created_at ?? null, filter.after?.id ?? null, filter.limit],
  );
  return rows;
}

export async function listActiveContests(tx: Tx, tenantId: string, limit: number): Promise<ContestRow[]> {
  const { rows } = await tx.query<ContestRow>(
    `SELECT * FROM contests WHERE tenant_id = $1 AND status = 'active' ORDER BY ends_at, id LIMIT $2`,
    [tenantId, limit],
  );
  return rows;
}

// ---------------------------------------------------------------- due work (system pool)

/** Contests whose next lifecycle step is due, across tenants (the safety sweep). */
export const DUE_CONTESTS_SQL = `
  SELECT tenant_id, id FROM contests
  WHERE (status = 'scheduled' AND starts_at <= $1)
     OR (status = 'active')
     OR (status = 'scoring')
     OR (status = 'completed' AND prizes_issued_at IS NULL AND verification_ends_at <= $1)
  LIMIT $2`;

/** One tenant's contests with a due step at `now` (the tenant's clock), oldest deadline first. */
export async function dueContestsOfTenant(tx: Tx, tenantId: string, now: Date, limit: number) {
  const { rows } = await tx.query<{ id: string; status: ContestRow['status']; prizes_issued_at: Date | null }>(
    `SELECT id, status, prizes_issued_at FROM contests
     WHERE tenant_id = $1
       AND ((status = 'scheduled' AND starts_at <= $2)
         OR (status = 'active' AND ends_at <= $2)
         OR (status = 'scoring')
         OR (status = 'completed' AND prizes_issued_at IS NULL AND verification_ends_at <= $2))
     ORDER BY ends_at, id
     LIMIT $3`,
    [tenantId, now, limit],
  );
  return rows;
}
