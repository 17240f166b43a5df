import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { startTestService, type RequestOptions, type TestResponse } from './helper.js';
import { probeRoutes } from './probe-routes.js';
import { clock } from '../src/platform/clock.js';
import { Authenticator } from '../src/platform/auth.js';
import type { Database } from '../src/platform/db.js';

/** Every refusal carries the coded envelope, and nothing else decides the status. */
function assertRefused(response: TestResponse, status: number, code: string): void {
  assert.equal(response.status, status, `expected ${status} ${code}, got ${response.status} ${response.text}`);
  assert.equal(response.body.code, code);
  assert.equal(response.body.error_version, 1);
  assert.equal(typeof response.body.detail, 'string');
  assert.ok(response.body.detail.length > 0);
}

test('tenant isolation and credentials', async (t) => {
  const svc = await startTestService(t, { routes: probeRoutes });
  const tenantA = await svc.createTenant();
  const tenantB = await svc.createTenant();
  const jwtA = await svc.login(tenantA);
  const jwtB = await svc.login(tenantB);
  const keyOfB = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwtB, body: { name: 'b server', scopes: ['admin'] } });
  assert.equal(keyOfB.status, 201);

  await t.test("tenant A's admin token cannot read, patch or revoke tenant B's key: 404", async () => {
    const patched = await svc.request('PATCH', `/api/v1/events/api-keys/${keyOfB.body.id}`, { bearer: jwtA, body: { name: 'stolen' } });
    assertRefused(patched, 404, 'RESOURCE_NOT_FOUND');
    const revoked = await svc.request('DELETE', `/api/v1/events/api-keys/${keyOfB.body.id}`, { bearer: jwtA });
    assertRefused(revoked, 404, 'RESOURCE_NOT_FOUND');
    const listed = await svc.request('GET', '/api/v1/events/api-keys?include_revoked=true', { bearer: jwtA });
    assert.equal(listed.status, 200);
    assert.ok(!listed.body.api_keys.some((k: { id: string }) => k.id === keyOfB.body.id));
    const [row] = await svc.sql('SELECT name, revoked_at FROM api_keys WHERE id = $1', [keyOfB.body.id]);
    assert.deepEqual(row, { name: 'b server', revoked_at: null });
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: keyOfB.body.key })).status, 200);
  });

  await t.test('the application role sees no rows without a tenant, and only its tenant with one', async () => {
    const appPool = svc.service.db.app;
    for (const table of ['tenants', 'api_keys', 'admin_users', 'participants', 'sessions', 'idempotency_keys', 'outbox_events']) {
      const { rows } = await appPool.query(`SELECT * FROM ${table}`);
      assert.equal(rows.length, 0, `${table} leaked ${rows.length} rows without a tenant`);
    }
    const seen = await svc.service.db.tenant(tenantA.tenantId, async (tx) => (await tx.query('SELECT DISTINCT tenant_id FROM api_keys')).rows);
    assert.deepEqual(seen, [{ tenant_id: tenantA.tenantId }]);
    // Writing a row of another tenant is refused by the policy's WITH CHECK.
    await assert.rejects(
      svc.service.db.tenant(tenantA.tenantId, (tx) => tx.query(`INSERT INTO participants (tenant_id, participant_id) VALUES ($1, 'intruder')`, [tenantB.tenantId])),
      /row-level security/,
    );
    await assert.rejects(appPool.query('SELECT * FROM service_secrets'), /permission denied/);
    await assert.rejects(appPool.query('DELETE FROM schema_migrations'), /permission denied/);
    await assert.rejects(appPool.query('SELECT * FROM worker_heartbeats'), /permission denied/);
  });

  await t.test('every table with a tenant_id column has row-level security enabled and forced, and the app role cannot bypass it', async () => {
    const tables = await svc.sql(
      `SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
         AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)`,
    );
    assert.ok(tables.length >= 6);
    for (const table of tables) {
      assert.ok(table.relrowsecurity && table.relforcerowsecurity, `${table.relname} lacks forced row-level security`);
    }
    const [role] = await svc.sql(`SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = 'loyalty_app'`);
    assert.deepEqual(role, { rolsuper: false, rolbypassrls: false });
    const owned = await svc.sql(`SELECT tablename FROM pg_tables WHERE tableowner = 'loyalty_app'`);
    assert.deepEqual(owned, []);
  });

  await t.test('bodies that carry tenant_id, scopes or balances they may not set are rejected and change nothing', async () => {
    const before = await svc.sql('SELECT count(*)::int AS n FROM api_keys');
    const cases: Array<[string, string, unknown]> = [
      ['POST', '/api/v1/events/api-keys', { name: 'x', scopes: ['admin'], tenant_id: tenantB.tenantId }],
      ['POST', '/api/v1/events/api-keys', { name: 'x', scopes: ['admin'], key_hash: 'a'.repeat(64) }],
      ['POST', '/api/v1/events/api-keys', { name: 'x', scopes: ['admin'], revoked_at: null, id: keyOfB.body.id }],
      ['PATCH', `/api/v1/events/api-keys/${keyOfB.body.id}`, { tenant_id: tenantA.tenantId }],
    ];
    for (const [method, path, body] of cases) {
      assertRefused(await svc.request(method, path, { bearer: method === 'PATCH' ? jwtB : jwtA, body }), 400, 'VALIDATION_INVALID_REQUEST');
    }
    const sessionCases = [
      { participant_id: 'p1', engagement_id: '6f1c8f7e-1b1a-4c4b-9a0e-0a0b0c0d0e0f', tenant_id: tenantB.tenantId },
      { participant_id: 'p1', engagement_id: '6f1c8f7e-1b1a-4c4b-9a0e-0a0b0c0d0e0f', scopes: ['admin'] },
      { participant_id: 'p1', engagement_id: '6f1c8f7e-1b1a-4c4b-9a0e-0a0b0c0d0e0f', available: 1000, lifetime: 1000 },
    ];
    for (const body of sessionCases) {
      const response = await svc.request('POST', '/api/v1/sessions', { key: tenantA.apiKey, body });
      assertRefused(response, 400, 'VALIDATION_INVALID_REQUEST');
      assert.match(response.body.detail, /not allowed/);
    }
    assert.deepEqual(await svc.sql('SELECT count(*)::int AS n FROM api_keys'), before);
    assert.deepEqual(await svc.sql(`SELECT count(*)::int AS n FROM participants WHERE participant_id = 'p1'`), [{ n: 0 }]);
  });

  await t.test('API keys: missing, malformed, unknown and revoked keys get 401', async () => {
    assertRefused(await svc.request('GET', '/api/v1/tenant'), 401, 'AUTH_UNAUTHENTICATED');
    for (const bad of ['lk_live_123', 'lk_prod_' + 'a'.repeat(32), 'lk_live_' + 'A'.repeat(32), 'lk_live_' + 'a'.repeat(33), "lk_live_' OR 1=1 --"]) {
      assertRefused(await svc.request('GET', '/api/v1/tenant', { key: bad }), 401, 'AUTH_UNAUTHENTICATED');
    }
    const unknown = `lk_live_${randomBytes(16).toString('hex')}`;
    assertRefused(await svc.request('GET', '/api/v1/tenant', { key: unknown }), 401, 'AUTH_UNAUTHENTICATED');
    assertRefused(await svc.request('GET', '/api/v1/tenant', { bearer: unknown }), 401, 'AUTH_UNAUTHENTICATED');
    assertRefused(await svc.request('GET', '/api/v1/tenant', { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } }), 401, 'AUTH_UNAUTHENTICATED');

    const created = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwtA, body: { name: 'to revoke', scopes: ['admin'] } });
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: created.body.key })).status, 200);
    assert.equal((await svc.request('DELETE', `/api/v1/events/api-keys/${created.body.id}`, { bearer: jwtA })).status, 200);
    const revoked = await svc.request('GET', '/api/v1/tenant', { key: created.body.key });
    assertRefused(revoked, 401, 'AUTH_UNAUTHENTICATED');
    assert.match(revoked.body.detail, /revoked/);
  });

  await t.test('admin tokens: expired, forged, tampered and unsigned tokens get 401; an API key on a token route gets 401', async () => {
    const jwt = await svc.login(tenantA);
    assert.equal((await svc.request('GET', '/api/v1/events/api-keys', { bearer: jwt })).status, 200);
    clock.advance((svc.config.jwtTtlSeconds + 60) * 1000);
    try {
      const expired = await svc.request('GET', '/api/v1/events/api-keys', { bearer: jwt });
      assertRefused(expired, 401, 'AUTH_UNAUTHENTICATED');
      assert.match(expired.body.detail, /expired/);
    } finally {
      clock.reset();
    }
    const forged = await new SignJWT({ tid: tenantA.tenantId, scopes: ['admin'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('someone')
      .setIssuer('loyalty-service')
      .setAudience('loyalty-admin')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(randomBytes(32));
    assertRefused(await svc.request('GET', '/api/v1/events/api-keys', { bearer: forged }), 401, 'AUTH_UNAUTHENTICATED');
    const [header, payload, signature] = jwt.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, tid: tenantB.tenantId })).toString('base64url')}.${signature}`;
    assertRefused(await svc.request('GET', '/api/v1/events/api-keys', { bearer: tampered }), 401, 'AUTH_UNAUTHENTICATED');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    assertRefused(await svc.request('GET', '/api/v1/events/api-keys', { bearer: unsigned }), 401, 'AUTH_UNAUTHENTICATED');
    assertRefused(await svc.request('GET', '/api/v1/events/api-keys', { key: tenantA.apiKey }), 401, 'AUTH_UNAUTHENTICATED');
    assertRefused(await svc.request('GET', '/api/v1/events/api-keys', { bearer: tenantA.apiKey }), 401, 'AUTH_UNAUTHENTICATED');
    assertRefused(await svc.request('GET', '/api/v1/events/api-keys'), 401, 'AUTH_UNAUTHENTICATED');
  });

  await t.test('login: a wrong password and an unknown email get the same 401', async () => {
    const wrong = await svc.request('POST', '/api/v1/auth/login', { body: { email: tenantA.adminEmail, password: 'not-it' } });
    const unknown = await svc.request('POST', '/api/v1/auth/login', { body: { email: 'nobody@nowhere.example', password: 'not-it' } });
    assertRefused(wrong, 401, 'AUTH_UNAUTHENTICATED');
    assertRefused(unknown, 401, 'AUTH_UNAUTHENTICATED');
    assert.equal(wrong.body.detail, unknown.body.detail);
    const [user] = await svc.sql('SELECT password_hash FROM admin_users WHERE email = $1', [tenantA.adminEmail]);
    assert.match(user.password_hash, /^\$argon2id\$/);
  });

  await t.test('a missing scope gets 403; a scope change applies to the next request', async () => {
    const piiOnly = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwtA, body: { name: 'pii reader', scopes: ['read:pii'] } });
    assertRefused(await svc.request('GET', '/api/v1/tenant', { key: piiOnly.body.key }), 403, 'AUTH_FORBIDDEN');
    assertRefused(
      await svc.request('POST', '/api/v1/sessions', { key: piiOnly.body.key, body: { participant_id: 'p', engagement_id: '6f1c8f7e-1b1a-4c4b-9a0e-0a0b0c0d0e0f' } }),
      403,
      'AUTH_FORBIDDEN',
    );
    const ingestOnly = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwtA, body: { name: 'ingest', scopes: ['ingest'] } });
    assertRefused(await svc.request('GET', '/api/v1/tenant', { key: ingestOnly.body.key }), 403, 'AUTH_FORBIDDEN');
    const issued = await svc.request('POST', '/api/v1/sessions', {
      key: ingestOnly.body.key,
      body: { participant_id: 'p-ingest', engagement_id: await svc.createEngagement(tenantA) },
    });
    assert.equal(issued.status, 201);
    const widened = await svc.request('PATCH', `/api/v1/events/api-keys/${piiOnly.body.id}`, { bearer: jwtA, body: { scopes: ['admin', 'read:pii'] } });
    assert.equal(widened.status, 200);
    assert.deepEqual(widened.body.scopes, ['admin', 'read:pii']);
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: piiOnly.body.key })).status, 200);
    await svc.request('PATCH', `/api/v1/events/api-keys/${piiOnly.body.id}`, { bearer: jwtA, body: { scopes: ['read:pii'] } });
    assertRefused(await svc.request('GET', '/api/v1/tenant', { key: piiOnly.body.key }), 403, 'AUTH_FORBIDDEN');
  });

  await t.test('the tenant header must name the credential\'s tenant (by id or slug): otherwise 403', async () => {
    for (const header of [tenantB.tenantId, tenantB.slug, 'no-such-tenant', '00000000-0000-4000-8000-000000000000']) {
      assertRefused(await svc.request('GET', '/api/v1/tenant', { bearer: tenantA.apiKey, headers: { 'x-service-tenant': header } }), 403, 'AUTH_TENANT_MISMATCH');
    }
    for (const header of [tenantA.tenantId, tenantA.tenantId.toUpperCase(), tenantA.slug]) {
      assert.equal((await svc.request('GET', '/api/v1/tenant', { bearer: tenantA.apiKey, headers: { 'x-service-tenant': header } })).status, 200);
    }
    assertRefused(await svc.request('GET', '/api/v1/events/api-keys', { bearer: jwtA, headers: { 'x-service-tenant': tenantB.tenantId } }), 403, 'AUTH_TENANT_MISMATCH');
  });

  await t.test('participant sessions: issued by a key, accepted in query or body, and refused everywhere else', async () => {
    const session = await svc.createSession(tenantA, { participantId: 'alice' });
    assert.match(session.sessionId, /^ses_[A-Za-z0-9_-]{32}$/);
    const query = `session_id=${session.sessionId}&engagement_id=${session.engagementId}`;
    const viaQuery = await svc.request('GET', `/api/v1/probe/session?${query}`);
    assert.equal(viaQuery.status, 200);
    assert.deepEqual(viaQuery.body, { tenant_id: tenantA.tenantId, participant_id: 'alice', engagement_id: session.engagementId, livemode: true });
    const viaBody = await svc.request('POST', '/api/v1/probe/session', { body: { session_id: session.sessionId, engagement_id: session.engagementId } });
    assert.equal(viaBody.status, 200);
    assert.equal(viaBody.body.participant_id, 'alice');
    // The token is stored hashed only.
    const [stored] = await svc.sql('SELECT token_hash FROM sessions WHERE participant_id = $1', ['alice']);
    assert.equal(stored.token_hash, createHash('sha256').update(session.sessionId).digest('hex'));

    // Participant credentials cannot call admin or key routes.
    assertRefused(await svc.request('GET', `/api/v1/tenant?${query}`), 403, 'AUTH_FORBIDDEN');
    assertRefused(await svc.request('GET', `/api/v1/events/api-keys?${query}`), 403, 'AUTH_FORBIDDEN');
    // Admin keys and tokens cannot act as participants.
    assertRefused(await svc.request('GET', `/api/v1/probe/session?${query}`, { key: tenantA.apiKey }), 403, 'AUTH_FORBIDDEN');
    assertRefused(await svc.request('GET', `/api/v1/probe/session?${query}`, { bearer: jwtA }), 403, 'AUTH_FORBIDDEN');
    // Missing, unknown, malformed and mismatched sessions.
    assertRefused(await svc.request('GET', `/api/v1/probe/session?engagement_id=${session.engagementId}`), 401, 'AUTH_UNAUTHENTICATED');
    assertRefused(await svc.request('GET', `/api/v1/probe/session?session_id=ses_${'x'.repeat(32)}&engagement_id=${session.engagementId}`), 401, 'AUTH_UNAUTHENTICATED');
    assertRefused(await svc.request('GET', `/api/v1/probe/session?session_id=${tenantA.apiKey}&engagement_id=${session.engagementId}`), 401, 'AUTH_UNAUTHENTICATED');
    assertRefused(
      await svc.request('GET', `/api/v1/probe/session?session_id=${session.sessionId}&engagement_id=6f1c8f7e-1b1a-4c4b-9a0e-0a0b0c0d0e0f`),
      403,
      'SESSION_ENGAGEMENT_MISMATCH',
    );
    assertRefused(await svc.request('POST', '/api/v1/probe/session', { body: { session_id: 12345, engagement_id: session.engagementId } }), 401, 'AUTH_UNAUTHENTICATED');
  });

  await t.test('a key or token route called without a credential: a participant session in the query or the body gets 403, anything else 401, whatever the body', async () => {
    const session = await svc.createSession(tenantA, { participantId: 'bob' });
    const sessionQuery = `session_id=${session.sessionId}&engagement_id=${session.engagementId}`;
    const sessionBody = { session_id: session.sessionId, engagement_id: session.engagementId };
    const participantSession = { status: 403, code: 'AUTH_FORBIDDEN', detail: 'participant sessions cannot call this route; it needs an API key or an admin token' };
    const noKey = { status: 401, code: 'AUTH_UNAUTHENTICATED', detail: 'this route needs an API key (X-API-Key)' };
    const noToken = { status: 401, code: 'AUTH_UNAUTHENTICATED', detail: 'this route needs an admin login token (Authorization: Bearer <jwt>)' };
    const json = { 'content-type': 'application/json' };
    const cases: Array<{ name: string; method: string; path: string; options?: RequestOptions; expected: typeof noKey }> = [
      { name: 'a session in the query of a key route', method: 'GET', path: `/api/v1/tenant?${sessionQuery}`, expected: participantSession },
      { name: 'a session in the body of a key route', method: 'POST', path: '/api/v1/sessions', options: { body: { ...sessionBody, participant_id: 'bob' } }, expected: participantSession },
      { name: 'a session in the body of a token route', method: 'POST', path: '/api/v1/events/api-keys', options: { body: { ...sessionBody, name: 'k', scopes: ['admin'] } }, expected: participantSession },
      { name: 'no body on a key route', method: 'GET', path: '/api/v1/tenant', expected: noKey },
      { name: 'a body without a session on a key route', method: 'POST', path: '/api/v1/sessions', options: { body: { participant_id: 'bob', engagement_id: session.engagementId } }, expected: noKey },
      { name: 'a body without a session on a token route', method: 'POST', path: '/api/v1/events/api-keys', options: { body: { name: 'k', scopes: ['admin'] } }, expected: noToken },
      // A body that cannot be read gets the refusal the headers and the query tell, never a body error.
      { name: 'malformed JSON', method: 'POST', path: '/api/v1/sessions', options: { raw: '{"session_id": ', headers: json }, expected: noKey },
      { name: 'malformed JSON with a session in the query', method: 'POST', path: `/api/v1/sessions?${sessionQuery}`, options: { raw: '{"participant_id": ', headers: json }, expected: participantSession },
      { name: 'a body over the limit', method: 'POST', path: '/api/v1/sessions', options: { body: { participant_id: 'x'.repeat(2_000_000), engagement_id: session.engagementId } }, expected: noKey },
      { name: 'a body that is not JSON', method: 'POST', path: '/api/v1/sessions', options: { raw: 'participant_id=bob', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, expected: noKey },
      // A bulk route reads up to 16 MiB with a credential; without one, nothing beyond the service-wide 1 MiB is read to look for a session.
      { name: 'a session in a small body of a bulk route', method: 'POST', path: '/api/v1/admin/points/bulk-grant', options: { body: { ...sessionBody, grants: [] } }, expected: participantSession },
      { name: 'a session in a body of a bulk route over the service-wide limit', method: 'POST', path: '/api/v1/admin/points/bulk-grant', options: { body: { ...sessionBody, padding: 'x'.repeat(2_000_000) } }, expected: noKey },
    ];
    const before = await svc.sql('SELECT (SELECT count(*)::int FROM sessions) AS sessions, (SELECT count(*)::int FROM api_keys) AS api_keys');
    let remainingBefore: number | null = null;
    for (const { name, method, path, options, expected } of cases) {
      const response = await svc.request(method, path, options);
      assertRefused(response, expected.status, expected.code);
      assert.equal(response.body.detail, expected.detail, name);
      // Counted per address once, before the body is read.
      const remaining = Number(response.headers.get('x-ratelimit-remaining'));
      if (remainingBefore !== null) assert.equal(remaining, remainingBefore - 1, `${name}: counted once per address`);
      remainingBefore = remaining;
    }
    assert.deepEqual(await svc.sql('SELECT (SELECT count(*)::int FROM sessions) AS sessions, (SELECT count(*)::int FROM api_keys) AS api_keys'), before);
  });

  await t.test('a session expires after its lifetime', async () => {
    const session = await svc.createSession(tenantA, { ttlSeconds: 60 });
    const path = `/api/v1/probe/session?session_id=${session.sessionId}&engagement_id=${session.engagementId}`;
    assert.equal((await svc.request('GET', path)).status, 200);
    clock.advance(61_000);
    try {
      const expired = await svc.request('GET', path);
      assertRefused(expired, 401, 'AUTH_UNAUTHENTICATED');
      assert.match(expired.body.detail, /expired/);
    } finally {
      clock.reset();
    }
  });

  await t.test('a session token whose hash two tenants share (only rows written by hand can) authenticates neither', async () => {
    // Token hashes are unique per tenant only, so that Citus can distribute sessions by tenant (migration 1110).
    const session = await svc.createSession(tenantA, { participantId: 'shared-hash' });
    await svc.sql(`INSERT INTO participants (tenant_id, participant_id) VALUES ($1, 'shared-hash')`, [tenantB.tenantId]);
    await svc.sql(
      `INSERT INTO sessions (tenant_id, id, token_hash, participant_id, engagement_id, expires_at)
       SELECT $2, gen_random_uuid(), token_hash, participant_id, engagement_id, expires_at
       FROM sessions WHERE tenant_id = $1 AND participant_id = 'shared-hash'`,
      [tenantA.tenantId, tenantB.tenantId],
    );
    // Rows written by hand announce no credential change; the process that issued the session remembers it as issued,
    // so the look-up is what another process (or this one after 10 s) does.
    svc.service.app!.ctx.authenticator.forgetCredentials();
    const path = `/api/v1/probe/session?session_id=${session.sessionId}&engagement_id=${session.engagementId}`;
    assertRefused(await svc.request('GET', path), 401, 'AUTH_UNAUTHENTICATED');
  });
});

test('API keys: format, hashing, listing and the plan quota', async (t) => {
  const svc = await startTestService(t);
  const starter = await svc.createTenant({ plan: 'starter' });
  const jwt = await svc.login(starter);

  await t.test('keys are a live or test prefix and 32 hex characters; the plaintext is nowhere in the database', async () => {
    const live = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'live', scopes: ['admin'] } });
    assert.equal(live.status, 201);
    assert.match(live.body.key, /^lk_live_[0-9a-f]{32}$/);
    assert.equal(live.body.prefix, live.body.key.slice(0, 16));
    await svc.request('DELETE', `/api/v1/events/api-keys/${live.body.id}`, { bearer: jwt });
    const testKey = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'test', environment: 'test', scopes: ['ingest'] } });
    assert.equal(testKey.status, 201);
    assert.match(testKey.body.key, /^lk_test_[0-9a-f]{32}$/);

    const [stored] = await svc.sql('SELECT key_hash FROM api_keys WHERE id = $1', [testKey.body.id]);
    assert.equal(stored.key_hash, createHash('sha256').update(testKey.body.key).digest('hex'));
    const secrets = [live.body.key, testKey.body.key, starter.apiKey, starter.adminPassword];
    const tables = await svc.sql(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`);
    for (const { tablename } of tables) {
      const rows = await svc.sql(`SELECT t::text AS row FROM ${tablename} t`);
      for (const { row } of rows) {
        for (const secret of secrets) assert.ok(!row.includes(secret) && !row.includes(secret.slice(16)), `${tablename} holds a plaintext secret`);
      }
    }
    const listing = await svc.request('GET', '/api/v1/events/api-keys?include_revoked=true', { bearer: jwt });
    assert.equal(listing.status, 200);
    assert.equal(listing.body.api_keys.length, 3);
    for (const secret of secrets) assert.ok(!listing.text.includes(secret.slice(16)));
    for (const key of listing.body.api_keys) assert.equal(key.key, undefined);
  });

  await t.test('name, scopes and rate limit are updatable; a revoked key cannot be updated', async () => {
    const created = await svc.request('GET', '/api/v1/events/api-keys', { bearer: jwt });
    const id = created.body.api_keys.find((k: { name: string }) => k.name === 'test').id;
    const updated = await svc.request('PATCH', `/api/v1/events/api-keys/${id}`, { bearer: jwt, body: { name: 'renamed', scopes: ['ingest', 'read:pii'], rate_limit_per_minute: 42 } });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.name, 'renamed');
    assert.deepEqual(updated.body.scopes, ['ingest', 'read:pii']);
    assert.equal(updated.body.rate_limit_per_minute, 42);
    const cleared = await svc.request('PATCH', `/api/v1/events/api-keys/${id}`, { bearer: jwt, body: { rate_limit_per_minute: null } });
    assert.equal(cleared.body.rate_limit_per_minute, null);
    assert.equal(cleared.body.name, 'renamed');
  });

  await t.test('the starter plan allows 2 active keys: the third gets 422 PLAN_QUOTA_EXCEEDED until one is revoked', async () => {
    // The test key ('renamed') lives in the sandbox, whose quota is its own: a second test key fits there.
    const sandboxKey = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'second test key', environment: 'test', scopes: ['ingest'] } });
    assert.equal(sandboxKey.status, 201);
    // The first admin key and 'second' are the live tenant's 2 active keys.
    const second = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'second', scopes: ['admin'] } });
    assert.equal(second.status, 201);
    const third = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'third', scopes: ['admin'] } });
    assertRefused(third, 422, 'PLAN_QUOTA_EXCEEDED');
    assert.match(third.body.detail, /starter plan allows 2 API keys/);
    assert.equal(third.body.quota, 2);
    await svc.request('DELETE', `/api/v1/events/api-keys/${second.body.id}`, { bearer: jwt });
    const again = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'third', scopes: ['admin'] } });
    assert.equal(again.status, 201);
  });

  await t.test('concurrent creations cannot pass the quota together', async () => {
    const fresh = await svc.createTenant({ plan: 'starter' });
    const token = await svc.login(fresh);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => svc.request('POST', '/api/v1/events/api-keys', { bearer: token, body: { name: `k${i}`, scopes: ['ingest'] } })),
    );
    assert.equal(results.filter((r) => r.status === 201).length, 1);
    assert.equal(results.filter((r) => r.status === 422).length, 5);
    assert.deepEqual(await svc.sql('SELECT count(*)::int AS n FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL', [fresh.tenantId]), [{ n: 2 }]);
  });
});

