import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService } from '../../../test/helper.ts';
import { API_VERSION, createLoyaltyClient, LoyaltyBadRequestError, LoyaltyValidationError, OPERATIONS, RESOURCES } from '@loyalty/sdk';
import { repositoryRoot } from '../../../test/repository.ts';

/**
 * Resource methods (`client.points.grant`), the deprecated flat aliases, and
 * the `Loyalty-Version` header, against a running service through real HTTP.
 */

test('every operation but the streams has one resource method, named as the Python SDK names it', () => {
  const grouped = Object.values(RESOURCES).flatMap((methods) => Object.values(methods) as string[]);
  assert.equal(new Set(grouped).size, grouped.length, 'an operation appears in two resources');
  const streams = Object.entries(OPERATIONS).filter(([, spec]) => 'stream' in spec).map(([name]) => name);
  assert.deepEqual(Object.keys(OPERATIONS).filter((name) => !grouped.includes(name)).sort(), streams.sort());
  assert.equal(RESOURCES.points.grant, 'grantPoints');
  assert.equal(RESOURCES.webhooks.replayDeliveries, 'replayWebhookDeliveries');

  // The Python SDK's resource classes: `class PointsResource`, `def get_balance(…)`, `self._client.call('getPointsBalance', …)`.
  const python = fs.readFileSync(path.join(repositoryRoot, 'packages/sdk-python/loyalty_sdk/_generated.py'), 'utf8');
  const snake = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
  const typescript = new Map(Object.entries(RESOURCES).flatMap(([resource, methods]) => Object.entries(methods).map(([method, name]) => [name as string, `${snake(resource)}.${snake(method)}`])));
  let resource = '';
  let method = '';
  let compared = 0;
  for (const line of python.split('\n')) {
    const resourceClass = /^class (\w+)Resource\b/.exec(line);
    if (resourceClass) resource = snake(resourceClass[1]!);
    const definition = /^ {4}def (\w+)\(self/.exec(line);
    if (definition) method = definition[1]!;
    const call = /self\._client\.call\('(\w+)'/.exec(line);
    if (call && resource) {
      assert.equal(typescript.get(call[1]!), `${resource}.${method}`, `${call[1]} is named alike in both SDKs`);
      compared += 1;
    }
  }
  assert.ok(compared > 100, `compared ${compared} Python methods`);
});

test('resource methods, flat aliases and Loyalty-Version', { timeout: 120_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const sent: Array<Record<string, string>> = [];
  const answered: Array<string | null> = [];
  const recording: typeof fetch = async (input, init) => {
    sent.push({ ...(init?.headers as Record<string, string>) });
    const response = await fetch(input, init);
    answered.push(response.headers.get('loyalty-version'));
    return response;
  };
  const client = createLoyaltyClient({ baseUrl: svc.baseUrl, apiKey: tenant.apiKey, fetch: recording });

  await t.test('client.points.grant grants, and the flat grantPoints is the same call', async () => {
    const granted = await client.points.grant({ body: { participant_id: 'p-resources', amount: 30, reason: 'welcome' } });
    assert.equal(granted.available, 30);
    const again = await client.grantPoints({ body: { participant_id: 'p-resources', amount: 5, reason: 'welcome' } });
    assert.equal(again.available, 35);
    const { destinations } = await client.webhooks.list();
    assert.deepEqual(destinations, []);
    assert.equal(client.points.grant, client.grantPoints);
  });

  await t.test('every request sends the version the SDK was generated against, and the service answers it', () => {
    assert.equal(API_VERSION, '2026-11-27');
    assert.equal(client.apiVersion, API_VERSION);
    assert.ok(sent.length >= 3);
    for (const headers of sent) assert.equal(headers['loyalty-version'], API_VERSION);
    for (const version of answered) assert.equal(version, API_VERSION);
  });

  await t.test('a version the service does not know is a 400 naming the header, with the answering version', async () => {
    const future = createLoyaltyClient({ baseUrl: svc.baseUrl, apiKey: tenant.apiKey, apiVersion: '2099-01-01', maxRetries: 0 });
    assert.equal(future.apiVersion, '2099-01-01');
    const error = await future.webhooks.list().then(
      () => assert.fail('an unknown version is refused'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof LoyaltyBadRequestError);
    assert.equal(error.apiVersion, API_VERSION);
    assert.deepEqual(error.errors.map(({ in: part, path: pointer, code, allowed }) => ({ in: part, path: pointer, code, allowed })), [
      { in: 'headers', path: '/loyalty-version', code: 'enum', allowed: [API_VERSION] },
    ]);
  });

  await t.test('an apiVersion that is not a date is refused before sending', () => {
    assert.throws(() => createLoyaltyClient({ baseUrl: svc.baseUrl, apiVersion: 'latest' }), LoyaltyValidationError);
  });
});
