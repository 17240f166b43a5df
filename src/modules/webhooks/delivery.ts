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
import { childSpan, linkActiveTraces } from '../../platform/tracing.js';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import * as participants from '../participants/index.js';
import { PING_EVENT, personalDataIn, sampleEventData } from './catalog.js';
import * as store from './store.js';
import { IN_FLIGHT_PER_RECEIVER_MAX, withReceiverSlot } from './receiver-slots.js';
import type { DeliveryStatus } from './schemas.js';

/**
 * Delivery attempts: claim the deliveries, POST each signed envelope outside
 * any transaction, then record the outcomes and schedule the next attempts.
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

/**
 * How many timeouts an attempt's deadline allows (before the grace): its POST
 * may wait for a slot behind every POST this process can have queued for the
 * same receiver, the other jobs' batches and its own, in turns of
 * IN_FLIGHT_PER_RECEIVER_MAX; one turn more for the pings and test events the
 * API sends meanwhile. With the defaults (8 jobs, batches of 32) that is 9.
 */
export function wavesFor(deliveries: number, jobConcurrency: number): number {
  return Math.ceil((deliveries + Math.max(jobConcurrency - 1, 0) * store.DELIVERY_BATCH_MAX) / IN_FLIGHT_PER_RECEIVER_MAX) + 1;
}

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
  /** False when the event happened in a sandbox (docs/decisions/sandbox.md). */
  livemode: boolean;
  data: Record<string, unknown>;
  /** Present (true) only on a test event sent with `POST …/test-events`: its data is a sample, about no real participant. */
  test?: true;
}

/**
 * A test event's id: `evt_test_…` (real events are `evt_<hex>`). The delivery
 * row keeps it, so a retry or a replay of a test event is a test event too,
 * with the same sample data.
 */
export const TEST_EVENT_ID_PREFIX = 'evt_test_';

