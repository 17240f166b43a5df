import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Database } from '../../platform/db.js';
import type { Authenticator } from '../../platform/auth.js';
import { AppError, invalid } from '../../platform/errors.js';
import { isUuid } from '../../platform/ids.js';

/**
 * Public participant-facing reads that carry no credential (the challenge
 * leaderboard, progression leaderboards) still belong to one tenant
 * (contradiction 13). The tenant is named, in this order, by:
 *
 * 1. `session_id` (query): the session's tenant, and the caller is that participant;
 * 2. `X-API-Key`: the key's tenant (a tenant's own server or widget backend);
 * 3. `X-Service-Tenant`: a tenant id or slug, as on the bearer routes;
 * 4. otherwise the subject of the read itself, whose id the service generated
 *    and so belongs to one tenant: the published engagement named by
 *    `engagement_id`, or the challenge of the path.
 *
 * A subject that does not belong to the tenant named by 2 or 3 is a 404, as
 * if it did not exist, so a caller cannot read one tenant's data through
 * another's. A session and a key that belong to different tenants are refused
 * (400 `AUTH_CONFLICTING_CREDENTIALS`), not resolved in favour of the session.
 * Every resolved request counts against its tenant's public-route rate limit.
 */
export interface PublicCaller {
  tenantId: string;
  participantId: string | null;
  engagementId: string | null;
}

/**
 * The answer of a public read whose optional credential is refused (unknown,
 * expired or revoked), for the schema of each route that resolves its caller
 * here: a public route documents no 401 of its own (platform/http.ts).
 */
export const PUBLIC_CALLER_REFUSED = {
  401: { ...Type.Ref('ErrorResponse'), description: 'A credential sent with the read (`session_id`, `X-API-Key`) is unknown, expired or revoked. Codes: AUTH_UNAUTHENTICATED.' },
};

/** What names the tenant when the caller brings nothing else. */
export type PublicSubject = { engagementId: string } | { challengeId: string };

/** The parts of the service context the resolution needs (`app.ctx` has them). */
export interface PublicContext {
  db: Database;
  authenticator: Authenticator;
  limitPublicTenant(request: FastifyRequest, reply: FastifyReply, tenantId: string): Promise<void>;
}

export async function resolvePublicCaller(request: FastifyRequest, reply: FastifyReply, ctx: PublicContext, subject: PublicSubject): Promise<PublicCaller> {
  const caller = await identify(request, ctx, subject);
  await ctx.limitPublicTenant(request, reply, caller.tenantId);
  return caller;
}

async function identify(request: FastifyRequest, ctx: PublicContext, subject: PublicSubject): Promise<PublicCaller> {
  const { authenticator } = ctx;
  const query = (request.query ?? {}) as Record<string, unknown>;
  const sessionId = query.session_id;
  const apiKey = headerValue(request, 'x-api-key');
  const keyAuth = apiKey !== null ? await authenticator.fromApiKey(apiKey.trim()) : null;
  const keyTenantId = keyAuth?.tenantId ?? null;
  if (typeof sessionId === 'string' && sessionId !== '') {
    // The session must have been issued for the engagement named beside it (403 otherwise), and a
    // session's engagement is one of its own tenant's.
    const engagementId = typeof query.engagement_id === 'string' ? query.engagement_id : undefined;
    const auth = await authenticator.fromSession(sessionId, engagementId);
    if (keyTenantId !== null && keyTenantId !== auth.tenantId) {
      throw invalid('session_id and X-API-Key are credentials of different tenants; send one of them', 'AUTH_CONFLICTING_CREDENTIALS');
    }
    return { tenantId: auth.tenantId, participantId: auth.participantId ?? null, engagementId: auth.engagementId ?? null };
  }
  const tenantHeader = headerValue(request, 'x-service-tenant');
  if (keyAuth !== null) {
    await authenticator.checkTenantHeader(keyAuth, tenantHeader ?? undefined);
    // The tenant's own server may read the boards of a draft engagement, as its sessions may.
    await requireEngagementOf(ctx, subject, keyAuth.tenantId, { draftsToo: true }, "the API key's tenant");
    return { tenantId: keyAuth.tenantId, participantId: null, engagementId: null };
  }
  if (tenantHeader !== null) {
    const tenantId = await tenantOfHeader(ctx.db, tenantHeader);
    await requireEngagementOf(ctx, subject, tenantId, { draftsToo: false }, 'the tenant X-Service-Tenant names');
    return { tenantId, participantId: null, engagementId: null };
  }
  if ('engagementId' in subject) {
    const owners = (await authenticator.engagementOwners(subject.engagementId)).filter((owner) => owner.published);
    if (owners.length !== 1) throw engagementNotFound('engagement_id names no published engagement');
    return { tenantId: owners[0].tenantId, participantId: null, engagementId: null };
  }
  const owners = await authenticator.challengeOwners(subject.challengeId);
  // A draft challenge answers 404 later, inside its tenant, like an unknown one.
  if (owners.length !== 1) throw new AppError('not_found', 'RESOURCE_NOT_FOUND', 'challenge not found');
  return { tenantId: owners[0], participantId: null, engagementId: null };
}

function headerValue(request: FastifyRequest, name: string): string | null {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : null;
}

async function tenantOfHeader(db: Database, header: string): Promise<string> {
  const { rows } = isUuid(header)
    ? await db.system.query('SELECT id FROM auth_find_tenant($1)', [header.toLowerCase()])
    : await db.system.query('SELECT id FROM auth_find_tenant_by_slug($1)', [header]);
  if (!rows[0]) throw new AppError('not_found', 'TENANT_NOT_FOUND', 'X-Service-Tenant names no tenant');
  return rows[0].id as string;
}

/** When the subject is an engagement, it must be one of the named tenant's (published unless `draftsToo`). */
async function requireEngagementOf(ctx: PublicContext, subject: PublicSubject, tenantId: string, options: { draftsToo: boolean }, tenantName: string): Promise<void> {
  if (!('engagementId' in subject)) return;
  const owners = await ctx.authenticator.engagementOwners(subject.engagementId);
  if (owners.some((owner) => owner.tenantId === tenantId && (options.draftsToo || owner.published))) return;
  throw engagementNotFound(`engagement_id names no ${options.draftsToo ? '' : 'published '}engagement of ${tenantName}`);
}

function engagementNotFound(detail: string): AppError {
  return new AppError('not_found', 'ENGAGEMENT_NOT_FOUND', detail);
}
