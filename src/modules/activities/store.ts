import { planEachCall, type Statement, type Tx } from '../../platform/db.js';

export interface ActivityKey {
  engagementId: string;
  activityId: string;
  participantId: string;
}

export interface ParticipationRow {
  attempts_used: number;
  last_attempt_at: Date | null;
  open_attempt_id: string | null;
  completions: number;
}

export interface AttemptRow {
  id: string;
  engagement_id: string;
  activity_id: string;
  participant_id: string;
  status: 'open' | 'completed';
  result: Record<string, unknown> | null;
  response: Record<string, unknown> | null;
  opened_at: Date;
}

export async function readParticipation(tx: Tx, tenantId: string, key: ActivityKey): Promise<ParticipationRow | null> {
  const { rows } = await tx.query(
    `SELECT attempts_used, last_attempt_at, open_attempt_id, completions FROM activity_participations
     WHERE tenant_id = $1 AND engagement_id = $2 AND activity_id = $3 AND participant_id = $4`,
    [tenantId, key.engagementId, key.activityId, key.participantId],
  );
  return rows[0] ?? null;
}

/**
 * Takes one attempt for each participant of `takes` (distinct participants of
 * one activity) under the activity's limits, in one guarded upsert: a take
 * succeeds only while attempts remain, the cooldown has passed and no
 * validated attempt is waiting. Concurrent calls of one participant queue on
 * the row, so limits hold under concurrency; the rows are written in
 * participant order, so concurrent batches lock them in one order. With
 * `completing`, the attempt is counted as completed at once (validate and
 * complete in one call). A lone call is a take of one; a batch of completions
 * sends one statement per round of distinct participants instead of one per
 * take: the database's time for them is about the same (2.5–2.7 s in a
 * minute of 1,000 spins/s either way), the message holds one statement.
 */
export function takeAttemptsStatement(
  tenantId: string,
  activity: Omit<ActivityKey, 'participantId'>,
  limits: { maxAttempts: number; cooldownSeconds: number; completing: boolean },
  takes: ReadonlyArray<{ participantId: string; attemptId: string; at: Date }>,
): Statement {
  return {
    text: `INSERT INTO activity_participations AS p (tenant_id, engagement_id, activity_id, participant_id, attempts_used, last_attempt_at, open_attempt_id, completions)
     SELECT $1, $2, $3, i.participant_id, 1, i.at, CASE WHEN $9::boolean THEN NULL ELSE i.attempt_id END, CASE WHEN $9::boolean THEN 1 ELSE 0 END
     FROM unnest($4::text[], $5::timestamptz[], $6::text[]) AS i (participant_id, at, attempt_id)
     ORDER BY i.participant_id
     ON CONFLICT (tenant_id, engagement_id, activity_id, participant_id) DO UPDATE
       SET attempts_used = p.attempts_used + 1,
           last_attempt_at = GREATEST(p.last_attempt_at, EXCLUDED.last_attempt_at),
           open_attempt_id = EXCLUDED.open_attempt_id,
           completions = p.completions + EXCLUDED.completions
       WHERE p.attempts_used < $7
         AND p.open_attempt_id IS NULL
         AND ($8 = 0 OR p.last_attempt_at IS NULL OR p.last_attempt_at <= EXCLUDED.last_attempt_at - make_interval(secs => $8))
     RETURNING p.participant_id`,
    values: [
      tenantId,
      activity.engagementId,
      activity.activityId,
      takes.map((take) => take.participantId),
      takes.map((take) => take.at.toISOString()),
      takes.map((take) => take.attemptId),
      limits.maxAttempts,
      limits.cooldownSeconds,
      limits.completing,
    ],
  };
}

/** Whether `takeAttemptsStatement` took the participant's attempt, from its rows. */
export function attemptTaken(rows: readonly unknown[], participantId: string): boolean {
  return rows.some((row) => (row as { participant_id: string }).participant_id === participantId);
}

export async function insertOpenAttempt(
  tx: Tx,
  tenantId: string,
  key: ActivityKey,
  attempt: { id: string; activityType: string; result: Record<string, unknown> | null; at: Date },
): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO activity_attempts (tenant_id, id, engagement_id, activity_id, activity_type, participant_id, status, result, opened_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'open', $7, $8) ON CONFLICT DO NOTHING`,
    [tenantId, attempt.id, key.engagementId, key.activityId, attempt.activityType, key.participantId, attempt.result && JSON.stringify(attempt.result), attempt.at],
  );
  return rowCount === 1;
}

export async function lockAttempt(tx: Tx, tenantId: string, attemptId: string): Promise<AttemptRow | null> {
  const { rows } = await tx.query(
    `SELECT id, engagement_id, activity_id, participant_id, status, result, response, opened_at
     FROM activity_attempts WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
    [tenantId, attemptId],
  );
  return rows[0] ?? null;
}

/** Serialises requests naming the same client-chosen attempt id until this transaction ends. */
export async function lockAttemptId(tx: Tx, tenantId: string, attemptId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1 || ':' || $2, 0))", [tenantId, attemptId]);
}

