import type { Tx } from '../../platform/db.js';
import type { BatchQuestion } from '../../platform/batch.js';

/** Every SQL statement on streak_definitions and participant_streaks. */
export interface StreakDefinitionRow {
  code: string;
  name: string;
  period: 'daily' | 'weekly';
  event_name: string | null;
  grace_periods: number;
  created_at: Date;
  updated_at: Date;
}

const DEFINITION_COLUMNS = 'code, name, period, event_name, grace_periods, created_at, updated_at';

export async function insertDefinition(tx: Tx, tenantId: string, row: Omit<StreakDefinitionRow, 'updated_at'>): Promise<StreakDefinitionRow | null> {
  const { rows } = await tx.query<StreakDefinitionRow>(
    `INSERT INTO streak_definitions (tenant_id, code, name, period, event_name, grace_periods, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
     ON CONFLICT DO NOTHING
     RETURNING ${DEFINITION_COLUMNS}`,
    [tenantId, row.code, row.name, row.period, row.event_name, row.grace_periods, row.created_at],
  );
  return rows[0] ?? null;
}

export async function findDefinition(tx: Tx, tenantId: string, code: string): Promise<StreakDefinitionRow | null> {
  const { rows } = await tx.query<StreakDefinitionRow>(`SELECT ${DEFINITION_COLUMNS} FROM streak_definitions WHERE tenant_id = $1 AND code = $2`, [
    tenantId,
    code,
  ]);
  return rows[0] ?? null;
}

export async function findDefinitionCodes(tx: Tx, tenantId: string, codes: string[]): Promise<string[]> {
  const { rows } = await tx.query<{ code: string }>('SELECT code FROM streak_definitions WHERE tenant_id = $1 AND code = ANY($2::text[])', [
    tenantId,
    codes,
  ]);
  return rows.map((r) => r.code);
}

export async function listDefinitions(tx: Tx, tenantId: string, afterCode: string | null, limit: number): Promise<StreakDefinitionRow[]> {
  const { rows } = await tx.query<StreakDefinitionRow>(
    `SELECT ${DEFINITION_COLUMNS} FROM streak_definitions WHERE tenant_id = $1 AND ($2::text IS NULL OR code > $2) ORDER BY code LIMIT $3`,
    [tenantId, afterCode, limit],
  );
  return rows;
}

export async function updateDefinition(
  tx: Tx,
  tenantId: string,
  code: string,
  changes: { name?: string; event_name?: string | null; grace_periods?: number },
  now: Date,
): Promise<StreakDefinitionRow | null> {
  const { rows } = await tx.query<StreakDefinitionRow>(
    `UPDATE streak_definitions SET
       name = COALESCE($3, name),
       event_name = CASE WHEN $4 THEN $5 ELSE event_name END,
       grace_periods = COALESCE($6, grace_periods),
       updated_at = $7
     WHERE tenant_id = $1 AND code = $2
     RETURNING ${DEFINITION_COLUMNS}`,
    [tenantId, code, changes.name ?? null, changes.event_name !== undefined, changes.event_name ?? null, changes.grace_periods ?? null, now],
  );
  return rows[0] ?? null;
}

export async function deleteDefinition(tx: Tx, tenantId: string, code: string): Promise<boolean> {
  const { rowCount } = await tx.query('DELETE FROM streak_definitions WHERE tenant_id = $1 AND code = $2', [tenantId, code]);
  return rowCount === 1;
}

export interface CountingStreak {
  code: string;
  name: string;
  period: 'daily' | 'weekly';
  grace_periods: number;
  /** First day of the period `at` falls in, in the tenant time zone (YYYY-MM-DD). */
  period_start: string;
}

/** The event names the tenant's streaks count: a batch question (platform/batch.ts). */
export const countedEventNames: BatchQuestion<ReadonlySet<string>> = {
  name: 'streaks:counted-event-names',
  text: 'SELECT DISTINCT event_name FROM streak_definitions WHERE tenant_id = $1 AND event_name IS NOT NULL',
  answer: (rows) => new Set(rows.map((r) => r.event_name as string)),
};

/**
 * The streaks that an activity at `at` counts for — those named, or those
 * whose event is `eventName` — with the period it falls in, computed in the
 * tenant's time zone.
 */
export async function countingStreaks(
  tx: Tx,
  tenantId: string,
  selector: { codes: string[] } | { eventName: string },
  at: Date,
): Promise<CountingStreak[]> {
  const byCodes = 'codes' in selector;
  const { rows } = await tx.query<CountingStreak>(
    `SELECT d.code, d.name, d.period, d.grace_periods,
            (CASE d.period
               WHEN 'daily' THEN ($3::timestamptz AT TIME ZONE t.timezone)::date
               ELSE date_trunc('week', $3::timestamptz AT TIME ZONE t.timezone)::date
             END)::text AS period_start
     FROM streak_definitions d
     JOIN tenants t ON t.id = d.tenant_id
     WHERE d.tenant_id = $1 AND ${byCodes ? 'd.code = ANY($2::text[])' : 'd.event_name = $2'}
     ORDER BY d.code`,
    [tenantId, byCodes ? selector.codes : selector.eventName, at],
  );
  return rows;
}

export interface StreakStateRow {
  current_length: number;
  longest_length: number;
  last_period_start: string;
  freezes_used: number;
}

