import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from './db.js';
import { clock } from './clock.js';
import { routePermission, type Permission } from './permissions.js';
import { answerSchema, auditSnapshot, schemaResolver, viewerOf, type MaskingOptions, type MaskViewer, type ResponseSchemas, type SchemaResolver } from './privacy.js';

/**
 * The audit log: who changed what, when, and the resource before and after.
 *
 * Recorded for every successful request (2xx) that changes configuration —
 * programs, publishing, settings, users and keys, webhooks, fraud decisions,
 * erasures — whoever sends it, and for the participant actions of people
 * (manual grants and deducts, profile edits, reveals of personal data). An
 * integrator's own high-volume traffic (ingestion, grants by API key,
 * sessions) is not: the ledger and the event store are its record.
 *
 * Before and after are the resource as its own GET route shows it, read with
 * the caller's credentials just before the handler runs and just after it
 * answered (so a caller never sees in the log what it could not read). A
 * create's after is its response. Each is kept through the allowlist of the
 * schema it was answered with (platform/privacy.ts `auditSnapshot`): fields
 * the schema does not declare are left out, credentials (`x-secret`: an
 * invitation link, a new key, a signing secret) are never written, and
 * personal values (`x-personal`, the tenant's personal custom fields, personal
 * names inside free-form data) read "[redacted]". The request body is kept
 * through its own schema the same way. The row is written after the change committed and before the
 * answer is sent: a process that dies in
 * between loses that row, never the change (decisions/console-access.md).
 */
const ALWAYS: ReadonlySet<Permission> = new Set([
  'programs:write',
  'programs:publish',
  'settings:write',
  'access:manage',
  'developers:write',
  'fraud:decide',
  'participants:erase',
]);
const PEOPLE_ONLY: ReadonlySet<Permission> = new Set(['participants:write', 'pii:reveal']);
/** Integration traffic: recorded elsewhere (event store, sessions). */
const NEVER = /^\/api\/v1\/(ingest\/|events\/batch$|sessions$|console\/|auth\/)/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const SNAPSHOT_BYTES_MAX = 64 * 1024;
/** Marks the log's own reads so that they are not counted against the caller's rate limits. */
export const INTERNAL_READ_HEADER = 'x-audit-read';
export const INTERNAL_READ_SECRET = randomBytes(24).toString('hex');

/** A change the log recorded, offered to the listeners once it committed (`onAuditedChange`). */
export interface AuditedChange {
  tenantId: string;
  method: string;
  action: string;
  resourceType: string;
  resourceId: string | null;
  actor: { type: 'user' | 'api_key'; id: string; email: string | null };
  at: Date;
}

type AuditedChangeListener = (db: Database, change: AuditedChange) => Promise<void>;
const listeners: AuditedChangeListener[] = [];

/**
 * Follow the changes the log records, after they committed and before their
 * answer is sent: the publishing module closes a pending review request when
 * its item was published directly. A listener's failure is logged, never the
 * caller's: the change it follows has committed already.
 */
export function onAuditedChange(listener: AuditedChangeListener): void {
  listeners.push(listener);
}

interface PendingAudit {
  /** When the change was asked for: entries sort in the order the changes were made, not the order their rows were written. */
  at: Date;
  permission: Permission | null;
  action: string;
  resourceType: string;
  resourceId: string | null;
  resourceUrl: string | null;
  resourcePattern: string | null;
  before: unknown;
  payload: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    pendingAudit: PendingAudit | null;
  }
}

/**
 * What the log keeps of a JSON answer or body: the allowlist of its schema
 * (platform/privacy.ts `auditSnapshot`): declared fields only, credentials
 * left out, personal values "[redacted]" whoever reads the log.
 */
function snapshot(text: string | null, schema: unknown, resolve: SchemaResolver, viewer: MaskViewer): unknown {
  if (text === null || text === '') return null;
  if (text.length > SNAPSHOT_BYTES_MAX) return { truncated: true, bytes: text.length };
  try {
    return auditSnapshot(JSON.parse(text), schema, resolve, viewer) ?? null;
  } catch {
    return null;
  }
}

/**
 * `/api/v1/admin/rules/:rule_id/publish` → type `rules`, the id param's value, the action `publish`, the resource `/api/v1/admin/rules/<id>`.
 * A POST without a parameter creates in a collection (`POST /admin/rules`, which has its list) or acts on one
 * (`POST /admin/rules/simulate`, no such list): an action is named by its last segment (`simulate` on `rules`), not "create".
 */
