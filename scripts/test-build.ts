import fs from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { writeConsole } from '../packages/console/build.mjs';

/**
 * The compiled copy of the repository that `npm test` runs (scripts/test.ts).
 *
 * Node 20 runs TypeScript only through a loader (tsx), and a loader's hooks run on a thread of
 * their own that every import waits for: importing the service cost 2.1–2.6 s of CPU through tsx
 * and 0.9–1.5 s compiled, in each of the suite's test processes (2 Dec, docs/performance.md, "The
 * suite compiled"). So the tests run from JavaScript compiled here once per run, with esbuild, one
 * file per source file.
 *
 * The copy mirrors the repository so that every path a file computes from its own location
 * still holds: each folder holding TypeScript is rebuilt with the compiled `.js` beside links to
 * every original file (the `.ts` included, for tests that hand one to tsx or read it); every
 * other entry (migrations, docs, node_modules) is one link to the original. Links are not files
 * to `readdir`, so a test that walks the sources starts from test/repository.ts's
 * `repositoryRoot`, the real repository. The console is built once into src/console, where the
 * compiled service reads it (src/modules/console/bundle.ts).
 *
 * Each file is bundled alone, every import left external: only a bundling build lets a plugin
 * rewrite the imports. Bundling turns a file's top-level `const` into `var`, so a top-level use
 * before definition, which the service refuses at start, passes here; test/getting-started
 * (`npm start`, dist/) and test/restart (the sources through tsx) start the service unbundled.
 */

/** Left out of the copy: git's store, the copies of other runs and the tests' databases. */
const NOT_COPIED = new Set(['.git', '.test-build', '.test-data']);
/** Folders linked whole, whatever they hold: packages and builds. */
const LINKED_WHOLE = new Set(['node_modules', 'dist']);
const TYPESCRIPT = /\.tsx?$/;

const isTypeScript = (name: string) => TYPESCRIPT.test(name) && !name.endsWith('.d.ts');

/** Where the copy at `into` holds the compiled form of `source` (a TypeScript file of the repository at `root`). */
export const compiledPath = (root: string, into: string, source: string) => path.join(into, path.relative(root, source)).replace(TYPESCRIPT, '.js');

/** Whether the folder at `relative` (from the root) is rebuilt in the copy rather than linked whole: it holds TypeScript to compile. */
function rebuilt(root: string, relative: string): boolean {
  if (LINKED_WHOLE.has(path.basename(relative))) return false;
  return fs.readdirSync(path.join(root, relative), { withFileTypes: true }).some((entry) => (entry.isDirectory() ? rebuilt(root, path.join(relative, entry.name)) : isTypeScript(entry.name)));
}

/** Mirrors the folder at `relative` into the copy at `into`; returns the TypeScript files to compile. */
function mirror(root: string, relative: string, into: string): string[] {
  fs.mkdirSync(path.join(into, relative), { recursive: true });
  const sources: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, relative), { withFileTypes: true })) {
    const name = path.join(relative, entry.name);
    if (relative === '' && NOT_COPIED.has(entry.name)) continue;
    if (entry.isDirectory() && rebuilt(root, name)) sources.push(...mirror(root, name, into));
    else {
      fs.symlinkSync(path.join(root, name), path.join(into, name));
      if (entry.isFile() && isTypeScript(entry.name)) sources.push(path.join(root, name));
    }
  }
  return sources;
}

/**
 * Every import stays an import of its own file: a relative `.ts` becomes the compiled `.js`, a
 * path alias of tsconfig.json (`@loyalty/sdk`) becomes the relative path of the compiled
 * sources it names, and the rest (packages, node builtins) is left as written.
 */
function keepImports(compiled: Set<string>): Plugin {
  return {
    name: 'keep-imports',
    setup(builder) {
      builder.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind === 'entry-point' || args.pluginData === 'resolving') return undefined;
        if (args.path.startsWith('.')) {
          const target = path.resolve(args.resolveDir, args.path);
          const source = [target, target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.tsx')].find((file) => isTypeScript(file) && fs.existsSync(file));
          if (source && !compiled.has(source)) throw new Error(`${args.importer} imports ${args.path}, which is not compiled for the tests`);
          return { path: args.path.replace(TYPESCRIPT, '.js'), external: true };
        }
        if (!args.path.startsWith('@loyalty/')) return { path: args.path, external: true };
        const resolved = await builder.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'resolving' });
        if (resolved.errors.length > 0 || !isTypeScript(resolved.path)) return { path: args.path, external: true };
        if (!compiled.has(resolved.path)) throw new Error(`${args.importer} imports ${args.path} (${resolved.path}), which is not compiled for the tests`);
        const relative = path.relative(path.dirname(args.importer), resolved.path).replace(TYPESCRIPT, '.js');
        return { path: relative.startsWith('.') ? relative : `./${relative}`, external: true };
      });
    },
  };
}

export async function buildTestCopy(root: string, into: string): Promise<void> {
  fs.rmSync(into, { recursive: true, force: true });
  const sources = mirror(root, '', into);
  for (const source of sources) {
    const output = compiledPath(root, into, source);
    if (fs.existsSync(output)) throw new Error(`${path.relative(root, source)} would compile to ${path.relative(into, output)}, which the repository already has`);
  }
  await build({
    entryPoints: sources,
    outdir: into,
    outbase: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    jsx: 'automatic',
    // Linked maps: `npm test -- --enable-source-maps` turns stack traces back into TypeScript lines.
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [keepImports(new Set(sources))],
  });
  await writeConsole(path.join(into, 'src', 'console'));
}
