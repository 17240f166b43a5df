/**
 * One error type for every domain failure, and one mapping from its kind to an
 * HTTP status. Anything that is not an AppError is a programmer or operating
 * error: it is logged with the request id and answered as a bare 500.
 */
export type ErrorKind =
  | 'invalid'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'rule_violation'
  | 'rate_limited'
  | 'unavailable';

export const statusOfKind: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  rule_violation: 422,
  rate_limited: 429,
  unavailable: 503,
};

/** The name and value of the coded error envelope's version field (spec: Errors 5). */
export const ERROR_VERSION_FIELD = 'error_version';
export const ERROR_VERSION = 1;

/** The part of the request a field error points into. */
export type RequestPart = 'body' | 'query' | 'params' | 'headers';

/**
 * One thing wrong with one field, in an error body's `errors` list beside
 * `detail` (like Stripe's `param`): `path` is a JSON Pointer into the request
 * part named by `in` (`/effects/0/points` in the body), `code` a stable
 * machine code of the kind of failure (`required`, `type`, `enum`, `minimum`,
 * `additional_property`, … or a domain code), `message` plain words for people
 * ("must be at least 1"), `allowed` the values an enum or literal takes.
 */
export interface FieldError {
  in: RequestPart;
  path: string;
  code: string;
  message: string;
  allowed?: unknown[];
  /** The bound of a `minimum`, `maximum`, `min_length`, `max_length`, `min_items`, `max_items` or `multiple_of` failure. */
  limit?: number;
}

/**
 * A field error for a domain check (`invalid`, `ruleViolation`): `path` a JSON
 * Pointer (`/metadata/currency`) in the body unless `in` says otherwise.
 */
export function fieldError(path: string, code: string, message: string, options: { in?: RequestPart; allowed?: unknown[] } = {}): FieldError {
  const error: FieldError = { in: options.in ?? 'body', path, code, message };
  if (options.allowed) error.allowed = options.allowed;
  return error;
}

/** Fields an error body carries beside detail and code; `errors` is always a list of FieldError. */
export type ErrorExtra = { errors?: FieldError[]; [name: string]: unknown };

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly code: string;
  /**
   * Route-specific fields added to the body, for example `available` and
   * `required`. `errors` is reserved for a list of FieldError (see
   * `fieldError`): a check that knows which field is wrong names it there,
   * as the schema validation does: `invalid(detail, code, { errors: [fieldError('/image_url', 'format', 'must be an https URL')] })`.
   */
  readonly extra: ErrorExtra;
  readonly headers: Record<string, string>;

  constructor(kind: ErrorKind, code: string, detail: string, extra: ErrorExtra = {}, headers: Record<string, string> = {}) {
    super(detail);
    this.kind = kind;
    this.code = code;
    this.extra = extra;
    this.headers = headers;
  }

  get status(): number {
    return statusOfKind[this.kind];
  }
}

export const invalid = (detail: string, code = 'VALIDATION_INVALID_VALUE', extra: ErrorExtra = {}) =>
  new AppError('invalid', code, detail, extra);
export const notFound = (what: string, code = 'RESOURCE_NOT_FOUND') => new AppError('not_found', code, `${what} not found`);
export const conflict = (detail: string, code = 'CONFLICT', extra: ErrorExtra = {}) =>
  new AppError('conflict', code, detail, extra);
export const ruleViolation = (detail: string, code = 'VALIDATION_INVALID_VALUE', extra: ErrorExtra = {}) =>
  new AppError('rule_violation', code, detail, extra);
export const unauthenticated = (detail = 'a valid credential is required') =>
  new AppError('unauthenticated', 'AUTH_UNAUTHENTICATED', detail);
export const forbidden = (detail = 'the credential lacks the required scope') =>
  new AppError('forbidden', 'AUTH_FORBIDDEN', detail);

export function errorBody(code: string, detail: string, extra: ErrorExtra = {}) {
  return { ...extra, detail, code, [ERROR_VERSION_FIELD]: ERROR_VERSION };
}
