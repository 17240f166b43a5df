import { webhookDeliveries, webhookLatency } from '../../platform/metrics.js';
import { createHmac } from 'node:crypto';
import type { Database, Tx } from '../../platform/db.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../platform/logger.js';
import { clock } from '../../platform/clock.js';
import { addJob } from '../../platform/jobs.js';
import { randomToken } from '../../platform/ids.js';
import { isSandboxTenant } from '../../platform/environments.js';
import { safePost, type Resolver, type SafeHttpPolicy } from '../../platform/safe-http.js';
import { childSpan } from '../../platform/tracing.js';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import * as participants from '../participants/index.js';
import { PING_EVENT, personalDataIn } from './catalog.js';
import * as store from './store.js';
import type { DeliveryStatus } from './schemas.js';

/**
 * One delivery attempt: claim the delivery, POST the signed envelope outside
 * any transaction, then record the outcome and schedule the next attempt.
 *
 * A delivery is held by at most one attempt at a time (an attempt token and
 * a deadline on the row). When a worker dies mid-attempt, the job queue hands
 * the delivery job to another process; that process finds the deadline passed,
 * logs the lost attempt as `interrupted` (it does not count against
 * retry_count, since nobody knows whether the receiver got it) and tries again.
 * So every committed event reaches its receivers at least once.
 *
 * Every attempt, cut short or not, has its own number in the log (1, 2, 3…),
 * allocated on the delivery row by the statement that claims the attempt.
 */
/** Delay before attempt n (index n - 1): immediate, +30 s, +5 min, +30 min; the last step repeats for attempts 5 and 6. */
export const BACKOFF_SECONDS = [0, 30, 300, 1800] as const;
/** Time allowed past timeout_seconds before an unfinished attempt counts as abandoned. */
const ATTEMPT_DEADLINE_GRACE_SECONDS = 5;
const USER_AGENT = 'loyalty-service-webhooks/1';
const INTERRUPTED_ERROR = 'the worker making this attempt stopped before it finished; the attempt is repeated';

export function backoffSecondsBefore(attempt: number): number {
  return BACKOFF_SECONDS[Math.min(Math.max(attempt, 1), BACKOFF_SECONDS.length) - 1];
}

/**
 * The wait before attempt n, in whole milliseconds: the spec's interval times
 * the service's TIME_SCALE times the tenant's webhook_backoff_scale (1 unless
 * a sandbox tenant chose a smaller one).
 */
export function backoffMsBefore(attempt: number, timeScale: number, tenantBackoffScale: number): number {
  return Math.round(backoffSecondsBefore(attempt) * 1000 * timeScale * tenantBackoffScale);
}

export interface Envelope {
  id: string;
  event: string;
  timestamp: string;
  tenant_id: string;
  engagement_id: string | null;
  participant_id: string | null;
  data: Record<string, unknown>;
}

/** `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the whole secret string (as Stripe does). */
export function signatureHeader(secret: string, timestamp: number, rawBody: string): string {
  const digest = createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
  return `t=${timestamp},v1=${digest}`;
}

/** The process-wide policy: what every destination may reach. */
export function policyOf(config: Config): SafeHttpPolicy {
  return { allowLoopback: config.allowLoopbackWebhooks, allowHttp: config.allowHttpWebhooks, trustedCertificates: config.webhookCa };
}

/** Private receivers are a development control: never honoured with APP_ENV=production. */
export function privateNetworkPermittedBy(config: Config): boolean {
  return config.env !== 'production';
}

interface Context {
  db: Database;
  config: Config;
  log: Logger;
  /** Tests give a fake resolver; production uses the system's. */
  resolver?: Resolver;
}

/**
 * The policy for one destination. A destination with `allow_private_network`
 * may also reach loopback and private addresses over plain http, but only while
 * its tenant is a sandbox and the service is not in production: both are
 * checked again here, at every delivery, so a flag stored by mistake (a
 * database copied into production) opens nothing.
 */
export async function destinationPolicy(context: Pick<Context, 'db' | 'config'>, tenantId: string, destination: { allow_private_network: boolean }): Promise<SafeHttpPolicy> {
  const base = policyOf(context.config);
  if (!destination.allow_private_network || !privateNetworkPermittedBy(context.config)) return base;
  if (!(await isSandboxTenant(context.db, tenantId))) return base;
  return { ...base, allowLoopback: true, allowHttp: true, allowPrivateNetwork: true };
}

export type AttemptResult = 'not_found' | 'not_due' | 'cancelled' | 'superseded' | DeliveryStatus;

/**
 * Runs one attempt of the delivery. Returns what happened; never throws for
 * receiver failures (only for database failures, which the job queue retries).
 */
