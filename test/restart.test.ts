import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../bench/support.js';
import { repositoryRoot } from './repository.js';

/**
 * The service on a DATA_DIR with the embedded PostgreSQL, as a user runs it (`npm start` runs the
 * compiled dist/main.js; here node runs src/main.ts through tsx, which needs no build), stopped and
 * started again, with tenants created by
 * `npm run tenant:create` both while it runs and while it is stopped.
 */
const root = repositoryRoot;
const READY_TIMEOUT_MS = 120_000;

function userEnvironment(dataDir: string, port: number, pgPort: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), APP_ENV: 'development', LOG_LEVEL: 'warn' };
  // Nothing of the test run's own database may leak into the user's process.
  for (const name of ['DATABASE_URL', 'TEST_PG_URL', 'TEST_PG_TEMPLATE', 'TEST_DATABASE_URL', 'REDIS_URL', 'NODE_TEST_CONTEXT', 'NODE_OPTIONS']) delete env[name];
  return env;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function waitReady(baseUrl: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}: ${output()}`);
    try {
      const response = await fetch(`${baseUrl}/readyz`);
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the service was not ready within ${READY_TIMEOUT_MS} ms: ${output()}`);
}

function startService(env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  // As `npm start` runs it: node with the tsx loader, no launcher process in between (the tsx
  // launcher gives its child 30 ms to acknowledge a signal and then kills it, which a loaded
  // machine misses).
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return { child, output: () => output.slice(-4000) };
}