test('tenantRead: one round trip, the same isolation, literal values, and a clean connection after an error', async (t) => {
  const svc = await startTestService(t);
  const tenantA = await svc.createTenant();
  const tenantB = await svc.createTenant();
  const db = svc.service.db;
  // Row-level security applies: tenant A's context sees no row of B, even when asked by id.
  assert.deepEqual(await db.tenantRead(tenantA.tenantId, 'SELECT id FROM tenants WHERE id = $1', [tenantB.tenantId]), []);
  assert.deepEqual(await db.tenantRead(tenantA.tenantId, 'SELECT count(*)::int AS n FROM api_keys'), [{ n: 1 }]);
  // Values arrive exactly as parameters would: quotes, backslashes, unicode, arrays, nulls, dates and numbers.
  const tricky = ["O'Brien \\ \"quoted\" $1 ; DROP TABLE tenants; --", 'ключ 🔑', ''];
  const [echo] = await db.tenantRead<{ texts: string[]; nothing: null; at: Date; n: number }>(
    tenantA.tenantId,
    'SELECT $1::text[] AS texts, $2::text AS nothing, $3::timestamptz AS at, $4::int + 1 AS n',
    [tricky, null, new Date('2026-01-02T03:04:05.678Z'), 41],
  );
  assert.deepEqual(echo.texts, tricky);
  assert.equal(echo.nothing, null);
  assert.equal(echo.at.toISOString(), '2026-01-02T03:04:05.678Z');
  assert.equal(echo.n, 42);
  // The setting does not outlive the statement's transaction.
  const [{ tenant }] = (await db.app.query(`SELECT current_setting('app.tenant_id', true) AS tenant`)).rows;
  assert.ok(!tenant);
  // A failing statement rolls back; every pooled connection still works afterwards.
  await assert.rejects(db.tenantRead(tenantA.tenantId, 'SELECT 1 / $1::int', [0]), /division by zero/);
  await assert.rejects(db.tenantRead(tenantA.tenantId, 'SELECT $2', [1]), /\$2 has no value/);
  const after = await Promise.all(Array.from({ length: 30 }, () => db.tenantRead(tenantA.tenantId, 'SELECT 1 AS one')));
  assert.ok(after.every((rows) => rows[0].one === 1));
  assert.deepEqual(await db.tenantRead('00000000-0000-4000-8000-000000000000', 'SELECT count(*)::int AS n FROM tenants'), [{ n: 0 }]);
  await assert.rejects(db.tenantRead("x'; SELECT 1; --", 'SELECT 1'), /must be a UUID/);
});

