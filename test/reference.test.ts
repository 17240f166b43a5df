import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from './helper.js';
import { schemaChecker } from './contract.js';

/**
 * The reference teaches: every operation of `/openapi.json` has a stable
 * operationId, a summary, an example request (when it takes a JSON body) and
 * an example answer for each JSON answer that validate against their schemas,
 * and its error answers with the shared error shape, an example and the codes.
 * A route added without any of these fails here with its name.
 */
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const OPERATION_ID = /^[a-z][A-Za-z0-9]+$/;

test('every operation of the reference has an id, a summary, valid examples and its errors', { timeout: 120_000 }, async (t) => {
  const svc = await startTestService(t);
  const document = (await svc.request('GET', '/openapi.json')).body;
  const check = schemaChecker(document);

  const problems: string[] = [];
  const ids = new Map<string, string>();
  let operations = 0;
  for (const [path, item] of Object.entries<any>(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      operations++;
      const name = `${method.toUpperCase()} ${path}`;
      const id: string | undefined = operation.operationId;
      if (!id || !OPERATION_ID.test(id)) problems.push(`${name}: operationId ${JSON.stringify(id)} (camelCase, set in the route's schema)`);
      else if (ids.has(id)) problems.push(`${name}: operationId ${id} is also ${ids.get(id)}`);
      else ids.set(id, name);
      if (!operation.summary) problems.push(`${name}: no summary`);
      // A parameter the service fills in when it is left out is not required (a generated client would force it).
      for (const parameter of operation.parameters ?? []) {
        if (parameter.required && parameter.in !== 'path' && parameter.schema && 'default' in parameter.schema) {
          problems.push(`${name}: ${parameter.in} parameter ${parameter.name} has a default but is marked required`);
        }
      }

      const body = operation.requestBody?.content?.['application/json'];
      if (body) {
        if (body.example === undefined) problems.push(`${name}: no example request`);
        else {
          const error = check(body.schema, body.example);
          if (error) problems.push(`${name}: the example request does not fit its schema: ${error} — give the schema \`examples\``);
        }
      }
      const statuses = Object.keys(operation.responses ?? {});
      if (!statuses.some((status) => status.startsWith('2') || status.startsWith('3'))) problems.push(`${name}: no success answer`);
      for (const [status, answer] of Object.entries<any>(operation.responses ?? {})) {
        const json = answer.content?.['application/json'];
        if (status.startsWith('4') || status.startsWith('5')) {
          if (!json) {
            problems.push(`${name}: error ${status} has no JSON body`);
            continue;
          }
          if (typeof json.example?.code !== 'string' || typeof json.example?.detail !== 'string') problems.push(`${name}: error ${status} has no example with code and detail`);
          if (!/Codes:/.test(answer.description ?? '') && !json.schema?.$ref?.endsWith('/ErrorResponse')) continue;
          const error = check(json.schema, json.example);
          if (error) problems.push(`${name}: the example of error ${status} does not fit its schema: ${error}`);
          continue;
        }
        if (!json) continue; // 204, redirects, HTML, scripts, event streams
        if (json.example === undefined) problems.push(`${name}: answer ${status} has no example`);
        else {
          const error = check(json.schema, json.example);
          if (error) problems.push(`${name}: the example answer ${status} does not fit its schema: ${error} — give the schema \`examples\``);
        }
      }
      if ((operation.security ?? []).length > 0) {
        for (const status of ['400', '401', '403', '404', '429']) if (!statuses.includes(status)) problems.push(`${name}: error ${status} is not documented`);
      }
    }
  }
  assert.ok(operations > 150, `the document lists ${operations} operations`);
  assert.deepEqual(problems, []);

  // The examples a newcomer copies first are accepted by the service as they stand.
  const tenant = await svc.createTenant();
  // List routes answer without `limit`, as the document now says (its default, 50).
  for (const path of ['/api/v1/admin/challenges', '/api/v1/admin/engagements', '/api/v1/admin/exports', '/api/v1/admin/rewards', '/api/v1/gamify/webhooks', '/api/v1/admin/points/multipliers']) {
    const listed = await svc.request('GET', path, { key: tenant.apiKey });
    assert.equal(listed.status, 200, `${path} without limit: ${JSON.stringify(listed.body)}`);
  }
  for (const [method, path, expected] of [
    ['post', '/api/v1/admin/rules', 201],
    ['post', '/api/v1/ingest/events', 202],
    ['post', '/api/v1/gamify/points/grant', 200],
    ['post', '/api/v1/gamify/points/deduct', 200],
  ] as const) {
    const example = document.paths[path][method].requestBody.content['application/json'].example;
    const answer = await svc.request(method.toUpperCase(), path, { key: tenant.apiKey, body: example });
    assert.equal(answer.status, expected, `${path}: ${answer.text}`);
  }

  // The docs page renders the same document, examples included.
  const page = await svc.request('GET', '/docs/');
  assert.equal(page.status, 200);
  assert.match(page.text, /swagger/i);
  const rendered = (await svc.request('GET', '/docs/json')).body;
  const grant = rendered.paths['/api/v1/gamify/points/grant'].post;
  assert.equal(grant.operationId, 'grantPoints');
  assert.equal(grant.requestBody.content['application/json'].example.participant_id, 'user_1042');
  assert.match(rendered.info.description, /getting-started/);
});
