import { randomBytes } from 'node:crypto';
import type { Database, Tx } from '../../platform/db.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../platform/logger.js';
import { clock } from '../../platform/clock.js';
import { addJob } from '../../platform/jobs.js';
import { prefixedId } from '../../platform/ids.js';
import { AppError, conflict, fieldError, notFound, ruleViolation, type RequestPart } from '../../platform/errors.js';
import { decodeCursor, encodeCursor } from '../../platform/http.js';
import { resolveSafeTarget, UnsafeUrlError, type Resolver, type SafeHttpPolicy } from '../../platform/safe-http.js';
import { tenantEnvironment } from '../../platform/environments.js';
import { ALL_EVENTS_PATTERN, catalogEntry, patternProblem, PING_EVENT, sampleEventData } from './catalog.js';
import { attemptDelivery, backoffMsBefore, destinationPolicy, privateNetworkPermittedBy, TEST_EVENT_ID_PREFIX } from './delivery.js';
import * as store from './store.js';
import { destinationHealth } from './health.js';
import type {
  BulkReplayInput,
  CreateDestinationInput,
  DeliveryView,
  DestinationHealthView,
  DestinationView,
  ReplayJobView,
  TestEventInput,
  UpdateDestinationInput,
  UpdateSettingsInput,
  WebhookSettingsView,
} from './schemas.js';

/**
 * The webhook use-cases: destinations (with the spec's validation rules),
 * delivery logs, test deliveries, and single and bulk replay.
 */
export const NAME_LENGTH_MAX = 100;
export const RESERVED_NAME_PREFIX = '[system]';
export const RETRY_COUNT_MIN = 0;
export const RETRY_COUNT_MAX = 5;
export const RETRY_COUNT_DEFAULT = 3;
export const TIMEOUT_SECONDS_MIN = 3;
export const TIMEOUT_SECONDS_MAX = 60;
export const TIMEOUT_SECONDS_DEFAULT = 10;
const EVENTS_PER_DESTINATION_MAX = 25;
const CUSTOM_HEADERS_MAX = 20;
const CUSTOM_HEADER_VALUE_LENGTH_MAX = 1024;
/** Deliveries one bulk replay job may create. */
export const BULK_REPLAY_DELIVERIES_MAX = 10_000;
/** Headers the service sets itself; a custom header may not replace them. */
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'user-agent', 'transfer-encoding', 'connection', 'expect', 'upgrade', 'keep-alive', 'te', 'trailer']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

interface Context {
  db: Database;
  config: Config;
  log: Logger;
  /** Tests give a fake resolver; production uses the system's. */
  resolver?: Resolver;
}

function checkName(name: string): void {
  const length = [...name].length;
  if (length < 1 || length > NAME_LENGTH_MAX) throw ruleViolation(`name must be 1 to ${NAME_LENGTH_MAX} characters (got ${length})`, undefined, { errors: [fieldError('/name', 'length', `must be 1 to ${NAME_LENGTH_MAX} characters long`)] });
  if (name.trimStart().toLowerCase().startsWith(RESERVED_NAME_PREFIX)) throw ruleViolation(`name may not start with the reserved prefix "${RESERVED_NAME_PREFIX}"`, undefined, { errors: [fieldError('/name', 'reserved', `must not start with "${RESERVED_NAME_PREFIX}"`)] });
}

/**
 * A destination's `events`: exact catalog names and patterns (`*`, `<prefix>.*`),
 * each reported by name when it is wrong. With `patterns: false` (a bulk replay's
 * filter) only exact names are accepted.
 */