test('tenantStartingWith: the first statement travels with BEGIN, under the tenant, and the transaction goes on or rolls back as one', async (t) => {
  const svc = await startTestService(t);
  const tenantA = await svc.createTenant();
  const tenantB = await svc.createTenant();
  const db = svc.service.db;
  // Row-level security applies to the first statement as to the rest of the transaction.
  const seen = await db.tenantStartingWith(tenantA.tenantId, 'SELECT id FROM tenants WHERE id = ANY ($1::uuid[])', [[tenantA.tenantId, tenantB.tenantId]], async (tx, rows) => {
    const later = await tx.query('SELECT id FROM tenants');
    return { first: rows.map((r) => r.id), later: later.rows.map((r) => r.id) };
  });
  assert.deepEqual(seen, { first: [tenantA.tenantId], later: [tenantA.tenantId] });
  // Literal values arrive exactly as parameters would.
  const tricky = "O'Brien \\ $1 ; DROP TABLE tenants; -- ключ";
  assert.equal(await db.tenantStartingWith(tenantA.tenantId, 'SELECT $1::text AS echo', [tricky], async (_tx, rows) => rows[0].echo), tricky);
  // One transaction: a failure in fn rolls back what the transaction wrote, and a failing first statement fails the call.
  await assert.rejects(
    db.tenantStartingWith(tenantA.tenantId, 'SELECT 1', [], async (tx) => {
      await tx.query("UPDATE tenants SET name = 'not kept' WHERE id = $1", [tenantA.tenantId]);
      throw new Error('stop');
    }),
    /stop/,
  );
  assert.notEqual((await svc.sql('SELECT name FROM tenants WHERE id = $1', [tenantA.tenantId]))[0].name, 'not kept');
  await assert.rejects(db.tenantStartingWith(tenantA.tenantId, 'SELECT 1 / $1::int', [0], async () => 'unreached'), /division by zero/);
  const after = await Promise.all(Array.from({ length: 30 }, () => db.tenantStartingWith(tenantA.tenantId, 'SELECT 1 AS one', [], async (_tx, rows) => rows[0].one)));
  assert.ok(after.every((one) => one === 1), 'every pooled connection is clean after the failures');
  await assert.rejects(db.tenantStartingWith("x'; SELECT 1; --", 'SELECT 1', [], async () => 1), /must be a UUID/);
});

