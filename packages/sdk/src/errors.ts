/**
 * Typed errors. Every failure the SDK reports is a LoyaltyError; `kind` tells
 * the family apart without instanceof (useful across bundles), the subclasses
 * allow `catch (e) { if (e instanceof LoyaltyNotFoundError) … }`.
 *
 * `status` is the HTTP status, or 0 when no response was received (the SDK
 * refused the arguments, or the network failed). `code`, `detail` and
 * `error_version` come from the service's error envelope; `body` is the whole
 * parsed body (the insufficient-points body, for example, adds `available`
 * and `required`). New codes may appear at any time: compare `kind` or
 * `status` first and treat unknown codes as their status family.
 *
 * `errors` lists each field the service found at fault (every 400 of a
 * request that does not match the operation's schema, and checks that name a
 * field): `in` the part of the request, `path` a JSON Pointer into it
 * (`/effects/0/points`), `code` the kind of failure, `message` plain words,
 * `allowed` the values an enum takes. Empty when the service named none.
 */
export type LoyaltyErrorKind =
  | 'bad_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'unprocessable'
  | 'rate_limited'
  | 'server'
  | 'http'
  | 'network'
  | 'validation'
  | 'webhook_signature';

/** One field at fault, from the error body's `errors`. */
export interface LoyaltyFieldError {
  /** The part of the request `path` points into. */
  in: 'body' | 'query' | 'params' | 'headers';
  /** A JSON Pointer into that part: `/effects/0/points`; `/` for the part as a whole. */
  path: string;
  /** The kind of failure: `required`, `type`, `enum`, `minimum`, `additional_property`, … New codes may appear. */
  code: string;
  /** What is wrong, in plain words: "must be at least 1". */
  message: string;
  /** For `enum` and `const`: the values the field may take. */
  allowed?: unknown[];
  /** For `minimum`, `maximum`, `min_length`, `max_length`, `min_items`, `max_items`, `multiple_of`: the bound the value broke. */
  limit?: number;
}

export interface LoyaltyErrorInit {
  status: number;
  code: string;
  detail: string;
  error_version?: number | null;
  errors?: LoyaltyFieldError[];
  body?: unknown;
  requestId?: string | null;
  /** The reference entry of the operation that answered (`doc_url` of the error body). */
  docUrl?: string | null;
  /** The `Loyalty-Version` the service answered with. */
  apiVersion?: string | null;
  method?: string;
  url?: string;
  cause?: unknown;
}

export class LoyaltyError extends Error {
  readonly kind: LoyaltyErrorKind = 'http';
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly error_version: number | null;
  /** Each field at fault, as the service named them; empty when it named none. */
  readonly errors: LoyaltyFieldError[];
  readonly body: unknown;
  /** The service's `X-Request-Id` of the failed request, for support. */
  readonly requestId: string | null;
  /** The service's `doc_url`: the reference entry of the operation, whose error answers list their codes. */
  readonly docUrl: string | null;
  /** The API version that answered (the response's `Loyalty-Version`); null when there was no answer or it named none. */
  readonly apiVersion: string | null;
  readonly method: string | undefined;
  readonly url: string | undefined;

