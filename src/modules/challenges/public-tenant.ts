import type { FastifyRequest } from 'fastify';
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
 * 3. `X-Service-Tenant`: a tenant id or slug, as on the bearer routes.
 *
 * Without any of them the request is a 400 that says so. A session and a key
 * that belong to different tenants are refused (400), not resolved in favour of
 * the session.
 */
export interface PublicCaller {
  tenantId: string;
  participantId: string | null;
  engagementId: string | null;
}

export async function resolvePublicCaller(request: FastifyRequest, db: Database, authenticator: Authenticator): Promise<PublicCaller> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const sessionId = query.session_id;
  const apiKey = request.headers['x-api-key'];
  const keyTenantId = typeof apiKey === 'string' && apiKey !== '' ? (await authenticator.fromApiKey(apiKey.trim())).tenantId : null;
  if (typeof sessionId === 'string' && sessionId !== '') {
    const engagementId = typeof query.engagement_id === 'string' ? query.engagement_id : undefined;
    const auth = await authenticator.fromSession(sessionId, engagementId);
    if (keyTenantId !== null && keyTenantId !== auth.tenantId) {
      throw invalid('session_id and X-API-Key are credentials of different tenants; send one of them', 'AUTH_CONFLICTING_CREDENTIALS');
    }
    return { tenantId: auth.tenantId, participantId: auth.participantId ?? null, engagementId: auth.engagementId ?? null };
  }
  if (keyTenantId !== null) return { tenantId: keyTenantId, participantId: null, engagementId: null };
  const header = request.headers['x-service-tenant'];
  if (typeof header === 'string' && header !== '') {
    const { rows } = isUuid(header)
      ? await db.system.query('SELECT id FROM auth_find_tenant($1)', [header.toLowerCase()])
      : await db.system.query('SELECT id FROM auth_find_tenant_by_slug($1)', [header]);
    if (!rows[0]) throw new AppError('not_found', 'TENANT_NOT_FOUND', 'X-Service-Tenant names no tenant');
    return { tenantId: rows[0].id as string, participantId: null, engagementId: null };
  }
  throw invalid('this public route needs its tenant: pass session_id, an X-API-Key header, or X-Service-Tenant (tenant id or slug)', 'TENANT_REQUIRED');
}
