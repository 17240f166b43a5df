import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from './repository.js';

/**
 * No hand-written source file grows past SOURCE_LINES_MAX lines (issue 33,
 * item 6): a file that long usually holds two sub-capabilities, and is split
 * along them. Counted as `wc -l` counts (newlines), over the service's src/
 * and every package's src/; generated code (a path with `/generated/`) and
 * tests (`*.test.*`, `*.spec.*`) are left out.
 */
const SOURCE_LINES_MAX = 600;
const SOURCE_EXTENSIONS = new Set(['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs']);
const root = repositoryRoot;

function sourceRoots(): string[] {
  const packages = path.join(root, 'packages');
  const packageSources = fs
    .readdirSync(packages, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join(packages, entry.name, 'src'))
    .filter((dir) => fs.existsSync(dir));
  return [path.join(root, 'src'), ...packageSources];
}

function isHandWrittenSource(relative: string): boolean {
  const name = path.basename(relative);
  if (!SOURCE_EXTENSIONS.has(path.extname(name))) return false;
  if (/\.(test|spec)\.[^.]+$/.test(name)) return false;
  return !`/${relative.split(path.sep).join('/')}`.includes('/generated/');
}

function sourceFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...sourceFiles(full));
    else if (entry.isFile() && isHandWrittenSource(path.relative(root, full))) found.push(full);
  }
  return found;
}

function lineCount(file: string): number {
  const text = fs.readFileSync(file, 'utf8');
  let lines = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines += 1;
  return lines;
}

test(`no hand-written source file under src/ or packages/*/src is over ${SOURCE_LINES_MAX} lines`, () => {
  const files = sourceRoots().flatMap(sourceFiles);
  assert.ok(files.length > 100, `expected the service's source files, found ${files.length}`);
  const oversized = files
    .map((file) => ({ file: path.relative(root, file), lines: lineCount(file) }))
    .filter(({ lines }) => lines > SOURCE_LINES_MAX)
    .sort((a, b) => b.lines - a.lines);
  assert.equal(
    oversized.length,
    0,
    `source files over ${SOURCE_LINES_MAX} lines; split each along the sub-capabilities it holds:\n${oversized.map(({ file, lines }) => `  ${file}: ${lines} lines`).join('\n')}`,
  );
});

test('generated files and tests are not counted; hand-written sources are', () => {
  assert.equal(isHandWrittenSource(path.join('packages', 'sdk', 'src', 'generated', 'openapi.ts')), false);
  assert.equal(isHandWrittenSource(path.join('src', 'modules', 'points', 'grant-deduct.test.ts')), false);
  assert.equal(isHandWrittenSource(path.join('packages', 'console', 'src', 'routes', 'rules', 'rule-list.spec.tsx')), false);
  assert.equal(isHandWrittenSource(path.join('packages', 'console', 'src', 'console.css')), false);
  assert.equal(isHandWrittenSource(path.join('src', 'modules', 'points', 'ledger.ts')), true);
  assert.equal(isHandWrittenSource(path.join('packages', 'console', 'src', 'routes', 'rules', 'rule-list.tsx')), true);
});
