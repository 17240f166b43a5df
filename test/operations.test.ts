import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './helper.js';
import { probeRoutes } from './probe-routes.js';
import { ConfigError, loadConfig } from '../src/config.js';

test('operations routes, the API description and versioning mechanics', async (t) => {
  const svc = await startTestService(t, { routes: probeRoutes });
  const tenant = await svc.createTenant();

  await t.test('GET /healthz and GET /readyz answer 200 with a request id and no rate-limit headers (they are not counted)', async () => {
    const health = await svc.request('GET', '/healthz');
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: 'ok' });
    const ready = await svc.request('GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: 'ready' });
    for (const response of [health, ready]) {
      assert.equal(response.headers.get('x-ratelimit-limit'), null);
      assert.ok(response.headers.get('x-request-id'));
    }
  });

  await t.test('GET /metrics is Prometheus text with request durations by route', async () => {
    await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey });
    const metrics = await svc.request('GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(metrics.text, /# TYPE http_request_duration_seconds histogram/);
    assert.match(metrics.text, /http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/tenant",status="200"\} [1-9]/);
    assert.match(metrics.text, /process_resident_memory_bytes \d+/);
  });

  await t.test('GET /openapi.json is OpenAPI 3.1 and documents every route with its credential and its errors', async () => {
    const response = await svc.request('GET', '/openapi.json');
    assert.equal(response.status, 200);
    const spec = response.body;
    assert.equal(spec.openapi, '3.1.0');
    assert.ok(spec.components.schemas.ErrorResponse ?? spec.components.schemas['def-0'] ?? Object.values(spec.components.schemas).some((s: any) => s.title === 'Error'));
    const operations = Object.entries(spec.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
    );
    const documented = new Set(operations.map((o) => `${o.method.toUpperCase()} ${o.path}`));
    for (const route of ['POST /api/v1/auth/login', 'POST /api/v1/events/api-keys', 'GET /api/v1/events/api-keys', 'PATCH /api/v1/events/api-keys/{id}', 'DELETE /api/v1/events/api-keys/{id}', 'POST /api/v1/sessions', 'GET /api/v1/tenant']) {
      assert.ok(documented.has(route), `${route} is documented`);
    }
    for (const { path, method, operation } of operations) {
      const statuses = Object.keys(operation.responses ?? {});
      assert.ok(statuses.some((s) => s.startsWith('2')), `${method} ${path} documents a success response`);
      for (const status of ['400', '404', '413', '422', '429', '500']) assert.ok(statuses.includes(status), `${method} ${path} documents ${status}`);
      const error = operation.responses['400'].content['application/json'].schema;
      assert.ok(error.$ref || error.properties?.error_version, `${method} ${path}: the 400 is the error schema`);
      if (['post', 'patch', 'put'].includes(method) && operation.requestBody) {
        // JSON bodies, except the file uploads (POST /admin/imports), whose body is the file itself.
        const content = operation.requestBody.content as Record<string, { schema?: unknown }>;
        assert.ok(Object.keys(content).length > 0 && Object.values(content).every((c) => c.schema), `${method} ${path} documents its body`);
      }
      assert.ok(Array.isArray(operation.security), `${method} ${path} names its credential (an empty list for public routes)`);
      if (operation.security.length > 0) {
        assert.ok(statuses.includes('401') && statuses.includes('403'), `${method} ${path} documents 401 and 403`);
      }
    }
    assert.deepEqual(spec.paths['/api/v1/events/api-keys'].post.security, [{ AdminToken: [] }]);
    assert.deepEqual(spec.paths['/api/v1/tenant'].get.security, [{ ApiKey: [] }, { Bearer: [] }]);
    assert.deepEqual(spec.paths['/api/v1/probe/session'].get.security, [{ Session: [] }]);
    assert.deepEqual(spec.paths['/api/v1/auth/login'].post.security, []);
    assert.equal(spec.paths['/api/v1/probe/deprecated'].get.deprecated, true);
  });

  await t.test('GET /docs serves the interactive reference', async () => {
    const docs = await fetch(`${svc.baseUrl}/docs`, { redirect: 'follow' });
    assert.equal(docs.status, 200);
    assert.match(await docs.text(), /swagger-ui/i);
  });

  await t.test('a deprecated route answers with Deprecation, Sunset and Link headers', async () => {
    const response = await svc.request('GET', '/api/v1/probe/deprecated');
    assert.equal(response.status, 200);
    assert.match(response.headers.get('deprecation') ?? '', /^@\d+$/);
    assert.equal(response.headers.get('sunset'), 'Mon, 01 Mar 2027 00:00:00 GMT');
    assert.equal(response.headers.get('link'), '</api/v1/probe/successor>; rel="successor-version"');
    const current = await svc.request('GET', '/healthz');
    assert.equal(current.headers.get('deprecation'), null);
    assert.equal(current.headers.get('sunset'), null);
  });
});

