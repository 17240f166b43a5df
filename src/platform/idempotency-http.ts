import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions, onSendHookHandler, preHandlerAsyncHookHandler, preValidationAsyncHookHandler } from 'fastify';
import { Type } from '@sinclair/typebox';
import { lostCommit, runStatements, type Database } from './db.js';
import { clock } from './clock.js';
import { claimStatements, fingerprint, storeResponse } from './idempotency.js';
import { conflict, fieldError, invalid, ruleViolation } from './errors.js';

/**
 * The `Idempotency-Key` header (Stripe's convention) on every credentialed
 * `POST`. A route says how it takes the key in `config.idempotencyKey`:
 *
 * - unset: kept here. The key is claimed in its own transaction before the
 *   handler runs; the answer (status, body, content type) is stored when the
 *   handler has answered with a 2xx or a 4xx other than 409 and 429. A repeat
 *   inside 24 hours gets the stored answer with `Idempotent-Replayed: true`;
 *   the same key with another request (another route, parameters or body)
 *   gets 422; a repeat while the first is still running gets 409. An answer
 *   that is not stored (5xx, 409, 429) releases the key, so a retry runs again;
 *   but not an error whose transaction lost the answer to its COMMIT
 *   (`lostCommit`, platform/db.ts): the change may stand, so the key keeps
 *   the time instead of an answer, a repeat is answered 409
 *   `IDEMPOTENCY_KEY_ABANDONED` (below) and never run a second time. (When
 *   the lost COMMIT is the claim's own, nothing ran: the claim is released.)
 * - `body`: the route keeps keys in the same transaction as its change under
 *   the body's `idempotency_key` (points grants and deducts, bulk grants). The
 *   header is copied into that field before validation; when both are sent
 *   they must agree; one of them is required.
 * - `optional-body`: as `body`, but the route also runs without a key.
 * - `route`: the route reads the header itself (single-event ingestion).
 *
 * Keys kept here are not in the transaction of the change: a process that
 * stops between the change and storing its answer leaves the key claimed
 * without an answer. A repeat then gets 409 `IDEMPOTENCY_KEY_ABANDONED` rather
 * than a second change: whether the first took effect is unknown, and the
 * caller reads the resource before retrying with a new key.
 */
export type IdempotencyKeyMode = 'body' | 'optional-body' | 'route';

declare module 'fastify' {
  interface FastifyContextConfig {
    idempotencyKey?: IdempotencyKeyMode;
  }
  interface FastifyRequest {
    /** The key this request claimed in the generic store, until its answer is stored or the key released. */
    idempotencyClaim: string | null;
    /** The answer is one stored by this module for an earlier use of the key, sent as it was stored (with its livemode). */
    answerReplayed: boolean;
  }
}

const HEADER = 'idempotency-key';
export const IDEMPOTENCY_KEY_LENGTH_MAX = 255;
const KEY_PATTERN = /^[\x21-\x7e]+$/;
const SCOPE = 'http';
/** A claim with no answer after this long belongs to a request that stopped: no request runs this long. */
export const IDEMPOTENCY_ABANDONED_AFTER_MS = 120_000;
/** Answers larger than this are not kept; the key is released instead (no creating route answers this much). */
const STORED_ANSWER_BYTES_MAX = 256 * 1024;
const NOT_STORED_STATUSES = new Set([409, 429]);

export const IdempotencyKeyHeaderSchema = Type.String({
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_LENGTH_MAX,
  pattern: '^[\\x21-\\x7e]+$',
  description:
    'Makes this request safe to retry: a repeat with the same key inside 24 hours answers what the first answered (with `Idempotent-Replayed: true`) and changes nothing; ' +
    'the same key with a different request gets 422 `IDEMPOTENCY_KEY_REUSED`; a repeat while the first is still running gets 409 `IDEMPOTENCY_IN_PROGRESS`. ' +
    'A UUID per logical operation is a good key.',
  examples: ['5f0c9a52-8d1e-4a7b-9c3e-2b6f1d4e8a90'],
});

interface StoredAnswer {
  status: number;
  type: string | null;
  body: string;
}

function headerKey(request: FastifyRequest): string | undefined {
  const value = request.headers[HEADER];
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw invalid('send one Idempotency-Key header');
  if (value.length > IDEMPOTENCY_KEY_LENGTH_MAX) throw invalid(`the Idempotency-Key header is longer than ${IDEMPOTENCY_KEY_LENGTH_MAX} characters`);
  if (!KEY_PATTERN.test(value)) throw invalid('the Idempotency-Key header must be 1 to 255 visible ASCII characters (no spaces)');
  return value;
}