export async function lockStreak(tx: Tx, tenantId: string, participantId: string, code: string): Promise<StreakStateRow | null> {
  const { rows } = await tx.query<StreakStateRow>(
    `SELECT current_length, longest_length, last_period_start::text AS last_period_start, freezes_used
     FROM participant_streaks WHERE tenant_id = $1 AND participant_id = $2 AND streak_code = $3
     FOR UPDATE`,
    [tenantId, participantId, code],
  );
  return rows[0] ?? null;
}

export async function saveStreak(
  tx: Tx,
  tenantId: string,
  participantId: string,
  code: string,
  state: StreakStateRow & { restarted: boolean; brokenNow: boolean },
  at: Date,
): Promise<void> {
  await tx.query(
    `INSERT INTO participant_streaks (tenant_id, participant_id, streak_code, current_length, longest_length, last_period_start,
                                      started_at, last_activity_at, freezes_used, broken_at)
     VALUES ($1, $2, $3, $4, $5, $6::date, $7, $7, $8, CASE WHEN $10 THEN $11::timestamptz END)
     ON CONFLICT (tenant_id, participant_id, streak_code) DO UPDATE SET
       current_length = EXCLUDED.current_length,
       longest_length = EXCLUDED.longest_length,
       last_period_start = EXCLUDED.last_period_start,
       started_at = CASE WHEN $9 THEN EXCLUDED.started_at ELSE participant_streaks.started_at END,
       last_activity_at = GREATEST(participant_streaks.last_activity_at, EXCLUDED.last_activity_at),
       freezes_used = EXCLUDED.freezes_used,
       broken_at = CASE WHEN $10 THEN $11::timestamptz ELSE participant_streaks.broken_at END`,
    [tenantId, participantId, code, state.current_length, state.longest_length, state.last_period_start, at, state.freezes_used, state.restarted, state.brokenNow, at],
  );
}

export interface LapsedStreak {
  participant_id: string;
  streak_code: string;
  previous_length: number;
}

/**
 * Breaks every running streak of the tenant whose last counted period lies
 * further back than the previous period plus its grace, as of `now` in the
 * tenant time zone; returns what it broke.
 */
export async function breakLapsedStreaks(tx: Tx, tenantId: string, now: Date, limit: number): Promise<LapsedStreak[]> {
  const { rows } = await tx.query<LapsedStreak>(
    `WITH tz AS (SELECT timezone FROM tenants WHERE id = $1),
     lapsed AS (
       SELECT s.participant_id, s.streak_code, s.current_length
       FROM participant_streaks s
       JOIN streak_definitions d ON d.tenant_id = s.tenant_id AND d.code = s.streak_code
       CROSS JOIN tz
       WHERE s.tenant_id = $1 AND s.current_length > 0
         AND s.last_period_start < CASE d.period
               WHEN 'daily' THEN ($2::timestamptz AT TIME ZONE tz.timezone)::date - (1 + d.grace_periods)
               ELSE date_trunc('week', $2::timestamptz AT TIME ZONE tz.timezone)::date - 7 * (1 + d.grace_periods)
             END
       ORDER BY s.participant_id, s.streak_code
       LIMIT $3
       FOR UPDATE OF s SKIP LOCKED
     )
     UPDATE participant_streaks s SET current_length = 0, broken_at = $2
     FROM lapsed
     WHERE s.tenant_id = $1 AND s.participant_id = lapsed.participant_id AND s.streak_code = lapsed.streak_code
     RETURNING s.participant_id, s.streak_code, lapsed.current_length AS previous_length`,
    [tenantId, now, limit],
  );
  return rows;
}

export async function tenantsWithRunningStreaks(system: { query: Tx['query'] }): Promise<string[]> {
  const { rows } = await system.query<{ tenant_id: string }>('SELECT DISTINCT tenant_id FROM participant_streaks WHERE current_length > 0');
  return rows.map((r) => r.tenant_id);
}

export interface ParticipantStreakRow {
  streak_code: string;
  name: string;
  period: 'daily' | 'weekly';
  current_length: number;
  longest_length: number;
  last_period_start: string;
  last_activity_at: Date;
  freezes_used: number;
  lapsed: boolean;
}

/** The participant's streaks; `lapsed` tells that the streak broke by now even if the sweep has not recorded it yet. */
export async function participantStreaks(tx: Tx, tenantId: string, participantId: string, now: Date): Promise<ParticipantStreakRow[]> {
  const { rows } = await tx.query<ParticipantStreakRow>(
    `SELECT s.streak_code, d.name, d.period, s.current_length, s.longest_length, s.last_period_start::text AS last_period_start,
            s.last_activity_at, s.freezes_used,
            s.last_period_start < CASE d.period
               WHEN 'daily' THEN ($3::timestamptz AT TIME ZONE t.timezone)::date - (1 + d.grace_periods)
               ELSE date_trunc('week', $3::timestamptz AT TIME ZONE t.timezone)::date - 7 * (1 + d.grace_periods)
             END AS lapsed
     FROM participant_streaks s
     JOIN streak_definitions d ON d.tenant_id = s.tenant_id AND d.code = s.streak_code
     JOIN tenants t ON t.id = s.tenant_id
     WHERE s.tenant_id = $1 AND s.participant_id = $2
     ORDER BY s.streak_code`,
    [tenantId, participantId, now],
  );
  return rows;
}
