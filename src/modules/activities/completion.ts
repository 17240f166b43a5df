import { withAnswers, type Database, type Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { AppError, conflict, ruleViolation } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import { emitting, type OutboxEvent } from '../../platform/outbox.js';
import { runFactHandlers, type Fact } from '../../platform/facts.js';
import { questionStatements } from '../../platform/batch.js';
import { publishedActivityStatement, type Action, type PublishedActivity, type Segment } from '../engagements/index.js';
import { claimRewardInTx, previewClaimInTx } from '../rewards/index.js';
import { grantEachInTx } from '../points/index.js';
import { awardBadgeInTx } from '../badges/index.js';
import type { CompleteBody, ValidateBody } from './schemas.js';
import * as store from './store.js';
import { attemptState, checkPayload, keyOf, loadActivity, openAttempt, refuseAttempt, sessionOf, type Result, type Session } from './attempts.js';
import { draw, drawReads, score } from './outcomes.js';
import { FACT_NAMES } from './facts.js';

/**
 * Validate and complete: an attempt checked or drawn, then completed with its
 * on-completion actions and prize, its fact and its events in one
 * transaction; and the completed activities gates read.
 */

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

/**
 * A preview of a draft (src/modules/engagements/preview.ts) shows what the action would give and
 * writes nothing real: no ledger entry, no reward claim, code or stock, no badge.
 */
async function previewAction(ctx: ActionContext, action: Action, source: Executed['source']): Promise<Executed> {
  switch (action.type) {
    case 'award_points':
      return { type: 'award_points', source, points_awarded: action.amount! };
    case 'award_reward': {
      const claim = await previewClaimInTx(ctx.tx, ctx.session.tenantId, action.reward_id!);
      const { reward_id, claim_id, code, display_type, name: title, type, expires_at, image_url } = claim;
      return { type: 'award_reward', source, reward_claimed: { reward_id, claim_id, code, display_type, title, type, expires_at, image_url } };
    }
    case 'grant_badge':
      return { type: 'grant_badge', source, badge_code: action.badge_code!, badge_name: action.badge_code!, badge_image_url: null, awarded: true };
  }
}

/** An action to run and where it comes from. */
interface Planned {
  action: Action;
  source: Executed['source'];
}

/** Points actions in one round trip (`grantEachInTx`), in their order. */
async function grantPoints(ctx: ActionContext, list: Planned[]): Promise<Executed[]> {
  const { tx, session, activity, attemptId } = ctx;
  const inputs = list.map(({ action, source }) => ({
    participantId: session.participantId,
    amount: action.amount!,
    reason: action.reason ?? (source === 'prize' ? `${activity.type}_prize` : `${activity.type}_completed`),
    type: 'award' as const,
    source: { kind: 'activity' as const, id: attemptId },
    activityId: activity.activityId,
    engagementId: session.engagementId,
  }));
  const granted = await grantEachInTx(tx, session.tenantId, inputs, ctx.events);
  return granted.map((grant, i) => ({ type: 'award_points', source: list[i].source, points_awarded: grant.delta, new_balance: grant.available }));
}

/** Runs the actions in order; consecutive points actions travel together (`grantPoints`). */
async function runActions(ctx: ActionContext, list: Planned[]): Promise<Executed[]> {
  const executed: Executed[] = [];
  for (let i = 0; i < list.length; ) {
    let end = i;
    while (!ctx.activity.preview && end < list.length && list[end].action.type === 'award_points') end++;
    if (end > i) {
      executed.push(...(await grantPoints(ctx, list.slice(i, end))));
      i = end;
    } else {
      executed.push(await runAction(ctx, list[i].action, list[i].source));
      i += 1;
    }
  }
  return executed;
}

async function runAction(ctx: ActionContext, action: Action, source: Executed['source']): Promise<Executed> {
  const { tx, session, activity, attemptId } = ctx;
  if (activity.preview) return previewAction(ctx, action, source);
  switch (action.type) {
    case 'award_points':
      return (await grantPoints(ctx, [{ action, source }]))[0];
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
 * completion, the draw is repeated among the prizes still available (the
 * claim runs inside a savepoint, so a failed one leaves nothing behind; only
 * a reward's claim can fail that way, so points and badges need none, and
 * save its two round trips).
 */
async function runPrize(ctx: ActionContext, result: Result): Promise<{ executed: Executed | null; planned: Planned | null; result: Result }> {
  const segments = ctx.activity.config.segments ?? [];
  const excluded = new Set<number>();
  for (let round = 0; round <= segments.length; round++) {
    const action = prizeAction(segments[result.segment_index as number]);
    if (!action) return { executed: null, planned: null, result };
    // Points and badges cannot run out: they run with the on-completion actions (runActions).
    if (action.type !== 'award_reward') return { executed: null, planned: { action, source: 'prize' }, result };
    await ctx.tx.query('SAVEPOINT prize');
    const eventsBefore = ctx.events.length;
    try {
      const executed = await runAction(ctx, action, 'prize');
      await ctx.tx.query('RELEASE SAVEPOINT prize');
      return { executed, planned: null, result };
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
  // The activity's read travels with BEGIN, the completion's record and its events with the COMMIT. Every statement finds
  // its few rows by key, so each is planned once per connection ('generic'): PostgreSQL's own choice flipped between
  // runs, and a grant planned per call spent 0.27 ms planning (docs/decisions/foundation.md, "Prepared statements").
  const lookup = publishedActivityStatement(session.tenantId, session.engagementId, activityId);
  return db.tenantFramedBy(session.tenantId, lookup.text, lookup.values, async (tx, lookupRows) => {
    const activity = await loadActivity(tx, session, activityId, body.activity_type, lookupRows);
    checkPayload(activity, payload);
    // Quiz answers are checked before anything is taken, so bad input changes nothing.
    const quizResult = activity.type === 'quiz' ? score(activity, payload.answers) : null;
    // A wheel's draw reads, and the questions the fact handlers ask (is there an open enrollment, a contest
    // counting this fact?), travel with the attempt's take.
    const reads = activity.type === 'spin_wheel' ? drawReads(session, activity) : null;
    const drawn = reads?.statements.length ?? 0;
    const asked = questionStatements(session.tenantId);
    const attempt = await openAttempt(tx, session, activity, body.attempt_id, true, [...(reads?.statements ?? []), ...asked.statements]);
    const alongside = attempt.alongsideRows;
    if (attempt.status === 'completed') return { result: { ...(attempt.response as unknown as CompletionResponse), duplicate: true }, last: [] };

    const events: OutboxEvent[] = [];
    const ctx: ActionContext = { tx, session, activity, attemptId: attempt.id, events };
    const executed: Executed[] = [];
    const planned: Planned[] = [];
    let result: Result;
    let passed: boolean;
    if (activity.type === 'spin_wheel') {
      const known = reads && alongside ? reads.read(alongside.slice(0, drawn)) : undefined;
      const prize = await runPrize(ctx, attempt.result ?? (await draw(tx, session, activity, new Set(), known)));
      result = prize.result;
      passed = true;
      if (prize.executed) executed.push(prize.executed);
      if (prize.planned) planned.push(prize.planned);
    } else {
      result = quizResult!;
      passed = result.passed as boolean;
    }
    for (const action of activity.config.on_completion ?? []) {
      const when = action.when ?? 'always';
      if (when === 'always' || (when === 'passed') === passed) planned.push({ action, source: 'on_completion' });
    }
    executed.push(...(await runActions(ctx, planned)));

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
    const record = store.recordCompletionStatement(session.tenantId, keyOf(session, activity), {
      attemptId: attempt.id,
      activityType: activity.type,
      result,
      response: response as unknown as Record<string, unknown>,
      openedAt: attempt.opened_at,
      at: now,
      wasOpen: !attempt.fresh,
      fact: { ...fact, source: 'activity', activityId: activity.activityId },
    });
    // A preview's completion counts for nothing: no challenge, streak or contest sees it, and no event leaves.
    if (activity.preview) return { result: response, last: [record] };
    // The handlers read neither the attempt nor the fact's row: they run before both are written, with the COMMIT.
    await runFactHandlers(alongside ? withAnswers(tx, asked.answers(alongside.slice(drawn))) : tx, session.tenantId, fact);
    const legacy = { participant_id: session.participantId, activity_id: activity.activityId, fact_id: fact.id };
    events.push({ event: 'activity.completed', participantId: session.participantId, engagementId: session.engagementId, data: { ...legacy, activity_type: activity.type } });
    if (activity.type === 'quiz') {
      events.push({ event: 'quiz.completed', participantId: session.participantId, engagementId: session.engagementId, data: { ...legacy, score: result.score, passed } });
    }
    return { result: response, last: [record, ...emitting(tx, session.tenantId, events).statements] };
  }, 'generic');
}

// ---------------------------------------------------------------------------
// For gates.

export async function completedActivitiesInTx(tx: Tx, tenantId: string, engagementId: string, participantId: string) {
  return store.completedActivities(tx, tenantId, engagementId, participantId);
}
