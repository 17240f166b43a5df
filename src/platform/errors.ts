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

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly code: string;
  /** Route-specific fields added to the body, for example `available` and `required`. */
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(kind: ErrorKind, code: string, detail: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
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

export const invalid = (detail: string, code = 'VALIDATION_INVALID_VALUE', extra: Record<string, unknown> = {}) =>
  new AppError('invalid', code, detail, extra);
export const notFound = (what: string, code = 'RESOURCE_NOT_FOUND') => new AppError('not_found', code, `${what} not found`);
export const conflict = (detail: string, code = 'CONFLICT', extra: Record<string, unknown> = {}) =>
  new AppError('conflict', code, detail, extra);
export const ruleViolation = (detail: string, code = 'VALIDATION_INVALID_VALUE', extra: Record<string, unknown> = {}) =>
  new AppError('rule_violation', code, detail, extra);
export const unauthenticated = (detail = 'a valid credential is required') =>
  new AppError('unauthenticated', 'AUTH_UNAUTHENTICATED', detail);
export const forbidden = (detail = 'the credential lacks the required scope') =>
  new AppError('forbidden', 'AUTH_FORBIDDEN', detail);

export function errorBody(code: string, detail: string, extra: Record<string, unknown> = {}) {
  return { ...extra, detail, code, [ERROR_VERSION_FIELD]: ERROR_VERSION };
}
