import { API_VERSION, OPERATIONS, RESOURCES, type OperationName, type OperationSpec } from './operations.js';
import { LoyaltyConnectionError, LoyaltyError, LoyaltyValidationError, errorFromResponse } from './errors.js';
import { fillPath, requireNonEmptyString, validateBody } from './validate.js';
import { openEventStream, type EventStreamOptions } from './sse.js';
import { parseRetryAfter } from './retry-after.js';
import { randomUuid } from './random.js';
import type { CallOptions, StreamEvent } from './types.js';
import type { FlatOperationMethods, ResourceMethods } from './generated/resources.js';

/**
 * The typed client: one object per resource and one method per operation of
 * the service (`client.points.grant({ path, query, body, ...options })`, see
 * RESOURCES), with the credential the operation needs, argument checks before
 * sending, generated idempotency keys, bounded retries, and the API version
 * in `Loyalty-Version`. The flat names of 0.3 (`client.grantPoints`) are
 * deprecated aliases, kept for one release.
 */
export const DEFAULT_MAX_RETRIES = 2;
/** Whatever the caller asks, a call is never tried more than this many extra times. */
export const MAX_RETRIES_LIMIT = 10;
/** A `Retry-After` longer than this is not waited for: the 429 is thrown with `retryAfterSeconds`. */
export const DEFAULT_MAX_RETRY_AFTER_SECONDS = 60;
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Backoff for 503 without Retry-After and for network failures: 0.5 s, 1 s, 2 s, … capped, with full jitter. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_CAP_MS = 8_000;

export interface ParticipantSession {
  sessionId: string;
  engagementId: string;
}

export interface RetryInfo {
  operation: OperationName;
  /** The retry about to be made: 1 for the first retry. */
  retry: number;
  delayMs: number;
  /** HTTP status that caused it, or 0 for a network failure. */
  status: number;
  reason: 'rate_limited' | 'unavailable' | 'network';
}

export interface ClientOptions {
  /** The service address, e.g. `https://loyalty.example.com` (without `/api/v1`). */
  baseUrl: string;
  /** API key for server (`key`) operations. Never put one in a browser. */
  apiKey?: string;
  /** `X-Service-Tenant` for bearer-style callers; must name the key's tenant. */
  tenant?: string;
  /** The participant session used for session operations when a call names none. */
  session?: ParticipantSession;
  fetch?: typeof fetch;
  /** Extra tries after the first (default 2, at most 10). 0 disables retries. */
  maxRetries?: number;
  /** The longest `Retry-After` the client waits for (default 60 s). */
  maxRetryAfterSeconds?: number;
  /** Time allowed for one attempt (default 30 s). */
  timeoutMs?: number;
  /** Headers added to every request. */
  headers?: Record<string, string>;
  /** Called before each retry (logging, metrics). */
  onRetry?: (info: RetryInfo) => void;
  /** Source of idempotency keys (default crypto.randomUUID, or a v4 UUID from crypto.getRandomValues outside secure contexts). */
  generateIdempotencyKey?: () => string;
  /**
   * Browser callers signed in with a cookie (the console): the fetch
   * `credentials` mode. When set, server (`key`) operations are sent without
   * an API key and the browser's cookie is the credential.
   */
  credentials?: RequestCredentials;
  /**
   * The cookie session's CSRF token, sent as `X-CSRF-Token` on every request
   * that is not a GET. A function is read at each call, so a client made once
   * follows a sign-in or a renewed session.
   */
  csrfToken?: string | (() => string | undefined);
  /**
   * The API version (`Loyalty-Version`, a date such as `2026-11-27`) sent
   * with every request; default API_VERSION, the version this SDK was
   * generated against. A version the service does not know is refused (400).
   */
  apiVersion?: string;
}

interface PreparedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** Safe to send again after a failure whose outcome is unknown. */
  idempotent: boolean;
}

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);

/**
 * The `Idempotency-Key` header a caller set (any case). It is the key the
 * caller chose, so it becomes the body's key: the single-event routes refuse
 * a header and a body key that differ, and the other routes read only the body.
 */
function idempotencyKeyHeader(headers: Record<string, string>): string | undefined {
  const name = Object.keys(headers).find((key) => key.toLowerCase() === 'idempotency-key');
  return name === undefined ? undefined : headers[name];
}

export { parseRetryAfter };

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function backoffMs(retry: number): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

/** One signal that fires when the caller aborts or the attempt's time is up. */
function attemptSignal(timeoutMs: number, callerSignal?: AbortSignal): { signal: AbortSignal; timedOut: () => boolean; done: () => void } {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new Error(`the request took longer than ${timeoutMs} ms`));
  }, timeoutMs);
  const onAbort = () => controller.abort(callerSignal!.reason);
  if (callerSignal?.aborted) controller.abort(callerSignal.reason);
  else callerSignal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => expired,
    done: () => {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onAbort);
    },
  };
}