function describe(request: FastifyRequest, pattern: string, isCollection: (pattern: string) => boolean) {
  const segments = pattern.split('/').filter(Boolean);
  const params = (request.params ?? {}) as Record<string, string>;
  const firstParam = segments.findIndex((segment) => segment.startsWith(':'));
  const lastParam = segments.map((segment) => segment.startsWith(':')).lastIndexOf(true);
  const method = request.method;
  const collectionAction = method === 'POST' && lastParam < 0 && segments.length > 3 && !isCollection(pattern);
  const resourceType = firstParam > 0 ? segments[firstParam - 1] : segments[segments.length - (collectionAction ? 2 : 1)];
  const resourceId = firstParam >= 0 ? (params[segments[firstParam].slice(1)] ?? null) : null;
  const trailing = lastParam >= 0 ? segments.slice(lastParam + 1) : [];
  let action: string;
  if (trailing.length > 0 && method === 'POST') action = trailing.join('.');
  else if (collectionAction) action = segments[segments.length - 1];
  else if (method === 'POST') action = lastParam >= 0 ? 'update' : 'create';
  else if (method === 'DELETE') action = 'delete';
  else action = 'update';
  // The resource the change is seen on: the pattern up to its last parameter, with the values of this request.
  // A PATCH or PUT without a parameter changes a singleton (`/tenant`, `/admin/points/settings`): the route itself.
  const singleton = lastParam < 0 && (method === 'PATCH' || method === 'PUT');
  const resourceSegments = lastParam >= 0 ? segments.slice(0, lastParam + 1) : singleton ? segments : null;
  const resourcePattern = resourceSegments ? `/${resourceSegments.join('/')}` : null;
  const resourceUrl = resourceSegments
    ? `/${resourceSegments.map((segment) => (segment.startsWith(':') ? encodeURIComponent(params[segment.slice(1)] ?? '') : segment)).join('/')}`
    : null;
  return { resourceType, resourceId, action, resourcePattern, resourceUrl };
}

/** A person's action on a participant (a grant, a reveal, an erasure): recorded against the participant. */
function describeParticipantAction(request: FastifyRequest, pattern: string) {
  const params = (request.params ?? {}) as Record<string, string>;
  const body = (request.body ?? {}) as Record<string, unknown>;
  const last = pattern.split('/').filter((segment) => segment && !segment.startsWith(':')).pop() ?? 'change';
  const participantId = params.participant_id ?? (typeof body.participant_id === 'string' ? body.participant_id : null);
  return { resourceType: 'participants', resourceId: participantId, action: request.method === 'DELETE' ? 'erase' : last, resourcePattern: null, resourceUrl: null };
}

