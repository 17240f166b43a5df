import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startTestService } from './helper.js';
import { signatureHeader } from '../src/modules/webhooks/delivery.js';
import { repositoryRoot } from './repository.js';

/**
 * The Python SDK (packages/sdk-python) in `npm test`: its unittest suite runs
 * against this service, a sandbox tenant and its key given as LOYALTY_BASE_URL
 * and LOYALTY_API_KEY. The suite holds the unit tests (webhook verification,
 * the retry policy against a stub server, the generated file regenerated and
 * compared), the integration tests, and every code block of
 * docs/getting-started-python.md, run in order. A webhook signed here by the
 * service's own signer (LOYALTY_WEBHOOK_FIXTURE) must verify in Python.
 *
 * python3 missing is a failure, not a skip: CI has it. So is a skipped
 * Python test (the service is there, nothing may be left out), but for the
 * pip installation, which needs pip (Debian's python3 comes without it).
 */
const root = repositoryRoot;

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; output: string; error?: Error }> {
  return new Promise((resolve) => {
    let output = '';
    let child;
    try {
      // Asynchronous: the service answering the Python tests runs in this process.
      child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      resolve({ code: null, output, error: error as Error });
      return;
    }
    const timer = setTimeout(() => {
      output += `\n[python-sdk.test] killed after ${timeoutMs} ms\n`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, output, error });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

test('the Python SDK passes its unittest suite against the running service', async (t) => {
  const version = await run('python3', ['--version'], process.env, 30_000);
  assert.equal(version.error, undefined, `python3 is needed to test packages/sdk-python (CI has it): ${version.error?.message}`);
  assert.equal(version.code, 0, version.output);

  const svc = await startTestService(t);
  const tenant = await svc.createTenant({ environment: 'sandbox' });

  const secret = 'whsec_python_sdk_fixture_0123456789abcdef';
  const rawBody = JSON.stringify({
    id: 'evt_python_fixture',
    event: 'points.awarded.v1',
    timestamp: new Date().toISOString(),
    tenant_id: tenant.tenantId,
    engagement_id: null,
    participant_id: 'p-ünïcode',
    data: { participant_id: 'p-ünïcode', amount: 5, reason: 'fixture €' },
  });
  const timestamp = Math.floor(Date.now() / 1000);
  const fixture = JSON.stringify({ secret, timestamp, body: rawBody, signature: signatureHeader(secret, timestamp, rawBody) });

  const result = await run(
    'python3',
    ['-m', 'unittest', 'discover', '-s', 'packages/sdk-python/tests', '-v'],
    {
      ...process.env,
      LOYALTY_BASE_URL: svc.baseUrl,
      LOYALTY_API_KEY: tenant.apiKey,
      LOYALTY_WEBHOOK_FIXTURE: fixture,
      LOYALTY_REQUIRE_INTEGRATION: '1',
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONUNBUFFERED: '1',
      PYTHONPATH: '',
    },
    Number(process.env.PYTHON_SDK_TIMEOUT_MS ?? 300_000),
  );
  assert.equal(result.code, 0, `python3 -m unittest failed (exit ${result.code}):\n${result.output}`);
  assert.match(result.output, /^OK\b/m, result.output);
  // The one test allowed to skip: installing with pip, when this python3 has no pip (the wheel is still built and imported).
  const skips = result.output.split('\n').filter((line) => /\.\.\. skipped /.test(line) && !/skipped 'pip is not installed/.test(line));
  assert.deepEqual(skips, [], `no other Python test may be skipped here:\n${result.output}`);
  const ran = /^Ran (\d+) tests?/m.exec(result.output);
  assert.ok(ran && Number(ran[1]) >= 30, `expected the whole suite to run:\n${result.output}`);
  t.diagnostic(ran![0]);
});
