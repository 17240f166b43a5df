/**
 * Builds the console (packages/console) with esbuild: one script and one
 * stylesheet whose names carry a hash of their content, so the service can
 * let browsers keep them for a year. `writeConsole` puts the result where the
 * compiled service reads it (dist/console from `scripts/build.mjs`, and the
 * compiled copy `npm test` runs); the service running from its TypeScript
 * sources (tsx) calls `buildConsole` in memory at the first request instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { requestRulesPlugin } from './request-rules.mjs';

const root = import.meta.dirname;
const ENTRY = path.join(root, 'src/main.tsx');

/**
 * @returns {Promise<{ script: string, stylesheet: string, files: Array<{ name: string, contents: Uint8Array }> }>}
 */
export async function buildConsole({ minify = true } = {}) {
  const result = await build({
    entryPoints: { console: ENTRY },
    bundle: true,
    write: false,
    outdir: path.join(root, 'out'),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    format: 'esm',
    target: ['es2020'],
    jsx: 'automatic',
    minify,
    legalComments: 'none',
    charset: 'utf8',
    define: { 'process.env.NODE_ENV': '"production"' },
    logLevel: 'silent',
    plugins: [requestRulesPlugin],
  });
  const files = result.outputFiles.map((file) => ({ name: path.basename(file.path), contents: file.contents }));
  const named = (extension) => {
    const found = files.find((file) => file.name.endsWith(extension));
    if (!found) throw new Error(`the console build produced no ${extension} file`);
    return found.name;
  };
  return { script: named('.js'), stylesheet: named('.css'), files };
}

/**
 * Builds the console into `dir` (the `console` folder beside the compiled service's `modules`),
 * with the manifest naming its script and stylesheet.
 * @param {string} dir
 */
export async function writeConsole(dir) {
  const built = await buildConsole();
  fs.mkdirSync(dir, { recursive: true });
  for (const file of built.files) fs.writeFileSync(path.join(dir, file.name), file.contents);
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ script: built.script, stylesheet: built.stylesheet }));
}
