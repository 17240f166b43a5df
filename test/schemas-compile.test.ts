import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './helper.js';
import { compileEverythingDeferred, onFirstUse } from '../src/platform/first-use.js';

/**
 * Routes' validators and serializers are compiled at their first request
 * (platform/first-use.ts). This compiles every one the built app deferred, so
 * that a schema Ajv or fast-json-stringify cannot compile fails here, as it
 * did at start when they were compiled eagerly, and not at a customer's
 * first request of the route.
 */
test('every validator and serializer of the app compiles', async (t) => {
  const svc = await startTestService(t);
  const compiled = compileEverythingDeferred();
  // About 300 routes: their bodies, query strings, params and distinct answers.
  assert.ok(compiled > 300, `only ${compiled} deferred compilations were registered`);
  assert.equal(compileEverythingDeferred(), 0, 'what was compiled is not compiled again');
  const health = await svc.request('GET', '/healthz');
  assert.equal(health.status, 200);
});

test('a deferred schema that cannot be compiled fails the check', () => {
  const get = onFirstUse(() => {
    throw new Error('schema cannot be compiled');
  });
  assert.throws(() => compileEverythingDeferred(), /schema cannot be compiled/);
  assert.throws(() => get(), /schema cannot be compiled/, 'a failed build is tried again at its next use');
  // Left registered (it never built): the check keeps failing until the schema is fixed.
  assert.throws(() => compileEverythingDeferred(), /schema cannot be compiled/);
});