/** Counts the application pool's connection checkouts (one per round trip of a read) until the test ends. */
function countConnections(t: { after(fn: () => void): void }, db: Database): () => number {
  let count = 0;
  const connect = db.app.connect.bind(db.app);
  (db.app as { connect: unknown }).connect = () => {
    count += 1;
    return connect();
  };
  t.after(() => {
    (db.app as { connect: unknown }).connect = connect;
  });
  return () => count;
}

test('tenantInOneTrip: statements and COMMIT in one message, under the tenant, with literal values; a failing statement rolls back all, and its prepared statements still serve', async (t) => {
  const svc = await startTestService(t);
  const tenantA = await svc.createTenant();
  const tenantB = await svc.createTenant();
  const db = svc.service.db;
  const tricky = "O'Brien \\ $1 ; DROP TABLE tenants; -- ключ";
  const echo = { text: 'SELECT $1::text AS echo', values: [tricky] };
  const visible = { text: 'SELECT id FROM tenants WHERE id = ANY ($1::uuid[])', values: [[tenantA.tenantId, tenantB.tenantId]] };
  const [echoed, seen] = await db.tenantInOneTrip(tenantA.tenantId, [echo, visible]);
  assert.deepEqual(echoed, [{ echo: tricky }]);
  assert.deepEqual(seen, [{ id: tenantA.tenantId }]);
  const rename = { text: 'UPDATE tenants SET name = $2 WHERE id = $1 RETURNING name', values: [tenantA.tenantId, 'not kept'] };
  await assert.rejects(db.tenantInOneTrip(tenantA.tenantId, [rename, { text: 'SELECT 1 / $1::int', values: [0] }]), /division by zero/);
  const [{ name }] = await svc.sql('SELECT name FROM tenants WHERE id = $1', [tenantA.tenantId]);
  assert.notEqual(name, 'not kept');
  // Every connection of the pool, again and again: the statements prepared by a failed message are known or prepared anew.
  const renamed = await Promise.all(Array.from({ length: 40 }, () => db.tenantInOneTrip(tenantA.tenantId, [{ ...rename, values: [tenantA.tenantId, name] }, echo])));
  assert.ok(renamed.every(([rows, echoes]) => rows.length === 1 && (echoes[0] as { echo: string }).echo === tricky));
});