function checkEvents(events: string[], options: { patterns: boolean; in?: RequestPart } = { patterns: true }): string[] {
  // A field error per entry: `/events/2` in a body, the one `/events` parameter in a query.
  const at = (name?: string) => (options.in === 'query' || name === undefined ? '/events' : `/events/${events.indexOf(name)}`);
  const where = { in: options.in ?? 'body' };
  if (events.length === 0) throw ruleViolation('events must name at least one event from the catalog (or a pattern such as "points.*" or "*")', undefined, { errors: [fieldError(at(), 'min_items', 'must name at least one event', where)] });
  const unique = [...new Set(events)];
  if (unique.length > EVENTS_PER_DESTINATION_MAX) throw ruleViolation(`events may list at most ${EVENTS_PER_DESTINATION_MAX} names`, undefined, { errors: [fieldError(at(), 'max_items', `must list at most ${EVENTS_PER_DESTINATION_MAX} names`, where)] });
  const problems = unique.map((name) => (options.patterns ? patternProblem(name) : catalogEntry(name) ? null : `unknown event name ${JSON.stringify(name)}`));
  const found = problems.filter((problem): problem is string => problem !== null);
  const errors = unique.flatMap((name, i) => (problems[i] === null ? [] : [fieldError(at(name), 'unknown_event', `${problems[i]}; see /.well-known/events.json`, where)]));
  if (found.length > 0) throw ruleViolation(`events: ${found.join('; ')}; see /.well-known/events.json`, undefined, { errors });
  return unique;
}

function checkRange(field: string, value: number, min: number, max: number): void {
  if (value < min || value > max) throw ruleViolation(`${field} must be from ${min} to ${max} (got ${value})`, undefined, { errors: [fieldError(`/${field}`, value < min ? 'minimum' : 'maximum', `must be from ${min} to ${max}`)] });
}

function checkCustomHeaders(headers: Record<string, string>): Record<string, string> {
  const entries = Object.entries(headers);
  if (entries.length > CUSTOM_HEADERS_MAX) throw ruleViolation(`custom_headers may hold at most ${CUSTOM_HEADERS_MAX} headers`);
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) throw ruleViolation(`custom_headers: "${name}" is not a valid header name`);
    if (RESERVED_HEADERS.has(lower) || lower.startsWith('x-service-')) throw ruleViolation(`custom_headers: "${name}" is set by the service and cannot be replaced`);
    if (seen.has(lower)) throw ruleViolation(`custom_headers: "${name}" appears twice`);
    seen.add(lower);
    if (value.length > CUSTOM_HEADER_VALUE_LENGTH_MAX || !HEADER_VALUE.test(value)) {
      throw ruleViolation(`custom_headers: the value of "${name}" must be at most ${CUSTOM_HEADER_VALUE_LENGTH_MAX} characters without control characters`);
    }
  }
  return headers;
}

/**
 * The URL rules: https, no credentials, and a host that is (or resolves only to)
 * public addresses; or, for a destination allowed the private network, also
 * loopback and private addresses over http.
 */
async function checkUrl(context: Context, url: string, policy: SafeHttpPolicy): Promise<string> {
  try {
    const target = await resolveSafeTarget(url, policy, context.resolver);
    return target.url.toString();
  } catch (error) {
    if (error instanceof UnsafeUrlError) {
      const hint = policy.allowPrivateNetwork ? '' : ' (a sandbox tenant may set allow_private_network: true for a local receiver)';
      throw ruleViolation(`url is not allowed: ${error.message}${hint}`, undefined, { errors: [fieldError('/url', 'unsafe_url', `is not allowed: ${error.message}`)] });
    }
    throw error;
  }
}

/**
 * `allow_private_network: true` is a test control: a sandbox tenant's, outside
 * production. The tenant's environment never changes, and delivery checks both
 * conditions again before every request.
 */
async function requirePrivateNetworkPermitted(context: Context, tenantId: string): Promise<void> {
  if (!privateNetworkPermittedBy(context.config)) {
    throw new AppError(
      'forbidden',
      'TEST_CONTROLS_DISABLED',
      'allow_private_network is a development control and this service runs with APP_ENV=production, where every receiver must be a public https endpoint',
    );
  }
  await requireSandbox(context, tenantId, 'allow_private_network works only for sandbox tenants, and this tenant is live: its receivers must be public https endpoints');
}

async function requireSandbox(context: Pick<Context, 'db'>, tenantId: string, detail: string): Promise<void> {
  if ((await tenantEnvironment(context.db, tenantId)) !== 'sandbox') {
    throw new AppError('forbidden', 'SANDBOX_ONLY', `${detail}. Call it with one of the tenant's test keys (lk_test_…, made by POST /api/v1/events/api-keys with "environment": "test"), which act in its sandbox, or with a sandbox tenant's key`);
  }
}

