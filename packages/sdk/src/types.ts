import type { paths, components } from './generated/openapi.js';
import { OPERATIONS, type OperationName } from './operations.js';

/**
 * Request and response types of every operation, derived from the types that
 * openapi-typescript generates from the service's OpenAPI document
 * (src/generated/openapi.ts). Nothing here is written by hand per route, so a
 * change to the document changes these types at the next `npm run sdk:generate`.
 */
type Operations = typeof OPERATIONS;
type Json<T> = T extends { content: { 'application/json': infer C } } ? C : T extends { content?: { 'application/json': infer C } } ? C : never;

/**
 * An operation listed in OPERATIONS before the generated document has it (a
 * route another branch is adding): loosely typed until `npm run sdk:generate`
 * picks it up.
 */
interface NotYetGenerated {
  parameters: { path: Record<string, string>; query: Record<string, unknown> };
  requestBody?: { content: { 'application/json': Record<string, unknown> } };
  responses: { 200: { content: { 'application/json': unknown } } };
}

/** The generated description of one operation. */
export type OperationOf<N extends OperationName> = Operations[N]['path'] extends keyof paths
  ? paths[Operations[N]['path']][Lowercase<Operations[N]['method']>]
  : NotYetGenerated;

type ParametersIn<O, Where extends 'path' | 'query'> = O extends { parameters: infer P } ? (Where extends keyof P ? Exclude<P[Where], undefined> : never) : never;
type RequestBodyOf<O> = O extends { requestBody: infer B } ? Json<B> : O extends { requestBody?: infer B } ? Json<Exclude<B, undefined>> | undefined : never;

/** Session routes: the SDK fills `session_id` and `engagement_id` from the participant's session. */
type SessionFields = 'session_id' | 'engagement_id';
type WithoutSession<T> = T extends object ? Omit<T, SessionFields> & { session_id?: string; engagement_id?: string } : T;
/** Idempotent writes: the SDK generates `idempotency_key` when it is missing. */
type WithOptionalKey<T> = T extends { idempotency_key: unknown } ? Omit<T, 'idempotency_key'> & { idempotency_key?: string } : T;
type WithOptionalEventKeys<T> = T extends { events: Array<infer E> } ? Omit<T, 'events'> & { events: Array<WithOptionalKey<E>> } : T;

type AdjustBody<N extends OperationName, B> = Operations[N] extends { idempotency: 'events' }
  ? WithOptionalEventKeys<B>
  : Operations[N] extends { auth: 'session' }
    ? WithOptionalKey<WithoutSession<B>>
    : WithOptionalKey<B>;

export type PathParameters<N extends OperationName> = ParametersIn<OperationOf<N>, 'path'>;
export type QueryParameters<N extends OperationName> = Operations[N] extends { auth: 'session' }
  ? WithoutSession<ParametersIn<OperationOf<N>, 'query'>>
  : ParametersIn<OperationOf<N>, 'query'>;
export type RequestBody<N extends OperationName> = AdjustBody<N, RequestBodyOf<OperationOf<N>>>;

type SuccessStatus = 200 | 201 | 202 | 204;
type ResponsesOf<O> = O extends { responses: infer R } ? R : never;
/** The JSON body of the operation's 2xx responses (a union when it has several). */
export type ResponseBody<N extends OperationName> = {
  [S in keyof ResponsesOf<OperationOf<N>>]: S extends SuccessStatus ? (S extends 204 ? undefined : Json<ResponsesOf<OperationOf<N>>[S]>) : never;
}[keyof ResponsesOf<OperationOf<N>>];

/** Options every call accepts besides its parameters. */
export interface CallOptions {
  /** Abort the call (and its retries). */
  signal?: AbortSignal;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** The idempotency key of a POST: the body's `idempotency_key` where the operation has one, else the `Idempotency-Key` header. Generated when omitted; retries reuse it. */
  idempotencyKey?: string;
  /** Session routes: act for this session instead of the client's. */
  session?: { sessionId: string; engagementId: string };
}

type Part<K extends string, T> = [T] extends [never] ? unknown : [T] extends [undefined] ? unknown : undefined extends T ? { [P in K]?: Exclude<T, undefined> } : {} extends T ? { [P in K]?: T } : { [P in K]: T };

/** The argument of a client method: `{ path, query, body }` as the operation needs, plus CallOptions. */
export type OperationArgs<N extends OperationName> = Part<'path', PathParameters<N>> & Part<'query', QueryParameters<N>> & Part<'body', RequestBody<N>> & CallOptions;

type ArgsTuple<N extends OperationName> = {} extends OperationArgs<N> ? [args?: OperationArgs<N>] : [args: OperationArgs<N>];

/** One typed method per operation in OPERATIONS. */
export type OperationMethods = {
  [N in Exclude<OperationName, 'streamEvents' | 'streamTenantEvents'>]: (...args: ArgsTuple<N>) => Promise<ResponseBody<N>>;
};

// Named types of the schemas and routes that integrations use most. The
// headless API's contract names these.
export type Schemas = components['schemas'];
export type PublicEngagement = ResponseBody<'getSite'>;
export type AnonymousSession = ResponseBody<'createSiteSession'>;
export type ActivityEligibility = ResponseBody<'getActivityEligibility'>;
export type ValidateResponse = ResponseBody<'validateActivity'>;
export type CompleteResponse = ResponseBody<'completeActivity'>;
export type CompleteBody = RequestBody<'completeActivity'>;
export type QuizAnswers = NonNullable<NonNullable<CompleteBody['payload']>['answers']>;
export type GateCheckBody = RequestBody<'checkGates'>;
export type GateCheckResponse = ResponseBody<'checkGates'>;
export type ScreenVisitBody = RequestBody<'recordScreenVisit'>;
export type ScreenVisitResponse = ResponseBody<'recordScreenVisit'>;
export type PointsBalance = ResponseBody<'getPointsBalance'>;
export type BadgeStatus = ResponseBody<'getBadgeStatus'>;
export type ClaimedRewards = ResponseBody<'listClaimedRewards'>;
export type GrantPointsBody = RequestBody<'grantPoints'>;
export type GrantPointsResponse = ResponseBody<'grantPoints'>;
export type DeductPointsBody = RequestBody<'deductPoints'>;
export type DeductPointsResponse = ResponseBody<'deductPoints'>;
export type IngestEventBody = RequestBody<'ingestEvent'>;
export type IngestEventResponse = ResponseBody<'ingestEvent'>;

/** The envelope of a webhook delivery and of a live-stream message (docs/webhooks.md). */
export interface EventEnvelope<D extends Record<string, unknown> = Record<string, unknown>> {
  id: string;
  event: string;
  timestamp: string;
  tenant_id: string;
  engagement_id: string | null;
  participant_id: string | null;
  /** False when the event happened in a sandbox. */
  livemode: boolean;
  data: D;
  /** True only on a sample sent by `sendWebhookTestEvent` (about no real participant). */
  test?: true;
}
export type StreamEvent = EventEnvelope;
export type WebhookEnvelope = EventEnvelope;