test('no table has a trigger: what a change writes is in the code that makes it', async (t) => {
  const svc = await startTestService(t);
  const triggers = await svc.sql(
    `SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE NOT t.tgisinternal AND n.nspname = 'public'`,
  );
  assert.deepEqual(triggers, []);
});

test('tenantReadAll: several statements in one round trip and one snapshot, each with its rows, under the tenant', async (t) => {
  const svc = await startTestService(t);
  const tenantA = await svc.createTenant();
  const tenantB = await svc.createTenant();
  const db = svc.service.db;
  const connections = countConnections(t, db);
  const results = await db.tenantReadAll(
    tenantA.tenantId,
    ['SELECT id FROM tenants WHERE id = $1', 'SELECT id FROM tenants WHERE id = $2', 'SELECT $2::text AS b, txid_current_if_assigned() AS xid', "SELECT current_setting('transaction_read_only') AS ro"],
    [tenantA.tenantId, tenantB.tenantId],
  );
  assert.equal(connections(), 1, 'one connection, one message');
  assert.deepEqual(results, [[{ id: tenantA.tenantId }], [], [{ b: tenantB.tenantId, xid: null }], [{ ro: 'on' }]]);
  assert.deepEqual(await db.tenantReadAll(tenantA.tenantId, []), []);
  // A failing statement fails the whole read, and the connection is clean afterwards.
  await assert.rejects(db.tenantReadAll(tenantA.tenantId, ['SELECT 1', 'SELECT 1 / $1::int'], [0]), /division by zero/);
  assert.deepEqual(await db.tenantReadAll(tenantA.tenantId, ['SELECT 1 AS one', 'SELECT 2 AS two']), [[{ one: 1 }], [{ two: 2 }]]);
  // Read only: a write inside is refused.
  await assert.rejects(db.tenantReadAll(tenantA.tenantId, ["UPDATE tenants SET name = 'x'"]), /read-only transaction/);
});

