import type { Tx } from '../../platform/db.js';
import type { BatchQuestion } from '../../platform/batch.js';
import type { StoredObjective } from './schemas.js';

/** Every SQL statement on the challenge tables. */
export interface ChallengeRow {
  id: string;
  name: string;
  description: string;
  status: string;
  effective_status: string;
  starts_at: Date;
  ends_at: Date;
  engagement_id: string | null;
  segment_id: string | null;
  objectives: StoredObjective[];
  milestones: Array<{ name: string; threshold: number }>;
  completion_points: number | null;
  completion_badge_code: string | null;
  created_at: Date;
  updated_at: Date;
}

const CHALLENGE_COLUMNS = `c.id, c.name, c.description, c.status, challenge_effective_status(c.status, c.starts_at, c.ends_at, $2::timestamptz) AS effective_status,
  c.starts_at, c.ends_at, c.engagement_id, c.segment_id, c.objectives, c.milestones, c.completion_points, c.completion_badge_code, c.created_at, c.updated_at`;

export interface NewChallenge {
  id: string;
  name: string;
  description: string;
  status: string;
  startsAt: Date;
  endsAt: Date;
  engagementId: string | null;
  segmentId: string | null;
  objectives: StoredObjective[];
  milestones: Array<{ name: string; threshold: number }>;
  completionPoints: number | null;
  completionBadgeCode: string | null;
}

export async function insertChallenge(tx: Tx, tenantId: string, c: NewChallenge, now: Date, movedBy: string): Promise<void> {
  await tx.query(
    `WITH inserted AS (
       INSERT INTO challenges (tenant_id, id, name, description, status, starts_at, ends_at, engagement_id, objectives, milestones,
                               completion_points, completion_badge_code, created_at, updated_at, segment_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $15)
       RETURNING tenant_id, id, status
     )
     INSERT INTO challenge_status_moves (tenant_id, challenge_id, from_status, to_status, moved_by, moved_at)
     SELECT tenant_id, id, NULL, status, $14, $13 FROM inserted`,
    [tenantId, c.id, c.name, c.description, c.status, c.startsAt, c.endsAt, c.engagementId, JSON.stringify(c.objectives), JSON.stringify(c.milestones),
      c.completionPoints, c.completionBadgeCode, now, movedBy, c.segmentId],
  );
}

export async function findChallenge(tx: Tx, tenantId: string, id: string, now: Date, lock = false): Promise<ChallengeRow | null> {
  const { rows } = await tx.query(
    `SELECT ${CHALLENGE_COLUMNS} FROM challenges c WHERE c.tenant_id = $1 AND c.id = $3${lock ? ' FOR UPDATE' : ''}`,
    [tenantId, now, id],
  );
  return rows[0] ?? null;
}

export async function challengeCounts(tx: Tx, tenantId: string, ids: string[]): Promise<Map<string, { enrolled: number; completed: number }>> {
  const { rows } = await tx.query(
    `SELECT challenge_id, count(*)::int AS enrolled, count(completed_at)::int AS completed
     FROM challenge_enrollments WHERE tenant_id = $1 AND challenge_id = ANY($2::uuid[]) GROUP BY challenge_id`,
    [tenantId, ids],
  );
  return new Map(rows.map((r) => [r.challenge_id as string, { enrolled: r.enrolled as number, completed: r.completed as number }]));
}

export async function statusMoves(tx: Tx, tenantId: string, id: string) {
  const { rows } = await tx.query(
    `SELECT from_status, to_status, moved_by, moved_at FROM challenge_status_moves
     WHERE tenant_id = $1 AND challenge_id = $2 ORDER BY seq`,
    [tenantId, id],
  );
  return rows as Array<{ from_status: string | null; to_status: string; moved_by: string; moved_at: Date }>;
}