export function toDestinationView(row: store.DestinationRow, health: DestinationHealthView): DestinationView {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    url: row.url,
    events: row.events,
    engagement_id: row.engagement_id,
    custom_headers: row.custom_headers,
    retry_count: row.retry_count,
    timeout_seconds: row.timeout_seconds,
    active: row.active,
    allow_private_network: row.allow_private_network,
    health,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

export function toDeliveryView(row: store.DeliveryWithAttempts): DeliveryView {
  return {
    log_id: row.id,
    delivery_id: row.event_id,
    destination_id: row.destination_id,
    event: row.event,
    participant_id: row.participant_id,
    engagement_id: row.engagement_id,
    status: row.status,
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    next_attempt_at: row.status === 'RETRYING' || row.status === 'PENDING' ? iso(row.next_attempt_at) : null,
    last_response_status: row.last_response_status,
    last_error: row.last_error,
    replay_of: row.replay_of,
    replay_job_id: row.replay_job_id,
    created_at: iso(row.created_at)!,
    completed_at: iso(row.completed_at),
    attempt_log: row.attempt_log.map((a) => ({ ...a, started_at: iso(a.started_at)! })),
  };
}

function toReplayJobView(row: store.ReplayJobRow): ReplayJobView {
  return {
    job_id: row.id,
    destination_id: row.destination_id,
    status: row.status,
    filter: row.filter,
    matched: row.matched,
    replayed: row.replayed,
    error: row.error,
    created_at: iso(row.created_at)!,
    started_at: iso(row.started_at),
    completed_at: iso(row.completed_at),
  };
}

function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** Destinations as the API shows them: each with its health, computed from its recent attempts (health.ts). */
async function withHealth(tx: Tx, tenantId: string, rows: store.DestinationRow[]): Promise<DestinationView[]> {
  const health = await destinationHealth(tx, tenantId, rows, clock.now());
  return rows.map((row) => toDestinationView(row, health.get(row.id)!));
}

/** An empty description is no description. */
const descriptionOf = (value: string | undefined): string | null | undefined => (value === undefined ? undefined : value.trim() === '' ? null : value);

async function requireDestination(tx: Tx, tenantId: string, id: string, lock = false): Promise<store.DestinationRow> {
  const destination = await store.findDestination(tx, tenantId, id, lock);
  if (!destination) throw notFound(`webhook destination "${id}"`, 'WEBHOOK_DESTINATION_NOT_FOUND');
  return destination;
}

export async function createDestination(context: Context, tenantId: string, input: CreateDestinationInput): Promise<DestinationView & { secret: string }> {
  checkName(input.name);
  const events = checkEvents(input.events);
  const retryCount = input.retry_count ?? RETRY_COUNT_DEFAULT;
  const timeoutSeconds = input.timeout_seconds ?? TIMEOUT_SECONDS_DEFAULT;
  checkRange('retry_count', retryCount, RETRY_COUNT_MIN, RETRY_COUNT_MAX);
  checkRange('timeout_seconds', timeoutSeconds, TIMEOUT_SECONDS_MIN, TIMEOUT_SECONDS_MAX);
  const customHeaders = checkCustomHeaders(input.custom_headers ?? {});
  const allowPrivateNetwork = input.allow_private_network ?? false;
  if (allowPrivateNetwork) await requirePrivateNetworkPermitted(context, tenantId);
  const url = await checkUrl(context, input.url, await destinationPolicy(context, tenantId, { allow_private_network: allowPrivateNetwork }));
  const now = clock.now();
  return context.db.tenant(tenantId, async (tx) => {
    const row = await store.insertDestination(tx, {
      tenant_id: tenantId,
      id: prefixedId('whk', 12),
      name: input.name,
      description: descriptionOf(input.description) ?? null,
      url,
      events,
      engagement_id: input.engagement_id ?? null,
      custom_headers: customHeaders,
      retry_count: retryCount,
      timeout_seconds: timeoutSeconds,
      active: input.active ?? true,
      allow_private_network: allowPrivateNetwork,
      secret: newSecret(),
      created_at: now,
      updated_at: now,
    });
    const [view] = await withHealth(tx, tenantId, [row]);
    return { ...view, secret: row.secret };
  });
}

export async function listDestinations(context: Context, tenantId: string, query: { limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'text' });
  return context.db.tenant(tenantId, async (tx) => {
    const rows = await store.listDestinations(tx, tenantId, query.limit + 1, after);
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      destinations: await withHealth(tx, tenantId, page),
      next_cursor: rows.length > query.limit && last ? encodeCursor({ created_at: new Date(last.created_at).toISOString(), id: last.id }) : null,
    };
  });
}