export function isTestEventId(eventId: string): boolean {
  return eventId.startsWith(TEST_EVENT_ID_PREFIX);
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

/** Runs one attempt of one delivery (a ping, a replay, a retry): `attemptDeliveries` with one id. */
export async function attemptDelivery(context: Context, tenantId: string, deliveryId: string): Promise<AttemptResult> {
  const results = await attemptDeliveries(context, tenantId, [deliveryId]);
  return results.get(deliveryId)!;
}

/**
 * Runs one attempt of each of the tenant's deliveries given, and returns what
 * happened to each; never throws for receiver failures (only for database
 * failures, which the job queue retries). The cost is per batch: the due
 * deliveries are claimed in one statement, posted concurrently, and their
 * outcomes recorded in one statement; only a delivery in an unusual state
 * (held by another attempt, cut short, its destination deactivated) is looked
 * at on its own.
 */
export async function attemptDeliveries(context: Context, tenantId: string, deliveryIds: string[]): Promise<Map<string, AttemptResult>> {
  const { db, config, log } = context;
  const ids = [...new Set(deliveryIds)];
  const results = new Map<string, AttemptResult>();
  const token = randomToken(12);
  const waves = wavesFor(ids.length, config.jobConcurrency);
  // The common case in one round trip (BEGIN, the tenant, the claim, COMMIT); what it left out is looked at on its own.
  const [claimedRows] = await db.tenantInOneTrip(tenantId, [store.claimDueStatement(tenantId, ids, token, waves, ATTEMPT_DEADLINE_GRACE_SECONDS, clock.now())]);
  const claimed = store.claimedWork(claimedRows);
  const taken = new Set(claimed.map((w) => w.delivery.id));
  const unusual = ids.filter((id) => !taken.has(id));
  if (unusual.length > 0) {
    await db.tenant(tenantId, async (tx) => {
      for (const id of unusual) {
        const closer = await claimUnusual(tx, tenantId, id, token, waves);
        if (closer.result === 'claimed') claimed.push(closer.work);
        else results.set(id, closer.result);
      }
    });
  }
  if (claimed.length === 0) return results;
  // The job's span links to the traces that emitted the events it delivers.
  linkActiveTraces(claimed.map((work) => work.traceparent));

  const policies = new Map<string, Promise<SafeHttpPolicy>>();
  const policyFor = (destination: store.DestinationRow) => {
    let policy = policies.get(destination.id);
    if (!policy) policies.set(destination.id, (policy = destinationPolicy(context, tenantId, destination)));
    return policy;
  };
  // Every POST of the batch is under way at once, each within its receiver's bound (receiver-slots.ts).
  const attempts = await Promise.all(claimed.map(async (work) => post(context, tenantId, work, await policyFor(work.destination))));

  const now = clock.now();
  const outcomeOf = (a: Posted, scale: number): store.AttemptOutcome => ({
    deliveryId: a.work.delivery.id,
    status: a.status,
    nextAttemptAt: a.status === 'RETRYING' ? new Date(now.getTime() + backoffMsBefore(a.work.delivery.attempts + 2, config.timeScale, scale)) : null,
    record: a.record,
  });
  const audits = attempts.map(personalDataAccess);
  const retrying = attempts.some((a) => a.status === 'RETRYING');
  if (!retrying && !audits.some(Boolean)) {
    // The common case, nothing to write beside the outcomes: one round trip.
    const [rows] = await db.tenantInOneTrip(tenantId, [store.finishAttemptsStatement(tenantId, token, now, attempts.map((a) => outcomeOf(a, 1)))]);
    settle(store.finishedAttempts(rows));
    return results;
  }
  await db.tenant(tenantId, async (tx) => {
    // The tenant's backoff scale is read when a retry is scheduled, so a change applies to the next retry.
    const scale = retrying ? await store.backoffScale(tx, tenantId) : 1;
    const outcomes = attempts.map((a) => outcomeOf(a, scale));
    const { text, values } = store.finishAttemptsStatement(tenantId, token, now, outcomes);
    const recorded = store.finishedAttempts((await tx.query(text, values as unknown[])).rows);
    settle(recorded);
    for (const [i, audit] of audits.entries()) {
      if (audit && recorded.held.has(attempts[i].work.delivery.id)) await participants.recordPiiAccessInTx(tx, tenantId, audit);
    }
    /** Retries due at the same moment (the batch's deliveries had the same number of attempts) share a job. */
    const retries = new Map<number, string[]>();
    for (const { deliveryId, nextAttemptAt } of outcomes) {
      if (!nextAttemptAt || !recorded.held.has(deliveryId)) continue;
      retries.set(nextAttemptAt.getTime(), [...(retries.get(nextAttemptAt.getTime()) ?? []), deliveryId]);
    }
    for (const [runAt, retried] of retries) {
      const payload = retried.length === 1 ? { tenant_id: tenantId, delivery_id: retried[0] } : { tenant_id: tenantId, delivery_ids: retried };
      await addJob(tx, store.DELIVER_TASK, payload, { runAt: new Date(runAt) });
    }
  });
  return results;

  /** Each attempt's result from what the outcome statement recorded; an attempt that no longer held its delivery is superseded. */
  function settle(recorded: store.FinishedAttempts): void {
    for (const { work, status } of attempts) {
      const { delivery } = work;
      if (!recorded.held.has(delivery.id)) {
        log.warn({ tenantId, deliveryId: delivery.id }, 'a delivery attempt finished after its deadline; another worker had taken over');
        results.set(delivery.id, 'superseded');
        continue;
      }
      if (!recorded.logged.has(delivery.id)) {
        log.warn({ tenantId, deliveryId: delivery.id, attempt: delivery.attempts_started }, 'a delivery attempt was recorded, but its number was already in the log');
      }
      results.set(delivery.id, status);
    }
  }
}

type Claim = { result: 'claimed'; work: store.DeliveryWork } | { result: 'not_found' | 'not_due' | 'cancelled' };

/**
 * A delivery the batch claim left out, looked at under its row lock: missing,
 * finished, held by a live attempt (looked at again after that attempt's
 * deadline), cut short (taken over, the cut attempt logged as interrupted), or
 * bound for a destination deactivated meanwhile (cancelled).
 */
async function claimUnusual(tx: Tx, tenantId: string, deliveryId: string, token: string, waves: number): Promise<Claim> {
  const work = await store.lockDeliveryWork(tx, tenantId, deliveryId);
  if (!work) return { result: 'not_found' };
  const { delivery, destination } = work;
  if (delivery.status === 'DELIVERING' && !work.deadlineExpired) {
    // Another attempt holds the delivery. Its worker may have died with the
    // job (the job queue then hands the job on early): look again once the
    // attempt's deadline has passed, so the delivery is never left behind.
    await addJob(tx, store.DELIVER_TASK, { tenant_id: tenantId, delivery_id: deliveryId }, { runAt: new Date(new Date(delivery.attempt_deadline!).getTime() + 1000) });
    return { result: 'not_due' };
  }
  if (!['PENDING', 'RETRYING', 'DELIVERING'].includes(delivery.status)) return { result: 'not_due' };
  const now = clock.now();
  // Still DELIVERING past the deadline: the attempt was cut short. The statement that takes the
  // delivery over logs it as interrupted.
  const abandoned: store.AbandonedAttempt | null =
    delivery.status === 'DELIVERING' ? { token: delivery.attempt_token, startedAt: delivery.attempt_started_at ?? now, error: INTERRUPTED_ERROR } : null;
  if (!destination.active) {
    await store.cancelDelivery(tx, tenantId, deliveryId, 'the destination was deactivated before the delivery was made', now, abandoned);
    return { result: 'cancelled' };
  }
  const taken = await store.claimLocked(tx, tenantId, deliveryId, token, destination.timeout_seconds * waves + ATTEMPT_DEADLINE_GRACE_SECONDS, now, abandoned);
  return { result: 'claimed', work: { ...work, delivery: taken } };
}

interface Posted {
  work: store.DeliveryWork & { data: Record<string, unknown> };
  status: DeliveryStatus;
  record: store.AttemptRecord;
  address: string | null;
}

/** The signed POST of one claimed delivery, outside any transaction, and the outcome it leads to. */
async function post(context: Context, tenantId: string, claimed: store.DeliveryWork, policy: SafeHttpPolicy): Promise<Posted> {
  const { delivery, destination } = claimed;
  const occurredAt = new Date(delivery.occurred_at).toISOString();
  const test = isTestEventId(delivery.event_id);
  const data = claimed.data ?? (delivery.event === PING_EVENT ? pingData(destination.id) : test ? sampleEventData(delivery.event, occurredAt) : {});
  const envelope: Envelope = {
    id: delivery.event_id,
    event: delivery.event,
    timestamp: occurredAt,
    tenant_id: tenantId,
    engagement_id: delivery.engagement_id,
    participant_id: delivery.participant_id,
    livemode: !(await isSandboxTenant(context.db, tenantId)),
    data,
    ...(test ? { test: true as const } : {}),
  };
  const rawBody = JSON.stringify(envelope);
  // The attempt starts (its time, its signature's timestamp, its timeout) once the receiver has a slot for it.
  const { startedAt, response } = await withReceiverSlot(destination.url, async () => {
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
    // Traced by ids and status only: a receiver's URL may carry a token in its path, and the envelope is the tenant's data.
    const attributes = { 'http.request.method': 'POST', 'loyalty.webhook.event': delivery.event, 'loyalty.webhook.delivery_id': delivery.id, 'loyalty.webhook.destination_id': destination.id };
    const response = await childSpan('webhook POST', { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const answer = await safePost(destination.url, headers, rawBody, destination.timeout_seconds * 1000, policy, context.resolver);
      if (answer.status !== null) span?.setAttribute('http.response.status_code', answer.status);
      if (answer.status === null || answer.status >= 300) {
        span?.setAttribute('error.type', answer.status === null ? 'no_response' : String(answer.status));
        span?.setStatus({ code: SpanStatusCode.ERROR });
      }
      return answer;
    });
    return { startedAt, response };
  });
  const succeeded = response.status !== null && response.status >= 200 && response.status < 300;
  // Only attempts that finish with an outcome spend the retry budget (and set the backoff).
  const countedAttempts = delivery.attempts + 1;
  const status: DeliveryStatus = succeeded ? 'SUCCEEDED' : countedAttempts >= delivery.max_attempts ? 'EXHAUSTED' : 'RETRYING';
  webhookDeliveries.inc({ outcome: status.toLowerCase() });
  webhookLatency.observe(response.durationMs / 1000);
  return {
    work: { ...claimed, data },
    status,
    address: response.address,
    record: {
      outcome: succeeded ? 'succeeded' : 'failed',
      startedAt,
      durationMs: response.durationMs,
      responseStatus: response.status,
      responseBody: response.body,
      error: succeeded ? null : (response.error ?? `the receiver answered HTTP ${response.status}`),
    },
  };
}

function pingData(destinationId: string): Record<string, unknown> {
  return { destination_id: destinationId, message: 'This is a test delivery.' };
}

/**
 * A payload that carries personal data leaves an audit row (actor `webhook`,
 * the destination id as actor), written with the attempt's outcome. Catalog
 * payloads carry ids only, so there is one only when an emitter adds a
 * personal field. The access log belongs to the participants module.
 */
function personalDataAccess({ work, address }: Posted): participants.PiiAccess | null {
  const participantId = work.delivery.participant_id;
  const fields = participantId ? personalDataIn(work.data) : [];
  if (!participantId || fields.length === 0) return null;
  return { actorType: 'webhook', actorId: work.destination.id, participantId, fieldsAccessed: fields, rowCount: 1, exportFormat: null, ipAddress: address };
}
