import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestService } from '../../../test/helper.ts';
import { repositoryRoot } from '../../../test/repository.ts';

/**
 * The package as it would be published: `src` compiled by the build's own
 * tsconfig into a temporary folder, `package.json` written by
 * scripts/dist-package.ts, packed by `npm pack` and installed from the
 * tarball into an empty project, then imported by name (`@loyalty/sdk`,
 * `@loyalty/sdk/node`) from a separate project with plain Node — no tsx, no
 * TypeScript — and used against a running service.
 */
const run = promisify(execFile);
const packageRoot = path.join(repositoryRoot, 'packages/sdk');

test('the packed tarball installs in an empty project and works with plain Node', { timeout: 240_000 }, async (t) => {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-dist-'));
  t.after(() => fs.rmSync(workDir, { recursive: true, force: true }));
  const dist = path.join(workDir, 'sdk');
  const tsc = path.join(repositoryRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  await run(process.execPath, [tsc, '-p', path.join(packageRoot, 'tsconfig.build.json'), '--outDir', dist], { cwd: packageRoot });
  await run(process.execPath, ['--import', 'tsx', path.join(packageRoot, 'scripts', 'dist-package.ts'), dist], { cwd: repositoryRoot });

  const manifest = JSON.parse(fs.readFileSync(path.join(dist, 'package.json'), 'utf8'));
  for (const entry of ['.', './react', './node']) {
    for (const file of [manifest.exports[entry].default, manifest.exports[entry].types]) {
      assert.ok(fs.existsSync(path.join(dist, file)), `${entry} names ${file}, which the build wrote`);
    }
  }
  assert.ok(fs.existsSync(path.join(dist, 'README.md')) && fs.existsSync(path.join(dist, 'openapi.json')));
  assert.ok((fs.statSync(path.join(dist, 'cli.js')).mode & 0o111) !== 0, 'the bin is executable');
  // The workspace's own exports (plain Node in a clone, after `npm ci` built packages/sdk/dist) name
  // the files the same build writes, with `types` and `source` naming the TypeScript sources.
  const workspace = JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8'));
  for (const [entry, conditions] of Object.entries(workspace.exports as Record<string, string | Record<string, string>>)) {
    if (typeof conditions === 'string') continue;
    assert.match(conditions.default!, /^\.\/dist\//, `${entry}: plain Node gets the build`);
    assert.ok(fs.existsSync(path.join(dist, conditions.default!.replace('./dist/', ''))), `${entry}: ${conditions.default} is written by the build`);
    assert.ok(fs.existsSync(path.join(packageRoot, conditions.types!)) && conditions.source === conditions.types, `${entry}: types and source name the sources`);
  }
  assert.equal(workspace.bin.loyalty, './bin/loyalty.mjs', 'a committed launcher of dist/cli.js, so that npm links it before the build');

  // The tarball `npm pack` makes, installed (offline: it has no dependencies) into an empty project.
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const packed = await run(npm, ['pack', dist, '--pack-destination', workDir, '--json'], { cwd: workDir });
  const tarball = path.join(workDir, JSON.parse(packed.stdout)[0].filename);
  const app = path.join(workDir, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), '{ "name": "sdk-consumer", "private": true, "type": "module" }\n');
  await run(npm, ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], { cwd: app });
  assert.ok(fs.existsSync(path.join(app, 'node_modules', '@loyalty', 'sdk', 'index.js')), 'the tarball installed under @loyalty/sdk');
  assert.ok(fs.existsSync(path.join(app, 'node_modules', '.bin', 'loyalty')), 'the loyalty bin is linked');
  fs.writeFileSync(
    path.join(app, 'check.mjs'),
    `import { createLoyaltyClient, verifyWebhook, LoyaltyAuthenticationError } from '@loyalty/sdk';
import { verifyWebhookSync } from '@loyalty/sdk/node';
const [baseUrl, apiKey] = process.argv.slice(2);
const client = createLoyaltyClient({ baseUrl, apiKey });
const tenant = await client.getTenant();
const granted = await client.grantPoints({ body: { participant_id: 'dist-check', amount: 7, reason: 'built package' } });
let refused = null;
try {
  await createLoyaltyClient({ baseUrl, apiKey: 'lk_live_' + '0'.repeat(32) }).getTenant();
} catch (error) {
  refused = error instanceof LoyaltyAuthenticationError ? error.status : String(error);
}
console.log(JSON.stringify({ slug: tenant.slug, available: granted.available, refused, verifiers: [typeof verifyWebhook, typeof verifyWebhookSync] }));
`,
  );

  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const { stdout } = await run(process.execPath, ['check.mjs', svc.baseUrl, tenant.apiKey], { cwd: app, env: { ...process.env, NODE_OPTIONS: '' } });
  assert.deepEqual(JSON.parse(stdout), { slug: tenant.slug, available: 7, refused: 401, verifiers: ['function', 'function'] });
});