/** Copies the header into the body's `idempotency_key`, before the body is validated. */
function intoBody(required: boolean): preValidationAsyncHookHandler {
  return async (request) => {
    const key = headerKey(request);
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return; // validation refuses it next
    const fields = body as Record<string, unknown>;
    if (key !== undefined) {
      if (fields.idempotency_key !== undefined && fields.idempotency_key !== key) {
        throw invalid('the Idempotency-Key header and the body\'s idempotency_key differ; send one, or the same in both', 'IDEMPOTENCY_KEY_MISMATCH');
      }
      fields.idempotency_key = key;
    } else if (required && fields.idempotency_key === undefined) {
      // Refused after the schema has been checked, so that the body's own problems are told with it.
      request.problemBeforeValidation = missingKey();
    }
  };
}

/** The refusal of a `body` route's request that sent its required key neither way. */
const missingKey = () =>
  invalid('an idempotency key is required: send the Idempotency-Key header or idempotency_key in the body', 'IDEMPOTENCY_KEY_REQUIRED', {
    errors: [fieldError('/idempotency-key', 'required', 'send the Idempotency-Key header, or idempotency_key in the body', { in: 'headers' })],
  });

/** After a schema check that passed: a `body` route whose key was sent neither way is refused. */
const refuseMissingKey: preHandlerAsyncHookHandler = async (request) => {
  if (request.problemBeforeValidation) throw request.problemBeforeValidation;
};

function requestFingerprint(request: FastifyRequest): string {
  return fingerprint([request.method, request.routeOptions.url, request.params ?? null, request.query ?? null, request.body ?? null]);
}

const REPLAYED = 'Idempotent-Replayed';

/**
 * The answer of a route that keeps its own keys (`body`, `optional-body`,
 * `route`): the status of a first answer, also for a repeat of its key, which
 * carries `duplicate: true` in its body and `Idempotent-Replayed: true`, as a
 * replay of a key kept here does.
 */
export function answerKept<T extends { duplicate?: boolean }>(reply: FastifyReply, status: number, result: T): FastifyReply {
  if (result.duplicate === true) reply.header(REPLAYED, 'true');
  return reply.status(status).send(result);
}

/** What a key keeps instead of an answer when its request lost the answer to its COMMIT (`lostCommit`): a repeat is told the outcome is unknown. */
interface LostAnswer {
  lost_at: string;
}

function replay(reply: FastifyReply, answer: StoredAnswer): FastifyReply {
  reply.request.answerReplayed = true;
  reply.header(REPLAYED, 'true');
  if (answer.type) reply.header('content-type', answer.type);
  return reply.status(answer.status).send(answer.body);
}

function claimAndReplay(db: Database): preHandlerAsyncHookHandler {
  return async function claim(request, reply) {
    const key = headerKey(request);
    if (key === undefined || !request.auth) return;
    const tenantId = request.auth.tenantId;
    const print = requestFingerprint(request);
    const now = clock.now();
    const outcome = await db.tenant(tenantId, async (tx) => {
      const [claimed, stored] = await runStatements(tx, claimStatements(tenantId, SCOPE, key, print, now));
      if ((claimed[0] as { claimed: string }).claimed === 'true') return null;
      return (stored[0] as { fingerprint: string; response: StoredAnswer | LostAnswer | null; created_at: Date } | undefined) ?? { fingerprint: print, response: null, created_at: now };
    }).catch(async (error: unknown) => {
      // The claim's own COMMIT lost its answer: nothing of the request has run, so the claim, if it stands, is released
      // (this one only: by its time) and a repeat runs.
      if (lostCommit(error)) await release(db, tenantId, key, now).catch(() => undefined);
      throw error;
    });
    if (outcome === null) {
      request.idempotencyClaim = key;
      return;
    }
    if (outcome.fingerprint !== print) {
      throw ruleViolation('this idempotency key was already used with a different request (route, parameters or body) in the last 24 hours', 'IDEMPOTENCY_KEY_REUSED');
    }
    if (outcome.response && 'lost_at' in outcome.response) throw conflict(abandonedDetail(new Date(outcome.response.lost_at)), ABANDONED);
    if (outcome.response) return replay(reply, outcome.response);
    if (now.getTime() - outcome.created_at.getTime() > IDEMPOTENCY_ABANDONED_AFTER_MS) {
      throw conflict(abandonedDetail(outcome.created_at), ABANDONED);
    }
    throw conflict('a request with this idempotency key is still running; retry when it has answered', 'IDEMPOTENCY_IN_PROGRESS');
  };
}

const ABANDONED = 'IDEMPOTENCY_KEY_ABANDONED';

function abandonedDetail(at: Date): string {
  return `the request that used this idempotency key at ${at.toISOString()} did not finish; whether it took effect is unknown: read the resource, then retry with a new key`;
}

