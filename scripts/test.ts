import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { startEmbeddedPostgres, deriveAppPassword, withCredentials } from '../src/platform/database-server.js';
import { migrate } from '../src/platform/migrate.js';
import { buildTestCopy, compiledPath } from './test-build.js';

/**
 * `npm test`: starts a throwaway PostgreSQL (embedded, or the one named by
 * TEST_DATABASE_URL), migrates a template database once, then runs every
 * `*.test.ts` with Node's test runner. Each test file clones the template into
 * a database of its own, so files run in parallel without seeing each other.
 *
 * Arguments are passed to the runner: `npm test -- src/modules/points` runs
 * the tests under that folder only. TEST_CONCURRENCY files run at once (default 3).
 * A test file may take TEST_TIMEOUT_MS (default 15 minutes):
 * on a shared, loaded machine a file's set-up alone can take a minute.
 *
 * The files run compiled, from a copy of the repository built in .test-build/ first
 * (scripts/test-build.ts says why); TEST_FROM_SOURCES=1 runs the TypeScript through tsx instead.
 * `npm test -- --enable-source-maps` gives compiled stack traces their TypeScript lines.
 */
// One template per run, so that several runs can share a server.
const TEMPLATE = `loyalty_template_${process.pid}`;
const root = path.resolve(import.meta.dirname, '..');

function findTests(dir: string): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findTests(full));
    else if (entry.name.endsWith('.test.ts')) found.push(full);
  }
  return found;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const targets = args.filter((a) => !a.startsWith('-'));
  const runnerFlags = args.filter((a) => a.startsWith('-'));
  // TEST_SKIP: comma-separated path prefixes (from the repository root) left out of this run.
  const skipped = (process.env.TEST_SKIP ?? '').split(',').map((prefix) => prefix.trim()).filter(Boolean);
  const files = (targets.length ? targets : ['src', 'test', 'packages'])
    .map((t) => path.resolve(root, t))
    .filter((t) => fs.existsSync(t))
    .flatMap((t) => (fs.statSync(t).isDirectory() ? findTests(t) : [t]))
    .filter((file) => !skipped.some((prefix) => path.relative(root, file).startsWith(prefix)))
    .sort();
  if (files.length === 0) {
    process.stderr.write('no test files found\n');
    return 1;
  }

  const copyDir = path.join(root, '.test-build', String(process.pid));
  let baseUrl = process.env.TEST_DATABASE_URL ?? null;
  let stop = async () => undefined as void;
  if (!baseUrl) {
    const dataDir = path.join(root, '.test-data', String(process.pid));
    fs.rmSync(dataDir, { recursive: true, force: true });
    const port = 55_000 + (process.pid % 4000);
    const server = await startEmbeddedPostgres({ dataDir, port, fast: true });
    baseUrl = server.ownerUrl;
    stop = async () => {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
  }
  try {
    const admin = new pg.Client({ connectionString: withCredentials(baseUrl, decodeURIComponent(new URL(baseUrl).username), decodeURIComponent(new URL(baseUrl).password), 'postgres') });
    await admin.connect();
    await admin.query(`UPDATE pg_database SET datistemplate = false WHERE datname = '${TEMPLATE}'`).catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${TEMPLATE}`);
    const templateUrl = withCredentials(baseUrl, decodeURIComponent(new URL(baseUrl).username), decodeURIComponent(new URL(baseUrl).password), TEMPLATE);
    await migrate(templateUrl, deriveAppPassword(templateUrl, null));
    await admin.query(`UPDATE pg_database SET datistemplate = true WHERE datname = '${TEMPLATE}'`);
    await admin.end();

    // Three files at a time on two cores: the files wait on PostgreSQL, a browser or a child service
    // much of their time. The whole suite took 27 min at 3 against about 32 at 2 (2 Dec, docs/performance.md).
    const concurrency = process.env.TEST_CONCURRENCY ?? '3';
    let run = ['--import', 'tsx', ...files];
    if (process.env.TEST_FROM_SOURCES !== '1') {
      await buildTestCopy(root, copyDir);
      run = files.map((file) => compiledPath(root, copyDir, file));
    }
    const child = spawn(
      process.execPath,
      ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${process.env.TEST_TIMEOUT_MS ?? 900_000}`, ...runnerFlags, ...run],
      { stdio: 'inherit', env: { ...process.env, APP_ENV: 'test', TEST_PG_URL: templateUrl, TEST_PG_TEMPLATE: TEMPLATE } },
    );
    const code = await new Promise<number>((resolve) => child.on('close', (exitCode) => resolve(exitCode ?? 1)));
    const cleanup = new pg.Client({ connectionString: withCredentials(baseUrl, decodeURIComponent(new URL(baseUrl).username), decodeURIComponent(new URL(baseUrl).password), 'postgres') });
    await cleanup.connect();
    await cleanup.query(`UPDATE pg_database SET datistemplate = false WHERE datname = '${TEMPLATE}'`);
    await cleanup.query(`DROP DATABASE IF EXISTS ${TEMPLATE} WITH (FORCE)`);
    await cleanup.end();
    return code;
  } finally {
    fs.rmSync(copyDir, { recursive: true, force: true });
    await stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
