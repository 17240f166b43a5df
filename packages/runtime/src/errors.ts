/**
 * Turns whatever a call threw into a message a visitor understands. The
 * SDK's typed errors carry `status`, `code` and `detail` (status 0 and kind
 * `network` when no answer came); a 5xx or an unknown failure gets a general
 * message. A server's error page never reaches the page as it came.
 */
export interface Explained {
  code: string;
  title: string;
  message: string;
  /** Whether trying the same thing again may work (offers a retry button). */
  retryable: boolean;
}

interface ServiceErrorLike {
  status?: number;
  code?: string;
  detail?: string;
  body?: Record<string, unknown>;
  retryAfterSeconds?: number | null;
}

function fields(error: unknown): ServiceErrorLike {
  if (typeof error !== 'object' || error === null) return {};
  const e = error as Record<string, unknown>;
  const body = (typeof e.body === 'object' && e.body !== null ? e.body : {}) as Record<string, unknown>;
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  const code = typeof e.code === 'string' ? e.code : typeof body.code === 'string' ? body.code : undefined;
  const detail = typeof e.detail === 'string' ? e.detail : typeof body.detail === 'string' ? body.detail : undefined;
  const retryAfter = typeof e.retryAfterSeconds === 'number' ? e.retryAfterSeconds : typeof e.retryAfter === 'number' ? e.retryAfter : null;
  return { status, code, detail, body, retryAfterSeconds: retryAfter };
}

function isNetworkFailure(error: unknown): boolean {
  // The SDK's LoyaltyConnectionError: no response (refused, reset, DNS, timeout), status 0.
  if ((error as { kind?: string } | null)?.kind === 'network') return true;
  if (error instanceof TypeError) return true;
  const name = (error as { name?: string } | null)?.name ?? '';
  const code = (error as { code?: string } | null)?.code ?? '';
  return /network|fetch/i.test(name) || code === 'NETWORK_ERROR' || code === 'TIMEOUT';
}

export function explain(error: unknown): Explained {
  const { status, code, detail, body, retryAfterSeconds } = fields(error);
  if (status === undefined || status === 0) {
    if (isNetworkFailure(error)) {
      return { code: 'NETWORK_ERROR', title: 'No connection', message: 'The engagement service cannot be reached. Check your connection and try again.', retryable: true };
    }
    return { code: 'RUNTIME_ERROR', title: 'Something went wrong', message: 'The engagement could not be shown. Please try again.', retryable: true };
  }
  switch (code) {
    case 'SITE_NOT_FOUND':
    case 'ENGAGEMENT_NOT_FOUND':
      return { code, title: 'Not available', message: 'This engagement is not available. It may have ended or not be published yet.', retryable: false };
    case 'ENGAGEMENT_NOT_PUBLISHED':
      return { code, title: 'Not available', message: 'This engagement is not running any more.', retryable: false };
    case 'ANONYMOUS_SESSIONS_DISABLED':
      return { code, title: 'Sign-in needed', message: 'To take part, please sign in on the site that shows this engagement.', retryable: false };
    case 'ATTEMPTS_EXHAUSTED': {
      const max = typeof body?.max_attempts === 'number' ? body.max_attempts : null;
      return { code, title: 'No attempts left', message: max ? `You have used all ${max} of your attempts.` : 'You have used all your attempts.', retryable: false };
    }
    case 'COOLDOWN_ACTIVE': {
      const seconds = typeof body?.cooldown_remaining_seconds === 'number' ? body.cooldown_remaining_seconds : null;
      return { code, title: 'Please wait', message: seconds ? `You can try again in ${seconds} seconds.` : 'You can try again shortly.', retryable: true };
    }
    case 'PRIZES_EXHAUSTED':
      return { code, title: 'All prizes are gone', message: 'Every prize of this wheel has been won. Thank you for playing!', retryable: false };
    default:
      break;
  }
  if (status === 401) {
    return { code: code ?? 'AUTH_UNAUTHENTICATED', title: 'Session ended', message: 'Your session has expired or is not valid. Reload the page to start again.', retryable: false };
  }
  if (status === 429) {
    const wait = retryAfterSeconds ? ` in ${retryAfterSeconds} seconds` : ' in a moment';
    return { code: code ?? 'RATE_LIMITED', title: 'Too many requests', message: `Please try again${wait}.`, retryable: true };
  }
  if (status >= 500) {
    return { code: code ?? `HTTP_${status}`, title: 'Service problem', message: 'The engagement service had a problem. Please try again in a moment.', retryable: true };
  }
  // Other 4xx answers carry a detail written for people; show it.
  return { code: code ?? `HTTP_${status}`, title: 'That did not work', message: detail ?? 'The request was refused.', retryable: false };
}