export async function readDestination(context: Context, tenantId: string, id: string): Promise<DestinationView> {
  return context.db.tenant(tenantId, async (tx) => (await withHealth(tx, tenantId, [await requireDestination(tx, tenantId, id)]))[0]);
}

export async function updateDestination(context: Context, tenantId: string, id: string, input: UpdateDestinationInput): Promise<DestinationView> {
  const events = input.events === undefined ? undefined : checkEvents(input.events);
  if (input.retry_count !== undefined) checkRange('retry_count', input.retry_count, RETRY_COUNT_MIN, RETRY_COUNT_MAX);
  if (input.timeout_seconds !== undefined) checkRange('timeout_seconds', input.timeout_seconds, TIMEOUT_SECONDS_MIN, TIMEOUT_SECONDS_MAX);
  // The existence check comes first so that another tenant's id is a 404 whatever the body says.
  const current = await context.db.tenant(tenantId, (tx) => requireDestination(tx, tenantId, id));
  if (input.allow_private_network === true) await requirePrivateNetworkPermitted(context, tenantId);
  const policy = await destinationPolicy(context, tenantId, { allow_private_network: input.allow_private_network ?? current.allow_private_network });
  const url = input.url === undefined ? undefined : await checkUrl(context, input.url, policy);
  // Turning the opt-in off must not leave a destination whose URL the public rules refuse.
  if (input.url === undefined && input.allow_private_network === false && current.allow_private_network) await checkUrl(context, current.url, policy);
  return context.db.tenant(tenantId, async (tx) => {
    const row = await store.updateDestination(tx, tenantId, id, { ...input, url, events, description: descriptionOf(input.description) }, clock.now());
    if (!row) throw notFound(`webhook destination "${id}"`, 'WEBHOOK_DESTINATION_NOT_FOUND');
    return (await withHealth(tx, tenantId, [row]))[0];
  });
}

export async function deleteDestination(context: Context, tenantId: string, id: string): Promise<void> {
  const deleted = await context.db.tenant(tenantId, (tx) => store.deleteDestination(tx, tenantId, id));
  if (!deleted) throw notFound(`webhook destination "${id}"`, 'WEBHOOK_DESTINATION_NOT_FOUND');
}

/** Sends a signed `ping` now, once (no retries), and answers with the delivery and its attempt. */
export async function sendTestDelivery(context: Context, tenantId: string, destinationId: string): Promise<DeliveryView> {
  return sendOnce(context, tenantId, destinationId, { eventId: prefixedId('evt'), event: PING_EVENT, participantId: null });
}

/**
 * Sends a signed test event now, once (no retries): the catalog event named,
 * with a sample payload built from its schema and `test: true` in the envelope
 * (delivery.ts builds both from the `evt_test_…` id). The destination need not
 * subscribe to the event: the developer asks for it by name.
 */
export async function sendTestEvent(context: Context, tenantId: string, destinationId: string, input: TestEventInput): Promise<DeliveryView> {
  if (!catalogEntry(input.event)) {
    throw ruleViolation(`event: unknown event name ${JSON.stringify(input.event)}; test events are sent for catalog events only (see /.well-known/events.json)`);
  }
  const sample = sampleEventData(input.event, clock.now().toISOString());
  const participantId = typeof sample.participant_id === 'string' ? sample.participant_id : null;
  return sendOnce(context, tenantId, destinationId, { eventId: prefixedId(TEST_EVENT_ID_PREFIX.slice(0, -1)), event: input.event, participantId });
}

