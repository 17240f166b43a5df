import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService, type TestResponse } from './helper.js';

/**
 * Every 400 of a request that does not match its route's schema names what
 * is wrong per field (issue 33): `errors: [{ in, path, code, message,
 * allowed? }]` beside `detail`, `path` a JSON Pointer into the part of the
 * request that `in` names.
 */
interface FieldError {
  in: 'body' | 'query' | 'params' | 'headers';
  path: string;
  code: string;
  message: string;
  allowed?: unknown[];
  limit?: number;
}

const IN = new Set(['body', 'query', 'params', 'headers']);

function fieldErrors(response: TestResponse, name: string): FieldError[] {
  assert.equal(response.status, 400, `${name}: ${response.text.slice(0, 500)}`);
  assert.equal(typeof response.body.detail, 'string', `${name}: detail`);
  assert.ok(Array.isArray(response.body.errors) && response.body.errors.length > 0, `${name}: errors is a non-empty list: ${response.text.slice(0, 500)}`);
  for (const error of response.body.errors as FieldError[]) {
    assert.ok(IN.has(error.in), `${name}: in ${JSON.stringify(error)}`);
    assert.match(error.path, /^\//, `${name}: path is a JSON Pointer ${JSON.stringify(error)}`);
    assert.match(error.code, /^[a-z_]+$/, `${name}: code ${JSON.stringify(error)}`);
    assert.ok(typeof error.message === 'string' && error.message.length > 0, `${name}: message ${JSON.stringify(error)}`);
  }
  return response.body.errors;
}

function find(errors: FieldError[], path: string, name: string): FieldError {
  const found = errors.find((e) => e.path === path);
  assert.ok(found, `${name}: an error at ${path} among ${JSON.stringify(errors)}`);
  return found;
}

const validRule = { name: 'order points', event_name: 'order', effects: [{ type: 'award_points', points: 10 }] };

test('schema failures name each field: path, code, plain words, allowed values', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant({ requestsPerMinute: null });
  const key = tenant.apiKey;
  const post = (path: string, body: unknown) => svc.request('POST', `/api/v1${path}`, { key, body });

  await t.test('a nested array path: /effects/0/points', async () => {
    const errors = fieldErrors(await post('/admin/rules', { ...validRule, effects: [{ type: 'award_points', points: 0 }] }), 'points 0');
    assert.deepEqual(find(errors, '/effects/0/points', 'points 0'), { in: 'body', path: '/effects/0/points', code: 'minimum', message: 'must be at least 1', limit: 1 });
  });

  await t.test('a union of literals is one enum error listing every allowed value', async () => {
    const effect = await post('/admin/rules', { ...validRule, effects: [{ type: 'award_points', points: 1 }, { type: 'give_cash' }] });
    assert.match(effect.body.detail, /body\.effects\.1\.type must be one of "award_points", "award_badge", "continue_streak"/);
    const errors = fieldErrors(effect, 'effect type');
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.deepEqual(errors[0], {
      in: 'body',
      path: '/effects/1/type',
      code: 'enum',
      message: 'must be one of: award_points, award_badge, continue_streak',
      allowed: ['award_points', 'award_badge', 'continue_streak'],
    });

    const period = await post('/admin/leaderboards', { leaderboard_code: 'weekly-top', name: 'Top', metric: 'period_points', period: 'daily' });
    const periodError = find(fieldErrors(period, 'leaderboard period'), '/period', 'leaderboard period');
    assert.equal(periodError.code, 'enum');
    assert.deepEqual(periodError.allowed, ['weekly', 'monthly']);
    assert.equal(periodError.message, 'must be one of: weekly, monthly');
  });

  await t.test('a missing required field and an unknown one', async () => {
    const { name: _name, ...nameless } = validRule;
    const missing = fieldErrors(await post('/admin/rules', nameless), 'no name');
    assert.deepEqual(find(missing, '/name', 'no name'), { in: 'body', path: '/name', code: 'required', message: 'is required' });

    const unknown = await post('/admin/rules', { ...validRule, colour: 'red' });
    assert.match(unknown.body.detail, /not allowed: "colour"/);
    assert.deepEqual(find(fieldErrors(unknown, 'colour'), '/colour', 'colour'), { in: 'body', path: '/colour', code: 'additional_property', message: 'is not allowed here' });
  });

  await t.test("the README's error body is what the service answers", async () => {
    const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../README.md'), 'utf8');
    const block = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1]).filter((text) => text.includes('"errors"')).map((text) => JSON.parse(text)).find((body) => Array.isArray(body.errors));
    assert.ok(block, 'the README shows an error body with errors');
    const response = await post('/admin/rules', { name: 'monthly points', trigger: 'recurring', schedule: 'yearly', effects: [{ type: 'award_points', points: 0 }] });
    // The request id and the server's address differ from the README's; the rest is word for word.
    assert.equal(response.body.request_id, response.headers.get('x-request-id'));
    assert.equal(response.body.doc_url, `${svc.baseUrl}/docs#/earn_rules/createRule`);
    assert.equal(block.doc_url, 'https://loyalty.example.com/docs#/earn_rules/createRule');
    assert.deepEqual({ ...response.body, request_id: block.request_id, doc_url: block.doc_url }, block);
  });

  await t.test('several problems at once, the detail naming the first and counting the rest', async () => {
    const response = await post('/admin/rules', {
      event_name: 'order',
      trigger: 'recurring',
      schedule: 'yearly',
      priority: 5000,
      colour: 'red',
      effects: [{ type: 'award_points', points: 0 }, { type: 'award_badge', badge_code: 'not a code!' }],
    });
    const errors = fieldErrors(response, 'several');
    const byPath = Object.fromEntries(errors.map((e) => [e.path, e]));
    assert.equal(byPath['/name']?.code, 'required');
    assert.equal(byPath['/colour']?.code, 'additional_property');
    assert.equal(byPath['/schedule']?.code, 'enum');
    assert.deepEqual(byPath['/schedule']?.allowed, ['daily', 'weekly', 'monthly']);
    assert.equal(byPath['/priority']?.code, 'maximum');
    assert.equal(byPath['/priority']?.message, 'must be at most 1000');
    assert.equal(byPath['/priority']?.limit, 1000, 'the bound, for a form to word in its own language');
    assert.equal(byPath['/effects/0/points']?.code, 'minimum');
    assert.equal(byPath['/effects/1/badge_code']?.code, 'pattern');
    assert.match(byPath['/effects/1/badge_code']!.message, /^(may contain only|must start with) [a-z]/, 'a plain pattern in words, not the regular expression');
    assert.equal(errors.length, 6, JSON.stringify(errors));
    assert.match(response.body.detail, /\(and 5 more problems, listed in errors\)$/);
  });

  await t.test('a query parameter: in "query", the parameter as the path', async () => {
    const status = await svc.request('GET', '/api/v1/admin/rules?status=archived', { key });
    assert.match(status.body.detail, /^querystring\.status must be one of "draft", "active", "paused"/);
    assert.deepEqual(fieldErrors(status, 'status'), [
      { in: 'query', path: '/status', code: 'enum', message: 'must be one of: draft, active, paused', allowed: ['draft', 'active', 'paused'] },
    ]);
    const limit = fieldErrors(await svc.request('GET', '/api/v1/admin/rules?limit=abc', { key }), 'limit');
    assert.deepEqual(limit, [{ in: 'query', path: '/limit', code: 'type', message: 'must be an integer' }]);
    const unknown = fieldErrors(await svc.request('GET', '/api/v1/admin/rules?tenant_id=x', { key }), 'unknown parameter');
    assert.deepEqual(unknown, [{ in: 'query', path: '/tenant_id', code: 'additional_property', message: 'is not allowed here' }]);
  });

  await t.test('a path parameter: in "params"', async () => {
    const response = await svc.request('GET', '/api/v1/admin/rules/not-a-rule', { key });
    const [error] = fieldErrors(response, 'rule id');
    assert.equal(error.in, 'params');
    assert.equal(error.path, '/rule_id');
    assert.equal(error.code, 'pattern');
    assert.equal(error.message, 'must start with "rul_" and then contain only lower-case hexadecimal digits');
    assert.match(response.body.detail, /^params\.rule_id must match pattern/);
  });

  await t.test('text the database cannot store names its field', async () => {
    const response = await post('/admin/rules', { ...validRule, name: 'a\u0000b' });
    assert.deepEqual(fieldErrors(response, 'NUL'), [{ in: 'body', path: '/name', code: 'unstorable_text', message: 'contains U+0000 (NUL), which cannot be stored' }]);
  });

  await t.test("a domain check names the field too: a reward's metadata, a rule's effect, a leaderboard's period", async () => {
    const reward = await post('/admin/rewards', { name: 'x', type: 'coupon', metadata: { discount_percent: 150 } });
    assert.match(reward.body.detail, /metadata\.discount_percent.*for a coupon reward/);
    assert.equal(find(fieldErrors(reward, 'metadata'), '/metadata/discount_percent', 'metadata').code, 'maximum');

    const badgeless = await post('/admin/rules', { ...validRule, effects: [{ type: 'award_points', points: 1 }, { type: 'award_badge' }] });
    assert.equal(badgeless.body.code, 'RULE_INVALID');
    assert.deepEqual(fieldErrors(badgeless, 'no badge_code'), [{ in: 'body', path: '/effects/1/badge_code', code: 'required', message: 'is required for award_badge' }]);

    const period = await post('/admin/leaderboards', { leaderboard_code: 'periodless', name: 'Top', metric: 'period_points' });
    assert.deepEqual(fieldErrors(period, 'no period'), [{ in: 'body', path: '/period', code: 'required', message: 'is required for a period_points leaderboard', allowed: ['weekly', 'monthly'] }]);
  });

  await t.test('a rejected event of a batch carries its errors, paths from the request body', async () => {
    const response = await post('/ingest/events/batch', {
      events: [
        { event_name: 'order', participant_id: 'p-1', idempotency_key: 'v-1' },
        { event_name: 5, participant_id: 'p-1', idempotency_key: 'v-2', colour: 'red' },
      ],
    });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.results[0].status, 'accepted');
    const rejected = response.body.results[1];
    assert.equal(rejected.status, 'rejected');
    assert.equal(rejected.code, 'VALIDATION_INVALID_REQUEST');
    const paths = (rejected.errors as FieldError[]).map((e) => `${e.path} ${e.code}`).sort();
    assert.deepEqual(paths, ['/events/1/colour additional_property', '/events/1/event_name type']);
  });

  await t.test('every schema refusal of every admin route carries errors', async () => {
    const document = (await svc.request('GET', '/openapi.json')).body;
    const resolve = (schema: any): any => (schema?.$ref ? resolve(document.components.schemas[schema.$ref.split('/').pop()]) : schema);
    let refused = 0;
    for (const [path, item] of Object.entries<any>(document.paths)) {
      if (!path.startsWith('/api/v1/admin/')) continue;
      for (const method of ['post', 'put', 'patch']) {
        const schema = resolve(item[method]?.requestBody?.content?.['application/json']?.schema);
        // A body that must be an object, sent as an array: refused by the schema before any handler runs.
        if (schema?.type !== 'object') continue;
        const url = path.replace(/\{[^}]+\}/g, 'x');
        const response = await svc.request(method.toUpperCase(), url, { key, body: [] });
        if (response.status === 400 && response.body.code === 'VALIDATION_INVALID_REQUEST') {
          fieldErrors(response, `${method} ${path}`);
          refused++;
        }
      }
    }
    assert.ok(refused >= 30, `at least 30 admin routes refused the body by schema (${refused})`);
  });
});
