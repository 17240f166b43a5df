import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService } from '../../../test/helper.ts';
import { generateTypes } from '../scripts/openapi-types.ts';
import { OPERATIONS, EXCLUDED_OPERATIONS } from '../src/operations.ts';
import { repositoryRoot } from '../../../test/repository.ts';

/**
 * The SDK is generated from the service's OpenAPI document. These tests fail
 * when the running service's document differs from the committed snapshot,
 * when the generated types differ from the snapshot, or when an operation of
 * the document has no client method (and is not deliberately excluded).
 * `npm run sdk:generate` refreshes the snapshot and the types.
 */
const packageRoot = path.join(repositoryRoot, 'packages/sdk');
const snapshotPath = path.join(packageRoot, 'openapi.json');
const typesPath = path.join(packageRoot, 'src/generated/openapi.ts');
const REFRESH = 'run `npm run sdk:generate` and commit packages/sdk/openapi.json and packages/sdk/src/generated/openapi.ts';

type Document = { paths: Record<string, Record<string, unknown>> };

function operationsOf(document: Document): string[] {
  return Object.entries(document.paths).flatMap(([route, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${route}`));
}

test('the running service serves exactly the committed OpenAPI snapshot', async (t) => {
  const svc = await startTestService(t);
  const response = await svc.request('GET', '/openapi.json');
  assert.equal(response.status, 200);
  if (process.env.SDK_UPDATE_OPENAPI === '1') {
    fs.writeFileSync(snapshotPath, `${JSON.stringify(response.body, null, 2)}\n`);
    return;
  }
  const snapshot = JSON.parse(fs.readFileSync(snapshotPath, 'utf8')) as Document;
  const live = response.body as Document;
  const added = operationsOf(live).filter((op) => !operationsOf(snapshot).includes(op));
  const removed = operationsOf(snapshot).filter((op) => !operationsOf(live).includes(op));
  assert.deepEqual({ added, removed }, { added: [], removed: [] }, `operations differ from the snapshot; ${REFRESH}`);
  for (const route of Object.keys(live.paths)) {
    assert.deepEqual(live.paths[route], snapshot.paths[route], `${route} differs from the snapshot; ${REFRESH}`);
  }
  assert.deepEqual(live, snapshot, `the document differs from the snapshot; ${REFRESH}`);
});

// `npm run sdk:generate` refreshes the snapshot through this file and writes the types afterwards.
test('the generated types are those of the committed snapshot', { skip: process.env.SDK_UPDATE_OPENAPI === '1' }, async () => {
  const snapshot = JSON.parse(fs.readFileSync(snapshotPath, 'utf8'));
  const expected = await generateTypes(snapshot);
  assert.ok(fs.readFileSync(typesPath, 'utf8') === expected, `src/generated/openapi.ts is stale; ${REFRESH}`);
});

test('every operation of the document has a client method or is deliberately excluded', () => {
  const snapshot = JSON.parse(fs.readFileSync(snapshotPath, 'utf8')) as Document;
  const documented = new Set(operationsOf(snapshot));
  const covered = Object.values(OPERATIONS).map((spec) => `${spec.method} ${spec.path}`);
  const excluded = EXCLUDED_OPERATIONS.map((spec) => `${spec.method} ${spec.path}`);
  assert.deepEqual(covered.filter((op) => !documented.has(op)), [], 'client methods for operations the document no longer has');
  assert.deepEqual(excluded.filter((op) => !documented.has(op)), [], 'exclusions of operations the document no longer has');
  assert.equal(new Set(covered).size, covered.length, 'two client methods for one operation');
  const missing = [...documented].filter((op) => !covered.includes(op) && !excluded.includes(op));
  assert.deepEqual(missing, [], 'operations without a client method: add them to OPERATIONS (src/operations.ts) or EXCLUDED_OPERATIONS with a reason');
  assert.equal(covered.length + excluded.length, documented.size);
});

test('each method sends the credential its operation declares', () => {
  const snapshot = JSON.parse(fs.readFileSync(snapshotPath, 'utf8')) as { paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>> };
  for (const [name, spec] of Object.entries(OPERATIONS)) {
    const security = (snapshot.paths[spec.path][spec.method.toLowerCase()].security ?? []).flatMap((entry) => Object.keys(entry));
    const declared = security.includes('Session')
      ? 'session'
      : security.includes('ApiKey')
        ? 'key'
        : security.includes('AdminToken')
          ? 'console'
          : security.length === 0
            ? 'public'
            : security.join('|');
    assert.equal(spec.auth, declared, `${name} (${spec.method} ${spec.path})`);
  }
  for (const excluded of EXCLUDED_OPERATIONS) {
    const security = (snapshot.paths[excluded.path][excluded.method.toLowerCase()].security ?? []).flatMap((entry) => Object.keys(entry));
    const page = !excluded.path.startsWith('/api/') && security.length === 0;
    // The platform operator's routes take OPERATOR_TOKEN, which no tenant integration holds.
    const operator = security.length > 0 && security.every((scheme) => scheme === 'OperatorToken');
    assert.ok(
      security.includes('AdminToken') || excluded.path === '/api/v1/auth/login' || page || operator || excluded.file === true,
      `${excluded.method} ${excluded.path} is excluded as an admin-token route, an operator route, a public page outside the API or a file transfer`,
    );
  }
});
