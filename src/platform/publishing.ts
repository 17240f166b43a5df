import type { AuthContext } from './auth.js';
import { AppError } from './errors.js';
import { userMay } from './permissions.js';

/**
 * Who may put a program live (docs/decisions/console-access.md, "Publishing").
 *
 * API keys keep their scopes and may publish, as before. People (console
 * cookie or admin login token) may only when they hold `programs:publish`;
 * without it they create and change rules, engagements, challenges and
 * contests as drafts only, and submit them for review.
 */
export function mayPublish(auth: AuthContext): boolean {
  return auth.user === undefined || userMay(auth.user, 'programs:publish');
}

/** The refusal of a change that would put something live, or change what is live, without the publishing permission. */
export function publishingRequired(what: string): AppError {
  return new AppError(
    'forbidden',
    'AUTH_FORBIDDEN',
    `${what} needs the publishing permission (programs:publish; a marketer holds it only with can_publish): save it as a draft and submit it for review with POST /api/v1/admin/reviews`,
  );
}

/** Throws publishingRequired(what) unless the caller may publish. */
export function requirePublishing(auth: AuthContext, what: string): void {
  if (!mayPublish(auth)) throw publishingRequired(what);
}