/** One delivery of one attempt, made now; a job finishes it should this process die during the attempt. */
async function sendOnce(
  context: Context,
  tenantId: string,
  destinationId: string,
  what: { eventId: string; event: string; participantId: string | null },
): Promise<DeliveryView> {
  const deliveryId = prefixedId('dlv', 16);
  await context.db.tenant(tenantId, async (tx) => {
    const destination = await requireDestination(tx, tenantId, destinationId);
    if (!destination.active) throw conflict('the destination is inactive; activate it before sending a test delivery', 'WEBHOOK_DESTINATION_INACTIVE');
    const now = clock.now();
    await store.insertDelivery(tx, {
      tenant_id: tenantId,
      id: deliveryId,
      destination_id: destinationId,
      event_id: what.eventId,
      event: what.event,
      participant_id: what.participantId,
      engagement_id: destination.engagement_id,
      occurred_at: now,
      max_attempts: 1,
      created_at: now,
    });
    const safetyNet = new Date(now.getTime() + (destination.timeout_seconds + 10) * 1000);
    await addJob(tx, store.DELIVER_TASK, { tenant_id: tenantId, delivery_id: deliveryId }, { runAt: safetyNet });
  });
  await attemptDelivery(context, tenantId, deliveryId);
  return readDelivery(context, tenantId, deliveryId);
}

async function readDelivery(context: Context, tenantId: string, deliveryId: string): Promise<DeliveryView> {
  const row = await context.db.tenant(tenantId, (tx) => store.findDeliveryWithAttempts(tx, tenantId, deliveryId));
  if (!row) throw notFound(`delivery "${deliveryId}"`, 'WEBHOOK_DELIVERY_NOT_FOUND');
  return toDeliveryView(row);
}

export async function listLogs(
  context: Context,
  tenantId: string,
  destinationId: string,
  query: { limit: number; cursor?: string; status?: string; event?: string },
) {
  const before = decodeCursor(query.cursor, { created_at: 'timestamp', id: 'text' });
  return context.db.tenant(tenantId, async (tx) => {
    await requireDestination(tx, tenantId, destinationId);
    const rows = await store.listDeliveries(tx, tenantId, destinationId, { status: query.status, event: query.event }, query.limit + 1, before);
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      deliveries: page.map(toDeliveryView),
      next_cursor: rows.length > query.limit && last ? encodeCursor({ created_at: new Date(last.created_at).toISOString(), id: last.id }) : null,
    };
  });
}

const IN_PROGRESS = new Set(['PENDING', 'DELIVERING', 'RETRYING']);

/** A new delivery of the same event (same envelope id and X-Service-Delivery-Id) with a fresh attempt budget. */
export async function replayDelivery(context: Context, tenantId: string, destinationId: string, logId: string): Promise<DeliveryView> {
  const newId = prefixedId('dlv', 16);
  await context.db.tenant(tenantId, async (tx) => {
    const destination = await requireDestination(tx, tenantId, destinationId, true);
    const original = await store.findDelivery(tx, tenantId, destinationId, logId);
    if (!original) throw notFound(`delivery "${logId}" of destination "${destinationId}"`, 'WEBHOOK_DELIVERY_NOT_FOUND');
    if (!destination.active) throw conflict('the destination is inactive; activate it before replaying', 'WEBHOOK_DESTINATION_INACTIVE');
    if (IN_PROGRESS.has(original.status)) {
      throw new AppError('conflict', 'WEBHOOK_DELIVERY_IN_PROGRESS', `delivery "${logId}" is ${original.status}; only finished deliveries can be replayed`);
    }
    await store.insertReplay(tx, tenantId, original, destination, newId, clock.now());
  });
  return readDelivery(context, tenantId, newId);
}

export async function startBulkReplay(context: Context, tenantId: string, destinationId: string, input: BulkReplayInput): Promise<ReplayJobView> {
  if (input.since && input.until && new Date(input.since) >= new Date(input.until)) throw ruleViolation('since must be before until');
  const events = input.events ? checkEvents(input.events, { patterns: false }) : null;
  return context.db.tenant(tenantId, async (tx) => {
    const destination = await requireDestination(tx, tenantId, destinationId);
    if (!destination.active) throw conflict('the destination is inactive; activate it before replaying', 'WEBHOOK_DESTINATION_INACTIVE');
    const job = await store.insertReplayJob(tx, {
      tenant_id: tenantId,
      id: prefixedId('wrj', 12),
      destination_id: destinationId,
      filter: {
        since: input.since ? new Date(input.since).toISOString() : null,
        until: input.until ? new Date(input.until).toISOString() : null,
        statuses: input.statuses ?? ['EXHAUSTED'],
        events,
      },
      created_at: clock.now(),
    });
    await addJob(tx, store.BULK_REPLAY_TASK, { tenant_id: tenantId, job_id: job.id }, { jobKey: `webhooks.bulk_replay:${job.id}`, maxAttempts: 3 });
    return toReplayJobView(job);
  });
}