export async function listChallenges(
  tx: Tx,
  tenantId: string,
  now: Date,
  options: { status?: string; after?: { created_at: string; id: string } | null; limit: number },
): Promise<ChallengeRow[]> {
  const { rows } = await tx.query(
    `SELECT ${CHALLENGE_COLUMNS} FROM challenges c
     WHERE c.tenant_id = $1
       AND ($3::text IS NULL OR challenge_effective_status(c.status, c.starts_at, c.ends_at, $2::timestamptz) = $3)
       AND ($4::timestamptz IS NULL OR (c.created_at, c.id) < ($4::timestamptz, $5::uuid))
     ORDER BY c.created_at DESC, c.id DESC
     LIMIT $6`,
    [tenantId, now, options.status ?? null, options.after?.created_at ?? null, options.after?.id ?? null, options.limit],
  );
  return rows;
}

export async function updateChallenge(tx: Tx, tenantId: string, id: string, fields: Record<string, unknown>, now: Date): Promise<void> {
  const names = Object.keys(fields);
  if (names.length === 0) return;
  const assignments = names.map((name, i) => `${name} = $${i + 4}`);
  await tx.query(
    `UPDATE challenges SET ${assignments.join(', ')}, updated_at = $3 WHERE tenant_id = $1 AND id = $2`,
    [tenantId, id, now, ...names.map((n) => fields[n])],
  );
}

export async function moveStatus(tx: Tx, tenantId: string, id: string, from: string, to: string, movedBy: string, movedAt: Date): Promise<void> {
  await tx.query(
    `WITH moved AS (
       UPDATE challenges SET status = $4, updated_at = $6 WHERE tenant_id = $1 AND id = $2 RETURNING tenant_id, id
     )
     INSERT INTO challenge_status_moves (tenant_id, challenge_id, from_status, to_status, moved_by, moved_at)
     SELECT tenant_id, id, $3, $4, $5, $6 FROM moved`,
    [tenantId, id, from, to, movedBy, movedAt],
  );
}

/** Challenges visible to participants of an engagement: published, not archived. */
export async function listPublicChallenges(tx: Tx, tenantId: string, engagementId: string, participantId: string, now: Date) {
  const { rows } = await tx.query(
    `SELECT ${CHALLENGE_COLUMNS}, e.enrolled_at, e.progress, e.milestones_reached
     FROM challenges c
     LEFT JOIN challenge_enrollments e ON e.tenant_id = c.tenant_id AND e.challenge_id = c.id AND e.participant_id = $4
     WHERE c.tenant_id = $1 AND c.status IN ('scheduled', 'active', 'ended')
       AND (c.engagement_id IS NULL OR c.engagement_id = $3)
     ORDER BY c.starts_at, c.id
     LIMIT 200`,
    [tenantId, now, engagementId, participantId],
  );
  return rows as Array<ChallengeRow & { enrolled_at: Date | null; progress: Record<string, number> | null; milestones_reached: string[] | null }>;
}

export interface EnrollmentRow {
  challenge_id: string;
  participant_id: string;
  enrolled_at: Date;
  progress: Record<string, number>;
  overall_progress: number;
  score: number;
  objectives_completed: number;
  milestones_reached: string[];
  score_reached_at: Date;
  completed_at: Date | null;
}

/** Inserts the enrollment; false when the participant is already enrolled. */
export async function insertEnrollment(tx: Tx, tenantId: string, challengeId: string, participantId: string, now: Date): Promise<boolean> {
  const { rowCount } = await tx.query(
    `INSERT INTO challenge_enrollments (tenant_id, challenge_id, participant_id, enrolled_at, score_reached_at)
     VALUES ($1, $2, $3, $4, $4) ON CONFLICT DO NOTHING`,
    [tenantId, challengeId, participantId, now],
  );
  return rowCount === 1;
}

export async function findEnrollment(tx: Tx, tenantId: string, challengeId: string, participantId: string): Promise<EnrollmentRow | null> {
  const { rows } = await tx.query(
    `SELECT * FROM challenge_enrollments WHERE tenant_id = $1 AND challenge_id = $2 AND participant_id = $3`,
    [tenantId, challengeId, participantId],
  );
  return rows[0] ?? null;
}

