import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError, unauthenticated } from '../../platform/errors.js';
import { KEY_PATTERN } from '../../platform/auth.js';
import { CONSOLE_COOKIE } from '../../platform/console-auth.js';

/**
 * The platform operator's credential: `Authorization: Bearer <OPERATOR_TOKEN>`,
 * the one secret of the `/api/v1/operator/` routes (docs/decisions/foundation.md,
 * "Tenant limits"). It is a deployment secret beside JWT_SECRET, not a tenant's
 * credential: no API key, admin token or console sign-in opens these routes,
 * whatever its scopes or role, so a tenant can never raise its own limits.
 */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

const digest = (text: string) => createHash('sha256').update(text).digest();

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/** Refuses the request unless it carries the operator token: 401 without it, 403 with a tenant's credential. */
export function requireOperator(operatorToken: string | null, request: FastifyRequest): void {
  if (operatorToken === null) {
    throw new AppError('forbidden', 'OPERATOR_ROUTES_OFF', 'the operator routes are off: the service has no OPERATOR_TOKEN');
  }
  const presented = bearer(request);
  const tenantCredential =
    request.headers['x-api-key'] !== undefined ||
    request.cookies?.[CONSOLE_COOKIE] !== undefined ||
    (presented !== null && (KEY_PATTERN.test(presented) || JWT_SHAPE.test(presented)));
  if (tenantCredential) {
    throw new AppError('forbidden', 'OPERATOR_ONLY', "a tenant's credential cannot read or change plans and limits here: these routes need the operator token (Authorization: Bearer <OPERATOR_TOKEN>)");
  }
  if (presented === null) throw unauthenticated('the operator token is required: Authorization: Bearer <OPERATOR_TOKEN>');
  // Compared as digests so that the comparison takes the same time whatever the length presented.
  if (!timingSafeEqual(digest(presented), digest(operatorToken))) throw unauthenticated('the operator token is wrong');
}
