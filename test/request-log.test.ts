import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../src/platform/logger.js';
import { startTestService } from './helper.js';
import { probeRoutes } from './probe-routes.js';

/**
 * The request log tells what happened (request id, tenant, route, status,
 * time) without what was sent: no email, session id, key, token or cookie, in
 * the query, the path, the headers or the body, whatever the outcome.
 */
interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  tenantId?: string;
  req?: { method: string; route: string | null; query?: string };
  res?: { statusCode: number };
  responseTime?: number;
  err?: Record<string, unknown>;
}

test('the request log carries route patterns and redacted queries, never personal data or credentials', async (t) => {
  const written: string[] = [];
  const svc = await startTestService(t, { routes: probeRoutes, config: { LOG_LEVEL: 'trace' }, logDestination: { write: (line) => void written.push(line) } });
  const tenant = await svc.createTenant();
  const jwt = await svc.login(tenant);
  const email = 'jane.doe@example.com';
  const mobile = '+15551234567';
  const cookie = 'sid=cookie-secret-4f8a2c';

  const profile = await svc.request('PATCH', '/api/v1/gamify/admin/participants/p-log-1/profile', { key: tenant.apiKey, body: { email, mobile_number: mobile } });
  assert.equal(profile.status, 200, profile.text);
  const search = await svc.request('GET', `/api/v1/admin/participants/search?email=${encodeURIComponent(email)}`, { key: tenant.apiKey, headers: { cookie } });
  assert.equal(search.status, 200, search.text);
  assert.equal(search.body.participants.length, 1);
  const session = await svc.createSession(tenant);
  const sessionQuery = `session_id=${session.sessionId}&engagement_id=${session.engagementId}`;
  const sessionRead = await svc.request('GET', `/api/v1/probe/session?${sessionQuery}`);
  assert.equal(sessionRead.status, 200, sessionRead.text);
  const sessionPost = await svc.request('POST', '/api/v1/probe/session', { body: { session_id: session.sessionId, engagement_id: session.engagementId } });
  assert.equal(sessionPost.status, 200, sessionPost.text);
  const admin = await svc.request('GET', '/api/v1/events/api-keys?limit=5', { bearer: jwt, headers: { cookie } });
  assert.equal(admin.status, 200, admin.text);
  // Refused and failed requests are logged the same way.
  const badSession = await svc.request('GET', `/api/v1/probe/session?session_id=${session.sessionId}x&engagement_id=${session.engagementId}`);
  assert.equal(badSession.status, 401);
  const invalidEmail = await svc.request('GET', `/api/v1/admin/participants/search?email=${encodeURIComponent('jane.doe@')}`, { key: tenant.apiKey });
  assert.equal(invalidEmail.status, 400);
  const unknownRoute = await svc.request('GET', `/api/v1/participants/by-email/${email}?mobile_number=${encodeURIComponent(mobile)}`, { key: tenant.apiKey });
  assert.equal(unknownRoute.status, 404);
  const badUrl = await svc.request('GET', `/api/v1/admin/badges/${encodeURIComponent(email)}%ff`, { key: tenant.apiKey });
  assert.equal(badUrl.status, 400);
  const crash = await svc.request('GET', `/api/v1/probe/crash?email=${encodeURIComponent(email)}`, { headers: { authorization: `Bearer ${tenant.apiKey}`, cookie } });
  assert.equal(crash.status, 500);

  const text = written.join('');
  for (const secret of [email, encodeURIComponent(email), 'jane.doe', mobile, encodeURIComponent(mobile), session.sessionId, tenant.apiKey, jwt, 'cookie-secret-4f8a2c']) {
    assert.ok(!text.includes(secret), `the log holds ${secret}: ${written.find((line) => line.includes(secret))}`);
  }

  const lines = written.map((line) => JSON.parse(line) as LogLine);
  const completion = (requestId: string | null) => {
    const found = lines.filter((line) => line.reqId === requestId && line.msg === 'request completed');
    assert.equal(found.length, 1, `one completion line for ${requestId}`);
    return found[0];
  };
  const searched = completion(search.headers.get('x-request-id'));
  assert.deepEqual(searched.req, { method: 'GET', route: '/api/v1/admin/participants/search', query: 'email=[redacted]', remoteAddress: '127.0.0.1' });
  assert.equal(searched.tenantId, tenant.tenantId);
  assert.equal(searched.res?.statusCode, 200);
  assert.equal(typeof searched.responseTime, 'number');
  assert.equal(searched.level, 30, 'completions are logged at info');

  const read = completion(sessionRead.headers.get('x-request-id'));
  assert.equal(read.req?.route, '/api/v1/probe/session');
  assert.equal(read.req?.query, 'session_id=[redacted]&engagement_id=[redacted]');
  assert.equal(read.tenantId, tenant.tenantId, 'a session caller is logged with its tenant');
  assert.equal(completion(admin.headers.get('x-request-id')).tenantId, tenant.tenantId, 'an admin token caller is logged with its tenant');
  assert.equal(completion(badSession.headers.get('x-request-id')).res?.statusCode, 401);

  const profiled = completion(profile.headers.get('x-request-id'));
  assert.equal(profiled.req?.route, '/api/v1/gamify/admin/participants/:participant_id/profile', 'path parameters are logged as the route pattern');
  assert.ok(!text.includes('p-log-1'), 'path parameter values are not logged');

  const unmatched = completion(unknownRoute.headers.get('x-request-id'));
  assert.deepEqual([unmatched.req?.route, unmatched.req?.query, unmatched.res?.statusCode], [null, 'mobile_number=[redacted]', 404]);
  const badlyEncoded = completion(badUrl.headers.get('x-request-id'));
  assert.deepEqual([badlyEncoded.req?.route, badlyEncoded.res?.statusCode], [null, 400], 'router errors are logged, without their path');

  const crashId = crash.headers.get('x-request-id');
  const failure = lines.find((line) => line.reqId === crashId && line.msg === 'unhandled error');
  assert.ok(failure?.err, 'an unexpected error is logged with the request id');
  assert.deepEqual(failure.req, { method: 'GET', route: '/api/v1/probe/crash', query: 'email=[redacted]', remoteAddress: '127.0.0.1' });
  assert.equal(completion(crashId).res?.statusCode, 500);
});

test('logged errors keep what failed but not the values PostgreSQL quotes in detail', () => {
  const written: string[] = [];
  const log = createLogger('info', { write: (line: string) => void written.push(line) });
  const duplicate = Object.assign(new Error('duplicate key value violates unique constraint "participants_email_hash_key"'), {
    code: '23505',
    constraint: 'participants_email_hash_key',
    detail: 'Key (email)=(jane.doe@example.com) already exists.',
  });
  log.error({ err: duplicate }, 'unhandled error');
  log.warn({ err: new AggregateError([duplicate], 'several failed') }, 'job failed');
  const text = written.join('');
  assert.ok(!text.includes('jane.doe'), text);
  const [first] = written.map((line) => JSON.parse(line));
  assert.equal(first.err.constraint, 'participants_email_hash_key');
  assert.equal(first.err.code, '23505');
  assert.equal(first.err.detail, '[redacted]');
});
