import { runStatements, type Database, type Statement, type Tx } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { AppError, conflict, invalid, ruleViolation } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import { ACTIVITY_DEFAULTS, findPublishedActivityInTx, type PublishedActivity } from '../engagements/index.js';
import type { Payload } from './schemas.js';
import * as store from './store.js';
import type { ActivityKey, AttemptRow, ParticipationRow } from './store.js';

/**
 * A participant's attempts: the session a call acts for, the checks shared by
 * validate, complete and eligibility, the eligibility read, and the attempt a
 * call acts on.
 */

export type Result = Record<string, unknown>;

export interface Session {
  tenantId: string;
  participantId: string;
  engagementId: string;
}

export function sessionOf(auth: AuthContext): Session {
  return { tenantId: auth.tenantId, participantId: auth.participantId!, engagementId: auth.engagementId! };
}

/** The activity a call acts on; `lookupRows`: what `publishedActivityStatement` answered with the transaction's BEGIN. */
export async function loadActivity(tx: Tx, session: Session, activityId: string, activityType?: string, lookupRows?: readonly unknown[]): Promise<PublishedActivity> {
  return checkActivityType(await findPublishedActivityInTx(tx, session.tenantId, session.engagementId, activityId, session.participantId, lookupRows), activityType);
}

/** The activity, if it is of the type the call names (when it names one). */
export function checkActivityType(activity: PublishedActivity, activityType?: string): PublishedActivity {
  if (activityType !== undefined && activityType !== activity.type) {
    throw ruleViolation(`activity ${JSON.stringify(activity.activityId)} is a ${activity.type}, not a ${activityType}`, 'ACTIVITY_TYPE_MISMATCH');
  }
  return activity;
}

export function checkPayload(activity: PublishedActivity, payload: Payload): void {
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

export function limits(activity: PublishedActivity) {
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
export function attemptState(row: ParticipationRow | null, activity: PublishedActivity, now: Date) {
  const { maxAttempts, cooldownSeconds } = limits(activity);
  const used = row?.attempts_used ?? 0;
  const openAttemptId = row?.open_attempt_id ?? null;
  const cooldownRemaining = cooldownRemainingSeconds(row?.last_attempt_at ?? null, cooldownSeconds, now);
  return { used, maxAttempts, cooldownRemaining, openAttemptId, eligible: openAttemptId !== null || (used < maxAttempts && cooldownRemaining === 0) };
}

/** Explains why no attempt could be taken: always a 4xx with the figures. */
export async function refuseAttempt(tx: Tx, session: Session, activity: PublishedActivity): Promise<never> {
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

export function keyOf(session: Session, activity: PublishedActivity): ActivityKey {
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

/** A new attempt's take, one of the statement `newAttempts` makes. */
export interface Take {
  participantId: string;
  attemptId: string;
  at: Date;
}

/**
 * New attempts of one activity for the sessions' participants (distinct), one
 * take each, in one statement (`takeAttemptsStatement`): a lone call's
 * (`openAttempt`, which may name its attempt) or a batch of completions'.
 */
export function newAttempts(sessions: readonly Session[], activity: PublishedActivity, completing: boolean, requestedId?: string): { takes: Take[]; statement: Statement } {
  if (requestedId !== undefined && sessions.length > 1) throw new Error('only a lone take names its attempt');
  const takes = sessions.map((session) => ({ participantId: session.participantId, attemptId: requestedId ?? prefixedId('att', 12), at: clock.now(session.tenantId) }));
  const [{ tenantId, engagementId }] = sessions;
  const statement = store.takeAttemptsStatement(tenantId, { engagementId, activityId: activity.activityId }, { ...limits(activity), completing }, takes);
  return { takes, statement };
}

export type OpenedAttempt = AttemptRow & { fresh: boolean };

/**
 * The attempt a take (`newAttempts`) answered with `taken`: the new one, or,
 * when the take was refused, the participant's waiting validated attempt; a
 * refusal with its figures otherwise (`refuseAttempt`).
 */
export async function attemptOfTake(tx: Tx, session: Session, activity: PublishedActivity, take: Take, taken: readonly unknown[], completing: boolean, named: boolean): Promise<OpenedAttempt> {
  const key = keyOf(session, activity);
  if (!store.attemptTaken(taken, session.participantId)) {
    // The take locked the participation row, so the attempt it names stays put until this transaction ends.
    const waiting = named ? null : (await store.readParticipation(tx, session.tenantId, key))?.open_attempt_id;
    if (waiting) {
      const existing = await store.lockAttempt(tx, session.tenantId, waiting);
      if (existing && existing.status === 'open') return { ...existing, fresh: false };
    }
    await refuseAttempt(tx, session, activity);
  }
  if (!completing) {
    await store.insertOpenAttempt(tx, session.tenantId, key, { id: take.attemptId, activityType: activity.type, result: null, at: take.at });
  }
  return {
    id: take.attemptId,
    engagement_id: session.engagementId,
    activity_id: activity.activityId,
    participant_id: session.participantId,
    status: 'open',
    result: null,
    response: null,
    opened_at: take.at,
    fresh: true,
  };
}

/**
 * The attempt a call acts on: the named one (which must belong to this
 * participant and activity), the participant's waiting validated attempt, or
 * a new one taken under the limits. Without a named attempt the new one is
 * tried first (one statement, which a waiting validated attempt refuses as
 * well): only a refused take looks for the waiting attempt. `alongside`
 * statements are sent with the take and answered in `alongsideRows` (null
 * when the named attempt existed and nothing was sent).
 */
export async function openAttempt(
  tx: Tx,
  session: Session,
  activity: PublishedActivity,
  requestedId: string | undefined,
  completing: boolean,
  alongside: readonly Statement[] = [],
): Promise<OpenedAttempt & { alongsideRows: unknown[][] | null }> {
  if (requestedId !== undefined) {
    await store.lockAttemptId(tx, session.tenantId, requestedId);
    const existing = await store.lockAttempt(tx, session.tenantId, requestedId);
    if (existing) {
      if (existing.participant_id !== session.participantId || existing.engagement_id !== session.engagementId || existing.activity_id !== activity.activityId) {
        throw conflict('attempt_id is already used by another attempt; choose a new one', 'ATTEMPT_ID_IN_USE');
      }
      return { ...existing, fresh: false, alongsideRows: null };
    }
  }
  const { takes, statement } = newAttempts([session], activity, completing, requestedId);
  // `alongside` (reads the caller needs next) travel with the take, in its round trip.
  const [taken, ...alongsideRows] = await runStatements(tx, [statement, ...alongside]);
  return { ...(await attemptOfTake(tx, session, activity, takes[0], taken, completing, requestedId !== undefined)), alongsideRows };
}
