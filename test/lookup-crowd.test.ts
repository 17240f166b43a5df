import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { participantSession, startTestService, type TestService } from './helper.js';
import { SessionLookups } from '../src/platform/session-lookups.js';
import { sha256Hex } from '../src/platform/ids.js';

/**
 * A crowd on a cold cache: the credential look-ups of many identical requests
 * at once share one query (platform/auth.ts, LookupCache). Counts the texts
 * sent on the owner pool, where the look-ups run.
 */
function countLookups(t: TestContext, svc: TestService): (name: string) => number {
  const system = svc.service.db.system;
  const original = system.query.bind(system) as (...args: unknown[]) => unknown;
  const sent: string[] = [];
  (system as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const config = args[0];
    sent.push(typeof config === 'string' ? config : String((config as { text?: string }).text));
    return original(...args);
  };
  t.after(() => {
    (system as unknown as { query: unknown }).query = original;
  });
  return (name) => sent.filter((text) => text.includes(name)).length;
}

const CROWD = 200;

/** A service with a tenant, an engagement and a board on it; the board's public read, `engagement_id` given. */
async function boardService(t: TestContext, code: string, engagementId?: string) {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const engagement = engagementId ?? (await svc.createEngagement(tenant));
  const created = await svc.request('POST', '/api/v1/admin/leaderboards', { key: tenant.apiKey, body: { leaderboard_code: code, name: code, metric: 'lifetime_points' } });
  assert.equal(created.status, 201, created.text);
  return { svc, tenant, engagementId: engagement, board: `/api/v1/public/leaderboards/${code}?engagement_id=${engagement}` };
}

test('a crowd of public reads on a cold cache looks its credentials up once: the key, the tenant, the session', async (t) => {
  const { svc, tenant, engagementId, board } = await boardService(t, 'crowd', randomUUID());
  const sessionId = await participantSession(svc, tenant, 'crowd-1', engagementId);
  const authenticator = svc.service.app!.ctx.authenticator;

  const lookups = countLookups(t, svc);
  for (const [credential, query, options] of [
    ['key', '', { key: tenant.apiKey }],
    ['session', `&session_id=${sessionId}`, {}],
  ] as const) {
    authenticator.forgetCredentials();
    const before = { key: lookups('auth_find_api_key'), session: lookups('auth_find_sessions'), tenant: lookups('auth_find_tenant') };
    const answers = await Promise.all(Array.from({ length: CROWD }, () => svc.request('GET', `${board}${query}`, options)));
    assert.deepEqual([...new Set(answers.map((answer) => answer.status))], [200]);
    const name = credential === 'key' ? 'auth_find_api_key' : 'auth_find_sessions';
    assert.equal(lookups(name) - before[credential], 1, `${CROWD} reads with one ${credential} at once: one look-up of the ${credential}`);
    assert.ok(lookups('auth_find_tenant') - before.tenant <= 1, `the ${credential}'s crowd looks its tenant up once at most`);
  }
});

test('a look-up that raced a credential change is not kept: a key revoked while a crowd read it fails on the next request', async (t) => {
  const { svc, tenant, board } = await boardService(t, 'race');
  const jwt = await svc.login(tenant);
  const issued = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'crowd', scopes: ['admin'] } });
  assert.equal(issued.status, 201, issued.text);
  const key = issued.body.key as string;

  svc.service.app!.ctx.authenticator.forgetCredentials();
  // The crowd's look-up is in flight when the key is revoked; whatever it read, it must not outlive the revocation.
  const crowd = Promise.all(Array.from({ length: CROWD }, () => svc.request('GET', board, { key })));
  const revoked = await svc.request('DELETE', `/api/v1/events/api-keys/${issued.body.id}`, { bearer: jwt });
  assert.equal(revoked.status, 200, revoked.text);
  for (const answer of await crowd) assert.ok(answer.status === 200 || answer.status === 401, answer.text);
  const after = await svc.request('GET', board, { key });
  assert.equal(after.status, 401, after.text);
});

test('a session issued by this process is remembered: its first use looks nothing up, and answers as a looked-up one does', async (t) => {
  const { svc, tenant, engagementId, board: read } = await boardService(t, 'first');
  const lookups = countLookups(t, svc);
  const issued = await svc.request('POST', '/api/v1/sessions', { key: tenant.apiKey, body: { participant_id: 'first-use', engagement_id: engagementId } });
  assert.equal(issued.status, 201, issued.text);
  const board = `${read}&session_id=${issued.body.session_id}`;
  const remembered = await svc.request('GET', board);
  assert.equal(remembered.status, 200, remembered.text);
  assert.equal(remembered.body.me.participant_id, 'first-use');
  assert.equal(lookups('auth_find_sessions'), 0, 'the first use of a session this process issued looks nothing up');
  // Looked up afresh (as another process would), the same session answers the same, with the same rate-limit headers.
  svc.service.app!.ctx.authenticator.forgetCredentials();
  const looked = await svc.request('GET', board);
  assert.equal(lookups('auth_find_sessions'), 1);
  assert.equal(looked.status, 200);
  assert.deepEqual(looked.body.me, remembered.body.me);
  assert.equal(looked.headers.get('x-ratelimit-limit'), remembered.headers.get('x-ratelimit-limit'));
});

test("a crowd of different sessions is looked up together: the sessions asked for while a look-up runs go in the next", async (t) => {
  const { svc, tenant, engagementId, board } = await boardService(t, 'many');
  const sessions: string[] = [];
  for (let i = 0; i < CROWD; i += 50) {
    sessions.push(...(await Promise.all(Array.from({ length: 50 }, (_, k) => participantSession(svc, tenant, `many-${i + k}`, engagementId)))));
  }
  const lookups = countLookups(t, svc);
  // Asked for in one tick: the first goes alone, the rest wait for it and go together. One that does not exist goes with them.
  const looked = await Promise.all([...sessions, 'no-such-session'].map((sessionId) => new SessionLookups(svc.service.db.system).find(sha256Hex(sessionId))));
  assert.equal(lookups('auth_find_sessions'), CROWD + 1, 'separate look-ups do not wait for each other');
  const together = new SessionLookups(svc.service.db.system);
  const rows = await Promise.all([...sessions, 'no-such-session'].map((sessionId) => together.find(sha256Hex(sessionId))));
  assert.equal(lookups('auth_find_sessions') - (CROWD + 1), 2, `${CROWD + 1} sessions in two statements`);
  assert.deepEqual(rows, looked, 'together, each session is answered as alone');
  assert.deepEqual(rows.at(-1), []);
  assert.deepEqual(rows.slice(0, -1).map((found) => found.map((row) => row.participant_id)), sessions.map((_, i) => [`many-${i}`]));

  // Through HTTP, on a cold cache: each request is answered as its own session.
  svc.service.app!.ctx.authenticator.forgetCredentials();
  const answers = await Promise.all([...sessions, 'no-such-session'].map((sessionId) => svc.request('GET', `${board}&session_id=${sessionId}`)));
  assert.equal(answers.at(-1)!.status, 401, answers.at(-1)!.text);
  for (const [i, answer] of answers.slice(0, -1).entries()) {
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.me.participant_id, `many-${i}`);
  }
});
