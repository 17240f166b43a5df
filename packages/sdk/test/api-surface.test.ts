import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as core from '@loyalty/sdk';
import * as react from '@loyalty/sdk/react';
import * as node from '@loyalty/sdk/node';
import { repositoryRoot } from '../../../test/repository.js';

/**
 * Versioning 4: the SDK follows semantic versioning, and removing or
 * reshaping an export is a major version. api-surface.json records the
 * exports of every entry, the client's flat methods and its resource methods
 * (`points.grant`) for the version in
 * package.json. This test fails when a name disappears without a major
 * version, when names appear that the record does not list, and when the
 * version has no CHANGELOG entry. After a deliberate change: bump the
 * version, add the CHANGELOG entry, then refresh the record with
 * `SDK_UPDATE_API_SURFACE=1 npm test -- packages/sdk/test/api-surface.test.ts`.
 */
const packageRoot = path.join(repositoryRoot, 'packages/sdk');
const recordPath = path.join(packageRoot, 'api-surface.json');
const ENTRIES = { '@loyalty/sdk': core, '@loyalty/sdk/react': react, '@loyalty/sdk/node': node };

interface Surface {
  version: string;
  entries: Record<string, string[]>;
  client_methods: string[];
  client_resources: string[];
}

function currentSurface(version: string): Surface {
  const entries: Record<string, string[]> = {};
  for (const [entry, exported] of Object.entries(ENTRIES)) entries[entry] = Object.keys(exported).sort();
  const resources = Object.entries(core.RESOURCES).flatMap(([resource, methods]) => Object.keys(methods).map((method) => `${resource}.${method}`));
  return { version, entries, client_methods: Object.keys(core.OPERATIONS).sort(), client_resources: resources.sort() };
}

const major = (version: string) => Number(version.split('.')[0]);

function names(surface: Surface): string[] {
  return [...Object.entries(surface.entries).flatMap(([entry, exported]) => exported.map((name) => `${entry}#${name}`)), ...surface.client_methods.map((name) => `client.${name}`), ...(surface.client_resources ?? []).map((name) => `client.${name}`)];
}

test('the public surface matches api-surface.json; removals need a major version', async () => {
  const { version } = JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8')) as { version: string };
  assert.match(version, /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/, 'package.json version is semver');
  const changelog = fs.readFileSync(path.join(packageRoot, 'CHANGELOG.md'), 'utf8');
  assert.ok(changelog.includes(`\n## ${version}\n`), `CHANGELOG.md has no "## ${version}" entry`);
  assert.equal(core.SDK_VERSION, version, 'SDK_VERSION (src/index.ts) equals the package version');
  const current = currentSurface(version);
  if (process.env.SDK_UPDATE_API_SURFACE === '1') {
    fs.writeFileSync(recordPath, `${JSON.stringify(current, null, 2)}\n`);
    return;
  }
  const recorded = JSON.parse(fs.readFileSync(recordPath, 'utf8')) as Surface;
  const removed = names(recorded).filter((name) => !names(current).includes(name));
  const added = names(current).filter((name) => !names(recorded).includes(name));
  if (removed.length > 0) {
    assert.ok(major(version) > major(recorded.version), `removed ${removed.join(', ')} without a major version (recorded ${recorded.version}, now ${version})`);
  }
  assert.deepEqual(added, [], 'new exports: record them (see the comment at the top of this test) with a minor version and a CHANGELOG entry');
  assert.deepEqual(removed, [], 'removed exports: after the major bump and the CHANGELOG entry, refresh the record');
  assert.equal(recorded.version, version, 'the record was made for another version: refresh it');
});