test('tenantRead coalesces identical concurrent reads without serving a read sent before the caller arrived', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const db = svc.service.db;
  const statement = 'SELECT name FROM tenants WHERE id = $1';
  const connections = countConnections(t, db);

  // 300 identical reads at once: every caller gets the row, through far fewer round trips.
  const burst = await Promise.all(Array.from({ length: 300 }, () => db.tenantRead<{ name: string }>(tenant.tenantId, statement, [tenant.tenantId])));
  assert.ok(burst.every((rows) => rows.length === 1 && rows[0].name === burst[0][0].name));
  assert.ok(connections() <= 3, `300 identical reads took ${connections()} round trips`);

  // Different values or tenants are never shared.
  const other = await svc.createTenant();
  const [mine, theirs] = await Promise.all([
    db.tenantRead<{ id: string }>(tenant.tenantId, 'SELECT id FROM tenants'),
    db.tenantRead<{ id: string }>(other.tenantId, 'SELECT id FROM tenants'),
  ]);
  assert.deepEqual(mine.map((r) => r.id), [tenant.tenantId]);
  assert.deepEqual(theirs.map((r) => r.id), [other.tenantId]);

  // A caller that arrives while a read is on its way waits for the next one, so it sees a change
  // committed before its call: a read is in flight, the name changes, then the second caller asks.
  // The read sleeps after taking its snapshot so that it is surely still on its way.
  const slow = 'SELECT name, pg_sleep(0.4)::text AS slept FROM tenants WHERE id = $1';
  const before = (await db.tenantRead<{ name: string }>(tenant.tenantId, statement, [tenant.tenantId]))[0].name;
  const first = db.tenantRead<{ name: string }>(tenant.tenantId, slow, [tenant.tenantId]);
  await new Promise((resolve) => setTimeout(resolve, 100));
  await svc.sql('UPDATE tenants SET name = $2 WHERE id = $1', [tenant.tenantId, 'Renamed while a read was in flight']);
  const second = db.tenantRead<{ name: string }>(tenant.tenantId, slow, [tenant.tenantId]);
  assert.equal((await first)[0].name, before);
  assert.equal((await second)[0].name, 'Renamed while a read was in flight');

  // An error reaches every caller of its round trip, and the next round trip works.
  const failing = await Promise.allSettled(Array.from({ length: 20 }, () => db.tenantRead(tenant.tenantId, 'SELECT 1 / $1::int AS x', [0])));
  assert.ok(failing.every((outcome) => outcome.status === 'rejected' && /division by zero/.test(String(outcome.reason))));
  assert.deepEqual(await db.tenantRead(tenant.tenantId, 'SELECT 1 / $1::int AS x', [1]), [{ x: 1 }]);
});

