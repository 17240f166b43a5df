/**
 * `npm run build` (and `prestart`): compiles src/ to dist/ with esbuild, one
 * JavaScript file per TypeScript file (no bundling, so module discovery and
 * the migrations path work the same as from the sources). `npm start` runs the
 * compiled files: running through tsx would compile every module in the
 * service's own process and keep the compiler in memory (about 80 MB more
 * resident memory). Tests, benchmarks of single modules and the CLIs run the
 * TypeScript sources through tsx. `node scripts/build.mjs <folder>` compiles into
 * another folder (the crash test runs its worker processes from such a build).
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { writeConsole } from '../packages/console/build.mjs';

const root = path.resolve(import.meta.dirname, '..');
const sourceDir = path.join(root, 'src');
const outDir = process.argv[2] ? path.resolve(process.argv[2]) : path.join(root, 'dist');

const entryPoints = fs
  .readdirSync(sourceDir, { recursive: true })
  .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.endsWith('.d.ts'))
  .map((file) => path.join(sourceDir, file));

fs.rmSync(outDir, { recursive: true, force: true });
await build({
  entryPoints,
  outdir: outDir,
  outbase: sourceDir,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Linked maps: NODE_OPTIONS=--enable-source-maps turns stack traces back into TypeScript lines.
  sourcemap: 'linked',
  logLevel: 'warning',
});

await writeConsole(path.join(outDir, 'console'));