export async function attemptDelivery(context: Context, tenantId: string, deliveryId: string): Promise<AttemptResult> {
  const { db, config, log } = context;
  const token = randomToken(12);
  const claimed = await db.tenant(tenantId, async (tx) => {
    const due = await store.claimDue(tx, tenantId, deliveryId, token, ATTEMPT_DEADLINE_GRACE_SECONDS, clock.now());
    if (due) return { result: 'claimed' as const, work: due };
    const work = await store.lockDeliveryWork(tx, tenantId, deliveryId);
    if (!work) return { result: 'not_found' as const };
    const { delivery, destination } = work;
    if (delivery.status === 'DELIVERING' && !work.deadlineExpired) {
      // Another attempt holds the delivery. Its worker may have died with the
      // job (the job queue then hands the job on early): look again once the
      // attempt's deadline has passed, so the delivery is never left behind.
      await addJob(tx, store.DELIVER_TASK, { tenant_id: tenantId, delivery_id: deliveryId }, { runAt: new Date(new Date(delivery.attempt_deadline!).getTime() + 1000) });
      return { result: 'not_due' as const };
    }
    if (!['PENDING', 'RETRYING', 'DELIVERING'].includes(delivery.status)) return { result: 'not_due' as const };
    const now = clock.now();
    // Still DELIVERING past the deadline: the attempt was cut short. The statement that takes the
    // delivery over logs it as interrupted.
    const abandoned: store.AbandonedAttempt | null =
      delivery.status === 'DELIVERING' ? { token: delivery.attempt_token, startedAt: delivery.attempt_started_at ?? now, error: INTERRUPTED_ERROR } : null;
    if (!destination.active) {
      await store.cancelDelivery(tx, tenantId, deliveryId, 'the destination was deactivated before the delivery was made', now, abandoned);
      return { result: 'cancelled' as const };
    }
    const taken = await store.claimLocked(tx, tenantId, deliveryId, token, destination.timeout_seconds + ATTEMPT_DEADLINE_GRACE_SECONDS, now, abandoned);
    return { result: 'claimed' as const, work: { ...work, delivery: taken } };
  });
  if (claimed.result !== 'claimed') return claimed.result;

  const { delivery, destination } = claimed.work;
  const data = claimed.work.data ?? (delivery.event === PING_EVENT ? pingData(destination.id) : {});
  const envelope: Envelope = {
    id: delivery.event_id,
    event: delivery.event,
    timestamp: new Date(delivery.occurred_at).toISOString(),
    tenant_id: tenantId,
    engagement_id: delivery.engagement_id,
    participant_id: delivery.participant_id,
    data,
  };
  const rawBody = JSON.stringify(envelope);
  const startedAt = clock.now();
  const timestamp = Math.floor(startedAt.getTime() / 1000);
  const headers: Record<string, string> = {
    ...destination.custom_headers,
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-service-signature': signatureHeader(destination.secret, timestamp, rawBody),
    'x-service-event': delivery.event,
    'x-service-timestamp': String(timestamp),
    'x-service-delivery-id': delivery.event_id,
  };
  const policy = await destinationPolicy(context, tenantId, destination);
  // Traced by ids and status only: a receiver's URL may carry a token in its path, and the envelope is the tenant's data.
  const attributes = { 'http.request.method': 'POST', 'loyalty.webhook.event': delivery.event, 'loyalty.webhook.delivery_id': deliveryId, 'loyalty.webhook.destination_id': destination.id };
  const response = await childSpan('webhook POST', { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const answer = await safePost(destination.url, headers, rawBody, destination.timeout_seconds * 1000, policy, context.resolver);
    if (answer.status !== null) span?.setAttribute('http.response.status_code', answer.status);
    if (answer.status === null || answer.status >= 300) {
      span?.setAttribute('error.type', answer.status === null ? 'no_response' : String(answer.status));
      span?.setStatus({ code: SpanStatusCode.ERROR });
    }
    return answer;
  });
  const succeeded = response.status !== null && response.status >= 200 && response.status < 300;
  // Only attempts that finish with an outcome spend the retry budget (and set the backoff).
  const countedAttempts = delivery.attempts + 1;
  const status: DeliveryStatus = succeeded ? 'SUCCEEDED' : countedAttempts >= delivery.max_attempts ? 'EXHAUSTED' : 'RETRYING';
  const error = succeeded ? null : (response.error ?? `the receiver answered HTTP ${response.status}`);
  webhookDeliveries.inc({ outcome: status.toLowerCase() });
  webhookLatency.observe(response.durationMs / 1000);

  return db.tenant(tenantId, async (tx) => {
    const now = clock.now();
    // The tenant's backoff scale is read when the retry is scheduled, so a change applies to the next retry.
    const nextAttemptAt =
      status === 'RETRYING' ? new Date(now.getTime() + backoffMsBefore(countedAttempts + 1, config.timeScale, await store.backoffScale(tx, tenantId))) : null;
    const recorded = await store.finishAttempt(tx, tenantId, deliveryId, token, {
      status,
      nextAttemptAt,
      now,
      record: {
        outcome: succeeded ? 'succeeded' : 'failed',
        startedAt,
        durationMs: response.durationMs,
        responseStatus: response.status,
        responseBody: response.body,
        error,
      },
    });
    if (!recorded.held) {
      log.warn({ tenantId, deliveryId }, 'a delivery attempt finished after its deadline; another worker had taken over');
      return 'superseded' as const;
    }
    if (!recorded.logged) log.warn({ tenantId, deliveryId, attempt: delivery.attempts_started }, 'a delivery attempt was recorded, but its number was already in the log');
    if (nextAttemptAt) await addJob(tx, store.DELIVER_TASK, { tenant_id: tenantId, delivery_id: deliveryId }, { runAt: nextAttemptAt });
    await logPersonalDataAccess(tx, tenantId, destination.id, delivery.participant_id, data, response.address);
    return status;
  });
}

function pingData(destinationId: string): Record<string, unknown> {
  return { destination_id: destinationId, message: 'This is a test delivery.' };
}

/**
 * A payload that carries personal data leaves an audit row (actor `webhook`,
 * the destination id as actor). Catalog payloads carry ids only, so this
 * fires only when an emitter adds a personal field. The access log belongs to
 * the participants module.
 */
async function logPersonalDataAccess(
  tx: Tx,
  tenantId: string,
  destinationId: string,
  participantId: string | null,
  data: Record<string, unknown>,
  address: string | null,
): Promise<void> {
  if (!participantId) return;
  const fields = personalDataIn(data);
  if (fields.length === 0) return;
  await participants.recordPiiAccessInTx(tx, tenantId, {
    actorType: 'webhook',
    actorId: destinationId,
    participantId,
    fieldsAccessed: fields,
    rowCount: 1,
    exportFormat: null,
    ipAddress: address,
  });
}
