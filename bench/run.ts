import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';

/**
 * `npm run bench`: runs every `bench/*.bench.ts` in sequence, each in its own
 * process (each starts and stops what it measures), and exits non-zero if
 * one fails. `npm run bench -- points webhooks` runs the benchmarks whose
 * file name contains one of the words.
 */
const benchDir = import.meta.dirname;
const root = path.resolve(benchDir, '..');

function runOne(file: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: root, stdio: 'inherit', env: process.env });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function main(): Promise<number> {
  const filters = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const files = fs
    .readdirSync(benchDir)
    .filter((name) => name.endsWith('.bench.ts'))
    .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
    .sort();
  if (files.length === 0) {
    process.stderr.write(`no benchmark matches ${filters.join(', ')}\n`);
    return 1;
  }
  const failed: string[] = [];
  for (const name of files) {
    process.stdout.write(`\n## ${name}\n\n`);
    const started = Date.now();
    const code = await runOne(path.join(benchDir, name));
    process.stdout.write(`\n(${name}: ${code === 0 ? 'done' : `failed with exit code ${code}`} in ${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
    if (code !== 0) failed.push(name);
  }
  if (failed.length) process.stderr.write(`failed: ${failed.join(', ')}\n`);
  return failed.length ? 1 : 0;
}

main().then((code) => process.exit(code));
