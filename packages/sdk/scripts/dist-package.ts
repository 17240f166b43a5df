import fs from 'node:fs';
import path from 'node:path';

/**
 * After `tsc -p tsconfig.build.json`, makes `dist/` a publishable package:
 * its own package.json whose `exports` name the compiled JavaScript and
 * declarations, plus the README, CHANGELOG and OpenAPI snapshot. `npm ci` at
 * the repository's root builds it (its `prepare` script): the workspace's own
 * `exports` name these files too, so that plain Node can import `@loyalty/sdk`
 * in a clone (tsx, tsc and esbuild take the sources through tsconfig paths).
 * Publish with `npm publish packages/sdk/dist`. An argument names another
 * output folder (the test of the built package compiles into a temporary one).
 */
const packageRoot = path.resolve(import.meta.dirname, '..');
const dist = path.resolve(process.argv[2] ?? path.join(packageRoot, 'dist'));
const source = JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8'));

const entry = (name: string) => ({ types: `./${name}.d.ts`, default: `./${name}.js` });
const published = {
  name: source.name,
  version: source.version,
  description: source.description,
  license: source.license,
  type: 'module',
  sideEffects: false,
  engines: source.engines,
  exports: { '.': entry('index'), './react': entry('react'), './node': entry('node'), './package.json': './package.json' },
  // The `listen` forwarder, compiled: `npx @loyalty/sdk listen --forward-to …` runs it with plain Node.
  bin: { loyalty: './cli.js' },
  peerDependencies: source.peerDependencies,
  peerDependenciesMeta: source.peerDependenciesMeta,
};
fs.writeFileSync(path.join(dist, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
// The bin is run directly (`npx loyalty listen …`): tsc writes files without the executable bit.
fs.chmodSync(path.join(dist, 'cli.js'), 0o755);
for (const file of ['README.md', 'CHANGELOG.md', 'openapi.json']) fs.copyFileSync(path.join(packageRoot, file), path.join(dist, file));
process.stdout.write(`dist/ is ready: npm publish ${path.relative(process.cwd(), dist) || '.'}\n`);
