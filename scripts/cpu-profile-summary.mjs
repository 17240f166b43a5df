/**
 * `node scripts/cpu-profile-summary.mjs FILE [TOP]`: where a V8 CPU profile
 * (`node --cpu-prof`, a .cpuprofile file) spent its time, as self time (time
 * in the function itself, not in what it calls) by function (name, url:line)
 * and by file, the TOP (default 30) largest of each.
 *
 * A sample's duration is the gap to the next sample (as Chrome DevTools
 * counts it); `(idle)` is the event loop waiting, `(program)` native code V8
 * does not attribute, `(garbage collector)` GC pauses.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TOP_DEFAULT = 30;
const NAME_WIDTH_MAX = 60;

function usage() {
  process.stderr.write('usage: node scripts/cpu-profile-summary.mjs FILE [TOP]\n');
  process.exit(2);
}

const [file, topArgument] = process.argv.slice(2);
if (!file) usage();
const top = topArgument === undefined ? TOP_DEFAULT : Number(topArgument);
if (!Number.isInteger(top) || top < 1) usage();

const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
if (!Array.isArray(profile.nodes)) {
  process.stderr.write(`${file} is not a .cpuprofile (no "nodes")\n`);
  process.exit(1);
}

/** Self time per profile node id, in microseconds. */
function selfTimeByNode() {
  const self = new Map();
  const { samples = [], timeDeltas = [] } = profile;
  if (samples.length > 0 && timeDeltas.length === samples.length) {
    for (let i = 0; i < samples.length; i++) {
      // The last sample has no successor; it gets the previous gap.
      const duration = i + 1 < timeDeltas.length ? timeDeltas[i + 1] : (timeDeltas[i] ?? 0);
      self.set(samples[i], (self.get(samples[i]) ?? 0) + Math.max(0, duration));
    }
    return self;
  }
  // Without samples, hit counts spread over the profile's span.
  const hits = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
  const interval = hits > 0 ? (profile.endTime - profile.startTime) / hits : 0;
  for (const node of profile.nodes) self.set(node.id, (node.hitCount ?? 0) * interval);
  return self;
}

const cwd = process.cwd();
/** A url as a path relative to the working directory when it is under it; `node:` and other urls as they are. */
function shortUrl(url) {
  if (!url) return '';
  let shown = url;
  if (url.startsWith('file://')) {
    try {
      shown = fileURLToPath(url);
    } catch {
      shown = url;
    }
  }
  if (path.isAbsolute(shown)) {
    // A dependency by its package path, wherever node_modules lives (it may be a symlink out of the tree).
    const dependency = shown.lastIndexOf('/node_modules/');
    const relative = path.relative(cwd, shown);
    if (dependency >= 0) shown = shown.slice(dependency + 1);
    else if (!relative.startsWith('..')) shown = relative;
  }
  return shown;
}

const selfByNode = selfTimeByNode();
const byFunction = new Map();
const byFile = new Map();
let total = 0;
for (const node of profile.nodes) {
  const time = selfByNode.get(node.id) ?? 0;
  if (time === 0) continue;
  total += time;
  const frame = node.callFrame;
  const url = shortUrl(frame.url);
  const name = frame.functionName || '(anonymous)';
  // lineNumber is zero-based in the profile.
  const where = url ? `${url}:${frame.lineNumber + 1}` : '';
  const functionKey = `${name}\u0000${where}`;
  const entry = byFunction.get(functionKey) ?? { name, where, time: 0 };
  entry.time += time;
  byFunction.set(functionKey, entry);
  const fileKey = url || name;
  byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + time);
}

const idle = [...byFunction.values()].filter((entry) => entry.name === '(idle)').reduce((sum, entry) => sum + entry.time, 0);
const busy = total - idle;
const ms = (microseconds) => (microseconds / 1000).toFixed(1);
const share = (microseconds, of) => (of > 0 ? `${((100 * microseconds) / of).toFixed(1)}%` : '–');
const clip = (text) => (text.length > NAME_WIDTH_MAX ? `${text.slice(0, NAME_WIDTH_MAX - 1)}…` : text);

process.stdout.write(`${file}\n`);
process.stdout.write(`profiled ${ms(total)} ms: busy ${ms(busy)} ms, idle ${ms(idle)} ms (${share(idle, total)}); shares below are of busy time\n\n`);

process.stdout.write(`## Self time by function (top ${top})\n\n| self ms | busy | function | where |\n|---:|---:|---|---|\n`);
const functions = [...byFunction.values()].filter((entry) => entry.name !== '(idle)').sort((a, b) => b.time - a.time);
for (const entry of functions.slice(0, top)) {
  process.stdout.write(`| ${ms(entry.time)} | ${share(entry.time, busy)} | ${clip(entry.name)} | ${entry.where} |\n`);
}

process.stdout.write(`\n## Self time by file (top ${top})\n\n| self ms | busy | file |\n|---:|---:|---|\n`);
const files = [...byFile.entries()].filter(([key]) => key !== '(idle)').sort((a, b) => b[1] - a[1]);
for (const [key, time] of files.slice(0, top)) {
  process.stdout.write(`| ${ms(time)} | ${share(time, busy)} | ${key} |\n`);
}
