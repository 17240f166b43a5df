import type { AuthContext } from './auth.js';
import type { Database, Tx } from './db.js';
import { AppError } from './errors.js';
import { routePermission, userMay } from './permissions.js';

declare module './auth.js' {
  interface AuthContext {
    /**
     * Set for this request when the tenant requires four-eyes publishing
     * (`holdToFourEyes`): the caller works on drafts only, whatever it may
     * otherwise publish.
     */
    fourEyes?: boolean;
  }
}

/**
 * Who may put a program live (docs/decisions/console-access.md, "Publishing";
 * docs/decisions/console.md, "Four-eyes publishing (issue 32)").
 *
 * API keys keep their scopes and may publish, as before. People (console
 * cookie or admin login token) may only when they hold `programs:publish`;
 * without it they create and change rules, engagements, challenges and
 * contests as drafts only, and submit them for review. When the tenant
 * requires four-eyes publishing, nobody publishes directly: every caller works
 * on drafts and submits them, and a person other than the submitter approves.
 */
export function mayPublish(auth: AuthContext): boolean {
  if (auth.fourEyes) return false;
  return auth.user === undefined || userMay(auth.user, 'programs:publish');
}

/**
 * Whether the caller may take something live down (pause a rule): whoever may
 * publish, four-eyes or not. Four-eyes guards what goes live; stopping a rule
 * that pays out wrongly must not wait for a second person.
 */
export function mayTakeDown(auth: AuthContext): boolean {
  return auth.user === undefined || userMay(auth.user, 'programs:publish');
}

/** The refusal of a change that would put something live, or change what is live, without the publishing permission. */
export function publishingRequired(what: string): AppError {
  return new AppError(
    'forbidden',
    'AUTH_FORBIDDEN',
    `${what} needs the publishing permission (programs:publish; a marketer holds it only with can_publish; where the tenant requires four-eyes publishing, nobody publishes directly): ` +
      'save it as a draft and submit it for review with POST /api/v1/admin/reviews',
  );
}

/** The code of every four-eyes refusal. */
export const FOUR_EYES_REQUIRED = 'FOUR_EYES_REQUIRED';

/** The refusal of a publication or an approval that four-eyes publishing forbids; `detail` says why and what to do instead. */
export function fourEyesRefusal(detail: string): AppError {
  return new AppError('forbidden', FOUR_EYES_REQUIRED, detail);
}

const SELECT_FOUR_EYES = 'SELECT require_four_eyes FROM tenants WHERE id = $1';

/** Whether the tenant requires four-eyes publishing, read in the caller's transaction. */
export async function fourEyesRequiredInTx(tx: Tx, tenantId: string): Promise<boolean> {
  const { rows } = await tx.query<{ require_four_eyes: boolean }>(SELECT_FOUR_EYES, [tenantId]);
  return rows[0]?.require_four_eyes ?? false;
}

/** The direct publish routes (`POST /admin/{engagements,challenges,contests}/{id}/publish`). */
const PUBLISH_ROUTE = /^\/api\/v1\/admin\/[a-z-]+\/:[a-z_]+\/publish$/;
/** Writes that reach `mayPublish`: the programs' own routes, and the sandbox promotion into live. */
const SANDBOX_PROMOTION = '/api/v1/tenant/sandbox/promotion';
/** Review requests decide four-eyes themselves, in the decision's transaction (modules/publishing). */
const REVIEWS = /^\/api\/v1\/admin\/reviews(\/|$)/;

/**
 * Run before the handler of every credentialed request (src/app.ts). For a
 * write that could put a program live, reads the tenant's setting once; when
 * four-eyes is on, the caller is held to drafts for this request
 * (`mayPublish` answers false, so the programs' services refuse live statuses
 * and live changes as for a drafts-only person) and the direct publish routes
 * are refused with `FOUR_EYES_REQUIRED`. Reads, other areas and callers that
 * are drafts-only already cost no query.
 */
export async function holdToFourEyes(db: Database, auth: AuthContext, method: string, url: string): Promise<void> {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS' || !mayPublish(auth) || REVIEWS.test(url)) return;
  const permission = routePermission(method, url);
  if (permission !== 'programs:write' && permission !== 'programs:publish' && url !== SANDBOX_PROMOTION) return;
  const rows = await db.tenantRead<{ require_four_eyes: boolean }>(auth.tenantId, SELECT_FOUR_EYES, [auth.tenantId]);
  if (!rows[0]?.require_four_eyes) return;
  auth.fourEyes = true;
  if (method === 'POST' && PUBLISH_ROUTE.test(url)) {
    throw fourEyesRefusal(
      'this tenant requires four-eyes publishing (require_four_eyes): nobody publishes directly, API keys included. ' +
        'Submit the draft for review with POST /api/v1/admin/reviews; another person with the publishing permission approves it (POST /api/v1/admin/reviews/{id}/approve)',
    );
  }
}