/** Releases a claim that has no answer: the request's own (the one made at `claimedAt`, when given), so that a repeat runs. */
function release(db: Database, tenantId: string, key: string, claimedAt: Date | null = null): Promise<unknown> {
  return db.tenant(tenantId, (tx) =>
    tx.query('DELETE FROM idempotency_keys WHERE tenant_id = $1 AND scope = $2 AND key = $3 AND response IS NULL AND ($4::timestamptz IS NULL OR created_at = $4)', [
      tenantId,
      SCOPE,
      key,
      claimedAt?.toISOString() ?? null,
    ]),
  );
}

function storeOrRelease(db: Database, log: FastifyInstance['log']): onSendHookHandler {
  return function settle(request, reply, payload, done) {
    const key = request.idempotencyClaim;
    if (key === null || !request.auth) return done(null, payload);
    request.idempotencyClaim = null;
    const tenantId = request.auth.tenantId;
    const status = reply.statusCode;
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    const keep = status < 500 && !NOT_STORED_STATUSES.has(status) && body !== null && Buffer.byteLength(body) <= STORED_ANSWER_BYTES_MAX;
    const type = reply.getHeader('content-type');
    const answer: StoredAnswer = { status, type: typeof type === 'string' ? type : null, body: body ?? '' };
    const statement = keep
      ? db.tenant(tenantId, (tx) => storeResponse(tx, tenantId, SCOPE, key, answer))
      : release(db, tenantId, key);
    statement.then(
      () => done(null, payload),
      (error: unknown) => {
        // The change stands and its answer goes out; a repeat of the key will be told the outcome is unknown.
        log.error({ err: error, reqId: request.id }, 'could not store the answer of an idempotency key');
        done(null, payload);
      },
    );
  };
}

function appendHook<T>(existing: T | T[] | undefined, hook: T): T | T[] {
  if (existing === undefined) return hook;
  return Array.isArray(existing) ? [...existing, hook] : [existing, hook];
}

/**
 * Installs the header on every credentialed POST route defined after this call
 * (an `onRoute` hook): its schema documents the header, and its hooks claim,
 * replay and store as the route's `config.idempotencyKey` says.
 */
export function installIdempotencyKeys(app: FastifyInstance, db: Database): void {
  app.decorateRequest('idempotencyClaim', null);
  app.decorateRequest('answerReplayed', false);
  const claim = claimAndReplay(db);
  const settle = storeOrRelease(db, app.log);
  app.addHook('onError', async (request, _reply, error) => {
    // Runs before the error's answer is sent (and `settle` with it).
    const key = request.idempotencyClaim;
    if (key === null || !request.auth || !lostCommit(error)) return;
    request.idempotencyClaim = null;
    const tenantId = request.auth.tenantId;
    const lost: LostAnswer = { lost_at: clock.now().toISOString() };
    await db.tenant(tenantId, (tx) => storeResponse(tx, tenantId, SCOPE, key, lost)).catch((failed: unknown) => {
      // Left claimed without an answer, a repeat is told the same once the claim is old (IDEMPOTENCY_ABANDONED_AFTER_MS).
      app.log.error({ err: failed, reqId: request.id }, 'could not store the answer of an idempotency key whose commit was lost');
    });
  });
  const requiredBody = intoBody(true);
  const optionalBody = intoBody(false);
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const auth = route.config?.auth ?? 'public';
    if (!methods.includes('POST') || auth === 'public' || route.url.startsWith('/docs')) return;
    const mode = route.config?.idempotencyKey;
    const schema = (route.schema ??= {}) as { headers?: unknown; hide?: boolean };
    if (mode !== 'route') {
      if (schema.headers) throw new Error(`${route.url}: a POST route with its own header schema says config.idempotencyKey: 'route' and reads Idempotency-Key itself`);
      const header = mode === 'body' ? { ...IdempotencyKeyHeaderSchema, description: `Required here, in this header or as \`idempotency_key\` in the body (both: they must agree; neither: 400 \`IDEMPOTENCY_KEY_REQUIRED\`). ${IdempotencyKeyHeaderSchema.description}` } : IdempotencyKeyHeaderSchema;
      schema.headers = Type.Object({ [HEADER]: Type.Optional(header) });
    }
    if (mode === 'body' || mode === 'optional-body') {
      route.preValidation = appendHook(route.preValidation, mode === 'body' ? requiredBody : optionalBody);
      if (mode === 'body') route.preHandler = appendHook(route.preHandler, refuseMissingKey);
    } else if (mode === undefined) {
      route.preHandler = appendHook(route.preHandler, claim);
      route.onSend = appendHook(route.onSend, settle);
    }
  });
}