test('sessions: cached look-ups still refuse an expired session, and drop an erased participant\'s session at once, in every process', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const engagementId = await svc.createEngagement(tenant);
  const balance = (sessionId: string) => svc.request('POST', '/api/v1/points/balance', { body: { session_id: sessionId, engagement_id: engagementId } });

  // Expiry is checked on every use, cached or not.
  const short = await svc.createSession(tenant, { participantId: 'p-short', engagementId, ttlSeconds: 60 });
  assert.equal((await balance(short.sessionId)).status, 200);
  clock.advance(61_000);
  t.after(() => clock.reset());
  const expired = await balance(short.sessionId);
  assert.equal(expired.status, 401);
  assert.match(expired.body.detail, /expired/);

  // A second process's authenticator, with the session in its cache.
  const session = await svc.createSession(tenant, { participantId: 'p-erased', engagementId });
  assert.equal((await balance(session.sessionId)).status, 200);
  const other = new Authenticator(svc.service.db, randomBytes(32), 3600);
  await other.listenForKeyChanges(svc.ownerUrl);
  t.after(() => other.close());
  assert.equal((await other.fromSession(session.sessionId, engagementId)).participantId, 'p-erased');

  const erased = await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-erased', { key: tenant.apiKey });
  assert.equal(erased.status, 200, erased.text);
  assert.equal((await balance(session.sessionId)).status, 401, 'this process refuses at once');
  const deadline = Date.now() + 5_000;
  let refused = false;
  while (!refused && Date.now() < deadline) {
    refused = await other.fromSession(session.sessionId, engagementId).then(() => false, () => true);
    if (!refused) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(refused, 'the other process refuses once the commit is announced');
});
