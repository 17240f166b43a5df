import { after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { withCredentials } from '../src/platform/database-server.js';
import { APP_ROLE } from '../src/platform/migrate.js';
import { testCluster } from './helper.js';
import { repositoryRoot } from './repository.js';

/**
 * The service as a child process, for tests that kill it: a database of the test's own and
 * workers of the compiled service started against it.
 */
const root = repositoryRoot;

export async function createDatabase(t: { after(fn: () => Promise<void>): void }): Promise<{ ownerUrl: string; appUrl: string; appPassword: string }> {
  const cluster = testCluster();
  const name = `test_crash_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: cluster.databaseUrl('postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${cluster.template}`);
  await admin.end();
  t.after(async () => {
    const cleanup = new pg.Client({ connectionString: cluster.databaseUrl('postgres') });
    await cleanup.connect();
    await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await cleanup.end();
  });
  const ownerUrl = cluster.databaseUrl(name);
  return { ownerUrl, appUrl: withCredentials(ownerUrl, APP_ROLE, cluster.appPassword), appPassword: cluster.appPassword };
}

/**
 * The workers run the compiled service, as `npm start` does: through tsx a worker took 10 to 18 s
 * to start on a loaded two-core machine, compiled about 2 s, and this file starts eight of them.
 * `npm test` runs the tests compiled (scripts/test-build.ts), and the workers start from the same
 * copy; run from the TypeScript sources, the service is built once for this file. The service
 * finds migrations/ beside its own folder.
 */
let built: Promise<string> | null = null;
const buildDir = path.join(root, '.test-data', `crash-build-${process.pid}-${randomBytes(3).toString('hex')}`);
after(() => fs.rmSync(buildDir, { recursive: true, force: true }));

function compiledMain(): Promise<string> {
  if (!import.meta.url.endsWith('.ts')) return Promise.resolve(path.resolve(import.meta.dirname, '../src/main.js'));
  built ??= (async () => {
    await promisify(execFile)(process.execPath, ['scripts/build.mjs', path.join(buildDir, 'dist')], { cwd: root });
    fs.symlinkSync(path.join(root, 'migrations'), path.join(buildDir, 'migrations'));
    return path.join(buildDir, 'dist', 'main.js');
  })();
  return built;
}

export interface Worker {
  child: ChildProcess;
  /** Parsed JSON log lines the worker wrote to stderr (when `captureLog` was asked for). */
  log: Array<Record<string, unknown>>;
}

export async function startWorker(ownerUrl: string, appPassword: string, options: { env?: Record<string, string>; captureLog?: boolean } = {}): Promise<Worker> {
  const child = spawn(process.execPath, [await compiledMain()], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      APP_ENV: 'test',
      SERVICE_ROLE: 'worker',
      DATABASE_URL: ownerUrl,
      DB_APP_PASSWORD: appPassword,
      TIME_SCALE: '0.001',
      WORKER_STALE_AFTER_SECONDS: '5',
      JOB_CONCURRENCY: '4',
      ALLOW_LOOPBACK_WEBHOOKS: 'true',
      ALLOW_HTTP_WEBHOOKS: 'true',
      LOG_LEVEL: 'error',
      ...options.env,
    },
    stdio: ['ignore', 'ignore', options.captureLog ? 'pipe' : 'inherit'],
  });
  const log: Array<Record<string, unknown>> = [];
  if (options.captureLog) {
    let pending = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines.filter((l) => l.trim() !== '')) {
        try {
          log.push(JSON.parse(line));
        } catch {
          // Not a log line (a crash's stack trace): kept so that it is reported.
          log.push({ level: 60, msg: line });
        }
      }
    });
  }
  return { child, log };
}

export async function kill(worker: Worker, signal: NodeJS.Signals): Promise<void> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  const exited = new Promise((resolve) => worker.child.once('exit', resolve));
  worker.child.kill(signal);
  await exited;
}

