import path from 'node:path';

/**
 * How to launch the service as `npm start` does, without npm: `scripts/start.sh` (the one home of
 * its Node flags, which the image's CMD runs too) with `nodeFlags` added. Used by the scripts and
 * benchmarks that start it; the shell execs node, so the child's pid is the service's.
 */
export function startCommand(root: string, nodeFlags: readonly string[] = []): { file: string; args: string[] } {
  return { file: 'sh', args: [path.join(root, 'scripts/start.sh'), ...nodeFlags] };
}
