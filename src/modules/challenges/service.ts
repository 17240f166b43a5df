import type { Database, Tx } from '../../platform/db.js';
import { askBatch } from '../../platform/batch.js';
import type { Fact } from '../../platform/facts.js';
import { publishingRequired } from '../../platform/publishing.js';
import { clock } from '../../platform/clock.js';
import { emit, type OutboxEvent } from '../../platform/outbox.js';
import { AppError, conflict, fieldError, invalid, notFound, ruleViolation } from '../../platform/errors.js';
import { uuid } from '../../platform/ids.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { ensureParticipant } from '../participants/index.js';
import { assertMemberInTx, assertSegmentsExistInTx, membershipsInTx } from '../segments/index.js';
import * as store from './store.js';
import { COUNTING_EVALUATORS, STATE_EVALUATORS, countingIncrement, stateValue, summarise } from './evaluators.js';
import { awardBadgeInTx, checkBadgesExistInTx, grantPointsInTx, holdingsInTx } from './progression.js';
import { STATUSES, type CreateChallengeBody, type ObjectiveInput, type StoredObjective, type UpdateChallengeBody } from './schemas.js';

/**
 * Challenges: definitions and their status moves, enrollment, and progress
 * evaluated from facts in the transaction that records the fact.
 */

// ---------------------------------------------------------------- definitions

function normaliseObjectives(inputs: ObjectiveInput[]): StoredObjective[] {
  const seen = new Set<string>();
  return inputs.map((input, index) => {
    const id = input.id ?? `objective_${index + 1}`;
    if (seen.has(id)) throw invalid(`objectives[${index}].id "${id}" is used twice`);
    seen.add(id);
    const where = `objectives[${index}] (${input.evaluator})`;
    if (input.evaluator !== 'activity_count' && (input.activity_type !== undefined || input.activity_id !== undefined)) {
      throw invalid(`${where}: activity_type and activity_id apply to activity_count only`);
    }
    if (input.evaluator === 'event_count' && input.event_name === undefined) {
      throw invalid(`${where} needs event_name`, undefined, { errors: [fieldError(`/objectives/${index}/event_name`, 'required', 'an event count needs the event name')] });
    }
    if (input.evaluator !== 'event_count' && (input.event_name !== undefined || input.conditions !== undefined)) {
      throw invalid(`${where}: event_name and conditions apply to event_count only`);
    }
    if (input.evaluator !== 'badge_earned' && input.badge_code !== undefined) throw invalid(`${where}: badge_code applies to badge_earned only`);
    if (input.evaluator === 'badge_earned' && input.badge_code !== undefined && input.target !== 1) {
      throw invalid(`${where}: a badge_earned objective with a badge_code has target 1`, undefined, {
        errors: [fieldError(`/objectives/${index}/target`, 'badge_target', 'must be 1 when the objective names a badge')],
      });
    }
    for (const [c, condition] of (input.conditions ?? []).entries()) {
      if (condition.op !== 'exists' && condition.value === undefined) throw invalid(`${where}.conditions[${c}] (${condition.op}) needs a value`);
      if (condition.op === 'in' && !Array.isArray(condition.value)) throw invalid(`${where}.conditions[${c}]: "in" takes an array value`);
    }
    const stored: StoredObjective = { id, name: input.name, evaluator: input.evaluator, target: input.target, weight: input.weight ?? 1 };
    for (const key of ['activity_type', 'activity_id', 'event_name', 'conditions', 'badge_code'] as const) {
      if (input[key] !== undefined) (stored as Record<string, unknown>)[key] = input[key];
    }
    return stored;
  });
}

function normaliseMilestones(milestones: Array<{ name: string; threshold: number }>) {
  const names = new Set<string>();
  for (const [index, m] of milestones.entries()) {
    if (names.has(m.name)) {
      throw invalid(`milestone name "${m.name}" is used twice`, undefined, { errors: [fieldError(`/milestones/${index}/name`, 'duplicate', 'another milestone has this name')] });
    }
    names.add(m.name);
  }
  return [...milestones].sort((a, b) => a.threshold - b.threshold);
}

function parseWindow(startsAt: string, endsAt: string): { startsAt: Date; endsAt: Date } {
  const start = new Date(startsAt);
  const end = new Date(endsAt);
  if (!(end > start)) throw invalid('ends_at must be after starts_at', undefined, { errors: [fieldError('/ends_at', 'after_start', 'must be after the start')] });
  return { startsAt: start, endsAt: end };
}


