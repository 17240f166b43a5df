import fs from 'node:fs';
import path from 'node:path';

/**
 * After `tsc -p tsconfig.build.json`, makes `dist/` a publishable package:
 * its own package.json whose `exports` name the compiled JavaScript and
 * declarations (the workspace's own `exports` name the TypeScript sources for
 * in-repository use), plus the README, CHANGELOG and OpenAPI snapshot.
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
for (const file of ['README.md', 'CHANGELOG.md', 'openapi.json']) fs.copyFileSync(path.join(packageRoot, file), path.join(dist, file));
process.stdout.write(`dist/ is ready: npm publish ${path.relative(process.cwd(), dist) || '.'}\n`);
