import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { codeBlocks, type CodeBlock } from './markdown-blocks.ts';
import { repositoryRoot } from './repository.ts';

/**
 * Every TypeScript and JavaScript code block of README.md, docs/**\/*.md and
 * packages/sdk/README.md is typechecked (issue 34, item 6): each block is
 * written to a file of its own in a temporary project whose tsconfig maps
 * `@loyalty/sdk` to the workspace's sources, and `tsc` (strict; `checkJs` for
 * the JavaScript ones) must accept them all, so an example that calls the SDK
 * with the wrong arguments fails the suite. Blocks whose info string is not a
 * language of code (```text, ```json, ```sh, …) are not checked here; the
 * getting-started guide's shell and JavaScript blocks are run by
 * test/getting-started.test.ts. docs/getting-started-python.md is the Python
 * SDK's (test/python-sdk.test.ts).
 *
 * The names an example uses without defining them, because they are the
 * reader's own (an Express `app`, the `baseUrl` of their service, their
 * `enqueue`), are declared in GLOBALS below, typed as narrowly as the examples
 * need; nothing else is added to a block.
 */
const run = promisify(execFile);
const root = repositoryRoot;
const EXCLUDED = new Set(['docs/getting-started-python.md']);
const LANGUAGES: Record<string, string> = { ts: 'ts', typescript: 'ts', tsx: 'tsx', js: 'js', javascript: 'js', mjs: 'js', jsx: 'jsx' };

function markdownFiles(): string[] {
  const found = ['README.md', 'packages/sdk/README.md'];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const relative = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.md') && !EXCLUDED.has(relative)) found.push(relative);
    }
  };
  walk('docs');
  return found.sort();
}

const GLOBALS = `// The reader's own names that the examples use without defining them.
interface ExampleRequest {
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
  get(name: string): string | undefined;
}
interface ExampleResponse {
  status(code: number): ExampleResponse;
  send(body?: unknown): ExampleResponse;
  end(): void;
}
type ExampleHandler = (req: ExampleRequest, res: ExampleResponse, next: () => void) => unknown;
declare global {
  /** An Express application. */
  const app: { post(path: string, ...handlers: ExampleHandler[]): void };
  /** Express itself, for its raw body parser. */
  const express: { raw(options: { type: string }): ExampleHandler };
  /** The request and the raw body in a webhook handler. */
  const req: ExampleRequest;
  const rawBody: string;
  /** The destination's signing secret. */
  const secret: string;
  /** Where the receiver queues a verified envelope for later work. */
  function enqueue(envelope: unknown): void;
  /** The service's address, the tenant's and site's slugs, a participant's session. */
  const baseUrl: string;
  const tenantSlug: string;
  const siteSlug: string;
  const sessionId: string;
  const engagementId: string;
  const engagement_id: string;
  /** A page's error reporter and its state reload. */
  function onError(error: unknown): void;
  function reloadState(): void;
}
export {};
`;

test('every TypeScript and JavaScript block of the README, docs/ and the SDK README typechecks against the SDK', { timeout: 300_000 }, async (t) => {
  const blocks = markdownFiles().flatMap((file) => codeBlocks(file, fs.readFileSync(path.join(root, file), 'utf8')));
  const code = blocks.filter((block) => block.info in LANGUAGES);
  assert.ok(code.length >= 10, `found ${code.length} code blocks`);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-code-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
  fs.writeFileSync(path.join(dir, 'globals.d.ts'), GLOBALS);
  const names = new Map<string, CodeBlock>();
  for (const block of code) {
    const name = `${block.file.replace(/[^a-zA-Z0-9]+/g, '-')}-${block.line}.${LANGUAGES[block.info]}`;
    names.set(name, block);
    fs.writeFileSync(path.join(dir, name), block.code);
  }
  // The root's node_modules: `@loyalty/sdk` resolves to the workspace (its `types` condition names the
  // sources), react and stripe to the installed packages.
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const compilerOptions = {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    moduleDetection: 'force',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    jsx: 'react-jsx',
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  };
  // TypeScript strictly; JavaScript with checkJs, strict except for what plain JavaScript cannot write
  // (parameter types, a typed catch variable).
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.ts', '*.tsx'] }));
  fs.writeFileSync(
    path.join(dir, 'jsconfig.json'),
    JSON.stringify({ compilerOptions: { ...compilerOptions, allowJs: true, checkJs: true, noImplicitAny: false, useUnknownInCatchVariables: false }, include: ['globals.d.ts', '*.js', '*.jsx'] }),
  );
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const check = (project: string) =>
    run(process.execPath, [tsc, '-p', path.join(dir, project), '--pretty', 'false'], { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
  const result = (await Promise.all([check('tsconfig.json'), check('jsconfig.json')])).join('\n');
  // Each error named by the document and line of its block.
  const errors = result
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const match = /^([^(]+)\((\d+),\d+\): (.*)$/.exec(line);
      const block = match ? names.get(path.basename(match[1]!)) : undefined;
      return block ? `${block.file}:${block.line + Number(match![2])}: ${match![3]}` : line;
    });
  assert.deepEqual(errors, [], `code blocks that do not typecheck:\n${errors.join('\n')}`);
});