async function readBody(response: Response): Promise<unknown> {
  if (response.status === 204) return undefined;
  const text = await response.text();
  if (text === '') return undefined;
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('json')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

type Args = CallOptions & { path?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown };

export class LoyaltyClient {
  readonly baseUrl: string;
  /** The `Loyalty-Version` this client sends. */
  readonly apiVersion: string;
  private readonly options: ClientOptions;
  private readonly fetchImpl: typeof fetch;
  private readonly maxRetries: number;

  constructor(options: ClientOptions) {
    const baseUrl = requireNonEmptyString(options?.baseUrl, 'baseUrl');
    try {
      new URL(baseUrl);
    } catch {
      throw new LoyaltyValidationError('baseUrl', `must be an absolute URL, got ${JSON.stringify(baseUrl)}`);
    }
    if (options.apiKey !== undefined) requireNonEmptyString(options.apiKey, 'apiKey');
    const retries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (!Number.isInteger(retries) || retries < 0) throw new LoyaltyValidationError('maxRetries', 'must be a whole number of 0 or more');
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.options = options;
    this.fetchImpl = options.fetch ?? ((...args: Parameters<typeof fetch>) => globalThis.fetch(...args));
    this.maxRetries = Math.min(retries, MAX_RETRIES_LIMIT);
    this.apiVersion = options.apiVersion === undefined ? API_VERSION : requireApiVersion(options.apiVersion);
    const members = this as unknown as Record<string, unknown>;
    for (const [resource, methods] of Object.entries(RESOURCES)) {
      const calls: Record<string, (args?: Args) => Promise<unknown>> = {};
      for (const [method, name] of Object.entries(methods) as Array<[string, OperationName]>) {
        calls[method] = (args?: Args) => this.call(name, args);
        // The flat name of 0.3, a deprecated alias (src/generated/resources.ts says which call replaces it).
        members[name] = calls[method];
      }
      members[resource] = Object.freeze(calls);
    }
  }

  /** A client with the same settings acting for another participant session. */
  withSession(session: ParticipantSession): LoyaltyClient {
    return new LoyaltyClient({ ...this.options, session });
  }

  /** Calls an operation by name; the typed methods are thin wrappers of this. */
  async call(name: OperationName, args: Args = {}): Promise<unknown> {
    const spec: OperationSpec = OPERATIONS[name];
    if (!spec) throw new LoyaltyValidationError('operation', `unknown operation ${String(name)}`);
    const prepared = this.prepare(name, spec, args ?? {});
    return this.send(name, prepared, args.signal);
  }

  /**
   * Follows the session participant's live event stream (server-sent events),
   * reconnecting with `Last-Event-ID` after a drop. Returns a function that
   * closes it. `onReset` is called when a resume's `Last-Event-ID` was no
   * longer known and the stream started from now (re-read the state).
   */
  streamEvents(options: {
    onEvent: (event: StreamEvent) => void;
    onError?: (error: unknown) => void;
    onReset?: () => void;
    /** Called each time the stream is (re)connected: what happened before is not delivered, so re-read the state. */
    onOpen?: () => void;
    session?: ParticipantSession;
    lastEventId?: string;
  }): () => void {
    const session = this.sessionFor(options.session);
    const url = new URL(this.baseUrl + OPERATIONS.streamEvents.path);
    url.searchParams.set('session_id', session.sessionId);
    url.searchParams.set('engagement_id', session.engagementId);
    const streamOptions: EventStreamOptions = {
      url: url.toString(),
      fetch: this.fetchReportingOpen(options.onOpen),
      headers: { 'loyalty-version': this.apiVersion, ...this.options.headers },
      lastEventId: options.lastEventId,
      onEvent: options.onEvent,
      onError: options.onError,
      onReset: options.onReset,
    };
    return openEventStream(streamOptions);
  }

  /**
   * Follows a SANDBOX tenant's stream of every event as webhook envelopes
   * (what `loyalty listen` forwards), optionally only `events` (names and
   * patterns such as `points.*`). Needs the client's apiKey (a sandbox key with
   * the admin or gamify:admin scope); a live tenant is refused (403 SANDBOX_ONLY,
   * reported to `onError`). Returns a function that closes it.
   */
  streamTenantEvents(options: {
    onEvent: (event: StreamEvent) => void;
    onError?: (error: unknown) => void;
    onReset?: () => void;
    /** Called each time the stream is (re)connected. */
    onOpen?: () => void;
    events?: string[];
    lastEventId?: string;
  }): () => void {
    if (!this.options.apiKey) throw new LoyaltyValidationError('apiKey', 'streamTenantEvents is a server operation: create the client with an apiKey');
    const url = new URL(this.baseUrl + OPERATIONS.streamTenantEvents.path);
    if (options.events && options.events.length > 0) url.searchParams.set('events', options.events.join(','));
    return openEventStream({
      url: url.toString(),
      fetch: this.fetchReportingOpen(options.onOpen),
      headers: { 'loyalty-version': this.apiVersion, ...this.options.headers, 'x-api-key': this.options.apiKey },
      lastEventId: options.lastEventId,
      onEvent: options.onEvent,
      onError: options.onError,
      onReset: options.onReset,
    });
  }

  /** The event-stream reader has no "open" callback of its own: the fetch it uses reports a successful connection. */
  private fetchReportingOpen(onOpen: (() => void) | undefined): typeof fetch {
    const fetchImpl = this.fetchImpl;
    if (!onOpen) return fetchImpl;
    return async (input, init) => {
      const response = await fetchImpl(input, init);
      if (response.ok) onOpen();
      return response;
    };
  }

  private sessionFor(given: ParticipantSession | undefined): ParticipantSession {
    const session = given ?? this.options.session;
    if (!session) throw new LoyaltyValidationError('session', 'this is a participant operation: pass a session ({ sessionId, engagementId }) to the client or the call');
    requireNonEmptyString(session.sessionId, 'session.sessionId');
    requireNonEmptyString(session.engagementId, 'session.engagementId');
    return session;
  }

  private prepare(name: OperationName, spec: OperationSpec, args: Args): PreparedRequest {
    const path = fillPath(spec.path, args.path);
    const query: Record<string, unknown> = { ...(args.query ?? {}) };
    let body: unknown = args.body;
    const headers: Record<string, string> = { accept: 'application/json', 'loyalty-version': this.apiVersion, ...this.options.headers, ...args.headers };
    const hasBody = spec.method !== 'GET' && spec.method !== 'DELETE';

    if (spec.method !== 'GET') {
      const csrf = typeof this.options.csrfToken === 'function' ? this.options.csrfToken() : this.options.csrfToken;
      if (csrf) headers['x-csrf-token'] = csrf;
    }
    if (spec.auth === 'key' && this.options.credentials !== undefined && !this.options.apiKey) {
      // A cookie session: the browser sends the credential itself.
    } else if (spec.auth === 'key') {
      if (!this.options.apiKey) throw new LoyaltyValidationError('apiKey', `${name} is a server operation: create the client with an apiKey`);
      headers['x-api-key'] = this.options.apiKey;
      if (this.options.tenant) headers['x-service-tenant'] = this.options.tenant;
    } else if (spec.auth === 'console') {
      // A person's operation: only the browser's console cookie is accepted, so no key is sent.
      if (this.options.credentials === undefined) throw new LoyaltyValidationError('credentials', `${name} needs a console sign-in: create the client with credentials`);
    } else if (spec.auth === 'session') {
      const given = body && typeof body === 'object' ? (body as Record<string, unknown>) : query;
      const explicit = typeof given.session_id === 'string' && typeof given.engagement_id === 'string' ? { sessionId: given.session_id, engagementId: given.engagement_id } : undefined;
      const session = this.sessionFor(args.session ?? explicit);
      if (hasBody) {
        if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) throw new LoyaltyValidationError('body', 'must be an object');
        body = { ...(body as Record<string, unknown> | undefined), session_id: session.sessionId, engagement_id: session.engagementId };
      } else {
        query.session_id = session.sessionId;
        query.engagement_id = session.engagementId;
      }
    }

    let idempotent = IDEMPOTENT_METHODS.has(spec.method);
    const required = spec.idempotency === 'body' || spec.idempotency === 'events';
    validateBody(name, body, required);
    if (spec.idempotency === 'body') {
      const object = body as Record<string, unknown>;
      body = { ...object, idempotency_key: object.idempotency_key ?? args.idempotencyKey ?? idempotencyKeyHeader(headers) ?? this.newKey() };
      idempotent = true;
    } else if (spec.idempotency === 'events') {
      const object = body as { events: Array<Record<string, unknown>> };
      body = { ...object, events: object.events.map((event) => ({ ...event, idempotency_key: event.idempotency_key ?? this.newKey() })) };
      idempotent = true;
    } else if (spec.idempotency === 'attempt') {
      idempotent = typeof (body as Record<string, unknown> | undefined)?.attempt_id === 'string';
    } else if (spec.method === 'POST' && spec.auth !== 'public') {
      // The service keeps and replays the answer of every credentialed POST under its Idempotency-Key header,
      // so a retry after a lost answer cannot create twice.
      const given = idempotencyKeyHeader(headers);
      if (given === undefined) headers['idempotency-key'] = args.idempotencyKey ?? this.newKey();
      idempotent = true;
    }

    const url = new URL(this.baseUrl + path);
    for (const [key, value] of Object.entries(query)) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) value.forEach((item) => url.searchParams.append(key, String(item)));
      else url.searchParams.set(key, String(value));
    }
    let text: string | undefined;
    if (body !== undefined && hasBody) {
      text = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    if (spec.deprecated) warnDeprecatedOnce(name, spec.deprecated);
    return { method: spec.method, url: url.toString(), headers, body: text, idempotent };
  }

  private newKey(): string {
    return (this.options.generateIdempotencyKey ?? randomUuid)();
  }

  private async send(name: OperationName, request: PreparedRequest, callerSignal?: AbortSignal): Promise<unknown> {
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxRetryAfter = this.options.maxRetryAfterSeconds ?? DEFAULT_MAX_RETRY_AFTER_SECONDS;
    for (let retry = 0; ; retry++) {
      const attempt = attemptSignal(timeoutMs, callerSignal);
      let response: Response;
      let body: unknown;
      try {
        response = await this.fetchImpl(request.url, {
          method: request.method,
          headers: request.headers,
          body: request.body,
          signal: attempt.signal,
          ...(this.options.credentials === undefined ? {} : { credentials: this.options.credentials }),
        });
        // Reading the body belongs to the attempt: a connection dropped mid-answer is a network failure too.
        body = await readBody(response);
      } catch (cause) {
        attempt.done();
        if (callerSignal?.aborted) throw callerSignal.reason;
        const error = new LoyaltyConnectionError({
          status: 0,
          code: attempt.timedOut() ? 'TIMEOUT' : 'NETWORK_ERROR',
          detail: attempt.timedOut() ? `${request.method} ${request.url} took longer than ${timeoutMs} ms` : `${request.method} ${request.url} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
          method: request.method,
          url: request.url,
          cause,
        });
        if (!request.idempotent || retry >= this.maxRetries) throw error;
        await this.wait(name, retry + 1, backoffMs(retry + 1), 0, 'network', callerSignal);
        continue;
      } finally {
        attempt.done();
      }
      if (response.ok) return body;

      const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
      const error = errorFromResponse(response.status, body, {
        requestId: response.headers.get('x-request-id'),
        method: request.method,
        url: request.url,
        retryAfterSeconds: retryAfter,
        apiVersion: response.headers.get('loyalty-version'),
      });
      if (retry >= this.maxRetries) throw error;
      // A 429 and a 503 SERVICE_OVERLOADED were refused before any work, so any request may be sent
      // again; another 503 may have been cut off mid-way, so only idempotent ones are.
      if (response.status === 429) {
        if (retryAfter !== null && retryAfter > maxRetryAfter) throw error;
        await this.wait(name, retry + 1, retryAfter !== null ? retryAfter * 1000 : backoffMs(retry + 1), 429, 'rate_limited', callerSignal);
        continue;
      }
      if (response.status === 503 && (request.idempotent || error.code === 'SERVICE_OVERLOADED')) {
        if (retryAfter !== null && retryAfter > maxRetryAfter) throw error;
        await this.wait(name, retry + 1, retryAfter !== null ? retryAfter * 1000 : backoffMs(retry + 1), 503, 'unavailable', callerSignal);
        continue;
      }
      throw error;
    }
  }

  private async wait(operation: OperationName, retry: number, delayMs: number, status: number, reason: RetryInfo['reason'], signal?: AbortSignal): Promise<void> {
    this.options.onRetry?.({ operation, retry, delayMs, status, reason });
    await sleep(delayMs, signal);
  }
}

// Interface merging: the constructor installs one object per resource, and the deprecated flat aliases.
export interface LoyaltyClient extends ResourceMethods, FlatOperationMethods {}

const API_VERSION_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
function requireApiVersion(version: unknown): string {
  if (typeof version !== 'string' || !API_VERSION_PATTERN.test(version)) throw new LoyaltyValidationError('apiVersion', `must be a date (YYYY-MM-DD) such as ${API_VERSION}, got ${JSON.stringify(version)}`);
  return version;
}

const warned = new Set<string>();
function warnDeprecatedOnce(name: string, message: string): void {
  if (warned.has(name)) return;
  warned.add(name);
  console.warn(`[@loyalty/sdk] ${name}: ${message}`);
}

export function createLoyaltyClient(options: ClientOptions): LoyaltyClient {
  return new LoyaltyClient(options);
}

export function isLoyaltyError(error: unknown): error is LoyaltyError {
  return error instanceof LoyaltyError;
}