function present(row: store.ChallengeRow, counts: { enrolled: number; completed: number } | undefined) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    status: row.effective_status as (typeof STATUSES)[number],
    starts_at: row.starts_at.toISOString(),
    ends_at: row.ends_at.toISOString(),
    engagement_id: row.engagement_id,
    segment_id: row.segment_id,
    objectives: row.objectives,
    milestones: row.milestones,
    completion_points: row.completion_points,
    completion_badge_code: row.completion_badge_code,
    enrolled_count: counts?.enrolled ?? 0,
    completed_count: counts?.completed ?? 0,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

async function readAdmin(tx: Tx, tenantId: string, id: string) {
  const row = await store.findChallenge(tx, tenantId, id, clock.now(tenantId));
  if (!row) throw notFound('challenge');
  const counts = await store.challengeCounts(tx, tenantId, [id]);
  const moves = await store.statusMoves(tx, tenantId, id);
  return {
    ...present(row, counts.get(id)),
    status_moves: moves.map((m) => ({ ...m, moved_at: m.moved_at.toISOString() })),
  };
}

export async function createChallenge(db: Database, tenantId: string, body: CreateChallengeBody, actor: string, draftsOnly = false) {
  if (draftsOnly && body.status === 'active') throw publishingRequired('creating a challenge with status "active"');
  const window = parseWindow(body.starts_at, body.ends_at);
  const objectives = normaliseObjectives(body.objectives);
  const milestones = normaliseMilestones(body.milestones ?? []);
  const now = clock.now(tenantId);
  let status = 'draft';
  if (body.status === 'active') {
    if (window.endsAt <= now) throw ruleViolation('a challenge whose window has already ended cannot be published', 'CHALLENGE_WINDOW_ENDED');
    status = window.startsAt <= now ? 'active' : 'scheduled';
  }
  const id = uuid();
  return db.tenant(tenantId, async (tx) => {
    await checkBadgesExistInTx(tx, tenantId, [body.completion_badge_code, ...objectives.map((o) => o.badge_code)]);
    if (body.segment_id) await assertSegmentsExistInTx(tx, tenantId, [body.segment_id], '/segment_id');
    await store.insertChallenge(
      tx,
      tenantId,
      {
        id,
        name: body.name,
        description: body.description ?? '',
        status,
        ...window,
        engagementId: body.engagement_id ?? null,
        segmentId: body.segment_id ?? null,
        objectives,
        milestones,
        completionPoints: body.completion_points ?? null,
        completionBadgeCode: body.completion_badge_code ?? null,
      },
      now,
      `admin:${actor}`,
    );
    return readAdmin(tx, tenantId, id);
  });
}

export async function getChallenge(db: Database, tenantId: string, id: string) {
  return db.tenant(tenantId, (tx) => readAdmin(tx, tenantId, id));
}