/** Counts the segments won so far, guarded by each segment's inventory. Returns false when it is used up. */
export async function takeSegment(tx: Tx, tenantId: string, engagementId: string, activityId: string, segmentIndex: number, inventory: number): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO spin_segment_awards AS s (tenant_id, engagement_id, activity_id, segment_index, awarded)
     SELECT $1, $2, $3, $4, 1 WHERE $5::int > 0
     ON CONFLICT (tenant_id, engagement_id, activity_id, segment_index) DO UPDATE
       SET awarded = s.awarded + 1 WHERE s.awarded < $5::int
     RETURNING 1`,
    [tenantId, engagementId, activityId, segmentIndex, inventory],
  );
  return rowCount === 1;
}

/** How many times each limited segment was won so far; `segmentsAwardedOf` reads its rows. */
export function segmentsAwardedStatement(tenantId: string, engagementId: string, activityId: string): Statement {
  return {
    text: 'SELECT segment_index, awarded FROM spin_segment_awards WHERE tenant_id = $1 AND engagement_id = $2 AND activity_id = $3',
    values: [tenantId, engagementId, activityId],
  };
}

export function segmentsAwardedOf(rows: readonly unknown[]): Map<number, number> {
  return new Map(rows.map((row) => [(row as { segment_index: number }).segment_index, (row as { awarded: number }).awarded]));
}

export async function setAttemptResult(tx: Tx, tenantId: string, attemptId: string, result: Record<string, unknown>): Promise<void> {
  await tx.query('UPDATE activity_attempts SET result = $3 WHERE tenant_id = $1 AND id = $2', [tenantId, attemptId, JSON.stringify(result)]);
}

export interface FactRecord {
  id: string;
  name: string;
  source: 'activity' | 'custom';
  participantId: string;
  engagementId: string | null;
  activityId: string | null;
  properties: Record<string, unknown>;
  evaluateChallenges: boolean;
  occurredAt: Date;
}

const INSERT_FACT = `INSERT INTO activity_facts (tenant_id, id, name, source, participant_id, engagement_id, activity_id, properties, evaluate_challenges, occurred_at)`;

function factValues(fact: FactRecord): unknown[] {
  return [fact.id, fact.name, fact.source, fact.participantId, fact.engagementId, fact.activityId, JSON.stringify(fact.properties), fact.evaluateChallenges, fact.occurredAt];
}

export async function insertFact(tx: Tx, tenantId: string, fact: FactRecord): Promise<void> {
  await tx.query(`${INSERT_FACT} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, [tenantId, ...factValues(fact)]);
}

/** A completion's record: its attempt (new and completed at once, or the validated one), its answer and its fact. */
export interface CompletionRecord {
  key: ActivityKey;
  attemptId: string;
  activityType: string;
  result: Record<string, unknown>;
  response: Record<string, unknown>;
  openedAt: Date;
  at: Date;
  wasOpen: boolean;
  fact: FactRecord;
}

/**
 * The completions' writes in one statement: each attempt (inserted completed,
 * or the validated one updated), its fact, and, for a validated attempt, the
 * participation's waiting attempt cleared and its completions counted. One
 * record binds scalars; several (a batch of completions, `completeMany`) bind
 * one array per column, unnested: one statement however many records, where
 * one each cost a batch of 13 spins thirteen executions and answers.
 *
 * Several records of which none was validated first (a crowd's new attempts)
 * leave the participations alone, and keep the connection's plan. Otherwise
 * the participations' update is a join of the batch with a table that grows
 * with every new participant, planned on each call (`planEachCall`): a plan
 * made while the table held the warm-up's few hundred rows read all of it for
 * every batch (a nested loop over 6,020 rows for 21 records; 7.4 ms per batch
 * instead of 1.2 at 1,000 spins/s, in the runs that got that plan).
 */
export function recordCompletionStatement(tenantId: string, records: readonly CompletionRecord[]): Statement {
  // $2–$10 the fact (`factValues`), $11–$20 the attempt.
  const rowOf = (r: CompletionRecord): unknown[] => [
    ...factValues(r.fact),
    r.attemptId,
    r.key.engagementId,
    r.key.activityId,
    r.activityType,
    r.key.participantId,
    JSON.stringify(r.result),
    JSON.stringify(r.response),
    r.openedAt,
    r.at,
    r.wasOpen,
  ];
  const rows = records.map(rowOf);
  const single = rows.length === 1;
  return {
    text: single ? RECORD_ONE : records.some((r) => r.wasOpen) ? RECORD_MANY_VALIDATED : RECORD_MANY,
    // Several records: one array per column.
    values: [tenantId, ...(single ? rows[0] : rows[0].map((_, column) => rows.map((row) => row[column])))],
  };
}

