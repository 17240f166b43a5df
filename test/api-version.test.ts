import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './helper.js';
import { API_VERSIONS, CURRENT_API_VERSION } from '../src/platform/api-version.js';

/**
 * The `Loyalty-Version` header through HTTP: a request may pin the API
 * version it was written against; every answer names the version used.
 */
test('Loyalty-Version pins the API version of a request', { timeout: 120_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();

  await t.test('the first version is today\'s behaviour and the current one', () => {
    assert.deepEqual([...API_VERSIONS], ['2026-11-27']);
    assert.equal(CURRENT_API_VERSION, '2026-11-27');
  });

  await t.test('a request without the header is answered with the current version', async () => {
    const response = await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers.get('loyalty-version'), CURRENT_API_VERSION);
  });

  await t.test('a request naming a known version is answered with it', async () => {
    const response = await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey, headers: { 'loyalty-version': '2026-11-27' } });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers.get('loyalty-version'), '2026-11-27');
  });

  await t.test('an unknown or malformed version is 400 with a field error listing the versions', async () => {
    for (const given of ['2020-01-01', 'latest', '2026-11-27x']) {
      const response = await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey, headers: { 'loyalty-version': given } });
      assert.equal(response.status, 400, response.text);
      assert.equal(response.body.code, 'VALIDATION_INVALID_VALUE');
      assert.equal(response.headers.get('loyalty-version'), CURRENT_API_VERSION);
      assert.deepEqual(
        response.body.errors.map(({ message: _message, ...error }: Record<string, unknown>) => error),
        [{ in: 'headers', path: '/loyalty-version', code: 'enum', allowed: [...API_VERSIONS] }],
      );
    }
  });

  await t.test('refusals before the version check and public routes answer the version too', async () => {
    const unauthenticated = await svc.request('GET', '/api/v1/tenant');
    assert.equal(unauthenticated.status, 401);
    assert.equal(unauthenticated.headers.get('loyalty-version'), CURRENT_API_VERSION);
    const health = await svc.request('GET', '/healthz');
    assert.equal(health.headers.get('loyalty-version'), CURRENT_API_VERSION);
  });

  await t.test('every operation of /openapi.json documents the optional header', async () => {
    const document = (await svc.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, { operationId?: string; parameters?: Array<{ in: string; name: string; required?: boolean }> }>> };
    const operations = Object.values(document.paths).flatMap((item) => Object.values(item)).filter((operation) => typeof operation === 'object' && operation.operationId);
    assert.ok(operations.length > 100);
    const without = operations.filter((operation) => !operation.parameters?.some((parameter) => parameter.in === 'header' && parameter.name === 'loyalty-version' && !parameter.required));
    assert.deepEqual(without.map((operation) => operation.operationId), []);
  });
});
