import { createLoyaltyClient, LoyaltyError } from '@loyalty/sdk';

/**
 * The console's only way to the service: the SDK's typed client, signed in
 * with the console's cookie (the browser sends it) and the session's CSRF
 * token on every request that changes something.
 */
let csrfToken: string | undefined;

export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

export const client = createLoyaltyClient({
  baseUrl: window.location.origin,
  credentials: 'same-origin',
  csrfToken: () => csrfToken,
  // A person is waiting: one retry of a rate-limited or unavailable read, not three.
  maxRetries: 1,
  maxRetryAfterSeconds: 5,
});

/** The text to show for a failed call: the API's own `detail` when it sent one. */
export function errorDetail(error: unknown): string {
  if (error instanceof LoyaltyError) return error.detail;
  if (error instanceof Error) return error.message;
  return String(error);
}

export function isUnauthenticated(error: unknown): boolean {
  return error instanceof LoyaltyError && error.status === 401;
}

export function isForbidden(error: unknown): boolean {
  return error instanceof LoyaltyError && error.status === 403;
}
