import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { generateTypes } from './openapi-types.ts';
import { resourcesSource, operationsSource } from './operations-table.ts';

/**
 * `npm run sdk:generate` (at the repository root): refreshes the OpenAPI
 * snapshot from a freshly started service (through the snapshot test in
 * update mode, which prepares the database like every test), then
 * regenerates src/generated/openapi.ts, the operations table
 * src/generated/operations.ts and the typed resources src/generated/resources.ts from it. `--types-only` skips the
 * service and regenerates the types from the committed snapshot.
 */
const packageRoot = path.resolve(import.meta.dirname, '..');
const repositoryRoot = path.resolve(packageRoot, '../..');
const snapshotPath = path.join(packageRoot, 'openapi.json');
const typesPath = path.join(packageRoot, 'src/generated/openapi.ts');
const operationsPath = path.join(packageRoot, 'src/generated/operations.ts');
const resourcesPath = path.join(packageRoot, 'src/generated/resources.ts');

if (!process.argv.includes('--types-only')) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/test.ts', 'packages/sdk/test/openapi.test.ts'], {
    cwd: repositoryRoot,
    stdio: 'inherit',
    env: { ...process.env, SDK_UPDATE_OPENAPI: '1', TEST_CONCURRENCY: '1' },
  });
  if (run.status !== 0) {
    process.stderr.write('refreshing the snapshot failed\n');
    process.exit(1);
  }
}
const document = JSON.parse(fs.readFileSync(snapshotPath, 'utf8'));
fs.mkdirSync(path.dirname(typesPath), { recursive: true });
fs.writeFileSync(typesPath, await generateTypes(document));
fs.writeFileSync(operationsPath, operationsSource(document));
fs.writeFileSync(resourcesPath, resourcesSource(document));
process.stdout.write(`wrote ${[snapshotPath, typesPath, operationsPath, resourcesPath].map((file) => path.relative(repositoryRoot, file)).join(', ')}\n`);