export type OpenEnrollment = EnrollmentRow & {
  name: string;
  objectives: StoredObjective[];
  milestones: Array<{ name: string; threshold: number }>;
  completion_points: number | null;
  completion_badge_code: string | null;
  engagement_id: string | null;
  starts_at: Date;
};

/** Whether any participant of the tenant has an enrollment not completed: a batch question (platform/batch.ts). */
export const anyOpenEnrollment: BatchQuestion<boolean> = {
  name: 'challenges:any-open-enrollment',
  text: 'SELECT EXISTS (SELECT 1 FROM challenge_enrollments WHERE tenant_id = $1 AND completed_at IS NULL) AS open',
  answer: (rows) => rows[0].open as boolean,
};

/**
 * The participant's enrollments that can still progress at `now`: not
 * completed, in a challenge whose window is open. Locked, in challenge order,
 * so that concurrent facts of one participant apply one after the other.
 */
export async function lockOpenEnrollments(tx: Tx, tenantId: string, participantId: string, now: Date): Promise<OpenEnrollment[]> {
  const { rows } = await tx.query(
    `SELECT e.*, c.name, c.objectives, c.milestones, c.completion_points, c.completion_badge_code, c.engagement_id, c.starts_at
     FROM challenge_enrollments e
     JOIN challenges c ON c.tenant_id = e.tenant_id AND c.id = e.challenge_id
     WHERE e.tenant_id = $1 AND e.participant_id = $2 AND e.completed_at IS NULL
       AND challenge_effective_status(c.status, c.starts_at, c.ends_at, $3::timestamptz) = 'active'
     ORDER BY e.challenge_id
     FOR UPDATE OF e`,
    [tenantId, participantId, now],
  );
  return rows;
}

/** Records the fact against each enrollment; returns the challenges for which it is new. */
export async function claimFact(tx: Tx, tenantId: string, participantId: string, challengeIds: string[], factId: string, now: Date): Promise<Set<string>> {
  if (challengeIds.length === 0) return new Set();
  const { rows } = await tx.query(
    `INSERT INTO challenge_fact_applications (tenant_id, challenge_id, participant_id, fact_id, applied_at)
     SELECT $1, unnest($2::uuid[]), $3, $4, $5
     ON CONFLICT DO NOTHING
     RETURNING challenge_id`,
    [tenantId, challengeIds, participantId, factId, now],
  );
  return new Set(rows.map((r) => r.challenge_id as string));
}

export interface EnrollmentUpdate {
  challengeId: string;
  progress: Record<string, number>;
  overallProgress: number;
  score: number;
  objectivesCompleted: number;
  milestonesReached: string[];
  scoreRaised: boolean;
  completedAt: Date | null;
}

/** Writes the new progress of several enrollments of one participant in one statement. */
export async function updateEnrollments(tx: Tx, tenantId: string, participantId: string, updates: EnrollmentUpdate[], now: Date): Promise<void> {
  if (updates.length === 0) return;
  await tx.query(
    `UPDATE challenge_enrollments e SET
       progress = u.progress, overall_progress = u.overall_progress, score = u.score,
       objectives_completed = u.objectives_completed, milestones_reached = ARRAY(SELECT jsonb_array_elements_text(u.milestones)),
       score_reached_at = CASE WHEN u.score_raised THEN $3::timestamptz ELSE e.score_reached_at END,
       completed_at = u.completed_at
     FROM unnest($4::uuid[], $5::jsonb[], $6::numeric[], $7::numeric[], $8::int[], $9::jsonb[], $10::boolean[], $11::timestamptz[])
       AS u (challenge_id, progress, overall_progress, score, objectives_completed, milestones, score_raised, completed_at)
     WHERE e.tenant_id = $1 AND e.participant_id = $2 AND e.challenge_id = u.challenge_id`,
    [
      tenantId,
      participantId,
      now,
      updates.map((u) => u.challengeId),
      updates.map((u) => JSON.stringify(u.progress)),
      updates.map((u) => u.overallProgress),
      updates.map((u) => u.score),
      updates.map((u) => u.objectivesCompleted),
      updates.map((u) => JSON.stringify(u.milestonesReached)),
      updates.map((u) => u.scoreRaised),
      updates.map((u) => u.completedAt),
    ],
  );
}

