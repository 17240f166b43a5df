/**
 * `npm run build -w @loyalty/runtime`: makes `dist/` a publishable package
 * (`npm pack packages/runtime/dist`, `npm publish packages/runtime/dist`):
 *
 * - `index.js`: ES module exporting `mount` (and the theme and language tables), with the SDK bundled in;
 * - `loyalty-runtime.js`: the same as a classic script, global `LoyaltyRuntime`;
 * - `runtime.css`: the stylesheet with the `--lk-*` variables;
 * - `package.json` (no dependencies), README, LICENSE.
 *
 * The service does not use this build: it bundles the sources on first
 * request (src/modules/runtime/bundle.ts). An argument names another output
 * folder (the package test builds into a temporary one).
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const packageRoot = path.resolve(import.meta.dirname, '..');
const dist = path.resolve(process.argv[2] ?? path.join(packageRoot, 'dist'));
const source = JSON.parse(fs.readFileSync(path.join(packageRoot, 'package.json'), 'utf8'));
const common = { bundle: true, target: ['es2020'], platform: 'browser', legalComments: 'none', charset: 'utf8', logLevel: 'warning' };

fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(dist, { recursive: true });
await build({ ...common, entryPoints: [path.join(packageRoot, 'src/index.ts')], outfile: path.join(dist, 'index.js'), format: 'esm' });
await build({ ...common, entryPoints: [path.join(packageRoot, 'src/index.ts')], outfile: path.join(dist, 'loyalty-runtime.js'), format: 'iife', globalName: 'LoyaltyRuntime', minify: true });
await build({ ...common, entryPoints: [path.join(packageRoot, 'src/runtime.css')], outfile: path.join(dist, 'runtime.css') });

const published = {
  name: source.name,
  version: source.version,
  description: source.description,
  license: source.license,
  type: 'module',
  sideEffects: ['*.css'],
  exports: {
    '.': { types: './index.d.ts', default: './index.js' },
    './runtime.css': './runtime.css',
    './loyalty-runtime.js': './loyalty-runtime.js',
    './package.json': './package.json',
  },
};
fs.writeFileSync(path.join(dist, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
for (const file of ['README.md', 'LICENSE', 'index.d.ts']) fs.copyFileSync(path.join(packageRoot, file), path.join(dist, file));
process.stdout.write(`${path.relative(process.cwd(), dist) || '.'} is ready: npm pack or npm publish it\n`);
