/**
 * The checks of `npm run image:check` (scripts/image-check.sh builds the image first and names the
 * engine in ENGINE, the image in IMAGE). The image runs as an operator runs it: host networking,
 * configured only by environment variables, against PostgreSQL 15 and Redis started here on
 * loopback. Prints one line per check and exits 1 when any fails.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const engine = process.env.ENGINE ?? 'docker';
const image = process.env.IMAGE ?? 'loyalty-service:check';
const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const ports = { pg: 55_432, redis: 56_379, api: 53_000, worker: 53_001 };
const dir = mkdtempSync(path.join(os.tmpdir(), 'image-check-'));
const isRoot = process.getuid?.() === 0;
const JWT_SECRET = 'image-check-secret-of-at-least-32-characters';
const results: Array<{ name: string; ok: boolean; detail: string }> = [];
const containers: string[] = [];
let redis: ReturnType<typeof spawn> | undefined;

/** Run in the image: how many packages package-lock.json marks dev-only, then those of them present in node_modules. */
const DEV_PACKAGES_PRESENT = `
const lock = require('./package-lock.json');
const dev = Object.entries(lock.packages).filter(([where, entry]) => entry.dev && where.startsWith('node_modules/')).map(([where]) => where);
console.log([dev.length, ...dev.filter((where) => require('fs').existsSync(where))].join(' '));`;

function check(name: string, ok: boolean, detail: string): void {
  results.push({ name, ok, detail });
  console.log(`${ok ? 'pass' : 'FAIL'}  ${name}: ${detail}`);
}

