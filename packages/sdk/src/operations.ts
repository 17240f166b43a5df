/**
 * Every operation of the service's OpenAPI document that the SDK calls, by
 * method name: generated from the document (src/generated/operations.ts,
 * written by scripts/operations-table.ts in `npm run sdk:generate`), never
 * kept by hand. The method name is the operation's `operationId`; the
 * operations left out on purpose are EXCLUDED_OPERATIONS, with the reason.
 *
 * `auth` says which credential the SDK sends: `key` an API key (server
 * callers), `console` none of its own: a person's console sign-in cookie,
 * which the browser sends (the service refuses API keys there), `session` the participant's `session_id` and `engagement_id`
 * (never a key: the service refuses keys on participant routes), `public`
 * nothing. `idempotency` names where the SDK puts a generated idempotency key
 * when the caller gives none: `body` (the body's `idempotency_key`) or
 * `events` (each event of a batch). `attempt` marks activity calls whose
 * body `attempt_id`, when the caller gives one, makes a repeat return the
 * first result; the SDK does not invent one there (without it the service
 * continues the participant's waiting attempt), but retries such a call
 * after a network failure only when it is present.
 */
import { GENERATED_API_VERSION, GENERATED_OPERATIONS } from './generated/operations.js';
import { GENERATED_RESOURCES } from './generated/resources.js';
import type { HttpMethod } from './excluded-operations.js';

export type { HttpMethod };
export type OperationAuth = 'key' | 'console' | 'session' | 'public';
export type IdempotencyPlacement = 'body' | 'events' | 'attempt';

export interface OperationSpec {
  readonly method: HttpMethod;
  readonly path: string;
  readonly auth: OperationAuth;
  readonly idempotency?: IdempotencyPlacement;
  /** A server-sent-event stream: called through `streamEvents`, not as a JSON request. */
  readonly stream?: true;
  readonly deprecated?: string;
}

export const OPERATIONS = GENERATED_OPERATIONS satisfies Record<string, OperationSpec>;

export type OperationName = keyof typeof OPERATIONS;

/** The client's resources: by resource (`points`) and method (`grant`), the operation it calls (`grantPoints`). */
export const RESOURCES = GENERATED_RESOURCES satisfies Record<string, Record<string, OperationName>>;

/**
 * The API version (`Loyalty-Version`, a date) this SDK was generated against:
 * the client sends it unless its `apiVersion` option names another.
 */
export const API_VERSION: string = GENERATED_API_VERSION;

export { EXCLUDED_OPERATIONS } from './excluded-operations.js';