export async function listChallenges(db: Database, tenantId: string, query: { status?: string; limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'uuid' });
  return db.tenant(tenantId, async (tx) => {
    const rows = await store.listChallenges(tx, tenantId, clock.now(tenantId), { status: query.status, after, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    const counts = await store.challengeCounts(tx, tenantId, page.map((r) => r.id));
    const last = page[page.length - 1];
    return {
      challenges: page.map((r) => present(r, counts.get(r.id))),
      next_cursor: rows.length > query.limit && last ? encodeCursor({ created_at: last.created_at.toISOString(), id: last.id }) : null,
    };
  });
}

/** Which fields may change in each status: definitions are free until participants can progress. */
const EDITABLE_BY_STATUS: Record<string, ReadonlySet<string>> = {
  draft: new Set(['name', 'description', 'starts_at', 'ends_at', 'engagement_id', 'segment_id', 'objectives', 'milestones', 'completion_points', 'completion_badge_code']),
  scheduled: new Set(['name', 'description', 'starts_at', 'ends_at', 'engagement_id', 'segment_id', 'objectives', 'milestones', 'completion_points', 'completion_badge_code']),
  active: new Set(['name', 'description', 'ends_at']),
  ended: new Set(['name', 'description']),
  archived: new Set(['name', 'description']),
};

/** With `draftsOnly` (no publishing permission) only a draft may change. */
export async function updateChallenge(db: Database, tenantId: string, id: string, body: UpdateChallengeBody, draftsOnly = false) {
  return db.tenant(tenantId, async (tx) => {
    await checkBadgesExistInTx(tx, tenantId, [body.completion_badge_code, ...(body.objectives ?? []).map((o) => o.badge_code)]);
    if (body.segment_id) await assertSegmentsExistInTx(tx, tenantId, [body.segment_id], '/segment_id');
    const now = clock.now(tenantId);
    const row = await store.findChallenge(tx, tenantId, id, now, true);
    if (!row) throw notFound('challenge');
    if (draftsOnly && row.effective_status !== 'draft') throw publishingRequired(`changing a published challenge (this one is ${row.effective_status})`);
    const editable = EDITABLE_BY_STATUS[row.effective_status];
    const refused = Object.keys(body).filter((k) => !editable.has(k));
    if (refused.length > 0) {
      throw ruleViolation(`a challenge in status ${row.effective_status} cannot change ${refused.join(', ')}`, 'CHALLENGE_NOT_EDITABLE');
    }
    const window = parseWindow(body.starts_at ?? row.starts_at.toISOString(), body.ends_at ?? row.ends_at.toISOString());
    if (row.effective_status === 'active' && body.ends_at !== undefined && window.endsAt <= now) {
      throw ruleViolation('ends_at of an active challenge must be in the future; end it with POST …/end instead', 'CHALLENGE_WINDOW_ENDED');
    }
    const fields: Record<string, unknown> = {};
    if (body.name !== undefined) fields.name = body.name;
    if (body.description !== undefined) fields.description = body.description;
    if (body.starts_at !== undefined) fields.starts_at = window.startsAt;
    if (body.ends_at !== undefined) fields.ends_at = window.endsAt;
    if (body.engagement_id !== undefined) fields.engagement_id = body.engagement_id;
    if (body.segment_id !== undefined) fields.segment_id = body.segment_id;
    if (body.objectives !== undefined) fields.objectives = JSON.stringify(normaliseObjectives(body.objectives));
    if (body.milestones !== undefined) fields.milestones = JSON.stringify(normaliseMilestones(body.milestones));
    if (body.completion_points !== undefined) fields.completion_points = body.completion_points;
    if (body.completion_badge_code !== undefined) fields.completion_badge_code = body.completion_badge_code;
    await store.updateChallenge(tx, tenantId, id, fields, now);
    return readAdmin(tx, tenantId, id);
  });
}

/** The admin status moves: publish (draft → scheduled/active), end (scheduled/active → ended), archive (any → archived). */
export async function moveChallenge(db: Database, tenantId: string, id: string, action: 'publish' | 'end' | 'archive', actor: string, draftsOnly = false) {
  return db.tenant(tenantId, (tx) => moveChallengeInTx(tx, tenantId, id, action, actor, draftsOnly));
}

/**
 * One status move inside the caller's transaction (a review's approval publishes through here).
 * With `draftsOnly` only a draft may be archived (`DELETE`); the other moves need the publishing permission on the route.
 */
export async function moveChallengeInTx(tx: Tx, tenantId: string, id: string, action: 'publish' | 'end' | 'archive', actor: string, draftsOnly = false) {
  const now = clock.now(tenantId);
  const row = await store.findChallenge(tx, tenantId, id, now, true);
  if (!row) throw notFound('challenge');
  const from = row.effective_status;
  if (draftsOnly && from !== 'draft') throw publishingRequired(`archiving a published challenge (this one is ${from})`);
  let to: string;
  if (action === 'publish') {
    if (from !== 'draft') throw ruleViolation(`only a draft challenge can be published; this one is ${from}`, 'CHALLENGE_STATUS_MOVE_REFUSED');
    if (row.ends_at <= now) throw ruleViolation('a challenge whose window has already ended cannot be published', 'CHALLENGE_WINDOW_ENDED');
    to = row.starts_at <= now ? 'active' : 'scheduled';
  } else if (action === 'end') {
    if (from !== 'scheduled' && from !== 'active') throw ruleViolation(`only a scheduled or active challenge can be ended; this one is ${from}`, 'CHALLENGE_STATUS_MOVE_REFUSED');
    to = 'ended';
  } else {
    if (from === 'archived') throw ruleViolation('the challenge is already archived', 'CHALLENGE_STATUS_MOVE_REFUSED');
    to = 'archived';
  }
  // A stored status that lags behind the window is first brought up to date, so the history shows every step.
  if (from !== row.status) await store.moveStatus(tx, tenantId, id, row.status, from, 'lifecycle', from === 'ended' ? row.ends_at : row.starts_at);
  await store.moveStatus(tx, tenantId, id, from, to, `admin:${actor}`, now);
  return readAdmin(tx, tenantId, id);
}

/** What a review needs to know of a challenge: its name, whether it is a draft, and a stamp that changes with every edit. */
export async function challengeForReviewInTx(tx: Tx, tenantId: string, id: string, forUpdate = false) {
  const row = await store.findChallenge(tx, tenantId, id, clock.now(tenantId), forUpdate);
  return row ? { name: row.name, draft: row.effective_status === 'draft', revision: row.updated_at.toISOString() } : null;
}

/**
 * Records the moves that time has made (scheduled → active → ended) for every
 * tenant: those due on the service clock, then those of sandbox tenants whose
 * test clock runs ahead (each on its own clock).
 */
export async function runLifecycle(db: Database): Promise<number> {
  const { rows } = await db.system.query<{ tenant_id: string }>(
    `SELECT DISTINCT tenant_id FROM challenges
     WHERE status IN ('scheduled', 'active') AND challenge_effective_status(status, starts_at, ends_at, $1::timestamptz) <> status`,
    [clock.now()],
  );
  const tenants = new Set([...rows.map((r) => r.tenant_id), ...clock.tenantsWithTestClock()]);
  let moved = 0;
  for (const tenantId of tenants) moved += await runTenantLifecycle(db, tenantId);
  return moved;
}

/** Records the status moves of one tenant's challenges that are due on the tenant's clock. */
export async function runTenantLifecycle(db: Database, tenantId: string): Promise<number> {
  return db.tenant(tenantId, async (tx) => {
    const due = await store.dueStatusMoves(tx, tenantId, clock.now(tenantId));
    for (const move of due) await store.moveStatus(tx, tenantId, move.id, move.status, move.next_status, 'lifecycle', move.moved_at);
    return due.length;
  });
}

// ---------------------------------------------------------------- participant side

function visibleTo(row: store.ChallengeRow, engagementId: string): boolean {
  return row.status !== 'draft' && row.status !== 'archived' && (row.engagement_id === null || row.engagement_id === engagementId);
}

function publicObjectives(objectives: StoredObjective[], progress: Record<string, number> | null) {
  return objectives.map((o) => {
    const current = progress?.[o.id] ?? 0;
    return { id: o.id, name: o.name, evaluator: o.evaluator, target: o.target, current, completed: current >= o.target };
  });
}

export async function listForParticipant(db: Database, tenantId: string, participantId: string, engagementId: string) {
  return db.tenant(tenantId, async (tx) => {
    const rows = await store.listPublicChallenges(tx, tenantId, engagementId, participantId, clock.now(tenantId));
    const segmentIds = [...new Set(rows.flatMap((r) => (r.segment_id === null ? [] : [r.segment_id])))];
    const memberOf = segmentIds.length > 0 ? await membershipsInTx(tx, tenantId, participantId, segmentIds) : new Set<string>();
    return {
      challenges: rows.map((row) => {
        const reached = new Set(row.milestones_reached ?? []);
        return {
          id: row.id,
          name: row.name,
          description: row.description,
          status: row.effective_status as 'scheduled' | 'active' | 'ended',
          starts_at: row.starts_at.toISOString(),
          ends_at: row.ends_at.toISOString(),
          enrolled: row.enrolled_at !== null,
          eligible: row.segment_id === null || memberOf.has(row.segment_id),
          objectives: publicObjectives(row.objectives, row.progress),
          milestones: row.milestones.map((m) => ({ name: m.name, threshold: m.threshold, reached: reached.has(m.name) })),
        };
      }),
    };
  });
}

export async function enroll(db: Database, tenantId: string, participantId: string, engagementId: string, challengeId: string) {
  return db.tenant(tenantId, async (tx) => {
    const now = clock.now(tenantId);
    const row = await store.findChallenge(tx, tenantId, challengeId, now);
    if (!row || !visibleTo(row, engagementId)) throw notFound('challenge');
    if (row.effective_status === 'scheduled') {
      throw ruleViolation(`enrollment opens when the challenge starts at ${row.starts_at.toISOString()}`, 'CHALLENGE_NOT_STARTED');
    }
    if (row.effective_status !== 'active') {
      throw ruleViolation(`the challenge ended at ${row.ends_at.toISOString()}; enrollment is closed`, 'CHALLENGE_ENDED');
    }
    await assertMemberInTx(tx, tenantId, participantId, [{ segmentId: row.segment_id, what: `the challenge ${JSON.stringify(row.name)}` }]);
    await ensureParticipant(tx, tenantId, participantId);
    const inserted = await store.insertEnrollment(tx, tenantId, challengeId, participantId, now);
    if (!inserted) throw conflict('the participant is already enrolled in this challenge', 'ALREADY_ENROLLED');
    await emit(tx, tenantId, {
      event: 'challenge.enrolled.v1',
      participantId,
      engagementId,
      data: { participant_id: participantId, challenge_id: challengeId, enrolled_at: now.toISOString() },
    });
    // Objectives that read state (a badge already held) count from the start.
    if (row.objectives.some((o) => STATE_EVALUATORS.has(o.evaluator))) await evaluateParticipantInTx(tx, tenantId, participantId, null);
    return { enrolled: true as const, challenge_id: challengeId, enrolled_at: now.toISOString() };
  });
}

export async function progress(db: Database, tenantId: string, participantId: string, engagementId: string, challengeId: string) {
  return db.tenant(tenantId, async (tx) => {
    const row = await store.findChallenge(tx, tenantId, challengeId, clock.now(tenantId));
    if (!row || !visibleTo(row, engagementId)) throw notFound('challenge');
    const enrollment = await store.findEnrollment(tx, tenantId, challengeId, participantId);
    if (!enrollment) throw new AppError('not_found', 'NOT_ENROLLED', 'the participant is not enrolled in this challenge; enroll first');
    return {
      challenge_id: challengeId,
      overall_progress: enrollment.overall_progress,
      score: enrollment.score,
      objectives: publicObjectives(row.objectives, enrollment.progress).map(({ id, current, target, completed }) => ({ id, current, target, completed })),
      milestones_reached: enrollment.milestones_reached,
      enrolled_at: enrollment.enrolled_at.toISOString(),
      completed_at: enrollment.completed_at?.toISOString() ?? null,
    };
  });
}

export async function leaderboard(db: Database, tenantId: string, challengeId: string, limit: number, caller: { participantId: string | null; engagementId: string | null }) {
  return db.tenant(tenantId, async (tx) => {
    const row = await store.findChallenge(tx, tenantId, challengeId, clock.now(tenantId));
    if (!row || row.status === 'draft' || (caller.engagementId && !visibleTo(row, caller.engagementId))) throw notFound('challenge');
    const { rows, total } = await store.leaderboard(tx, tenantId, challengeId, limit);
    const me = caller.participantId ? await store.leaderboardRow(tx, tenantId, challengeId, caller.participantId) : undefined;
    return { challenge_id: challengeId, entries: rows, total_participants: total, ...(me === undefined ? {} : { me }) };
  });
}

export async function statePart(tx: Tx, tenantId: string, participantId: string) {
  const rows = await store.participantEnrollments(tx, tenantId, participantId, clock.now(tenantId));
  return rows.map((r) => ({
    challenge_id: r.challenge_id,
    name: r.name,
    status: r.status,
    overall_progress: r.overall_progress,
    score: r.score,
    objectives_completed: r.objectives_completed,
    milestones_reached: r.milestones_reached,
    enrolled_at: r.enrolled_at.toISOString(),
    completed_at: r.completed_at?.toISOString() ?? null,
  }));
}

// ---------------------------------------------------------------- evaluation

/**
 * Evaluates the participant's open enrollments, inside the caller's
 * transaction: counting objectives take the fact (once per fact id and
 * enrollment), state objectives are re-read. Milestones, completion, its
 * rewards and the events are written in the same transaction.
 */
export async function evaluateParticipantInTx(tx: Tx, tenantId: string, participantId: string, fact: Fact | null): Promise<void> {
  const now = clock.now(tenantId);
  const enrollments = await store.lockOpenEnrollments(tx, tenantId, participantId, now);
  if (enrollments.length === 0) return;

  const increments = new Map<string, Record<string, number>>();
  if (fact) {
    for (const e of enrollments) {
      if (fact.occurredAt < e.enrolled_at || fact.occurredAt < e.starts_at) continue;
      const incs: Record<string, number> = {};
      for (const o of e.objectives) {
        if (!COUNTING_EVALUATORS.has(o.evaluator)) continue;
        const inc = countingIncrement(o, fact);
        if (inc > 0) incs[o.id] = inc;
      }
      if (Object.keys(incs).length > 0) increments.set(e.challenge_id, incs);
    }
  }
  const fresh = fact ? await store.claimFact(tx, tenantId, participantId, [...increments.keys()], fact.id, now) : new Set<string>();
  const stateful = enrollments.filter((e) => e.objectives.some((o) => STATE_EVALUATORS.has(o.evaluator)));
  const candidates = enrollments.filter((e) => fresh.has(e.challenge_id) || stateful.includes(e));
  if (candidates.length === 0) return;

  const holdings =
    stateful.length > 0
      ? await holdingsInTx(tx, tenantId, participantId, new Date(Math.min(...stateful.map((e) => e.enrolled_at.getTime()))))
      : { awards: [], badges: [] };

  const updates: store.EnrollmentUpdate[] = [];
  const events: OutboxEvent[] = [];
  const completions: store.OpenEnrollment[] = [];
  for (const e of candidates) {
    const next: Record<string, number> = { ...e.progress };
    const incs = fresh.has(e.challenge_id) ? increments.get(e.challenge_id) ?? {} : {};
    for (const o of e.objectives) {
      if (COUNTING_EVALUATORS.has(o.evaluator)) next[o.id] = (next[o.id] ?? 0) + (incs[o.id] ?? 0);
      else next[o.id] = stateValue(o, holdings, e.enrolled_at);
    }
    if (e.objectives.every((o) => (next[o.id] ?? 0) === (e.progress[o.id] ?? 0))) continue;
    const summary = summarise(e.objectives, next);
    const reached = new Set(e.milestones_reached);
    const newMilestones = e.milestones.filter((m) => summary.overallProgress >= m.threshold && !reached.has(m.name));
    const engagementId = e.engagement_id ?? fact?.engagementId ?? null;
    for (const m of newMilestones) {
      events.push({
        event: 'challenge.milestone_reached.v1',
        participantId,
        engagementId,
        data: { participant_id: participantId, challenge_id: e.challenge_id, milestone: m.name, threshold: m.threshold, overall_progress: summary.overallProgress },
      });
    }
    if (summary.completed) {
      completions.push(e);
      events.push({
        event: 'challenge.completed.v1',
        participantId,
        engagementId,
        data: { participant_id: participantId, challenge_id: e.challenge_id, completed_at: now.toISOString(), score: summary.score },
      });
    }
    updates.push({
      challengeId: e.challenge_id,
      progress: next,
      overallProgress: summary.overallProgress,
      score: summary.score,
      objectivesCompleted: summary.objectivesCompleted,
      milestonesReached: [...e.milestones_reached, ...newMilestones.map((m) => m.name)],
      scoreRaised: summary.score > Number(e.score),
      completedAt: summary.completed ? now : null,
    });
  }
  await store.updateEnrollments(tx, tenantId, participantId, updates, now);
  await emit(tx, tenantId, events);
  for (const e of completions) {
    const source = { kind: 'challenge' as const, id: e.challenge_id };
    if (e.completion_points) {
      await grantPointsInTx(tx, tenantId, { participantId, amount: Number(e.completion_points), reason: `challenge completed: ${e.name}`, type: 'bonus', source });
    }
    if (e.completion_badge_code) await awardBadgeInTx(tx, tenantId, { participantId, badgeCode: e.completion_badge_code, source });
  }
}

/** The fact handler: every fact that asks for challenge evaluation. */
export async function handleFact(tx: Tx, tenantId: string, fact: Fact): Promise<void> {
  if (!fact.evaluateChallenges) return;
  // A batch asks once whether the tenant has any open enrollment at all.
  const open = askBatch(tx, store.anyOpenEnrollment, tenantId);
  if (open && !(await open)) return;
  await evaluateParticipantInTx(tx, tenantId, fact.participantId, fact);
}

export async function reevaluate(db: Database, tenantId: string, participantId: string): Promise<void> {
  await db.tenant(tenantId, (tx) => evaluateParticipantInTx(tx, tenantId, participantId, null));
}
