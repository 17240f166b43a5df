import { runStatements, withAnswers, type Database, type Statement, type Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { AppError, conflict, ruleViolation } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import { emitting, type OutboxEvent } from '../../platform/outbox.js';
import { runFactHandlers, type Fact } from '../../platform/facts.js';
import { questionStatements, roundsOf, type BatchAnswers } from '../../platform/batch.js';
import { publishedActivityStatement, type Action, type PublishedActivity, type Segment } from '../engagements/index.js';
import { claimRewardInTx, previewClaimInTx } from '../rewards/index.js';
import { grantEachInTx } from '../points/index.js';
import { awardBadgeInTx } from '../badges/index.js';
import type { CompleteBody, ValidateBody } from './schemas.js';
import * as store from './store.js';
import { attemptOfTake, attemptState, checkPayload, keyOf, loadActivity, newAttempts, openAttempt, refuseAttempt, sessionOf, type OpenedAttempt, type Take, type Result, type Session } from './attempts.js';
import { draw, drawReads, score, type Drawable } from './outcomes.js';
import { FACT_NAMES } from './facts.js';
import { completionBatchesSplit, completionBatchSize } from '../../platform/metrics.js';

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

export interface CompletionResponse {
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
  /** The trace context of the call's request (CompletionCall.traceparent). */
  traceparent?: string | null;
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

/** The points actions of one or several completions in one round trip (`grantEachInTx`), in their order. */
async function grantPoints(lists: ReadonlyArray<{ ctx: ActionContext; list: Planned[] }>): Promise<Executed[][]> {
  const { tx, session, events } = lists[0].ctx;
  const inputs = lists.flatMap(({ ctx: { session: own, activity, attemptId, traceparent }, list }) =>
    list.map(({ action, source }) => ({
      traceparent,
      participantId: own.participantId,
      amount: action.amount!,
      reason: action.reason ?? (source === 'prize' ? `${activity.type}_prize` : `${activity.type}_completed`),
      type: 'award' as const,
      source: { kind: 'activity' as const, id: attemptId },
      activityId: activity.activityId,
      engagementId: own.engagementId,
    })),
  );
  const granted = await grantEachInTx(tx, session.tenantId, inputs, events);
  let next = 0;
  return lists.map(({ list }) => list.map(({ source }) => {
    const grant = granted[next++];
    return { type: 'award_points' as const, source, points_awarded: grant.delta, new_balance: grant.available };
  }));
}

/** Runs the actions in order; consecutive points actions travel together (`grantPoints`). */
async function runActions(ctx: ActionContext, list: Planned[]): Promise<Executed[]> {
  const executed: Executed[] = [];
  for (let i = 0; i < list.length; ) {
    let end = i;
    while (!ctx.activity.preview && end < list.length && list[end].action.type === 'award_points') end++;
    if (end > i) {
      executed.push(...(await grantPoints([{ ctx, list: list.slice(i, end) }]))[0]);
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
      return (await grantPoints([{ ctx, list: [{ action, source }] }]))[0][0];
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

/** A completion asked for: the session's, of one activity, with its body. */
export interface CompletionCall {
  session: Session;
  activityId: string;
  body: CompleteBody;
  /**
   * The trace context of the call's request: a batch runs in the context of
   * the request that started it, and each call's events carry their own.
   */
  traceparent?: string | null;
}

/** A completion's answer, or the error that refused it before it wrote anything. */
export type CompletionOutcome = { response: CompletionResponse } | { error: unknown };

/** A batch that cannot go as one: its calls go one by one. */
class Unbatchable extends Error {}

/**
 * Completes `calls`, all of one tenant, engagement and activity, in one
 * transaction (a crowd's completions waiting together, `completion-batches.ts`;
 * a lone request is a batch of one): the activity read with BEGIN, every new
 * attempt's take with the wheel's draw reads and the fact handlers' questions,
 * the draws, the points of every call in one message, and the records and
 * events with COMMIT — four round trips however many calls. A call refused
 * before it writes (its activity, its payload, its limits) is answered with
 * its error and the others go on; a failure after the takes rolls the batch
 * back, and its calls run again one by one. Only a lone call may name its
 * attempt (`attempt_id`).
 */
export async function completeMany(db: Database, calls: readonly CompletionCall[]): Promise<CompletionOutcome[]> {
  const { session, activityId } = calls[0];
  // The activity's read travels with BEGIN, the completion's record and its events with the COMMIT. Every statement finds
  // its few rows by key, so each is planned once per connection ('generic'): PostgreSQL's own choice flipped between
  // runs, and a grant planned per call spent 0.27 ms planning (docs/decisions/foundation.md, "Prepared statements").
  const lookup = publishedActivityStatement(session.tenantId, session.engagementId, activityId);
  try {
    const outcomes = await db.tenantFramedBy(session.tenantId, lookup.text, lookup.values, (tx, lookupRows) => completeInTx(tx, calls, lookupRows), 'generic');
    completionBatchSize.observe(calls.length);
    return outcomes;
  } catch (error) {
    if (calls.length === 1) throw error;
    // Nothing of the batch was committed.
    completionBatchesSplit.inc();
    return Promise.all(calls.map((call) => completeMany(db, [call]).then(([outcome]) => outcome, (failure: unknown) => ({ error: failure }))));
  }
}

/** A call of a batch that passed its checks, with its activity. */
interface Accepted {
  index: number;
  call: CompletionCall;
  activity: PublishedActivity;
  quizResult: Result | null;
}

/** A call whose attempt is open: its outcome, and the actions it will run. */
interface Plan {
  one: Accepted;
  attempt: OpenedAttempt;
  ctx: ActionContext;
  executed: Executed[];
  planned: Planned[];
  result: Result;
  passed: boolean;
}

async function completeInTx(tx: Tx, calls: readonly CompletionCall[], lookupRows: unknown[]): Promise<{ result: CompletionOutcome[]; last: readonly Statement[] }> {
  const outcomes: CompletionOutcome[] = new Array(calls.length);
  const accepted = await acceptCalls(tx, calls, lookupRows, outcomes);
  if (accepted.length === 0) return { result: outcomes, last: [] };
  // One activity for the whole batch: a preview session runs the draft's.
  if (calls.length > 1 && accepted.some(({ activity }) => activity.preview)) throw new Unbatchable('a preview completion goes alone');
  const { session } = accepted[0].call;
  const { activity } = accepted[0];

  // A wheel's draw reads, and the questions the fact handlers ask (is there an open enrollment, a contest
  // counting this fact?), travel with the attempts' takes.
  const reads = activity.type === 'spin_wheel' ? drawReads(session, activity) : null;
  const drawn = reads?.statements.length ?? 0;
  const asked = questionStatements(session.tenantId);
  const opening = await openAttempts(tx, calls, accepted, [...(reads?.statements ?? []), ...asked.statements], outcomes);
  if ('duplicate' in opening) return { result: [{ response: opening.duplicate }], last: [] };
  const { opened, alongsideRows } = opening;
  const known = reads && alongsideRows ? reads.read(alongsideRows.slice(0, drawn)) : undefined;
  const answers = alongsideRows ? asked.answers(alongsideRows.slice(drawn)) : null;

  // From here on a failure rolls the whole batch back (`completeMany`).
  const events: OutboxEvent[] = [];
  const plans: Plan[] = [];
  for (const { one, attempt } of opened) {
    const from = events.length;
    const { traceparent } = one.call;
    plans.push(await planCompletion({ tx, session: one.call.session, activity: one.activity, attemptId: attempt.id, events, traceparent }, one, attempt, known));
    traced(events, from, traceparent);
  }
  // Every call's points in one message when the calls award nothing else; otherwise each call's actions in their order.
  if (plans.length > 1 && plans.every(({ planned }) => planned.every(({ action }) => action.type === 'award_points'))) {
    const granted = await grantPoints(plans.map(({ ctx, planned }) => ({ ctx, list: planned })));
    plans.forEach((plan, i) => plan.executed.push(...granted[i]));
  } else {
    for (const plan of plans) {
      const from = events.length;
      plan.executed.push(...(await runActions(plan.ctx, plan.planned)));
      traced(events, from, plan.ctx.traceparent);
    }
  }

  const records: store.CompletionRecord[] = [];
  const completed: OutboxEvent[] = [];
  for (const plan of plans) {
    const done = await recordCompletion(plan, answers);
    outcomes[plan.one.index] = { response: done.response };
    records.push(done.record);
    completed.push(...done.events.map((event) => (plan.ctx.traceparent === undefined ? event : { ...event, traceparent: plan.ctx.traceparent })));
  }
  const last: Statement[] = records.length ? [store.recordCompletionStatement(session.tenantId, records)] : [];
  // Per participant, the events keep their order: the prize's claim, the points, the completion.
  const all = [...events, ...completed];
  return { result: outcomes, last: all.length ? [...last, ...emitting(tx, session.tenantId, all).statements] : last };
}

/** Gives the events from `from` on that carry no trace context of their own the call's (`CompletionCall.traceparent`). */
function traced(events: OutboxEvent[], from: number, traceparent: string | null | undefined): void {
  if (traceparent === undefined) return;
  for (let i = from; i < events.length; i++) if (events[i].traceparent === undefined) events[i] = { ...events[i], traceparent };
}

/** The calls whose activity and payload pass; the others are answered with their error in `outcomes`. */
async function acceptCalls(tx: Tx, calls: readonly CompletionCall[], lookupRows: unknown[], outcomes: CompletionOutcome[]): Promise<Accepted[]> {
  const accepted: Accepted[] = [];
  for (const [index, call] of calls.entries()) {
    try {
      const activity = await loadActivity(tx, call.session, call.activityId, call.body.activity_type, lookupRows);
      const payload = call.body.payload ?? {};
      checkPayload(activity, payload);
      // Quiz answers are checked before anything is taken, so bad input changes nothing.
      accepted.push({ index, call, activity, quizResult: activity.type === 'quiz' ? score(activity, payload.answers) : null });
    } catch (error) {
      outcomes[index] = { error };
    }
  }
  return accepted;
}

/**
 * The attempts of the accepted calls, with `alongside` answered in the same
 * round trip: a lone call's named attempt (`openAttempt`; a completed one is
 * answered again as a duplicate), or every call's new attempt taken in one
 * message. A refused take wrote nothing: its call is answered with the
 * refusal in `outcomes`.
 */
async function openAttempts(
  tx: Tx,
  calls: readonly CompletionCall[],
  accepted: Accepted[],
  alongside: Statement[],
  outcomes: CompletionOutcome[],
): Promise<{ opened: Array<{ one: Accepted; attempt: OpenedAttempt }>; alongsideRows: unknown[][] | null } | { duplicate: CompletionResponse }> {
  const named = calls.length === 1 ? calls[0].body.attempt_id : undefined;
  if (named !== undefined) {
    const [one] = accepted;
    const attempt = await openAttempt(tx, one.call.session, one.activity, named, true, alongside);
    if (attempt.status === 'completed') return { duplicate: { ...(attempt.response as unknown as CompletionResponse), duplicate: true } };
    return { opened: [{ one, attempt }], alongsideRows: attempt.alongsideRows };
  }
  if (calls.some((call) => call.body.attempt_id !== undefined)) throw new Error('only a lone completion names its attempt');
  // One activity for the batch (`completeInTx`). The takes go in rounds, one statement each, in one message: a participant's
  // second completion in a batch is taken (or refused with its figures) after its first, as it would be alone.
  const rounds = roundsOf([...accepted.keys()], (k) => accepted[k].call.session.participantId);
  const made = rounds.map((round) => newAttempts(round.map((k) => accepted[k].call.session), accepted[0].activity, true));
  const answers = await runStatements(tx, [...made.map((round) => round.statement), ...alongside]);
  const takeOf: Array<{ take: Take; taken: unknown[] }> = [];
  rounds.forEach((round, r) => round.forEach((k, i) => (takeOf[k] = { take: made[r].takes[i], taken: answers[r] })));
  const opened: Array<{ one: Accepted; attempt: OpenedAttempt }> = [];
  for (const [k, one] of accepted.entries()) {
    let attempt: OpenedAttempt;
    try {
      attempt = await attemptOfTake(tx, one.call.session, one.activity, takeOf[k].take, takeOf[k].taken, true, false);
    } catch (error) {
      outcomes[one.index] = { error };
      continue;
    }
    // Two completions of one validated attempt: alone, the second would wait for the first's commit and then take a
    // new attempt or be refused. In one transaction it would find the same attempt still open.
    if (!attempt.fresh && opened.some((other) => other.attempt.id === attempt.id)) throw new Unbatchable('one waiting attempt, completed twice in a batch');
    opened.push({ one, attempt });
  }
  return { opened, alongsideRows: answers.slice(made.length) };
}

/** A call's outcome (the wheel's prize, drawn from `known` first, or the quiz's score) and the actions it will run. */
async function planCompletion(ctx: ActionContext, one: Accepted, attempt: OpenedAttempt, known: Drawable | undefined): Promise<Plan> {
  const executed: Executed[] = [];
  const planned: Planned[] = [];
  let result: Result;
  let passed: boolean;
  if (one.activity.type === 'spin_wheel') {
    // The draw's reads are the batch's: one that is stale by an earlier call's prize is as safe as between two
    // concurrent spins, since a segment's take and a reward's claim refuse what ran out and the draw is repeated.
    const prize = await runPrize(ctx, attempt.result ?? (await draw(ctx.tx, ctx.session, one.activity, new Set(), known)));
    result = prize.result;
    passed = true;
    if (prize.executed) executed.push(prize.executed);
    if (prize.planned) planned.push(prize.planned);
  } else {
    result = one.quizResult!;
    passed = result.passed as boolean;
  }
  for (const action of one.activity.config.on_completion ?? []) {
    const when = action.when ?? 'always';
    if (when === 'always' || (when === 'passed') === passed) planned.push({ action, source: 'on_completion' });
  }
  return { one, attempt, ctx, executed, planned, result, passed };
}

/**
 * A call's answer, the record of its attempt and fact (the batch's records
 * go as one statement with the COMMIT), and its completion events; the fact handlers run here,
 * with the batch's answers to their questions.
 */
async function recordCompletion(plan: Plan, answers: BatchAnswers | null): Promise<{ response: CompletionResponse; record: store.CompletionRecord; events: OutboxEvent[] }> {
  const { attempt, ctx, executed, result, passed } = plan;
  const { tx, session, activity } = ctx;
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
  const record: store.CompletionRecord = {
    key: keyOf(session, activity),
    attemptId: attempt.id,
    activityType: activity.type,
    result,
    response: response as unknown as Record<string, unknown>,
    openedAt: attempt.opened_at,
    at: now,
    wasOpen: !attempt.fresh,
    fact: { ...fact, source: 'activity', activityId: activity.activityId },
  };
  // A preview's completion counts for nothing: no challenge, streak or contest sees it, and no event leaves.
  if (activity.preview) return { response, record, events: [] };
  // The handlers read neither the attempt nor the fact's row: they run before both are written, with the COMMIT.
  await runFactHandlers(answers ? withAnswers(tx, answers) : tx, session.tenantId, fact);
  const legacy = { participant_id: session.participantId, activity_id: activity.activityId, fact_id: fact.id };
  const events: OutboxEvent[] = [{ event: 'activity.completed', participantId: session.participantId, engagementId: session.engagementId, data: { ...legacy, activity_type: activity.type } }];
  if (activity.type === 'quiz') {
    events.push({ event: 'quiz.completed', participantId: session.participantId, engagementId: session.engagementId, data: { ...legacy, score: result.score, passed } });
  }
  return { response, record, events };
}

// ---------------------------------------------------------------------------
// For gates.

export async function completedActivitiesInTx(tx: Tx, tenantId: string, engagementId: string, participantId: string) {
  return store.completedActivities(tx, tenantId, engagementId, participantId);
}