async function stopService(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

function assertExactlyJson(stdout: string): Record<string, any> {
  const parsed = JSON.parse(stdout);
  assert.equal(stdout, `${JSON.stringify(parsed, null, 2)}\n`, 'stdout holds the JSON and nothing else');
  return parsed;
}

test('restart keeps the data; tenant:create works with the service running and stopped', { timeout: 300_000 }, async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-restart-'));
  const port = await freePort();
  const pgPort = await freePort();
  const env = userEnvironment(dataDir, port, pgPort);
  const baseUrl = `http://127.0.0.1:${port}`;
  const children: ChildProcess[] = [];
  t.after(async () => {
    for (const child of children) await stopService(child);
    // A postgres left behind by a failed run is stopped through its pid file.
    const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
    if (fs.existsSync(pidFile)) {
      const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
      if (pid > 0) {
        try {
          process.kill(pid, 'SIGINT');
        } catch {
          // Already gone.
        }
      }
      for (let i = 0; i < 50 && fs.existsSync(pidFile); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const first = startService(env);
  children.push(first.child);
  await waitReady(baseUrl, first.child, first.output);
  assert.ok(fs.existsSync(path.join(dataDir, 'pg', 'PG_VERSION')), 'the data lives under DATA_DIR');

  const whileRunning = await run('npm', ['run', '-s', 'tenant:create', '--', '--name', 'Acme', '--slug', 'acme', '--plan', 'growth', '--json'], env);
  assert.equal(whileRunning.code, 0, whileRunning.stderr);
  const acme = assertExactlyJson(whileRunning.stdout);
  assert.equal(acme.slug, 'acme');
  assert.equal(acme.plan, 'growth');
  assert.match(acme.tenant_id, /^[0-9a-f-]{36}$/);
  assert.match(acme.api_key, /^lk_live_[0-9a-f]{32}$/);
  assert.deepEqual(acme.api_key_scopes, ['admin', 'gamify:admin', 'read:pii']);
  assert.equal(typeof acme.admin_email, 'string');
  assert.ok(acme.admin_password.length >= 16);

  const read = await fetch(`${baseUrl}/api/v1/tenant`, { headers: { 'x-api-key': acme.api_key } });
  assert.equal(read.status, 200);
  assert.equal(((await read.json()) as { slug: string }).slug, 'acme');
  const login = await fetch(`${baseUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: acme.admin_email, password: acme.admin_password }),
  });
  assert.equal(login.status, 200);
  const { token } = (await login.json()) as { token: string };
  const created = await fetch(`${baseUrl}/api/v1/events/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'made before the restart', scopes: ['admin'] }),
  });
  assert.equal(created.status, 201);
  const madeBefore = (await created.json()) as { key: string };

  assert.equal(await stopService(first.child), 0, first.output());
  assert.ok(!fs.existsSync(path.join(dataDir, 'pg', 'postmaster.pid')), 'the embedded PostgreSQL stopped with the service');

  const whileStopped = await run('npm', ['run', '-s', 'tenant:create', '--', '--name', 'Globex', '--slug', 'globex', '--plan', 'starter', '--json'], env);
  assert.equal(whileStopped.code, 0, whileStopped.stderr);
  const globex = assertExactlyJson(whileStopped.stdout);
  assert.equal(globex.plan, 'starter');
  const duplicate = await run('npm', ['run', '-s', 'tenant:create', '--', '--name', 'Acme again', '--slug', 'acme', '--json'], env);
  assert.notEqual(duplicate.code, 0, `${duplicate.stdout} ${duplicate.stderr}`);
  // npm (in JSON mode, see .npmrc) reports the failed script on stdout as {"error": …}; no tenant is printed.
  assert.ok(!duplicate.stdout.includes('tenant_id'));
  assert.match(duplicate.stderr, /already exists/);

  const second = startService(env);
  children.push(second.child);
  await waitReady(baseUrl, second.child, second.output);
  for (const key of [acme.api_key, globex.api_key, madeBefore.key]) {
    const response = await fetch(`${baseUrl}/api/v1/tenant`, { headers: { 'x-api-key': key } });
    assert.equal(response.status, 200, `a key from before the restart works: ${await response.text()}`);
  }
  // Admin tokens signed before the restart stay valid: the signing key lives in the database.
  const keys = await fetch(`${baseUrl}/api/v1/events/api-keys`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(keys.status, 200);
  assert.equal(((await keys.json()) as { api_keys: unknown[] }).api_keys.length, 2);
  assert.equal(await stopService(second.child), 0, second.output());
});

/**
 * The same start as an ordinary OS user. When the suite runs as an ordinary
 * user, every test above already is that case; as root, the service is
 * started through `setpriv` as `nobody`, and its embedded PostgreSQL must then
 * run as `nobody` too (as root, it runs as the `postgres` OS user instead).
 */
test('the service starts, serves and keeps its data as an ordinary OS user', { timeout: 300_000 }, async (t) => {
  if (process.getuid?.() !== 0) {
    t.skip('the suite runs as an ordinary user: every other test starts the embedded PostgreSQL as one');
    return;
  }
  const nobody = await run('id', ['-u', 'nobody'], process.env);
  if (nobody.code !== 0) {
    t.skip('this machine has no `nobody` user');
    return;
  }
  const uid = Number(nobody.stdout.trim());
  const gid = Number((await run('id', ['-g', 'nobody'], process.env)).stdout.trim());
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-nonroot-'));
  fs.chmodSync(dataDir, 0o777);
  const port = await freePort();
  const env = { ...userEnvironment(dataDir, port, await freePort()), HOME: dataDir };
  const asNobody = (args: string[]) => ['--reuid', String(uid), '--regid', String(gid), '--clear-groups', process.execPath, '--import', 'tsx', ...args];
  const baseUrl = `http://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  t.after(async () => {
    if (child) await stopService(child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const start = () => {
    const started = spawn('setpriv', asNobody(['src/main.ts']), { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    started.stdout!.on('data', (chunk) => (output += chunk));
    started.stderr!.on('data', (chunk) => (output += chunk));
    return { child: started, output: () => output.slice(-4000) };
  };

  const first = start();
  child = first.child;
  await waitReady(baseUrl, first.child, first.output);
  const postmasterPid = Number(fs.readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  assert.equal(fs.statSync(`/proc/${postmasterPid}`).uid, uid, 'the embedded PostgreSQL runs as the same ordinary user');
  assert.equal(fs.statSync(path.join(dataDir, 'pg', 'PG_VERSION')).uid, uid, 'the data belongs to that user');

  const created = await run('setpriv', asNobody(['src/cli/tenant-create.ts', '--name', 'Initech', '--slug', 'initech', '--plan', 'starter', '--json']), env);
  assert.equal(created.code, 0, created.stderr);
  const initech = assertExactlyJson(created.stdout);
  assert.equal((await fetch(`${baseUrl}/api/v1/tenant`, { headers: { 'x-api-key': initech.api_key } })).status, 200);
  assert.equal(await stopService(first.child), 0, first.output());

  const second = start();
  child = second.child;
  await waitReady(baseUrl, second.child, second.output);
  const read = await fetch(`${baseUrl}/api/v1/tenant`, { headers: { 'x-api-key': initech.api_key } });
  assert.equal(read.status, 200, 'the tenant made before the restart is still there');
  assert.equal(((await read.json()) as { slug: string }).slug, 'initech');
  assert.equal(await stopService(second.child), 0, second.output());
  child = null;
});
