import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestService, type TestResponse } from './helper.js';

/**
 * A request acts for one caller. Two credentials that name different callers
 * (two keys, a key and an admin token, a key and a participant session) are
 * refused before either is used, and the refused request changes nothing; the
 * same key in both headers is one credential.
 */
const CONFLICT = 'AUTH_CONFLICTING_CREDENTIALS';

function assertConflict(response: TestResponse, name: string): void {
  assert.equal(response.status, 400, `${name}: ${response.text}`);
  assert.equal(response.body.code, CONFLICT, name);
  assert.equal(response.body.error_version, 1, name);
  assert.match(response.body.detail, /credential/, name);
}

/** A GET with a header sent twice, which fetch would fold into one line. */
function getWithRepeatedHeader(baseUrl: string, path: string, name: string, values: string[]): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}${path}`, { method: 'GET', headers: { [name]: values } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: new Headers(response.headers as Record<string, string>), body: JSON.parse(text), text }));
    });
    request.on('error', reject);
    request.end();
  });
}

test('conflicting credentials are refused and change nothing; the same key twice is accepted', async (t) => {
  const svc = await startTestService(t);
  const tenantA = await svc.createTenant();
  const tenantB = await svc.createTenant();
  const jwtA = await svc.login(tenantA);
  const secondKeyA = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwtA, body: { name: 'second', scopes: ['admin'] } });
  assert.equal(secondKeyA.status, 201, secondKeyA.text);
  const sessionA = await svc.createSession(tenantA);
  const state = async () => ({
    sessions: await svc.sql('SELECT tenant_id, participant_id FROM sessions ORDER BY tenant_id, participant_id'),
    participants: await svc.sql('SELECT tenant_id, participant_id FROM participants ORDER BY tenant_id, participant_id'),
    keysUsed: await svc.sql('SELECT id, last_used_at FROM api_keys WHERE tenant_id = ANY($1) ORDER BY id', [[tenantA.tenantId, tenantB.tenantId]]),
  });
  // Nothing used tenant B's key or A's second key yet: a refused request must not count as a use either.
  const before = await state();
  const newSession = { participant_id: 'p-conflict', engagement_id: sessionA.engagementId };

  assertConflict(await svc.request('GET', '/api/v1/tenant', { bearer: tenantA.apiKey, key: tenantB.apiKey }), 'keys of two tenants (Bearer and X-API-Key)');
  assertConflict(await svc.request('POST', '/api/v1/sessions', { bearer: tenantA.apiKey, key: tenantB.apiKey, body: newSession }), 'keys of two tenants on a write');
  assertConflict(await svc.request('POST', '/api/v1/sessions', { bearer: tenantB.apiKey, key: tenantA.apiKey, body: newSession }), 'keys of two tenants, the other way round');
  assertConflict(await svc.request('POST', '/api/v1/sessions', { bearer: secondKeyA.body.key, key: tenantA.apiKey, body: newSession }), 'two keys of one tenant');
  assertConflict(await svc.request('GET', '/api/v1/events/api-keys', { bearer: jwtA, key: tenantB.apiKey }), 'an admin token and another tenant\'s key');
  assertConflict(await svc.request('GET', '/api/v1/tenant', { bearer: jwtA, key: tenantA.apiKey }), 'an admin token and a key of its own tenant');
  assertConflict(await getWithRepeatedHeader(svc.baseUrl, '/api/v1/tenant', 'authorization', [`Bearer ${tenantA.apiKey}`, `Bearer ${tenantB.apiKey}`]), 'two Authorization headers');
  assertConflict(await getWithRepeatedHeader(svc.baseUrl, '/api/v1/tenant', 'x-api-key', [tenantA.apiKey, tenantB.apiKey]), 'two X-API-Key headers');
  const sessionQuery = `session_id=${sessionA.sessionId}&engagement_id=${sessionA.engagementId}`;
  assertConflict(await svc.request('GET', `/api/v1/tenant?${sessionQuery}`, { key: tenantB.apiKey }), 'a key and a participant session in the query');
  // Give a key look-up's last_used_at write time to land, had one happened.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(await state(), before, 'the credentials in the headers and the query are compared before either is looked up: no key counts as used');

  // A session in the body, or a public read's session, is compared once the key is known (and counted as used, like any refused request's key).
  assertConflict(
    await svc.request('POST', '/api/v1/sessions', { key: tenantB.apiKey, body: { ...newSession, session_id: sessionA.sessionId } }),
    'a key and a participant session in the body',
  );
  assertConflict(await svc.request('GET', `/api/v1/public/leaderboards/any-board?${sessionQuery}`, { key: tenantB.apiKey }), 'a public read named by a session and another tenant\'s key');

  const { sessions, participants } = await state();
  assert.deepEqual({ sessions, participants }, { sessions: before.sessions, participants: before.participants }, 'no refused request created a session or a participant');

  const same = await svc.request('GET', '/api/v1/tenant', { bearer: tenantB.apiKey, key: tenantB.apiKey });
  assert.equal(same.status, 200, same.text);
  assert.equal(same.body.tenant_id, tenantB.tenantId, 'the same key in both headers is one credential');
  const repeated = await getWithRepeatedHeader(svc.baseUrl, '/api/v1/tenant', 'x-api-key', [tenantA.apiKey, tenantA.apiKey]);
  assert.equal(repeated.status, 200, repeated.text);
  assert.equal(repeated.body.tenant_id, tenantA.tenantId);
  const sameTenant = await svc.request('GET', `/api/v1/public/leaderboards/any-board?${sessionQuery}`, { key: tenantA.apiKey });
  assert.equal(sameTenant.status, 404, 'a session and a key of the same tenant name one tenant (the leaderboard does not exist)');
  const keyOnSessionRoute = await svc.request('GET', `/api/v1/public/badges/status?${sessionQuery}`, { key: tenantA.apiKey });
  assert.equal(keyOnSessionRoute.status, 403, 'a key on a participant route is still refused as the wrong kind of caller');
});
