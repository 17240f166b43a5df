import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestService, type RequestOptions, type TestResponse } from './helper.js';
import { probeRoutes } from './probe-routes.js';

/**
 * Bad input of every kind gets a 4xx in the one error shape, with a detail
 * that says what is wrong, and changes nothing. No input produces a 500.
 */
interface BadInput {
  name: string;
  method: string;
  path: string;
  options: RequestOptions;
  status: number;
  code: string;
  detail?: RegExp;
}

function assertErrorShape(response: TestResponse, expected: { status: number; code: string; detail?: RegExp }, name: string): void {
  assert.equal(response.status, expected.status, `${name}: expected ${expected.status}, got ${response.status} ${response.text.slice(0, 300)}`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/, `${name}: JSON body`);
  assert.equal(typeof response.body, 'object', `${name}: body is an object`);
  assert.equal(response.body.code, expected.code, `${name}: code`);
  assert.equal(response.body.error_version, 1, `${name}: error_version`);
  assert.equal(typeof response.body.detail, 'string', `${name}: detail`);
  assert.ok(response.body.detail.length > 0, `${name}: detail is not empty`);
  if (expected.detail) assert.match(response.body.detail, expected.detail, `${name}: detail says what is wrong`);
  assert.ok(response.headers.get('x-request-id'), `${name}: X-Request-Id`);
  assert.ok(response.headers.get('x-ratelimit-limit'), `${name}: X-RateLimit-Limit`);
  assert.ok(response.headers.get('x-ratelimit-remaining'), `${name}: X-RateLimit-Remaining`);
  assert.ok(response.headers.get('x-ratelimit-reset'), `${name}: X-RateLimit-Reset`);
}

/** Sends raw bytes and reads the answer until the server closes the connection. */
function rawExchange(baseUrl: string, request: string): Promise<{ status: number; headers: Headers; text: string }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, text = ''] = received.split('\r\n\r\n', 2);
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers = new Headers(headerLines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()] as [string, string]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, text });
    });
  });
}

