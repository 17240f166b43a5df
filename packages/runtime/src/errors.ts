/**
 * Turns whatever a call threw into a message a visitor understands. The
 * SDK's typed errors carry `status`, `code` and `detail` (status 0 and kind
 * `network` when no answer came); a 5xx or an unknown failure gets a general
 * message. A server's error page never reaches the page as it came.
 */
import { i18n } from './i18n.js';

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
  const { t, number } = i18n();
  if (status === undefined || status === 0) {
    if (isNetworkFailure(error)) return { code: 'NETWORK_ERROR', title: t.networkTitle, message: t.networkMessage, retryable: true };
    return { code: 'RUNTIME_ERROR', title: t.failedTitle, message: t.failedMessage, retryable: true };
  }
  switch (code) {
    case 'SITE_NOT_FOUND':
    case 'ENGAGEMENT_NOT_FOUND':
      return { code, title: t.notAvailableTitle, message: t.notAvailableMessage, retryable: false };
    case 'ENGAGEMENT_NOT_PUBLISHED':
      return { code, title: t.notAvailableTitle, message: t.notRunningMessage, retryable: false };
    case 'ANONYMOUS_SESSIONS_DISABLED':
      return { code, title: t.signInTitle, message: t.signInMessage, retryable: false };
    case 'ATTEMPTS_EXHAUSTED': {
      const max = typeof body?.max_attempts === 'number' ? number(body.max_attempts) : null;
      return { code, title: t.noAttemptsTitle, message: t.attemptsUsed(max), retryable: false };
    }
    case 'COOLDOWN_ACTIVE': {
      const seconds = typeof body?.cooldown_remaining_seconds === 'number' ? number(body.cooldown_remaining_seconds) : null;
      return { code, title: t.waitTitle, message: t.tryAgainIn(seconds), retryable: true };
    }
    case 'PRIZES_EXHAUSTED':
      return { code, title: t.prizesGoneTitle, message: t.prizesGoneMessage, retryable: false };
    default:
      break;
  }
  if (status === 401) return { code: code ?? 'AUTH_UNAUTHENTICATED', title: t.sessionEndedTitle, message: t.sessionEndedMessage, retryable: false };
  if (status === 429) {
    return { code: code ?? 'RATE_LIMITED', title: t.tooManyTitle, message: t.tooManyMessage(retryAfterSeconds ? number(retryAfterSeconds) : null), retryable: true };
  }
  if (status >= 500) return { code: code ?? `HTTP_${status}`, title: t.serviceProblemTitle, message: t.serviceProblemMessage, retryable: true };
  // Other 4xx answers carry a detail written for people (in English); shown as the service wrote it.
  return { code: code ?? `HTTP_${status}`, title: t.refusedTitle, message: detail ?? t.refusedMessage, retryable: false };
}
