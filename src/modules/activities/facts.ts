import { createHash } from 'node:crypto';
import type { Database } from '../../platform/db.js';
import type { AuthContext } from '../../platform/auth.js';
import { clock } from '../../platform/clock.js';
import { AppError, conflict, invalid, ruleViolation } from '../../platform/errors.js';
import { prefixedId } from '../../platform/ids.js';
import { emit } from '../../platform/outbox.js';
import { runFactHandlers, type Fact } from '../../platform/facts.js';
import { claimKey, fingerprint, storeResponse } from '../../platform/idempotency.js';
import { ensureParticipant } from '../participants/index.js';
import { LIMITS, type EmitFactBody, type ReportCompletionBody } from './schemas.js';
import { isPreviewSessionInTx } from '../engagements/index.js';
import * as store from './store.js';
import { keyOf, limits, loadActivity, sessionOf, type Session } from './attempts.js';

/**
 * Facts: the fact each activity type's completion records, custom facts a
 * session emits, and completions reported by the tenant's server.
 */

export const FACT_NAMES = { spin_wheel: 'activity_completed', quiz: 'quiz_completed' } as const;
/** Facts only the server records; a custom fact may not pretend to be one. */
const RESERVED_FACT_NAMES = new Set(['activity_completed', 'quiz_completed', 'game_completed', 'activity.completed']);
/** A reported completion may say it happened at most this far ahead of the tenant's now (clock skew). */
const REPORTED_FUTURE_SKEW_MS = 5 * 60_000;

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
    // A draft's preview counts for nothing: its facts are kept for the test participant, no challenge, streak or contest sees them.
    if (!(await isPreviewSessionInTx(tx, session.tenantId, session.engagementId, session.participantId))) await runFactHandlers(tx, session.tenantId, fact);
    const response = presentFact(fact);
    if (body.idempotency_key !== undefined) await storeResponse(tx, session.tenantId, scope, body.idempotency_key, response);
    return response;
  });
}

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