function run(command: string, args: string[], options: { allowFailure?: boolean } = {}): { status: number; out: string } {
  try {
    return { status: 0, out: execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (error) {
    if (!options.allowFailure) throw error;
    const failed = error as { status?: number; stdout?: string; stderr?: string };
    return { status: failed.status ?? 1, out: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

const asPostgres = (command: string, args: string[]) => run(isRoot ? 'runuser' : command, isRoot ? ['-u', 'postgres', '--', command, ...args] : args);

function startDatabases(): void {
  if (isRoot) execFileSync('chown', ['postgres', dir]);
  asPostgres(`${PG_BIN}/initdb`, ['-D', path.join(dir, 'pg'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  asPostgres(`${PG_BIN}/pg_ctl`, ['-D', path.join(dir, 'pg'), '-l', path.join(dir, 'pg.log'), '-w', 'start', '-o', `-p ${ports.pg} -k ${dir} -c listen_addresses=127.0.0.1`]);
  run(`${PG_BIN}/psql`, [`postgres://postgres@127.0.0.1:${ports.pg}/postgres`, '-qc', 'CREATE DATABASE loyalty']);
  redis = spawn('redis-server', ['--port', String(ports.redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
}

const environment = (role: 'all' | 'worker'): string[] =>
  Object.entries({
    SERVICE_ROLE: role,
    DATABASE_URL: `postgres://postgres@127.0.0.1:${ports.pg}/loyalty`,
    REDIS_URL: `redis://127.0.0.1:${ports.redis}`,
    JWT_SECRET,
    PUBLIC_BASE_URL: `http://127.0.0.1:${ports.api}`,
    ...(role === 'all' ? { PORT: String(ports.api) } : { METRICS_PORT: String(ports.worker) }),
    LOG_LEVEL: 'warn',
  }).flatMap(([name, value]) => ['-e', `${name}=${value}`]);

function startContainer(name: string, role: 'all' | 'worker'): void {
  run(engine, ['rm', '-f', name], { allowFailure: true });
  run(engine, ['run', '-d', '--name', name, '--network', 'host', ...environment(role), image]);
  containers.push(name);
}

async function waitFor(url: string, timeoutMs = 120_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      if ((await fetch(url)).ok) return Date.now() - started;
    } catch {
      // Not listening yet.
    }
    if (Date.now() - started > timeoutMs) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Runs the image's own HEALTHCHECK command inside the container: its exit code. */
function healthcheck(name: string): number {
  const test: string[] = JSON.parse(run(engine, ['image', 'inspect', image, '--format', '{{json .Config.Healthcheck.Test}}']).out);
  const command = test[0] === 'CMD-SHELL' ? ['sh', '-c', test[1]] : test.slice(1);
  return run(engine, ['exec', name, ...command], { allowFailure: true }).status;
}

async function api(method: string, pathname: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`http://127.0.0.1:${ports.api}/api/v1${pathname}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

async function main(): Promise<void> {
  const built = process.env.IMAGE_BUILD_SECONDS ? `built by ${engine} in ${process.env.IMAGE_BUILD_SECONDS} s` : `built by an earlier run (${engine})`;
  console.log(`image ${image}, ${built}; base: ${process.env.IMAGE_BASE_NOTE ?? 'node:20-bookworm-slim as found by the engine'}`);
  const size = Number(run(engine, ['image', 'inspect', image, '--format', '{{.Size}}']).out.trim());
  console.log(`image size: ${(size / 1e6).toFixed(0)} MB`);

  const user = run(engine, ['run', '--rm', '--network', 'host', image, 'sh', '-c', 'id -u; id -un']).out.trim().split('\n');
  check('runs as a non-root user', user[0] !== '0', `uid ${user[0]} (${user[1]})`);
  // Every package the lock file marks dev-only must be absent. (TypeScript is `devOptional`: an optional peer of
  // cosmiconfig, which graphile-worker uses to read a configuration file, so npm keeps it.)
  const devInstalled = run(engine, ['run', '--rm', '--network', 'host', image, 'node', '-e', DEV_PACKAGES_PRESENT]).out.trim();
  const [devCount, ...devFound] = devInstalled.split(' ');
  check('production dependencies only', devFound.length === 0, devFound.length === 0 ? `none of the lock file's ${devCount} dev-only packages is installed` : `installed: ${devFound.join(', ')}`);

  startDatabases();
  startContainer('loyalty-check-api', 'all');
  const readyMs = await waitFor(`http://127.0.0.1:${ports.api}/readyz`);
  check('migrates PostgreSQL 15 and reports ready', true, `/readyz 200 after ${readyMs} ms`);
  check('health check of the API (the image\'s HEALTHCHECK)', healthcheck('loyalty-check-api') === 0, 'exit 0');

  const created = JSON.parse(
    run(engine, ['exec', 'loyalty-check-api', 'node', 'dist/cli/tenant-create.js', '--name', 'Image check', '--slug', 'image-check', '--json']).out,
  );
  check('tenant-create CLI in the container', typeof created.api_key === 'string', `tenant ${created.tenant_id}`);
  const grant = await api('POST', '/gamify/points/grant', created.api_key, { participant_id: 'p-1', amount: 120, reason: 'image check', idempotency_key: 'image-check-1' });
  const deduct = await api('POST', '/gamify/points/deduct', created.api_key, { participant_id: 'p-1', amount: 20, reason: 'image check', idempotency_key: 'image-check-2' });
  check('ledger writes (grant, then deduct)', grant.status === 200 && deduct.status === 200 && deduct.body?.available === 100, `grant ${grant.status}, deduct ${deduct.status}, available ${deduct.body?.available}`);

  for (const [pathname, type] of [
    ['/console/', 'text/html'],
    ['/docs/', 'text/html'],
    ['/openapi.json', 'application/json'],
    ['/embed/assets/runtime.js', 'javascript'],
  ] as const) {
    const response = await fetch(`http://127.0.0.1:${ports.api}${pathname}`);
    const contentType = response.headers.get('content-type') ?? '';
    check(`serves ${pathname}`, response.ok && contentType.includes(type), `${response.status} ${contentType}`);
  }

  startContainer('loyalty-check-worker', 'worker');
  const workerMs = await waitFor(`http://127.0.0.1:${ports.worker}/healthz`);
  check('a worker role with METRICS_PORT answers /healthz', true, `after ${workerMs} ms`);
  check('health check of the worker (the image\'s HEALTHCHECK)', healthcheck('loyalty-check-worker') === 0, 'exit 0');
  const event = await api('POST', '/ingest/events/sync', created.api_key, { event_name: 'image_check', participant_id: 'p-1', idempotency_key: 'image-check-event' });
  check('an event is accepted and processed', event.status === 200, `${event.status} ${JSON.stringify(event.body?.status ?? event.body?.detail ?? null)}`);

  const stopStarted = Date.now();
  run(engine, ['stop', '-t', '30', 'loyalty-check-api']);
  const exitCode = run(engine, ['inspect', 'loyalty-check-api', '--format', '{{.State.ExitCode}}']).out.trim();
  check('stops cleanly on SIGTERM', exitCode === '0', `exit code ${exitCode} after ${Date.now() - stopStarted} ms`);
}

function cleanUp(): void {
  for (const name of containers) run(engine, ['rm', '-f', name], { allowFailure: true });
  redis?.kill('SIGKILL');
  asPostgres(`${PG_BIN}/pg_ctl`, ['-D', path.join(dir, 'pg'), '-m', 'immediate', 'stop']);
  rmSync(dir, { recursive: true, force: true });
}

main()
  .catch((error: unknown) => check('image check', false, error instanceof Error ? error.message : String(error)))
  .finally(() => {
    try {
      cleanUp();
    } catch {
      // Best effort.
    }
    const failed = results.filter((result) => !result.ok);
    console.log(failed.length === 0 ? `image:check: all ${results.length} checks pass` : `image:check: ${failed.length} of ${results.length} checks fail`);
    process.exit(failed.length === 0 ? 0 : 1);
  });
