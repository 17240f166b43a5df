/**
 * `@loyalty/sdk`: the typed client, the headless engagement API and webhook
 * verification. This entry runs in browsers and in Node and never imports
 * React (`@loyalty/sdk/react`) or Node built-ins (`@loyalty/sdk/node`).
 */
export { LoyaltyClient, createLoyaltyClient, isLoyaltyError, parseRetryAfter, DEFAULT_MAX_RETRIES, MAX_RETRIES_LIMIT, DEFAULT_MAX_RETRY_AFTER_SECONDS, DEFAULT_TIMEOUT_MS } from './client.js';
export type { ClientOptions, ParticipantSession, RetryInfo } from './client.js';
export * from './errors.js';
export { OPERATIONS, EXCLUDED_OPERATIONS, RESOURCES, API_VERSION } from './operations.js';
export type { OperationName, OperationSpec, OperationAuth, HttpMethod } from './operations.js';
export type * from './types.js';
export type { ResourceMethods, FlatOperationMethods } from './generated/resources.js';
export { verifyWebhook, parseSignatureHeader, DEFAULT_WEBHOOK_TOLERANCE_SECONDS } from './webhooks.js';
export type { WebhookHeaders, VerifyOptions } from './webhooks.js';
export { createEngagementSession, CLAIMED_REWARDS_PAGE_SIZE } from './headless.js';
export type { EngagementSession, EngagementSessionOptions, SessionInfo, SpinResult } from './headless.js';
export { EngagementDataStore, LIVE_REFRESH_DEBOUNCE_MS } from './engagement-store.js';
export type { EngagementData, EngagementSnapshot } from './engagement-store.js';
export { parseEventStream } from './sse.js';
export { MAX_BATCH_EVENTS } from './validate.js';
export const SDK_VERSION = '0.6.0';
