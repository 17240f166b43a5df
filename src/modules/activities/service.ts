import { createHash, randomInt } from 'node:crypto';
import type { Database, Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { AppError, conflict, invalid, ruleViolation } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import { emit, type OutboxEvent } from '../../platform/outbox.js';
import { runFactHandlers, type Fact } from '../../platform/facts.js';
import { claimKey, fingerprint, storeResponse } from '../../platform/idempotency.js';
import { ACTIVITY_DEFAULTS, findPublishedActivityInTx, type Action, type PublishedActivity, type Segment } from '../engagements/index.js';
import { claimRewardInTx, unavailableRewardIdsInTx } from '../rewards/index.js';
import { grantInTx } from '../points/index.js';
import { awardBadgeInTx } from '../badges/index.js';
import { ensureParticipant } from '../participants/index.js';
import { LIMITS, type CompleteBody, type EmitFactBody, type Payload, type ReportCompletionBody, type ValidateBody } from './schemas.js';
import * as store from './store.js';
import type { ActivityKey, AttemptRow, ParticipationRow } from './store.js';

// Wheel weights may carry up to six decimals; they are drawn as integers so the
// draw is exact with crypto.randomInt (whose range is below 2^48).
const WEIGHT_SCALE = 1_000_000;
const FACT_NAMES = { spin_wheel: 'activity_completed', quiz: 'quiz_completed' } as const;
/** Facts only the server records; a custom fact may not pretend to be one. */
const RESERVED_FACT_NAMES = new Set(['activity_completed', 'quiz_completed', 'game_completed', 'activity.completed']);
/** A reported completion may say it happened at most this far ahead of the tenant's now (clock skew). */
const REPORTED_FUTURE_SKEW_MS = 5 * 60_000;

type Result = Record<string, unknown>;

interface Session {
  tenantId: string;
  participantId: string;
  engagementId: string;
}

function sessionOf(auth: AuthContext): Session {
  return { tenantId: auth.tenantId, participantId: auth.participantId!, engagementId: auth.engagementId! };
}

// ---------------------------------------------------------------------------
// Checks shared by validate, complete and eligibility.

async function loadActivity(tx: Tx, session: Session, activityId: string, activityType?: string): Promise<PublishedActivity> {
  const activity = await findPublishedActivityInTx(tx, session.tenantId, session.engagementId, activityId);
  if (activityType !== undefined && activityType !== activity.type) {
    throw ruleViolation(`activity ${JSON.stringify(activityId)} is a ${activity.type}, not a ${activityType}`, 'ACTIVITY_TYPE_MISMATCH');
  }
  return activity;
}

function checkPayload(activity: PublishedActivity, payload: Payload): void {
  if (activity.type === 'spin_wheel') {
    for (const field of ['answers', 'score', 'passed'] as const) {
      if (payload[field] !== undefined) throw invalid(`payload.${field} belongs to quizzes, not to a spin_wheel`);
    }
  } else if (payload.spin_result_index !== undefined) {
    throw invalid('payload.spin_result_index belongs to spin wheels, not to a quiz');
  }
}

function cooldownRemainingSeconds(lastAttemptAt: Date | null, cooldownSeconds: number, now: Date): number {
  if (!lastAttemptAt || cooldownSeconds === 0) return 0;
  const remainingMs = lastAttemptAt.getTime() + cooldownSeconds * 1000 - now.getTime();
  return remainingMs > 0 ? Math.ceil(remainingMs / 1000) : 0;
}

function limits(activity: PublishedActivity) {
  return {
    maxAttempts: activity.config.max_attempts ?? ACTIVITY_DEFAULTS.max_attempts,
    cooldownSeconds: activity.config.cooldown_seconds ?? ACTIVITY_DEFAULTS.cooldown_seconds,
  };
}

/**
 * The participant's standing against the activity's limits: a validated
 * attempt waiting for completion can always be completed; otherwise a new
 * attempt needs an attempt left and the cooldown passed.
 */
function attemptState(row: ParticipationRow | null, activity: PublishedActivity, now: Date) {
  const { maxAttempts, cooldownSeconds } = limits(activity);
  const used = row?.attempts_used ?? 0;
  const openAttemptId = row?.open_attempt_id ?? null;
  const cooldownRemaining = cooldownRemainingSeconds(row?.last_attempt_at ?? null, cooldownSeconds, now);
  return { used, maxAttempts, cooldownRemaining, openAttemptId, eligible: openAttemptId !== null || (used < maxAttempts && cooldownRemaining === 0) };
}

/** Explains why no attempt could be taken: always a 4xx with the figures. */
async function refuseAttempt(tx: Tx, session: Session, activity: PublishedActivity): Promise<never> {
  const row = await store.readParticipation(tx, session.tenantId, keyOf(session, activity));
  const { used, maxAttempts, cooldownRemaining } = attemptState(row, activity, clock.now(session.tenantId));
  if (used >= maxAttempts) {
    throw new AppError('rule_violation', 'ATTEMPTS_EXHAUSTED', `all ${maxAttempts} attempts of this activity are used`, { attempts_used: used, max_attempts: maxAttempts });
  }
  if (cooldownRemaining > 0) {
    throw new AppError('rule_violation', 'COOLDOWN_ACTIVE', `the next attempt is possible in ${cooldownRemaining} seconds`, { cooldown_remaining_seconds: cooldownRemaining });
  }
  throw conflict('another attempt of this activity is in progress; retry', 'ATTEMPT_IN_PROGRESS');
}

function keyOf(session: Session, activity: PublishedActivity): ActivityKey {
  return { engagementId: session.engagementId, activityId: activity.activityId, participantId: session.participantId };
}

export async function eligibility(db: Database, auth: AuthContext, activityId: string) {
  const session = sessionOf(auth);
  return db.tenant(session.tenantId, async (tx) => {
    const activity = await loadActivity(tx, session, activityId);
    const row = await store.readParticipation(tx, session.tenantId, keyOf(session, activity));
    const state = attemptState(row, activity, clock.now(session.tenantId));
    return {
      eligible: state.eligible,
      attempts_used: state.used,
      max_attempts: state.maxAttempts,
      // A waiting attempt is completed, not started: no cooldown applies to it.
      cooldown_remaining_seconds: state.openAttemptId !== null ? 0 : state.cooldownRemaining,
      open_attempt_id: state.openAttemptId,
    };
  });
}

// ---------------------------------------------------------------------------
// Spin wheel: the draw.

/** Segments that may still be drawn: inventory left and, for reward prizes, the reward claimable. */
async function drawableSegments(tx: Tx, session: Session, activity: PublishedActivity, excluded: Set<number>): Promise<number[]> {
  const segments = activity.config.segments ?? [];
  const limited = segments.some((s) => s.inventory !== undefined);
  const awarded = limited ? await store.segmentsAwarded(tx, session.tenantId, session.engagementId, activity.activityId) : new Map<number, number>();
  const rewardIds = [...new Set(segments.filter((s) => s.reward_id).map((s) => s.reward_id!))];
  const unavailable = rewardIds.length ? await unavailableRewardIdsInTx(tx, session.tenantId, rewardIds) : new Set<string>();
  return segments
    .map((segment, index) => ({ segment, index }))
    .filter(({ segment, index }) => !excluded.has(index))
    .filter(({ segment, index }) => segment.inventory === undefined || (awarded.get(index) ?? 0) < segment.inventory)
    .filter(({ segment }) => !segment.reward_id || !unavailable.has(segment.reward_id))
    .map(({ index }) => index);
}

/** Picks one index with probability proportional to its weight, from a cryptographic source. */
export function weightedPick(segments: Segment[], candidates: number[]): number {
  const weights = candidates.map((index) => Math.max(1, Math.round(segments[index].weight * WEIGHT_SCALE)));
  const total = weights.reduce((sum, w) => sum + w, 0);
  let ticket = randomInt(total);
  for (let i = 0; i < candidates.length; i++) {
    if (ticket < weights[i]) return candidates[i];
    ticket -= weights[i];
  }
  return candidates[candidates.length - 1];
}

function segmentResult(segments: Segment[], index: number): Result {
  return { segment_index: index, prize_label: segments[index].label, prize_type: segments[index].prize_type };
}

/**
 * Draws a segment and takes one unit of its inventory. A segment whose stock
 * ran out between the read and the take is excluded and the draw repeated,
 * so a used-up prize is never handed out.
 */
async function draw(tx: Tx, session: Session, activity: PublishedActivity, excluded = new Set<number>()): Promise<Result> {
  const segments = activity.config.segments ?? [];
  for (let round = 0; round <= segments.length; round++) {
    const candidates = await drawableSegments(tx, session, activity, excluded);
    if (candidates.length === 0) throw ruleViolation('every prize of this wheel is exhausted', 'PRIZES_EXHAUSTED');
    const index = weightedPick(segments, candidates);
    const inventory = segments[index].inventory;
    if (inventory === undefined || (await store.takeSegment(tx, session.tenantId, session.engagementId, activity.activityId, index, inventory))) {
      return segmentResult(segments, index);
    }
    excluded.add(index);
  }
  throw ruleViolation('every prize of this wheel is exhausted', 'PRIZES_EXHAUSTED');
}

// ---------------------------------------------------------------------------
// Quiz: scoring on the server.

function score(activity: PublishedActivity, answers: Payload['answers']): Result {
  const questions = activity.config.questions ?? [];
  const byId = new Map(questions.map((q) => [q.id, q]));
  const seen = new Set<string>();
  let correct = 0;
  for (const answer of answers ?? []) {
    const question = byId.get(answer.question_id);
    if (!question) throw ruleViolation(`answers name the unknown question ${JSON.stringify(answer.question_id)}`, 'UNKNOWN_QUESTION');
    if (seen.has(answer.question_id)) throw invalid(`answers repeat the question ${JSON.stringify(answer.question_id)}`);
    seen.add(answer.question_id);
    if (answer.selected_option >= question.options.length) {
      throw ruleViolation(`selected_option ${answer.selected_option} of question ${JSON.stringify(question.id)} is outside its ${question.options.length} options`, 'INVALID_OPTION');
    }
    if (answer.selected_option === question.correct_option) correct += 1;
  }
  const percent = questions.length ? Math.round((100 * correct) / questions.length) : 0;
  return {
    score: percent,
    passed: percent >= (activity.config.pass_percent ?? ACTIVITY_DEFAULTS.pass_percent),
    correct_answers: correct,
    total_questions: questions.length,
    answered: seen.size,
  };
}

// ---------------------------------------------------------------------------
// Validate.

export async function validate(db: Database, auth: AuthContext, activityId: string, body: ValidateBody) {
  const session = sessionOf(auth);
  const payload = body.payload ?? {};
  return db.tenant(session.tenantId, async (tx) => {
    const activity = await loadActivity(tx, session, activityId, body.activity_type);
    checkPayload(activity, payload);
    if (activity.type === 'quiz') {
      // Checking answers reveals nothing about correctness and takes no attempt,
      // but the limits still apply.
      const row = await store.readParticipation(tx, session.tenantId, keyOf(session, activity));
      if (!attemptState(row, activity, clock.now(session.tenantId)).eligible) await refuseAttempt(tx, session, activity);
      const scored = score(activity, payload.answers);
      return { valid: true, result: { answered: scored.answered as number, total_questions: scored.total_questions as number }, attempt_id: null };
    }
    const attempt = await openAttempt(tx, session, activity, body.attempt_id, false);
    if (attempt.status === 'completed') throw conflict('this attempt is already completed; start a new one', 'ATTEMPT_COMPLETED');
    let result = attempt.result;
    if (!result) {
      result = await draw(tx, session, activity);
      await store.setAttemptResult(tx, session.tenantId, attempt.id, result);
    }
    const claimed = payload.spin_result_index;
    return { valid: claimed === undefined || claimed === result.segment_index, result, attempt_id: attempt.id };
  });
}

/**
 * The attempt a call acts on: the named one (which must belong to this
 * participant and activity), the participant's waiting validated attempt, or
 * a new one taken under the limits.
 */
async function openAttempt(tx: Tx, session: Session, activity: PublishedActivity, requestedId: string | undefined, completing: boolean): Promise<AttemptRow & { fresh: boolean }> {
  const key = keyOf(session, activity);
  if (requestedId !== undefined) {
    await store.lockAttemptId(tx, session.tenantId, requestedId);
    const existing = await store.lockAttempt(tx, session.tenantId, requestedId);
    if (existing) {
      if (existing.participant_id !== session.participantId || existing.engagement_id !== session.engagementId || existing.activity_id !== activity.activityId) {
        throw conflict('attempt_id is already used by another attempt; choose a new one', 'ATTEMPT_ID_IN_USE');
      }
      return { ...existing, fresh: false };
    }
  } else {
    const waiting = (await store.readParticipation(tx, session.tenantId, key))?.open_attempt_id;
    if (waiting) {
      const existing = await store.lockAttempt(tx, session.tenantId, waiting);
      if (existing && existing.status === 'open') return { ...existing, fresh: false };
    }
  }
  const now = clock.now(session.tenantId);
  const attemptId = requestedId ?? prefixedId('att', 12);
  const { maxAttempts, cooldownSeconds } = limits(activity);
  if (!(await store.takeAttempt(tx, session.tenantId, key, { attemptId, at: now, maxAttempts, cooldownSeconds, completing }))) {
    await refuseAttempt(tx, session, activity);
  }
  if (!completing) {
    await store.insertOpenAttempt(tx, session.tenantId, key, { id: attemptId, activityType: activity.type, result: null, at: now });
  }
  return {
    id: attemptId,
    engagement_id: session.engagementId,
    activity_id: activity.activityId,
    participant_id: session.participantId,
    status: 'open',
    result: null,
    response: null,
    opened_at: now,
    fresh: true,
  };
}

// ---------------------------------------------------------------------------
// Complete with actions.

interface Executed {
  type: 'award_points' | 'award_reward' | 'grant_badge';
  source: 'on_completion' | 'prize';
  points_awarded?: number;
  new_balance?: number;
  reward_claimed?: {
    reward_id: string;
    claim_id: string;
    code: string | null;
    display_type: string;
    title: string;
    type: string;
    expires_at: string | null;
    image_url?: string | null;
  };
  badge_code?: string;
  badge_name?: string;
  badge_image_url?: string | null;
  awarded?: boolean;
}

interface CompletionResponse {
  success: boolean;
  actions_executed: Executed[];
  fact_id: string;
  attempt_id: string;
  activity_type: 'spin_wheel' | 'quiz';
  result: Result;
  duplicate: boolean;
}

interface ActionContext {
  tx: Tx;
  session: Session;
  activity: PublishedActivity;
  attemptId: string;
  events: OutboxEvent[];
}

async function runAction(ctx: ActionContext, action: Action, source: Executed['source']): Promise<Executed> {
  const { tx, session, activity, attemptId } = ctx;
  switch (action.type) {
    case 'award_points': {
      const granted = await grantInTx(tx, session.tenantId, {
        participantId: session.participantId,
        amount: action.amount!,
        reason: action.reason ?? (source === 'prize' ? `${activity.type}_prize` : `${activity.type}_completed`),
        type: 'award',
        source: { kind: 'activity', id: attemptId },
        activityId: activity.activityId,
        engagementId: session.engagementId,
      }, ctx.events);
      return { type: 'award_points', source, points_awarded: granted.delta, new_balance: granted.available };
    }
    case 'award_reward': {
      const claim = await claimRewardInTx(
        tx,
        session.tenantId,
        { rewardId: action.reward_id!, participantId: session.participantId, engagementId: session.engagementId, activityId: activity.activityId, attemptId },
        ctx.events,
      );
      return {
        type: 'award_reward',
        source,
        reward_claimed: {
          reward_id: claim.reward_id,
          claim_id: claim.claim_id,
          code: claim.code,
          display_type: claim.display_type,
          title: claim.name,
          type: claim.type,
          expires_at: claim.expires_at,
          image_url: claim.image_url,
        },
      };
    }
    case 'grant_badge': {
      const granted = await awardBadgeInTx(tx, session.tenantId, { participantId: session.participantId, badgeCode: action.badge_code!, source: { kind: 'activity', id: attemptId } });
      return { type: 'grant_badge', source, badge_code: action.badge_code!, badge_name: granted.name, badge_image_url: granted.imageUrl, awarded: granted.awarded };
    }
  }
}

function prizeAction(segment: Segment): Action | null {
  switch (segment.prize_type) {
    case 'points':
      return { type: 'award_points', amount: segment.prize_value! };
    case 'reward':
      return { type: 'award_reward', reward_id: segment.reward_id! };
    case 'badge':
      return { type: 'grant_badge', badge_code: segment.badge_code! };
    default:
      return null;
  }
}

const PRIZE_GONE_CODES = new Set(['REWARD_OUT_OF_STOCK', 'REWARD_EXPIRED', 'REWARD_UNAVAILABLE']);

/**
 * The wheel's prize. If the drawn reward ran out between validation and
 * completion, the draw is repeated among the prizes still available (inside a
 * savepoint, so the failed claim leaves nothing behind).
 */
async function runPrize(ctx: ActionContext, result: Result): Promise<{ executed: Executed | null; result: Result }> {
  const segments = ctx.activity.config.segments ?? [];
  const excluded = new Set<number>();
  for (let round = 0; round <= segments.length; round++) {
    const action = prizeAction(segments[result.segment_index as number]);
    if (!action) return { executed: null, result };
    await ctx.tx.query('SAVEPOINT prize');
    const eventsBefore = ctx.events.length;
    try {
      const executed = await runAction(ctx, action, 'prize');
      await ctx.tx.query('RELEASE SAVEPOINT prize');
      return { executed, result };
    } catch (error) {
      if (!(error instanceof AppError) || !PRIZE_GONE_CODES.has(error.code)) throw error;
      await ctx.tx.query('ROLLBACK TO SAVEPOINT prize');
      // The events of the rolled-back prize go with it.
      ctx.events.length = eventsBefore;
      excluded.add(result.segment_index as number);
      result = await draw(ctx.tx, ctx.session, ctx.activity, excluded);
    }
  }
  throw ruleViolation('every prize of this wheel is exhausted', 'PRIZES_EXHAUSTED');
}

export async function complete(db: Database, auth: AuthContext, activityId: string, body: CompleteBody) {
  const session = sessionOf(auth);
  const payload = body.payload ?? {};
  return db.tenant(session.tenantId, async (tx) => {
    const activity = await loadActivity(tx, session, activityId, body.activity_type);
    checkPayload(activity, payload);
    // Quiz answers are checked before anything is taken, so bad input changes nothing.
    const quizResult = activity.type === 'quiz' ? score(activity, payload.answers) : null;
    const attempt = await openAttempt(tx, session, activity, body.attempt_id, true);
    if (attempt.status === 'completed') return { ...(attempt.response as unknown as CompletionResponse), duplicate: true };

    const events: OutboxEvent[] = [];
    const ctx: ActionContext = { tx, session, activity, attemptId: attempt.id, events };
    const executed: Executed[] = [];
    let result: Result;
    let passed: boolean;
    if (activity.type === 'spin_wheel') {
      const prize = await runPrize(ctx, attempt.result ?? (await draw(tx, session, activity)));
      result = prize.result;
      passed = true;
      if (prize.executed) executed.push(prize.executed);
    } else {
      result = quizResult!;
      passed = result.passed as boolean;
    }
    for (const action of activity.config.on_completion ?? []) {
      const when = action.when ?? 'always';
      if (when === 'always' || (when === 'passed') === passed) executed.push(await runAction(ctx, action, 'on_completion'));
    }

    const now = clock.now(session.tenantId);
    const fact: Fact = {
      id: prefixedId('fct', 12),
      name: FACT_NAMES[activity.type],
      participantId: session.participantId,
      engagementId: session.engagementId,
      properties: { activity_id: activity.activityId, activity_type: activity.type, attempt_id: attempt.id, ...result },
      occurredAt: now,
      source: 'activity',
      activityId: activity.activityId,
      evaluateChallenges: true,
    };
    const response: CompletionResponse = {
      success: true,
      actions_executed: executed,
      fact_id: fact.id,
      attempt_id: attempt.id,
      activity_type: activity.type,
      result,
      duplicate: false,
    };
    await store.recordCompletion(tx, session.tenantId, keyOf(session, activity), {
      attemptId: attempt.id,
      activityType: activity.type,
      result,
      response: response as unknown as Record<string, unknown>,
      openedAt: attempt.opened_at,
      at: now,
      wasOpen: !attempt.fresh,
      fact: { ...fact, source: 'activity', activityId: activity.activityId },
    });
    await runFactHandlers(tx, session.tenantId, fact);
    const legacy = { participant_id: session.participantId, activity_id: activity.activityId, fact_id: fact.id };
    events.push({ event: 'activity.completed', participantId: session.participantId, engagementId: session.engagementId, data: { ...legacy, activity_type: activity.type } });
    if (activity.type === 'quiz') {
      events.push({ event: 'quiz.completed', participantId: session.participantId, engagementId: session.engagementId, data: { ...legacy, score: result.score, passed } });
    }
    await emit(tx, session.tenantId, events);
    return response;
  });
}

// ---------------------------------------------------------------------------
// Custom facts.

export async function emitFact(db: Database, auth: AuthContext, body: EmitFactBody) {
  const session = sessionOf(auth);
  if (RESERVED_FACT_NAMES.has(body.fact_name)) {
    throw ruleViolation(
      `${body.fact_name} facts are recorded by the service when an activity completes; a completion outside the runtime is reported by the tenant's server with POST /api/v1/activities/{activity_id}/completions`,
      'RESERVED_FACT_NAME',
    );
  }
  const properties = body.properties ?? {};
  if (Buffer.byteLength(JSON.stringify(properties)) > LIMITS.factPropertiesBytesMax) throw invalid(`properties must be at most ${LIMITS.factPropertiesBytesMax} bytes as JSON`);
  const evaluate = body.trigger_challenge_evaluation ?? false;
  return db.tenant(session.tenantId, async (tx) => {
    const scope = `activities.facts:${session.participantId}`;
    if (body.idempotency_key !== undefined) {
      const claim = await claimKey<Record<string, unknown>>(tx, session.tenantId, scope, body.idempotency_key, fingerprint({ ...body, session_id: undefined }));
      if (!claim.fresh) return { ...claim.response, duplicate: true } as ReturnType<typeof presentFact>;
    }
    const fact: Fact = {
      id: prefixedId('fct', 12),
      name: body.fact_name,
      participantId: session.participantId,
      engagementId: session.engagementId,
      properties,
      occurredAt: clock.now(session.tenantId),
      source: 'custom',
      activityId: null,
      evaluateChallenges: evaluate,
    };
    await store.insertFact(tx, session.tenantId, { ...fact, activityId: null, source: 'custom' });
    await runFactHandlers(tx, session.tenantId, fact);
    const response = presentFact(fact);
    if (body.idempotency_key !== undefined) await storeResponse(tx, session.tenantId, scope, body.idempotency_key, response);
    return response;
  });
}

// ---------------------------------------------------------------------------
// Completions reported by the tenant's server.

/** The fact id of a reported completion: the same completion_id always names the same fact. */
function reportedFactId(completionId: string): string {
  return `fct_r${createHash('sha256').update(completionId).digest('hex').slice(0, 32)}`;
}

/**
 * The tenant's server reports that a participant completed an activity
 * outside the runtime (its own app, a kiosk, a call centre). The completion
 * becomes the same fact a runtime completion records, so `activity_count`
 * objectives and contests count it. Anti-abuse (decisions/activities.md):
 * server credentials only; the activity must be published in the tenant; one
 * fact per completion_id; and it takes one of the participant's attempts, so
 * the activity's max_attempts caps runtime and reported completions together.
 * The activity's own on-completion actions and prizes do not run: the server
 * decided the outcome itself.
 */
export async function reportCompletion(db: Database, tenantId: string, activityId: string, body: ReportCompletionBody) {
  const properties = body.properties ?? {};
  if (Buffer.byteLength(JSON.stringify(properties)) > LIMITS.factPropertiesBytesMax) throw invalid(`properties must be at most ${LIMITS.factPropertiesBytesMax} bytes as JSON`);
  const session: Session = { tenantId, participantId: body.participant_id, engagementId: body.engagement_id };
  return db.tenant(tenantId, async (tx) => {
    const activity = await loadActivity(tx, session, activityId);
    const now = clock.now(tenantId);
    const occurredAt = body.occurred_at ? new Date(body.occurred_at) : now;
    if (occurredAt.getTime() > now.getTime() + REPORTED_FUTURE_SKEW_MS) {
      throw ruleViolation(`occurred_at lies more than ${REPORTED_FUTURE_SKEW_MS / 60_000} minutes after now (${now.toISOString()})`, 'TIMESTAMP_IN_FUTURE');
    }
    const { maxAttempts } = limits(activity);
    const fact: Fact = {
      id: reportedFactId(body.completion_id),
      name: FACT_NAMES[activity.type],
      participantId: body.participant_id,
      engagementId: body.engagement_id,
      properties: { ...properties, activity_id: activity.activityId, activity_type: activity.type, completion_id: body.completion_id, reported_by: 'server' },
      occurredAt,
      source: 'activity',
      activityId: activity.activityId,
      evaluateChallenges: true,
    };
    const answer = (attemptsUsed: number, at: Date, duplicate: boolean) => ({
      fact_id: fact.id,
      completion_id: body.completion_id,
      activity_id: activity.activityId,
      activity_type: activity.type,
      engagement_id: body.engagement_id,
      participant_id: body.participant_id,
      occurred_at: at.toISOString(),
      attempts_used: attemptsUsed,
      max_attempts: maxAttempts,
      duplicate,
    });
    await ensureParticipant(tx, tenantId, body.participant_id);
    if (!(await store.insertFactOnce(tx, tenantId, { ...fact, activityId: activity.activityId, source: 'activity' }))) {
      const first = (await store.readFact(tx, tenantId, fact.id))!;
      if (first.participant_id !== body.participant_id || first.activity_id !== activity.activityId || first.engagement_id !== body.engagement_id) {
        throw conflict(`completion_id ${JSON.stringify(body.completion_id)} was already reported for another participant or activity`, 'COMPLETION_ID_REUSED');
      }
      const row = await store.readParticipation(tx, tenantId, keyOf(session, activity));
      return answer(row?.attempts_used ?? 0, first.occurred_at, true);
    }
    const attemptsUsed = await store.takeReportedAttempt(tx, tenantId, keyOf(session, activity), occurredAt, maxAttempts);
    if (attemptsUsed === null) {
      throw new AppError('rule_violation', 'ATTEMPTS_EXHAUSTED', `all ${maxAttempts} attempts of this activity are used by this participant`, { max_attempts: maxAttempts });
    }
    await runFactHandlers(tx, tenantId, fact);
    await emit(tx, tenantId, {
      event: 'activity.completed',
      participantId: body.participant_id,
      engagementId: body.engagement_id,
      data: { participant_id: body.participant_id, activity_id: activity.activityId, fact_id: fact.id, activity_type: activity.type },
    });
    return answer(attemptsUsed, occurredAt, false);
  });
}

function presentFact(fact: Fact) {
  return {
    fact_id: fact.id,
    fact_name: fact.name,
    participant_id: fact.participantId,
    occurred_at: fact.occurredAt.toISOString(),
    challenge_evaluation_triggered: fact.evaluateChallenges,
    duplicate: false,
  };
}

// ---------------------------------------------------------------------------
// For gates.

export async function completedActivitiesInTx(tx: Tx, tenantId: string, engagementId: string, participantId: string) {
  return store.completedActivities(tx, tenantId, engagementId, participantId);
}

