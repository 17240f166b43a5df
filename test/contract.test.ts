import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ContractChecker, ContractDocument, type Exchange } from './contract.js';

/** The contract check itself, on a small document: what it refuses and what it lets through. */
const document = {
  components: { schemas: { Item: { type: 'object', required: ['id'], properties: { id: { type: 'string' } }, additionalProperties: false } } },
  paths: {
    '/api/v1/items': {
      get: {
        operationId: 'listItems',
        parameters: [
          { in: 'query', name: 'limit', required: false, schema: { type: 'integer', minimum: 1, default: 50 } },
          { in: 'query', name: 'kind', required: true, schema: { type: 'string' } },
        ],
        responses: { 200: { content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Item' } } } } }, 400: { content: { 'application/json': { schema: { type: 'object' } } } } },
      },
      post: {
        operationId: 'postItems',
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { items: { type: 'array', items: { $ref: '#/components/schemas/Item', 'x-validated-per-item': true } } } } } } },
        responses: { 200: { content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
    '/api/v1/items/{id}': {
      get: { operationId: 'getItem', parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'string', maxLength: 3 } }], responses: { 200: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } } } },
    },
  },
};

const exchange = (overrides: Partial<Exchange>): Exchange => ({
  method: 'GET',
  path: '/api/v1/items?kind=a',
  requestBody: undefined,
  requestContentType: undefined,
  status: 200,
  contentType: 'application/json; charset=utf-8',
  body: [{ id: 'x' }],
  text: '[{"id":"x"}]',
  ...overrides,
});

test('the contract check refuses what the document misdescribes and lets the rest through', () => {
  const checker = new ContractChecker(new ContractDocument(document));
  assert.deepEqual(checker.check(exchange({ path: '/api/v1/items?kind=a&limit=5' })), [], 'query text coerced to its type');
  assert.match(checker.check(exchange({ path: '/api/v1/items' })).join(), /required query parameter kind left out/);
  assert.match(checker.check(exchange({ path: '/api/v1/items?kind=a&limit=0' })).join(), /limit/);
  assert.deepEqual(checker.check(exchange({ path: '/api/v1/items', status: 400, body: { code: 'X' }, text: '{"code":"X"}' })), [], 'a refused request is not checked, its answer is');
  assert.match(checker.check(exchange({ status: 409, body: {}, text: '{}' })).join(), /status 409 is not documented/);
  assert.match(checker.check(exchange({ body: [{ id: 'x', extra: 1 }], text: '[{"id":"x","extra":1}]' })).join(), /additional properties/);
  assert.match(checker.check(exchange({ path: '/api/v1/items/abcd', body: { id: 'abcd' }, text: '{"id":"abcd"}' })).join(), /getItem.*path parameter id/);
  assert.deepEqual(checker.check(exchange({ path: '/api/v1/items/abc', body: { id: 'abc' }, text: '{"id":"abc"}' })), []);
  const post = { method: 'POST', path: '/api/v1/items', requestContentType: 'application/json', body: {}, text: '{}' };
  assert.deepEqual(checker.check(exchange({ ...post, requestBody: { items: [{ wrong: true }] } })), [], 'items checked one by one by the service');
  assert.match(checker.check(exchange({ ...post, requestBody: { items: 'no' } })).join(), /request body/);
  assert.match(checker.check(exchange({ ...post, requestBody: undefined })).join(), /documented as required/);
  assert.deepEqual(checker.check(exchange({ path: '/not/documented' })), [], 'hidden routes are not checked');
  assert.deepEqual(checker.check(exchange({ contentType: 'application/x-ndjson', body: 'x', text: 'x' })), [], 'JSON lines are not a JSON body');
});