const RECORD_ONE = `WITH attempt AS (
       INSERT INTO activity_attempts (tenant_id, id, engagement_id, activity_id, activity_type, participant_id, status, result, response, fact_id, opened_at, completed_at)
       VALUES ($1, $11, $12, $13, $14, $15, 'completed', $16, $17, $2, $18, $19)
       ON CONFLICT (tenant_id, id) DO UPDATE
         SET status = 'completed', result = EXCLUDED.result, response = EXCLUDED.response, fact_id = EXCLUDED.fact_id, completed_at = EXCLUDED.completed_at
     ), participation AS (
       UPDATE activity_participations SET open_attempt_id = NULL, completions = completions + 1
       WHERE $20::boolean AND tenant_id = $1 AND engagement_id = $12 AND activity_id = $13 AND participant_id = $15 AND open_attempt_id = $11
     )
     ${INSERT_FACT} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`;

/** The records of several completions (`recordCompletionStatement`); `participations`, the CTE that clears their validated attempts. */
function recordManyText(participations: string): string {
  return `WITH input AS (
       SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::uuid[], $7::text[], $8::jsonb[], $9::boolean[], $10::timestamptz[],
                            $11::text[], $12::uuid[], $13::text[], $14::text[], $15::text[], $16::jsonb[], $17::jsonb[], $18::timestamptz[],
                            $19::timestamptz[], $20::boolean[])
         AS i (fact_id, name, source, fact_participant_id, fact_engagement_id, fact_activity_id, properties, evaluate_challenges, occurred_at,
               attempt_id, engagement_id, activity_id, activity_type, participant_id, result, response, opened_at, completed_at, was_open)
     ), attempt AS (
       INSERT INTO activity_attempts (tenant_id, id, engagement_id, activity_id, activity_type, participant_id, status, result, response, fact_id, opened_at, completed_at)
       SELECT $1, attempt_id, engagement_id, activity_id, activity_type, participant_id, 'completed', result, response, fact_id, opened_at, completed_at FROM input
       ON CONFLICT (tenant_id, id) DO UPDATE
         SET status = 'completed', result = EXCLUDED.result, response = EXCLUDED.response, fact_id = EXCLUDED.fact_id, completed_at = EXCLUDED.completed_at
     )${participations}
     ${INSERT_FACT} SELECT $1, fact_id, name, source, fact_participant_id, fact_engagement_id, fact_activity_id, properties, evaluate_challenges, occurred_at FROM input`;
}

const RECORD_MANY = recordManyText('');

const RECORD_MANY_VALIDATED = planEachCall(
  recordManyText(`, participation AS (
       UPDATE activity_participations p SET open_attempt_id = NULL, completions = p.completions + 1
       FROM input i
       WHERE i.was_open AND p.tenant_id = $1 AND p.engagement_id = i.engagement_id AND p.activity_id = i.activity_id
         AND p.participant_id = i.participant_id AND p.open_attempt_id = i.attempt_id
     )`),
);

/** Completed activities of a participant in an engagement, for gate conditions. */
export async function completedActivities(tx: Tx, tenantId: string, engagementId: string, participantId: string): Promise<Array<{ activity_id: string; activity_type: string }>> {
  const { rows } = await tx.query(
    `SELECT DISTINCT activity_id, activity_type FROM activity_attempts
     WHERE tenant_id = $1 AND participant_id = $3 AND engagement_id = $2 AND status = 'completed'`,
    [tenantId, engagementId, participantId],
  );
  return rows;
}

/** Records a reported completion's fact unless its id exists; true when recorded. */
export async function insertFactOnce(tx: Tx, tenantId: string, fact: FactRecord): Promise<boolean> {
  const { rowCount } = await tx.query(`${INSERT_FACT} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (tenant_id, id) DO NOTHING`, [tenantId, ...factValues(fact)]);
  return rowCount === 1;
}

export async function readFact(tx: Tx, tenantId: string, id: string) {
  const { rows } = await tx.query<{ participant_id: string; engagement_id: string | null; activity_id: string | null; occurred_at: Date }>(
    'SELECT participant_id, engagement_id, activity_id, occurred_at FROM activity_facts WHERE tenant_id = $1 AND id = $2',
    [tenantId, id],
  );
  return rows[0] ?? null;
}

/**
 * Counts a completion reported by the tenant's server as one attempt, and one
 * completion, of the participant while attempts remain (no cooldown: the
 * completion already happened). Returns the attempts used after it, or null
 * when all were used.
 */
export async function takeReportedAttempt(tx: Tx, tenantId: string, key: ActivityKey, at: Date, maxAttempts: number): Promise<number | null> {
  const { rows } = await tx.query<{ attempts_used: number }>(
    `INSERT INTO activity_participations AS p (tenant_id, engagement_id, activity_id, participant_id, attempts_used, last_attempt_at, open_attempt_id, completions)
     VALUES ($1, $2, $3, $4, 1, $5, NULL, 1)
     ON CONFLICT (tenant_id, engagement_id, activity_id, participant_id) DO UPDATE
       SET attempts_used = p.attempts_used + 1,
           last_attempt_at = GREATEST(p.last_attempt_at, EXCLUDED.last_attempt_at),
           completions = p.completions + 1
       WHERE p.attempts_used < $6
     RETURNING attempts_used`,
    [tenantId, key.engagementId, key.activityId, key.participantId, at, maxAttempts],
  );
  return rows[0]?.attempts_used ?? null;
}