export async function readReplayJob(context: Context, tenantId: string, destinationId: string, jobId: string): Promise<ReplayJobView> {
  return context.db.tenant(tenantId, async (tx) => {
    await requireDestination(tx, tenantId, destinationId);
    const job = await store.findReplayJob(tx, tenantId, destinationId, jobId);
    if (!job) throw notFound(`replay job "${jobId}"`, 'WEBHOOK_REPLAY_JOB_NOT_FOUND');
    return toReplayJobView(job);
  });
}

/** The bulk replay job: one statement creates every replay (bounded) and completes the job. */
export async function runBulkReplay(context: Context, tenantId: string, jobId: string): Promise<void> {
  await context.db.tenant(tenantId, async (tx) => {
    const job = await store.startReplayJob(tx, tenantId, jobId, clock.now());
    if (!job) return;
    const destination = await store.findDestination(tx, tenantId, job.destination_id);
    if (!destination || !destination.active) {
      await store.failReplayJob(tx, tenantId, jobId, 'the destination was deleted or deactivated before the replay ran', clock.now());
      return;
    }
    await store.runBulkReplay(tx, tenantId, job, destination, BULK_REPLAY_DELIVERIES_MAX, clock.now());
  });
}

// ---- the tenant-level stream (a sandbox tenant's forwarder) ------------------------

/** The patterns of a tenant stream's `events` query (comma-separated), checked as a destination's are; `*` when absent. */
export function streamPatterns(events: string | undefined): string[] {
  if (events === undefined) return [ALL_EVENTS_PATTERN];
  return checkEvents(events.split(',').map((part) => part.trim()), { patterns: true, in: 'query' });
}

/**
 * The tenant-level stream carries every event of the tenant with its data: a
 * development tool, like the other test controls, for sandbox tenants only. A
 * live tenant's events reach its receivers through destinations.
 */
export async function requireSandboxStream(context: Context, tenantId: string): Promise<void> {
  await requireSandbox(
    context,
    tenantId,
    "the tenant event stream (and the SDK's `listen` forwarder) works only for sandbox tenants, and this tenant is live: send its events to a webhook destination",
  );
}

// ---- settings (test controls) ------------------------------------------------------

/** Attempts 2 to 6: the waits a destination with retry_count 5 goes through. */
const RETRY_ATTEMPTS = [2, 3, 4, 5, 6];

function toSettingsView(context: Context, environment: 'live' | 'sandbox', row: store.SettingsRow): WebhookSettingsView {
  return {
    environment,
    webhook_backoff_scale: row.backoff_scale,
    retry_delays_seconds: RETRY_ATTEMPTS.map((attempt) => backoffMsBefore(attempt, context.config.timeScale, row.backoff_scale) / 1000),
    updated_at: iso(row.updated_at),
  };
}

async function environmentOf(context: Context, tenantId: string): Promise<'live' | 'sandbox'> {
  const environment = await tenantEnvironment(context.db, tenantId);
  if (!environment) throw notFound(`tenant "${tenantId}"`, 'TENANT_NOT_FOUND');
  return environment;
}

export async function readSettings(context: Context, tenantId: string): Promise<WebhookSettingsView> {
  const environment = await environmentOf(context, tenantId);
  return toSettingsView(context, environment, await context.db.tenant(tenantId, (tx) => store.readSettings(tx, tenantId)));
}

/**
 * The sandbox tenant's backoff scale. A live tenant is refused whatever the
 * value (even 1): the settings are test controls, and a live tenant's retries
 * keep the spec's timing.
 */
export async function updateSettings(context: Context, tenantId: string, input: UpdateSettingsInput): Promise<WebhookSettingsView> {
  await requireSandbox(context, tenantId, "webhook_backoff_scale can be changed only for sandbox tenants, and this tenant is live: a live tenant's retries keep the spec's schedule");
  const row = await context.db.tenant(tenantId, (tx) => store.upsertSettings(tx, tenantId, input.webhook_backoff_scale, clock.now()));
  return toSettingsView(context, 'sandbox', row);
}