test('the error shape for bad input of every kind', async (t) => {
  const svc = await startTestService(t, { routes: probeRoutes });
  const tenant = await svc.createTenant();
  const jwt = await svc.login(tenant);
  const existing = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'existing', scopes: ['admin'] } });
  assert.equal(existing.status, 201);
  const keys = '/api/v1/events/api-keys';
  const one = `${keys}/${existing.body.id}`;
  const auth = { bearer: jwt };
  const json = { 'content-type': 'application/json' };
  const valid = { name: 'k', scopes: ['admin'] };
  const megabyte = 'x'.repeat(1_000_000);
  const invalid = 'VALIDATION_INVALID_REQUEST';

  const cases: BadInput[] = [
    { name: 'a number where a string is required', method: 'POST', path: keys, options: { ...auth, body: { name: 123, scopes: ['admin'] } }, status: 400, code: invalid, detail: /body\.name must be of type string/ },
    { name: 'a string where an array is required', method: 'POST', path: keys, options: { ...auth, body: { name: 'k', scopes: 'admin' } }, status: 400, code: invalid, detail: /scopes must be of type array/ },
    { name: 'a boolean where an integer is required', method: 'POST', path: keys, options: { ...auth, body: { ...valid, rate_limit_per_minute: true } }, status: 400, code: invalid, detail: /rate_limit_per_minute must be of type integer/ },
    { name: 'a numeric string where an integer is required (no coercion of bodies)', method: 'POST', path: keys, options: { ...auth, body: { ...valid, rate_limit_per_minute: '10' } }, status: 400, code: invalid },
    { name: 'a missing required field', method: 'POST', path: keys, options: { ...auth, body: { name: 'k' } }, status: 400, code: invalid, detail: /missing the required property "scopes"/ },
    { name: 'null for a required field', method: 'POST', path: keys, options: { ...auth, body: { name: null, scopes: ['admin'] } }, status: 400, code: invalid },
    { name: 'an unknown field', method: 'POST', path: keys, options: { ...auth, body: { ...valid, colour: 'red' } }, status: 400, code: invalid, detail: /not allowed: "colour"/ },
    { name: 'a negative number', method: 'POST', path: keys, options: { ...auth, body: { ...valid, rate_limit_per_minute: -5 } }, status: 400, code: invalid, detail: />= 1/ },
    { name: 'zero where a positive integer is required', method: 'POST', path: keys, options: { ...auth, body: { ...valid, rate_limit_per_minute: 0 } }, status: 400, code: invalid },
    { name: 'a fractional number', method: 'POST', path: keys, options: { ...auth, body: { ...valid, rate_limit_per_minute: 2.5 } }, status: 400, code: invalid, detail: /integer/ },
    { name: 'a huge number', method: 'POST', path: keys, options: { ...auth, raw: '{"name":"k","scopes":["admin"],"rate_limit_per_minute":1e308}', headers: json }, status: 400, code: invalid },
    { name: 'a number beyond double precision', method: 'POST', path: keys, options: { ...auth, raw: '{"name":"k","scopes":["admin"],"rate_limit_per_minute":1e400}', headers: json }, status: 400, code: invalid },
    { name: 'a 2^53 + 1 integer', method: 'POST', path: keys, options: { ...auth, raw: '{"name":"k","scopes":["admin"],"rate_limit_per_minute":9007199254740993}', headers: json }, status: 400, code: invalid },
    { name: 'a 1 MB string', method: 'POST', path: keys, options: { ...auth, body: { name: megabyte, scopes: ['admin'] } }, status: 400, code: invalid, detail: /must NOT have more than 100 characters/ },
    { name: 'a body over 1 MiB', method: 'POST', path: keys, options: { ...auth, body: { name: `${megabyte}${megabyte}`, scopes: ['admin'] } }, status: 413, code: 'PAYLOAD_TOO_LARGE' },
    { name: 'invalid JSON', method: 'POST', path: keys, options: { ...auth, raw: '{"name": "k", "scopes": [', headers: json }, status: 400, code: 'INVALID_JSON', detail: /not valid JSON/ },
    { name: 'JSON with a trailing comma', method: 'POST', path: keys, options: { ...auth, raw: '{"name": "k", "scopes": ["admin"],}', headers: json }, status: 400, code: 'INVALID_JSON' },
    { name: 'an empty body', method: 'POST', path: keys, options: { ...auth, raw: '', headers: json }, status: 400, code: 'INVALID_JSON' },
    { name: 'a JSON null body', method: 'POST', path: keys, options: { ...auth, raw: 'null', headers: json }, status: 400, code: invalid },
    { name: 'an array where an object is expected', method: 'POST', path: keys, options: { ...auth, body: [valid] }, status: 400, code: invalid, detail: /must be of type object/ },
    { name: 'a string where an object is expected', method: 'POST', path: keys, options: { ...auth, body: 'hello' }, status: 400, code: invalid },
    { name: 'a body without a content type', method: 'POST', path: keys, options: { ...auth, raw: Buffer.from(JSON.stringify(valid)) }, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', detail: /no Content-Type/ },
    { name: 'a wrong content type', method: 'POST', path: keys, options: { ...auth, raw: 'name=k&scopes=admin', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    { name: 'text/plain JSON', method: 'POST', path: keys, options: { ...auth, raw: JSON.stringify(valid), headers: { 'content-type': 'text/plain' } }, status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    { name: 'a prototype-polluting key', method: 'POST', path: keys, options: { ...auth, raw: '{"name":"k","scopes":["admin"],"__proto__":{"admin":true}}', headers: json }, status: 400, code: 'INVALID_JSON' },
    { name: 'deeply nested JSON', method: 'POST', path: keys, options: { ...auth, raw: `${'['.repeat(100_000)}${']'.repeat(100_000)}`, headers: json }, status: 400, code: invalid },
    { name: 'an unknown enum value', method: 'POST', path: keys, options: { ...auth, body: { name: 'k', scopes: ['superuser'] } }, status: 400, code: invalid },
    { name: 'duplicate items in a set', method: 'POST', path: keys, options: { ...auth, body: { name: 'k', scopes: ['admin', 'admin'] } }, status: 400, code: invalid },
    { name: 'an empty array where one item is required', method: 'POST', path: keys, options: { ...auth, body: { name: 'k', scopes: [] } }, status: 400, code: invalid },
    { name: 'a blank name', method: 'POST', path: keys, options: { ...auth, body: { name: '   ', scopes: ['admin'] } }, status: 400, code: invalid },
    { name: 'a NUL character in a string', method: 'POST', path: keys, options: { ...auth, body: { name: 'a\u0000b', scopes: ['admin'] } }, status: 400, code: invalid },
    // A lone surrogate is no character: refused, as U+0000 is, rather than stored as U+FFFD (review finding 6, issue 32).
    { name: 'a lone surrogate in a string', method: 'POST', path: keys, options: { ...auth, body: { name: 'a\uD800lone surrogate', scopes: ['admin'] } }, status: 400, code: invalid, detail: /body\.name contains a lone UTF-16 surrogate/ },
    { name: 'an empty update', method: 'PATCH', path: one, options: { ...auth, body: {} }, status: 400, code: invalid },
    { name: 'SQL in a path id', method: 'PATCH', path: `${keys}/1'%20OR%20'1'='1`, options: { ...auth, body: { name: 'x' } }, status: 400, code: invalid, detail: /params\.id must match format "uuid"/ },
    { name: 'a non-integer query parameter', method: 'GET', path: `${keys}?limit=abc`, options: auth, status: 400, code: invalid, detail: /querystring\.limit/ },
    { name: 'a query parameter out of range', method: 'GET', path: `${keys}?limit=1000`, options: auth, status: 400, code: invalid },
    { name: 'an unknown query parameter', method: 'GET', path: `${keys}?tenant_id=${tenant.tenantId}`, options: auth, status: 400, code: invalid },
    { name: 'a forged cursor', method: 'GET', path: `${keys}?cursor=%7B%7D%7B`, options: auth, status: 400, code: 'INVALID_CURSOR' },
    { name: 'a path that is not valid percent-encoding', method: 'GET', path: '/api/v1/admin/badges/%ff%fe', options: auth, status: 400, code: 'INVALID_URL', detail: /^the URL path is not valid/ },
    { name: 'an over-long path parameter', method: 'DELETE', path: `${keys}/${'a'.repeat(600)}`, options: auth, status: 414, code: 'URI_TOO_LONG', detail: /^a path parameter is longer than 500 characters$/ },
    { name: 'an unknown route', method: 'GET', path: '/api/v1/no-such-thing', options: {}, status: 404, code: 'ROUTE_NOT_FOUND', detail: /no route GET \/api\/v1\/no-such-thing/ },
    { name: 'an unknown method on a known path', method: 'PUT', path: keys, options: { ...auth, body: valid }, status: 404, code: 'ROUTE_NOT_FOUND' },
    { name: 'a removed path outside /api/v1', method: 'GET', path: '/api/v2/tenant', options: {}, status: 404, code: 'ROUTE_NOT_FOUND' },
    { name: 'an unknown id', method: 'DELETE', path: `${keys}/00000000-0000-4000-8000-000000000000`, options: auth, status: 404, code: 'RESOURCE_NOT_FOUND' },
    { name: 'a malformed email at login', method: 'POST', path: '/api/v1/auth/login', options: { body: { email: 'not an email', password: 'x' } }, status: 400, code: invalid },
    { name: 'an unexpected exception', method: 'GET', path: '/api/v1/probe/crash', options: {}, status: 500, code: 'INTERNAL_ERROR', detail: /^internal server error$/ },
  ];

  const before = await svc.sql('SELECT id, name, scopes, rate_limit_per_minute, revoked_at FROM api_keys ORDER BY id');
  for (const bad of cases) {
    const response = await svc.request(bad.method, bad.path, bad.options);
    assertErrorShape(response, bad, bad.name);
    assert.ok(!response.text.includes('s3cr3t'), `${bad.name}: internal details stay in the log`);
    assert.ok(!/FST_|statusCode|"error"/.test(response.text), `${bad.name}: no trace of Fastify's own error body: ${response.text}`);
  }
  assert.ok(cases.length >= 40);
  assert.deepEqual(await svc.sql('SELECT id, name, scopes, rate_limit_per_minute, revoked_at FROM api_keys ORDER BY id'), before, 'no bad input changed anything');

  await t.test('SQL-looking and unicode strings are data: stored and returned exactly', async () => {
    const names = [
      "'; DROP TABLE api_keys; --",
      'Robert"); SELECT pg_sleep(5); --',
      'Ünïcödé ключ 鍵 🔑👩🏽‍💻',
      'right\u202Eto-left',
      'e\u0301 combining',
    ];
    for (const name of names) {
      const created = await svc.request('POST', keys, { ...auth, body: { name, scopes: ['ingest'] } });
      assert.equal(created.status, 201, `${JSON.stringify(name)}: ${created.text}`);
      assert.equal(created.body.name, name);
      const [row] = await svc.sql('SELECT name FROM api_keys WHERE id = $1', [created.body.id]);
      assert.equal(row.name, name);
      await svc.request('DELETE', `${keys}/${created.body.id}`, auth);
    }
    assert.equal((await svc.sql(`SELECT count(*)::int AS n FROM api_keys`))[0].n >= 2, true, 'the api_keys table is intact');
  });

  await t.test('requests refused before they reach the router get the one shape too, without their URL', async () => {
    const refusedShape = (response: { status: number; headers: Headers; text: string }, status: number, code: string, name: string) => {
      assert.equal(response.status, status, `${name}: ${response.text}`);
      assert.match(response.headers.get('content-type') ?? '', /^application\/json/, `${name}: JSON body`);
      const body = JSON.parse(response.text);
      assert.deepEqual(Object.keys(body).sort(), ['code', 'detail', 'doc_url', 'error_version', 'request_id'], `${name}: ${response.text}`);
      assert.equal(body.request_id, response.headers.get('x-request-id'), `${name}: the body's request id is the header's`);
      assert.equal(body.doc_url, '/docs', `${name}: no route answered, so the reference's top`);
      assert.equal(body.code, code, name);
      assert.equal(body.error_version, 1, name);
      assert.ok(body.detail.length > 0 && !body.detail.includes('aaaa'), `${name}: a detail, without the URL`);
      assert.ok(response.headers.get('x-request-id'), `${name}: X-Request-Id`);
    };
    const longUrl = await fetch(`${svc.baseUrl}/api/v1/events/api-keys?name=${'a'.repeat(20_000)}`, { headers: { authorization: `Bearer ${jwt}` } });
    refusedShape({ status: longUrl.status, headers: longUrl.headers, text: await longUrl.text() }, 431, 'REQUEST_HEADERS_TOO_LARGE', 'an over-long URL');
    const malformed = await rawExchange(svc.baseUrl, 'GET /api/v1/tenant HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n');
    refusedShape(malformed, 400, 'MALFORMED_REQUEST', 'two Content-Length headers');
    const garbage = await rawExchange(svc.baseUrl, 'NOT HTTP AT ALL aaaa\r\n\r\n');
    refusedShape(garbage, 400, 'MALFORMED_REQUEST', 'a request that is not HTTP');
  });

  await t.test("every error body carries the request id and a link to the answering operation's reference entry", async () => {
    const refused = await svc.request('POST', '/api/v1/gamify/points/grant', { headers: { authorization: `Bearer ${jwt}`, 'x-request-id': 'support-quote-1' }, body: { amount: 'ten' } });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.request_id, 'support-quote-1');
    assert.match(refused.body.doc_url, /^http:\/\/127\.0\.0\.1:\d+\/docs#\/points\/grantPoints$/);
    const noRoute = await svc.request('GET', '/api/v1/no-such-route');
    assert.equal(noRoute.status, 404);
    assert.equal(noRoute.body.request_id, noRoute.headers.get('x-request-id'));
    assert.match(noRoute.body.doc_url, /\/docs$/);
  });

  await t.test('a request id given by the caller is echoed; a malformed one is replaced', async () => {
    const given = await svc.request('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
    assert.equal(given.headers.get('x-request-id'), 'abc-123');
    const replaced = await svc.request('GET', '/healthz', { headers: { 'x-request-id': 'bad id\twith spaces' } });
    assert.match(replaced.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });
});
