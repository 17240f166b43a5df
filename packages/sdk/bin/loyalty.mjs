#!/usr/bin/env node
// The workspace's `loyalty` command (`npx loyalty listen …` in a clone): runs the forwarder that
// `npm ci` at the repository root built into dist/ (its `prepare` script). A committed file, so
// that npm links the command at install, before the build exists. The published package's bin
// is dist/cli.js itself (scripts/dist-package.ts).
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('loyalty: the SDK is not built (packages/sdk/dist); run `npm run build -w @loyalty/sdk` at the repository root (npm ci does it)\n');
  process.exit(1);
}
await import(cli.href);
