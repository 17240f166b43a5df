import { CommitOutcomeUnknown, runStatements, withAnswers, type Database, type Statement, type Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { AppError, conflict } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import { emitting, type OutboxEvent } from '../../platform/outbox.js';
import { runFactHandlers, type Fact } from '../../platform/facts.js';
import { questionStatements, roundsOf, type BatchAnswers } from '../../platform/batch.js';
import { knownPublishedActivity, publishedActivityStatement, type KnownActivity, type PublishedActivity } from '../engagements/index.js';
import { grantPoints, runActions, runPrize, type ActionContext, type Executed, type Planned } from './actions.js';
import type { CompleteBody, ValidateBody } from './schemas.js';
import * as store from './store.js';
import { attemptOfTake, attemptState, checkActivityType, checkPayload, keyOf, loadActivity, newAttempts, openAttempt, refuseAttempt, sessionOf, type OpenedAttempt, type Take, type Result, type Session } from './attempts.js';
import { draw, drawReads, score, type Drawable } from './outcomes.js';
import { FACT_NAMES } from './facts.js';
import { completionBatchesSplit, completionBatchSize, completionOutcomesUnknown } from '../../platform/metrics.js';

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

export interface CompletionResponse {
  success: boolean;
  actions_executed: Executed[];
  fact_id: string;
  attempt_id: string;
  activity_type: 'spin_wheel' | 'quiz';
  result: Result;
  duplicate: boolean;
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
 * events with COMMIT — four round trips however many calls, three when this
 * process knows the activity (`completeKnown`: the takes travel with BEGIN
 * and the read that confirms it). A call refused
 * before it writes (its activity, its payload, its limits) is answered with
 * its error and the others go on; a failure after the takes rolls the batch
 * back, and its calls run again one by one (`failedBatch`: not when the
 * message with the COMMIT lost its answer). Only a lone call may name its
 * attempt (`attempt_id`).
 */
export async function completeMany(db: Database, calls: readonly CompletionCall[]): Promise<CompletionOutcome[]> {
  const { session, activityId } = calls[0];
  // The activity's read travels with BEGIN, the completion's record and its events with the COMMIT. Every statement finds
  // its few rows by key, so each is planned once per connection ('generic'): PostgreSQL's own choice flipped between
  // runs, and a grant planned per call spent 0.27 ms planning (docs/decisions/foundation.md, "Prepared statements").
  const lookup = publishedActivityStatement(session.tenantId, session.engagementId, activityId);
  const known = calls.every((call) => call.body.attempt_id === undefined)
    ? knownPublishedActivity(session.tenantId, session.engagementId, activityId, calls.map((call) => call.session.participantId))
    : null;
  if (known) {
    try {
      const outcomes = await completeKnown(db, calls, lookup, known);
      if (outcomes) {
        completionBatchSize.observe(calls.length);
        return outcomes;
      }
    } catch (error) {
      known.forget();
      // A COMMIT that lost its answer is answered as the usual way answers it, not run again whole.
      if (error instanceof CommitOutcomeUnknown) return failedBatch(db, calls, error);
      // The activity changed since this process read it, or the batch failed before its last message: it goes again as
      // below, the activity read first, and a failure is answered from there.
    }
  }
  try {
    const outcomes = await db.tenantFramedBy(
      session.tenantId,
      lookup.text,
      lookup.values,
      async (tx, lookupRows) => {
        const outcomes: CompletionOutcome[] = new Array(calls.length);
        const accepted = await acceptCalls(calls, (call) => loadActivity(tx, call.session, call.activityId, call.body.activity_type, lookupRows), outcomes);
        return completeInTx(tx, calls, accepted, outcomes, null);
      },
      'generic',
    );
    completionBatchSize.observe(calls.length);
    return outcomes;
  } catch (error) {
    return failedBatch(db, calls, error);
  }
}

/**
 * A failed batch: a lone call's error is its answer; the calls of a larger
 * one go again one by one, but only when nothing of it can have been
 * committed. A COMMIT that lost its answer (`CommitOutcomeUnknown`, a lost
 * connection: platform/db.ts) may hide a commit that went through: its calls
 * are answered 503 `COMPLETION_OUTCOME_UNKNOWN`, never run again, so no spin
 * is applied twice.
 */
function failedBatch(db: Database, calls: readonly CompletionCall[], error: unknown): Promise<CompletionOutcome[]> {
  const failure = error instanceof CommitOutcomeUnknown ? outcomeUnknown(error) : error;
  if (failure !== error) completionOutcomesUnknown.inc(calls.length);
  if (calls.length === 1) throw failure;
  if (failure !== error) return Promise.resolve(calls.map(() => ({ error: failure })));
  completionBatchesSplit.inc();
  return Promise.all(calls.map((call) => completeMany(db, [call]).then(([outcome]) => outcome, (failed: unknown) => ({ error: failed }))));
}

/** The detail of 503 COMPLETION_OUTCOME_UNKNOWN, which the route's documentation quotes. */
export const OUTCOME_UNKNOWN_DETAIL =
  'the connection to the database was lost while the completion was being committed, so it may or may not have been recorded: ' +
  "read the activity's attempts_used (GET /activities/{activityId}/eligibility) before completing again; a completion that names its attempt_id may simply be sent again";

function outcomeUnknown(cause: unknown): AppError {
  const error = new AppError('unavailable', 'COMPLETION_OUTCOME_UNKNOWN', OUTCOME_UNKNOWN_DETAIL);
  error.cause = cause;
  return error;
}

/** The activity read with BEGIN is not the one this process knew: the batch rolls back and goes again. */
class StaleActivity extends Error {}

/**
 * `completeMany` of an activity this process knows (`knownPublishedActivity`):
 * the calls are checked against it and their takes, the draw's reads and the
 * batch questions travel with BEGIN and the read of the activity, which must
 * find it unchanged (or the batch rolls back, `StaleActivity`): three round
 * trips instead of four. Null when no call passed its checks (the usual way
 * then answers them, from the activity as read).
 */
async function completeKnown(
  db: Database,
  calls: readonly CompletionCall[],
  lookup: Statement,
  known: KnownActivity,
): Promise<CompletionOutcome[] | null> {
  const outcomes: CompletionOutcome[] = new Array(calls.length);
  const accepted = await acceptCalls(calls, (call) => checkActivityType(known.activity, call.body.activity_type), outcomes);
  if (accepted.length === 0) return null;
  const takes = takeRounds(accepted);
  const alongside = alongsideOf(accepted[0].call.session, known.activity);
  const opening = [lookup, ...takes.made.map((round) => round.statement), ...alongside.statements];
  return db.tenantOpenedWith(
    calls[0].session.tenantId,
    opening,
    async (tx, [lookupRows, ...answers]) => {
      if (!known.confirmedBy(lookupRows)) throw new StaleActivity('the activity changed since this process read it');
      return completeInTx(tx, calls, accepted, outcomes, { takes, alongside, answers });
    },
    'generic',
  );
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

/** What travels with a batch's takes: a wheel's draw reads, and the questions the fact handlers ask (is there an open enrollment, a contest counting this fact?). */
type Alongside = ReturnType<typeof alongsideOf>;

function alongsideOf(session: Session, activity: PublishedActivity) {
  const reads = activity.type === 'spin_wheel' ? drawReads(session, activity) : null;
  const asked = questionStatements(session.tenantId);
  return { reads, asked, statements: [...(reads?.statements ?? []), ...asked.statements] };
}

/**
 * Completes the accepted calls of a batch (`completeMany`) in its
 * transaction; `sent`: their takes and what travels with them
 * (`alongsideOf`), when they were sent with BEGIN (`completeKnown`), with
 * their answers.
 */
async function completeInTx(
  tx: Tx,
  calls: readonly CompletionCall[],
  accepted: Accepted[],
  outcomes: CompletionOutcome[],
  sent: { takes: TakeRounds; alongside: Alongside; answers: unknown[][] } | null,
): Promise<{ result: CompletionOutcome[]; last: readonly Statement[] }> {
  if (accepted.length === 0) return { result: outcomes, last: [] };
  // One activity for the whole batch: a preview session runs the draft's.
  if (calls.length > 1 && accepted.some(({ activity }) => activity.preview)) throw new Unbatchable('a preview completion goes alone');
  const { session } = accepted[0].call;
  const { activity } = accepted[0];

  const { reads, asked, statements } = sent?.alongside ?? alongsideOf(session, activity);
  const drawn = reads?.statements.length ?? 0;
  const opening = sent
    ? { opened: await openTaken(tx, accepted, sent.takes, sent.answers, outcomes), alongsideRows: sent.answers.slice(sent.takes.made.length) }
    : await openAttempts(tx, calls, accepted, statements, outcomes);
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

/** The calls whose activity (`activityOf`) and payload pass; the others are answered with their error in `outcomes`. */
async function acceptCalls(
  calls: readonly CompletionCall[],
  activityOf: (call: CompletionCall) => PublishedActivity | Promise<PublishedActivity>,
  outcomes: CompletionOutcome[],
): Promise<Accepted[]> {
  const accepted: Accepted[] = [];
  for (const [index, call] of calls.entries()) {
    try {
      const activity = await activityOf(call);
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
  const takes = takeRounds(accepted);
  const answers = await runStatements(tx, [...takes.made.map((round) => round.statement), ...alongside]);
  return { opened: await openTaken(tx, accepted, takes, answers, outcomes), alongsideRows: answers.slice(takes.made.length) };
}

/**
 * The new attempts of a batch's accepted calls (one activity for the batch,
 * `completeInTx`), taken in rounds, one statement each: a participant's second
 * completion in a batch is taken (or refused with its figures) after its
 * first, as it would be alone.
 */
interface TakeRounds {
  rounds: number[][];
  made: Array<{ takes: Take[]; statement: Statement }>;
}

function takeRounds(accepted: Accepted[]): TakeRounds {
  const rounds = roundsOf([...accepted.keys()], (k) => accepted[k].call.session.participantId);
  return { rounds, made: rounds.map((round) => newAttempts(round.map((k) => accepted[k].call.session), accepted[0].activity, true)) };
}

/** The attempts the takes answered (`answers`, one per round, first); a refused take wrote nothing, and its call is answered with the refusal in `outcomes`. */
async function openTaken(tx: Tx, accepted: Accepted[], { rounds, made }: TakeRounds, answers: unknown[][], outcomes: CompletionOutcome[]) {
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
  return opened;
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