export function installAudit(app: FastifyInstance, db: Database, options: MaskingOptions): void {
  app.decorateRequest('pendingAudit', null);
  const resolve = schemaResolver(options.schemas);
  /** The answer schema of every GET route, by pattern: what a before or after read is kept through. */
  const readSchemas = new Map<string, unknown>();

  async function read(request: FastifyRequest, url: string, pattern: string, viewer: MaskViewer): Promise<unknown> {
    const headers: Record<string, string> = { [INTERNAL_READ_HEADER]: INTERNAL_READ_SECRET };
    for (const name of ['authorization', 'x-api-key', 'x-service-tenant', 'cookie']) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const response = await app.inject({ method: 'GET', url, headers });
    return response.statusCode === 200 ? snapshot(response.body, readSchemas.get(pattern), resolve, viewer) : null;
  }

  const preHandler = async (request: FastifyRequest) => {
    const auth = request.auth;
    if (!auth || SAFE_METHODS.has(request.method) || auth.kind === 'session') return;
    const pattern = request.routeOptions.url ?? '';
    if (NEVER.test(pattern)) return;
    const permission = request.routeOptions.config?.permission ?? routePermission(request.method, pattern);
    const recorded = permission === null || ALWAYS.has(permission) || (PEOPLE_ONLY.has(permission) && auth.user !== undefined);
    if (!recorded) return;
    const personal = permission !== null && (PEOPLE_ONLY.has(permission) || permission === 'participants:erase');
    const described = personal ? describeParticipantAction(request, pattern) : describe(request, pattern, (url) => app.hasRoute({ method: 'GET', url }));
    const readable = !personal && described.resourcePattern !== null && app.hasRoute({ method: 'GET', url: described.resourcePattern });
    request.pendingAudit = {
      at: clock.now(),
      permission,
      action: described.action,
      resourceType: described.resourceType,
      resourceId: described.resourceId,
      resourceUrl: readable ? described.resourceUrl : null,
      resourcePattern: readable ? described.resourcePattern : null,
      before: readable && described.resourceUrl && described.resourcePattern ? await read(request, described.resourceUrl, described.resourcePattern, await viewerOf(request, options)) : null,
      payload: null,
    };
  };

  // Written before the answer leaves (so that a reader who got the answer finds the entry), after the change committed.
  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (request.pendingAudit && typeof payload === 'string') request.pendingAudit.payload = payload;
    await record(request, reply);
    return payload;
  };

  const record = async (request: FastifyRequest, reply: FastifyReply) => {
    const pending = request.pendingAudit;
    request.pendingAudit = null;
    const auth = request.auth;
    if (!pending || !auth || reply.statusCode >= 300) return;
    try {
      const viewer = await viewerOf(request, options);
      const routeSchema = request.routeOptions.schema as { response?: ResponseSchemas; body?: unknown } | undefined;
      const response = snapshot(pending.payload, answerSchema(routeSchema?.response, reply.statusCode), resolve, viewer);
      let after: unknown = null;
      if (request.method !== 'DELETE') {
        after = pending.resourceUrl && pending.resourcePattern ? await read(request, pending.resourceUrl, pending.resourcePattern, viewer) : response;
      }
      // What was asked: a reveal's field and reason, a grant's amount and reason; never a personal value or a secret.
      const details = { params: request.params ?? {}, body: auditSnapshot(request.body ?? null, routeSchema?.body, resolve, viewer) ?? null };
      const idIn = (value: unknown, keys: string[]) =>
        value && typeof value === 'object' ? ((keys.map((k) => (value as Record<string, unknown>)[k]).find((v) => typeof v === 'string') as string | undefined) ?? null) : null;
      // An action on a collection names its item in the body (a backtest's `rule_id`).
      const createdId = pending.resourceId ?? idIn(after, ['id', 'code', 'rule_id', 'destination_id', 'job_id']) ?? idIn(request.body, ['rule_id']);
      const actorType = auth.user ? 'user' : auth.kind === 'key' ? 'api_key' : 'system';
      await db.system.query(
        `INSERT INTO audit_log (tenant_id, occurred_at, actor_type, actor_id, actor_label, action, method, route, resource_type, resource_id,
                                status, before, after, details, request_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
        [
          auth.tenantId,
          pending.at,
          actorType,
          auth.actorId,
          auth.user ? `${auth.user.email} (${auth.user.role})` : null,
          pending.action,
          request.method,
          request.routeOptions.url,
          pending.resourceType,
          createdId,
          reply.statusCode,
          JSON.stringify(pending.before),
          JSON.stringify(after),
          JSON.stringify(details),
          request.id,
        ],
      );
    } catch (error) {
      request.log.error({ err: error, request_id: request.id }, 'the audit log row could not be written');
    }
    if (auth.user || auth.kind === 'key') {
      const change: AuditedChange = {
        tenantId: auth.tenantId,
        method: request.method,
        action: pending.action,
        resourceType: pending.resourceType,
        resourceId: pending.resourceId,
        actor: auth.user ? { type: 'user', id: auth.user.id, email: auth.user.email } : { type: 'api_key', id: auth.actorId, email: null },
        at: pending.at,
      };
      for (const listener of listeners) {
        await listener(db, change).catch((error: unknown) => request.log.error({ err: error, request_id: request.id }, 'a follower of the audit log failed'));
      }
    }
  };

  // Only the routes that can change something carry the hooks: reads and integration traffic pay nothing.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('GET')) readSchemas.set(route.url, answerSchema((route.schema as { response?: ResponseSchemas } | undefined)?.response, 200));
    if (methods.every((method) => SAFE_METHODS.has(method))) return;
    const auth = route.config?.auth ?? 'public';
    if (auth === 'public' || auth === 'session' || NEVER.test(route.url)) return;
    const add = <T>(existing: T | T[] | undefined, hook: T): T[] => (existing === undefined ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook]);
    route.preHandler = add(route.preHandler as never, preHandler as never);
    route.onSend = add(route.onSend as never, onSend as never);
  });
}
