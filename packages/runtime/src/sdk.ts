import { createEngagementSession as createSdkSession, type EngagementSessionOptions } from '@loyalty/sdk';
import type { EngagementSession } from './types.js';

/**
 * The runtime talks to the service only through `@loyalty/sdk`'s headless
 * session. A visitor is waiting on the page, so a failed request is retried
 * once (the SDK retries idempotent requests and honours Retry-After) and then
 * explained on the page with a button to try again.
 */
const PAGE_MAX_RETRIES = 1;
const PAGE_TIMEOUT_MS = 15_000;

export function createEngagementSession(options: Pick<EngagementSessionOptions, 'baseUrl' | 'tenantSlug' | 'siteSlug' | 'sessionId' | 'previewEngagementId'>): EngagementSession {
  return createSdkSession({ ...options, maxRetries: PAGE_MAX_RETRIES, timeoutMs: PAGE_TIMEOUT_MS });
}
