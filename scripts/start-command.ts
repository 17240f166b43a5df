import fs from 'node:fs';
import path from 'node:path';

/**
 * The arguments `npm start` gives node (its Node flags and `dist/main.js`), read from package.json's
 * `start`: the one home of how the service is launched, for the scripts and benchmarks that start it
 * as `npm start` would without npm (the Dockerfile's CMD repeats them).
 */
export function startArgs(root: string): string[] {
  const start = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  return start.split(/\s+/).slice(1);
}
