import { createLoyaltyClient, errorFromResponse, LoyaltyError } from '@loyalty/sdk';

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

/**
 * The one kind of request the SDK's JSON client does not send: a file as the
 * body (an import and its dry run, `POST /admin/imports…`). The same
 * credentials, CSRF token and error shape as the client's.
 */
export async function postFile<T>(path: string, query: Record<string, string>, file: Blob, contentType: string): Promise<T> {
  const url = `${window.location.origin}${path}?${new URLSearchParams(query)}`;
  const response = await fetch(url, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': contentType, ...(csrfToken ? { 'x-csrf-token': csrfToken } : {}) },
    body: file,
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the error keeps the text.
  }
  if (!response.ok) throw errorFromResponse(response.status, body, { requestId: response.headers.get('x-request-id'), method: 'POST', url, retryAfterSeconds: null });
  return body as T;
}

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