export async function leaderboard(tx: Tx, tenantId: string, challengeId: string, limit: number) {
  const { rows } = await tx.query(
    `SELECT (row_number() OVER (ORDER BY e.score DESC, e.score_reached_at, e.participant_id))::int AS rank,
            e.participant_id, p.display_name, e.score, e.objectives_completed
     FROM challenge_enrollments e
     JOIN participants p ON p.tenant_id = e.tenant_id AND p.participant_id = e.participant_id
     WHERE e.tenant_id = $1 AND e.challenge_id = $2
     ORDER BY e.score DESC, e.score_reached_at, e.participant_id
     LIMIT $3`,
    [tenantId, challengeId, limit],
  );
  const total = await tx.query('SELECT count(*)::int AS n FROM challenge_enrollments WHERE tenant_id = $1 AND challenge_id = $2', [tenantId, challengeId]);
  return { rows, total: total.rows[0].n as number };
}

/** The rank of one participant under the same ordering as the leaderboard. */
export async function leaderboardRow(tx: Tx, tenantId: string, challengeId: string, participantId: string) {
  const { rows } = await tx.query(
    `SELECT (1 + (SELECT count(*) FROM challenge_enrollments o
                  WHERE o.tenant_id = e.tenant_id AND o.challenge_id = e.challenge_id
                    AND (o.score, e.score_reached_at, e.participant_id) > (e.score, o.score_reached_at, o.participant_id)))::int AS rank,
            e.participant_id, p.display_name, e.score, e.objectives_completed
     FROM challenge_enrollments e
     JOIN participants p ON p.tenant_id = e.tenant_id AND p.participant_id = e.participant_id
     WHERE e.tenant_id = $1 AND e.challenge_id = $2 AND e.participant_id = $3`,
    [tenantId, challengeId, participantId],
  );
  return rows[0] ?? null;
}

export async function participantEnrollments(tx: Tx, tenantId: string, participantId: string, now: Date) {
  const { rows } = await tx.query(
    `SELECT e.challenge_id, c.name, challenge_effective_status(c.status, c.starts_at, c.ends_at, $3::timestamptz) AS status,
            e.overall_progress, e.score, e.objectives_completed, e.milestones_reached, e.enrolled_at, e.completed_at
     FROM challenge_enrollments e JOIN challenges c ON c.tenant_id = e.tenant_id AND c.id = e.challenge_id
     WHERE e.tenant_id = $1 AND e.participant_id = $2
     ORDER BY e.enrolled_at DESC
     LIMIT 100`,
    [tenantId, participantId, now],
  );
  return rows;
}

/** Published challenges whose stored status lags behind their window (for the lifecycle job). */
export async function dueStatusMoves(tx: Tx, tenantId: string, now: Date) {
  const { rows } = await tx.query(
    `SELECT id, status, challenge_effective_status(status, starts_at, ends_at, $2::timestamptz) AS next_status,
            CASE WHEN challenge_effective_status(status, starts_at, ends_at, $2::timestamptz) = 'ended' THEN ends_at ELSE starts_at END AS moved_at
     FROM challenges
     WHERE tenant_id = $1 AND status IN ('scheduled', 'active')
       AND challenge_effective_status(status, starts_at, ends_at, $2::timestamptz) <> status
     FOR UPDATE`,
    [tenantId, now],
  );
  return rows as Array<{ id: string; status: string; next_status: string; moved_at: Date }>;
}