test('timing and webhook settings are off by default and refused in production', () => {
  const defaults = loadConfig({});
  assert.equal(defaults.timeScale, 1);
  assert.equal(defaults.allowLoopbackWebhooks, false);
  assert.equal(defaults.allowHttpWebhooks, false);
  assert.equal(defaults.bodyLimitBytes, 1024 * 1024);
  assert.deepEqual(defaults.rateLimits, { ipPerMinute: 100, keyPerMinute: 1000, ingestBurstPerSecond: 100, listingPerMinute: 60 });

  const development = loadConfig({ TIME_SCALE: '0.001', ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: '1' });
  assert.equal(development.timeScale, 0.001);
  assert.equal(development.allowLoopbackWebhooks, true);
  assert.equal(development.allowHttpWebhooks, true);

  const secret = 'x'.repeat(32);
  for (const setting of [{ TIME_SCALE: '0.01' }, { ALLOW_LOOPBACK_WEBHOOKS: 'true' }, { ALLOW_HTTP_WEBHOOKS: 'true' }]) {
    assert.throws(() => loadConfig({ APP_ENV: 'production', JWT_SECRET: secret, ...setting }), (error: unknown) => {
      return error instanceof ConfigError && /may not be set in production/.test(error.message) && error.message.includes(Object.keys(setting)[0]);
    });
  }
  assert.throws(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: secret, TIME_SCALE: '0.5' }), ConfigError);
  assert.throws(() => loadConfig({ APP_ENV: 'production' }), /JWT_SECRET/);
  assert.equal(loadConfig({ APP_ENV: 'production', JWT_SECRET: secret }).env, 'production');
  assert.throws(() => loadConfig({ TIME_SCALE: '2' }), /TIME_SCALE/);
  assert.throws(() => loadConfig({ ALLOW_LOOPBACK_WEBHOOKS: 'maybe' }), /ALLOW_LOOPBACK_WEBHOOKS/);
  assert.throws(() => loadConfig({ PORT: 'eighty' }), /PORT/);
});

test('the request pool opens DB_POOL_MIN connections at start (all of DB_POOL_SIZE unless set) and idleness closes none of them', async (t) => {
  assert.equal(loadConfig({}).dbPoolMin, 20);
  assert.equal(loadConfig({ DB_POOL_SIZE: '8' }).dbPoolMin, 8);
  assert.equal(loadConfig({ DB_POOL_SIZE: '8', DB_POOL_MIN: '0' }).dbPoolMin, 0);
  assert.throws(() => loadConfig({ DB_POOL_SIZE: '8', DB_POOL_MIN: '9' }), /DB_POOL_MIN must be an integer from 0 to 8, got "9"/);

  const svc = await startTestService(t, { config: { DB_POOL_SIZE: '6', DB_POOL_MIN: '4', DB_POOL_IDLE_SECONDS: '1' } });
  const requestConnections = async () => {
    const [row] = await svc.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'loyalty-app'`,
    );
    return row.n;
  };
  assert.equal(await requestConnections(), 4, 'opened before the first request');
  const tenant = await svc.createTenant();
  await Promise.all(Array.from({ length: 40 }, () => svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey })));
  // The connections above DB_POOL_MIN close after DB_POOL_IDLE_SECONDS unused; their backends leave pg_stat_activity as they exit.
  let left = await requestConnections();
  for (const deadline = Date.now() + 5_000; left !== 4 && Date.now() < deadline; left = await requestConnections()) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.equal(left, 4, 'the four of DB_POOL_MIN stayed open');
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  assert.equal(await requestConnections(), 4, 'and stay open past DB_POOL_IDLE_SECONDS');
});