  constructor(init: LoyaltyErrorInit) {
    super(init.detail, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.error_version = init.error_version ?? null;
    this.errors = init.errors ?? [];
    this.body = init.body ?? null;
    this.requestId = init.requestId ?? null;
    this.docUrl = init.docUrl ?? null;
    this.apiVersion = init.apiVersion ?? null;
    this.method = init.method;
    this.url = init.url;
  }
}

/** 400: the service refused the parameters or the body. */
export class LoyaltyBadRequestError extends LoyaltyError {
  override readonly kind = 'bad_request' as const;
}
/** 401: no credential, or a wrong or expired one (API key, session). */
export class LoyaltyAuthenticationError extends LoyaltyError {
  override readonly kind = 'unauthenticated' as const;
}
/** 403: the credential lacks the scope, or the wrong kind of credential was used. */
export class LoyaltyPermissionError extends LoyaltyError {
  override readonly kind = 'forbidden' as const;
}
/** 404: no such resource for this tenant (also removed legacy routes). */
export class LoyaltyNotFoundError extends LoyaltyError {
  override readonly kind = 'not_found' as const;
}
/** 409: a duplicate action, for example already enrolled. */
export class LoyaltyConflictError extends LoyaltyError {
  override readonly kind = 'conflict' as const;
}
/** 422: a validation or guarded-operation failure. */
export class LoyaltyUnprocessableError extends LoyaltyError {
  override readonly kind = 'unprocessable' as const;
}
/** 422 `insufficient_points`: the deduct needed more than the balance; nothing left the balance. */
export class LoyaltyInsufficientPointsError extends LoyaltyUnprocessableError {
  readonly available: number;
  readonly required: number;
  constructor(init: LoyaltyErrorInit & { available: number; required: number }) {
    super(init);
    this.available = init.available;
    this.required = init.required;
  }
}
/** 429 after the SDK's retries (or when `Retry-After` is longer than it may wait). */
export class LoyaltyRateLimitError extends LoyaltyError {
  override readonly kind = 'rate_limited' as const;
  /** Seconds the service asked to wait (`Retry-After`), when it said. */
  readonly retryAfterSeconds: number | null;
  constructor(init: LoyaltyErrorInit & { retryAfterSeconds: number | null }) {
    super(init);
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}
/** 5xx. */
export class LoyaltyServerError extends LoyaltyError {
  override readonly kind = 'server' as const;
}
/** Any other non-2xx status (413, 415, …). */
export class LoyaltyHttpError extends LoyaltyError {
  override readonly kind = 'http' as const;
}
/** No response: connection refused or reset, DNS failure, or the request timed out. status 0. */
export class LoyaltyConnectionError extends LoyaltyError {
  override readonly kind = 'network' as const;
}
/** The SDK refused the arguments before sending anything. status 0. */
export class LoyaltyValidationError extends LoyaltyError {
  override readonly kind = 'validation' as const;
  /** The argument at fault, as a path (`body.amount`, `path.participant_id`). */
  readonly field: string;
  constructor(field: string, detail: string) {
    super({ status: 0, code: 'SDK_INVALID_ARGUMENT', detail: `${field}: ${detail}`, error_version: null });
    this.field = field;
  }
}
/** verifyWebhook refused a delivery. status 0. */
export type WebhookFailureReason = 'missing_signature' | 'malformed_signature' | 'timestamp_out_of_tolerance' | 'signature_mismatch';
export class LoyaltyWebhookSignatureError extends LoyaltyError {
  override readonly kind = 'webhook_signature' as const;
  readonly reason: WebhookFailureReason;
  constructor(reason: WebhookFailureReason, detail: string) {
    super({ status: 0, code: `WEBHOOK_${reason.toUpperCase()}`, detail, error_version: null });
    this.reason = reason;
  }
}

interface ErrorEnvelope {
  detail?: unknown;
  code?: unknown;
  error_version?: unknown;
  errors?: unknown;
  error?: unknown;
  available?: unknown;
  required?: unknown;
  request_id?: unknown;
  doc_url?: unknown;
}

const FIELD_ERROR_PARTS = new Set(['body', 'query', 'params', 'headers']);

/** The well-formed entries of an error body's `errors`; anything else in it is left out. */
function fieldErrorsOf(value: unknown): LoyaltyFieldError[] {
  if (!Array.isArray(value)) return [];
  const errors: LoyaltyFieldError[] = [];
  for (const item of value) {
    if (typeof item !== 'object' || item === null) continue;
    const entry = item as Record<string, unknown>;
    if (typeof entry.in !== 'string' || !FIELD_ERROR_PARTS.has(entry.in) || typeof entry.path !== 'string' || typeof entry.code !== 'string' || typeof entry.message !== 'string') continue;
    const error: LoyaltyFieldError = { in: entry.in as LoyaltyFieldError['in'], path: entry.path, code: entry.code, message: entry.message };
    if (Array.isArray(entry.allowed)) error.allowed = entry.allowed;
    if (typeof entry.limit === 'number') error.limit = entry.limit;
    errors.push(error);
  }
  return errors;
}

/** Turns a non-2xx response (already read) into the matching LoyaltyError subclass. */
export function errorFromResponse(
  status: number,
  body: unknown,
  context: { requestId: string | null; method: string; url: string; retryAfterSeconds: number | null; apiVersion?: string | null },
): LoyaltyError {
  const envelope: ErrorEnvelope = typeof body === 'object' && body !== null ? (body as ErrorEnvelope) : {};
  const init: LoyaltyErrorInit = {
    status,
    code: typeof envelope.code === 'string' ? envelope.code : `HTTP_${status}`,
    detail: typeof envelope.detail === 'string' ? envelope.detail : typeof body === 'string' && body !== '' ? body.slice(0, 500) : `HTTP ${status}`,
    error_version: typeof envelope.error_version === 'number' ? envelope.error_version : null,
    errors: fieldErrorsOf(envelope.errors),
    body,
    requestId: typeof envelope.request_id === 'string' ? envelope.request_id : context.requestId,
    docUrl: typeof envelope.doc_url === 'string' ? envelope.doc_url : null,
    apiVersion: context.apiVersion ?? null,
    method: context.method,
    url: context.url,
  };
  switch (status) {
    case 400:
      return new LoyaltyBadRequestError(init);
    case 401:
      return new LoyaltyAuthenticationError(init);
    case 403:
      return new LoyaltyPermissionError(init);
    case 404:
      return new LoyaltyNotFoundError(init);
    case 409:
      return new LoyaltyConflictError(init);
    case 422:
      if (envelope.error === 'insufficient_points' && typeof envelope.available === 'number' && typeof envelope.required === 'number') {
        return new LoyaltyInsufficientPointsError({ ...init, available: envelope.available, required: envelope.required });
      }
      return new LoyaltyUnprocessableError(init);
    case 429:
      return new LoyaltyRateLimitError({ ...init, retryAfterSeconds: context.retryAfterSeconds });
    default:
      return status >= 500 ? new LoyaltyServerError(init) : new LoyaltyHttpError(init);
  }
}
