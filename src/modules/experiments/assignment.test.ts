import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { assignVariant, bucketOf, BUCKETS } from './assignment.js';

/** The pure assignment: its split over many ids, and the same answers in another process. */
const EXPERIMENT = 'exp_0123456789abcdef0123456789abcdef';
const VARIANTS = [
  { key: 'control', allocation_percent: 30 },
  { key: 'b', allocation_percent: 45 },
  { key: 'c', allocation_percent: 15 },
];
const HOLDOUT = 10;

test('over 100,000 participant ids each group is within 1 percentage point of its allocation', () => {
  const counts = new Map<string, number>();
  const total = 100_000;
  for (let i = 0; i < total; i++) {
    const key = assignVariant(EXPERIMENT, `participant-${i}`, HOLDOUT, VARIANTS);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const expected: Record<string, number> = { holdout: HOLDOUT, control: 30, b: 45, c: 15 };
  for (const [key, percent] of Object.entries(expected)) {
    const share = ((counts.get(key) ?? 0) / total) * 100;
    assert.ok(Math.abs(share - percent) < 1, `${key}: ${share.toFixed(2)}% for ${percent}%`);
  }
  assert.equal([...counts.values()].reduce((a, b) => a + b, 0), total);
});

test('the bucket is the first 4 bytes of sha256("<experiment>:<participant>") mod 10,000, the holdout first, then the variants in order', () => {
  // sha256("exp_0123456789abcdef0123456789abcdef:p-1") computed independently of the module.
  const digest = execFileSync('sh', ['-c', `printf '%s' '${EXPERIMENT}:p-1' | sha256sum`]).toString().slice(0, 8);
  assert.equal(bucketOf(EXPERIMENT, 'p-1'), parseInt(digest, 16) % BUCKETS);
  const at = (bucket: number) => {
    for (let i = 0; ; i++) if (bucketOf(EXPERIMENT, `q-${i}`) === bucket) return `q-${i}`;
  };
  const edges: Array<[number, string]> = [[999, 'holdout'], [1000, 'control'], [3999, 'control'], [4000, 'b'], [8499, 'b'], [8500, 'c'], [9999, 'c']];
  for (const [bucket, key] of edges) assert.equal(assignVariant(EXPERIMENT, at(bucket), HOLDOUT, VARIANTS), key, `bucket ${bucket}`);
  // No holdout: bucket 0 is the control's.
  assert.equal(assignVariant(EXPERIMENT, at(0), 0, VARIANTS), 'control');
});

test('another process assigns every participant the same variant', () => {
  const ids = Array.from({ length: 2_000 }, (_, i) => `stable-${i}`);
  const here = ids.map((id) => assignVariant(EXPERIMENT, id, HOLDOUT, VARIANTS));
  const module = fileURLToPath(new URL('./assignment.ts', import.meta.url));
  const script = `import { assignVariant } from ${JSON.stringify(module)};
const ids = Array.from({ length: 2000 }, (_, i) => 'stable-' + i);
process.stdout.write(JSON.stringify(ids.map((id) => assignVariant(${JSON.stringify(EXPERIMENT)}, id, ${HOLDOUT}, ${JSON.stringify(VARIANTS)}))));`;
  const there = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' }));
  assert.deepEqual(there, here);
});
