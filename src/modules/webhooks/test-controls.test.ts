import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { keyWithScopes, startTestService, waitFor, type TestService, type TestTenant } from '../../../test/helper.js';
import { ConfigError, loadConfig } from '../../config.js';
import { emit } from '../../platform/outbox.js';
import { resolveSafeTarget, UnsafeUrlError, type Resolver } from '../../platform/safe-http.js';
import { attemptDelivery, destinationPolicy } from './delivery.js';
import { createDestination } from './service.js';
import { dispatch } from './dispatcher.js';
import { startReceiver } from './testing.js';

/**
 * The webhook test controls of issue 16, item 7, through real HTTP: private
 * receivers for a sandbox tenant's destinations that opt in (never a live
 * tenant's, never in production, never a cloud metadata address), a receiver
 * with its own CA through WEBHOOK_CA_FILE, and the sandbox tenant's backoff
 * scale. No process-wide ALLOW_LOOPBACK_WEBHOOKS here: the services run with
 * the production network rules, as an integrator's staging would.
 */
const BASE = '/api/v1/gamify/webhooks';
const SETTINGS = `${BASE}/settings`;
const SPEC_RETRY_DELAYS_SECONDS = [30, 300, 1800, 1800, 1800];

test('webhook test controls: private receivers and the backoff scale, sandbox tenants only', async (t) => {
  const svc = await startTestService(t, { config: { TIME_SCALE: '1' } });
  const sandbox = await svc.createTenant({ environment: 'sandbox' });
  const otherSandbox = await svc.createTenant({ environment: 'sandbox' });
  const live = await svc.createTenant();
  const context = { db: svc.service.db, config: svc.config, log: svc.service.log };
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const destinationCount = async (tenant: TestTenant) =>
    (await svc.sql('SELECT count(*)::int AS n FROM webhook_destinations WHERE tenant_id = $1', [tenant.tenantId]))[0].n as number;

  await t.test('a sandbox destination with allow_private_network reaches a loopback http receiver; the test delivery succeeds', async () => {
    const created = await svc.request('POST', BASE, {
      key: sandbox.apiKey,
      body: { name: 'local', url: `${receiver.url}/local`, events: ['points.awarded.v1'], allow_private_network: true },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.allow_private_network, true);
    const ping = await svc.request('POST', `${BASE}/${created.body.id}/test`, { key: sandbox.apiKey });
    assert.equal(ping.status, 200, ping.text);
    assert.equal(ping.body.status, 'SUCCEEDED', JSON.stringify(ping.body.attempt_log));
    assert.equal(receiver.received.filter((r) => r.path === '/local').length, 1);
    const read = await svc.request('GET', `${BASE}/${created.body.id}`, { key: sandbox.apiKey });
    assert.equal(read.body.allow_private_network, true);
    for (const url of ['http://10.1.2.3/hook', 'https://192.168.1.20/hook', 'http://[fd12:3456::1]/hook', 'http://localhost:9/hook']) {
      const privateUrl = await svc.request('POST', BASE, { key: sandbox.apiKey, body: { name: 'lan', url, events: ['badge.earned.v1'], allow_private_network: true } });
      assert.equal(privateUrl.status, 201, `${url}: ${privateUrl.text}`);
    }
  });

  await t.test('without the opt-in, a sandbox tenant gets the public rules: 422 with a hint, nothing created', async () => {
    const before = await destinationCount(sandbox);
    for (const url of [`${receiver.url}/x`, 'https://10.1.2.3/x']) {
      const refused = await svc.request('POST', BASE, { key: sandbox.apiKey, body: { name: 'x', url, events: ['badge.earned.v1'] } });
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.body.code, 'VALIDATION_INVALID_VALUE');
      assert.match(refused.body.detail, /allow_private_network: true/);
    }
    const explicitFalse = await svc.request('POST', BASE, { key: sandbox.apiKey, body: { name: 'x', url: 'https://10.1.2.3/x', events: ['badge.earned.v1'], allow_private_network: false } });
    assert.equal(explicitFalse.status, 422);
    assert.equal(await destinationCount(sandbox), before);
  });

  await t.test('cloud metadata addresses stay refused even with the opt-in', async () => {
    const before = await destinationCount(sandbox);
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://2852039166/',
      'http://169.254.10.10/',
      'http://100.100.100.200/',
    ]) {
      const refused = await svc.request('POST', BASE, { key: sandbox.apiKey, body: { name: 'meta', url, events: ['badge.earned.v1'], allow_private_network: true } });
      assert.equal(refused.status, 422, `${url}: ${refused.text}`);
      assert.equal(refused.body.code, 'VALIDATION_INVALID_VALUE');
    }
    const aws6 = await svc.request('POST', BASE, { key: sandbox.apiKey, body: { name: 'meta', url: 'http://[fd00:ec2::254]/', events: ['badge.earned.v1'], allow_private_network: true } });
    assert.match(aws6.body.detail, /cloud metadata endpoint/);
    assert.equal(await destinationCount(sandbox), before);
  });

  await t.test('a live tenant asking for allow_private_network gets 403 SANDBOX_ONLY, at creation and in an update', async () => {
    const refused = await svc.request('POST', BASE, { key: live.apiKey, body: { name: 'x', url: `${receiver.url}/live`, events: ['badge.earned.v1'], allow_private_network: true } });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.code, 'SANDBOX_ONLY');
    assert.match(refused.body.detail, /sandbox/);
    assert.equal(await destinationCount(live), 0);
    const publicOne = await svc.request('POST', BASE, { key: live.apiKey, body: { name: 'public', url: 'https://93.184.216.34/hook', events: ['badge.earned.v1'], allow_private_network: false } });
    assert.equal(publicOne.status, 201, 'false is the default and always allowed');
    const patched = await svc.request('PATCH', `${BASE}/${publicOne.body.id}`, { key: live.apiKey, body: { allow_private_network: true, url: `${receiver.url}/live` } });
    assert.equal(patched.status, 403);
    assert.equal(patched.body.code, 'SANDBOX_ONLY');
    const unchanged = await svc.request('GET', `${BASE}/${publicOne.body.id}`, { key: live.apiKey });
    assert.equal(unchanged.body.url, 'https://93.184.216.34/hook');
    assert.equal(unchanged.body.allow_private_network, false);
  });

  await t.test("another tenant's destination is a 404 whatever the body says", async () => {
    const own = await svc.request('POST', BASE, { key: sandbox.apiKey, body: { name: 'own', url: `${receiver.url}/own`, events: ['badge.earned.v1'], allow_private_network: true } });
    const stranger = await svc.request('PATCH', `${BASE}/${own.body.id}`, { key: otherSandbox.apiKey, body: { allow_private_network: false } });
    assert.equal(stranger.status, 404);
    assert.equal((await svc.request('GET', `${BASE}/${own.body.id}`, { key: sandbox.apiKey })).body.allow_private_network, true);
  });

  await t.test('PATCH: turning the opt-in off re-checks the stored URL; a private URL needs the opt-in', async () => {
    const created = await svc.request('POST', BASE, { key: sandbox.apiKey, body: { name: 'p', url: `${receiver.url}/p`, events: ['badge.earned.v1'], allow_private_network: true } });
    const off = await svc.request('PATCH', `${BASE}/${created.body.id}`, { key: sandbox.apiKey, body: { allow_private_network: false } });
    assert.equal(off.status, 422, off.text);
    assert.match(off.body.detail, /url is not allowed/);
    const moved = await svc.request('PATCH', `${BASE}/${created.body.id}`, { key: sandbox.apiKey, body: { allow_private_network: false, url: 'https://93.184.216.34/p' } });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.allow_private_network, false);
    const backToPrivate = await svc.request('PATCH', `${BASE}/${created.body.id}`, { key: sandbox.apiKey, body: { url: `${receiver.url}/p2` } });
    assert.equal(backToPrivate.status, 422, 'a private URL without the opt-in is refused');
    const withOptIn = await svc.request('PATCH', `${BASE}/${created.body.id}`, { key: sandbox.apiKey, body: { url: `${receiver.url}/p2`, allow_private_network: true } });
    assert.equal(withOptIn.status, 200, withOptIn.text);
    assert.equal(withOptIn.body.url, `${receiver.url}/p2`);
  });

  await t.test('in production the opt-in is refused (403 TEST_CONTROLS_DISABLED), and a stored flag opens nothing at delivery', async () => {
    const production = { ...context, config: { ...svc.config, env: 'production' as const } };
    await assert.rejects(
      createDestination(production, sandbox.tenantId, { name: 'prod', url: `${receiver.url}/prod`, events: ['badge.earned.v1'], allow_private_network: true }),
      (error: { code?: string; status?: number; message?: string }) => error.code === 'TEST_CONTROLS_DISABLED' && error.status === 403 && /APP_ENV=production/.test(error.message ?? ''),
    );
    const policy = await destinationPolicy(production, sandbox.tenantId, { allow_private_network: true });
    assert.deepEqual([policy.allowLoopback, policy.allowHttp, policy.allowPrivateNetwork ?? false], [false, false, false]);
    const development = await destinationPolicy(context, sandbox.tenantId, { allow_private_network: true });
    assert.deepEqual([development.allowLoopback, development.allowHttp, development.allowPrivateNetwork], [true, true, true]);
    const liveFlag = await destinationPolicy(context, live.tenantId, { allow_private_network: true });
    assert.equal(liveFlag.allowPrivateNetwork ?? false, false, 'a live tenant never gets the private network, whatever a row says');
  });

  await t.test('a flag on a live tenant\'s row (a copied database) is not honoured: the delivery is blocked', async () => {
    const created = await svc.request('POST', BASE, { key: live.apiKey, body: { name: 'copied', url: 'https://93.184.216.34/copied', events: ['badge.earned.v1'] } });
    await svc.sql('UPDATE webhook_destinations SET url = $3, allow_private_network = true WHERE tenant_id = $1 AND id = $2', [live.tenantId, created.body.id, `${receiver.url}/copied`]);
    const ping = await svc.request('POST', `${BASE}/${created.body.id}/test`, { key: live.apiKey });
    assert.equal(ping.body.status, 'EXHAUSTED');
    assert.match(ping.body.attempt_log[0].error, /^blocked: /);
    assert.equal(receiver.received.filter((r) => r.path === '/copied').length, 0);
  });

  await t.test('settings: GET shows the spec schedule; a live tenant cannot change it (403 SANDBOX_ONLY)', async () => {
    const read = await svc.request('GET', SETTINGS, { key: live.apiKey });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body, { environment: 'live', webhook_backoff_scale: 1, retry_delays_seconds: SPEC_RETRY_DELAYS_SECONDS, updated_at: null, livemode: true });
    for (const value of [0.01, 1]) {
      const refused = await svc.request('PATCH', SETTINGS, { key: live.apiKey, body: { webhook_backoff_scale: value } });
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.code, 'SANDBOX_ONLY');
      assert.match(refused.body.detail, /live/);
    }
    assert.equal((await svc.sql('SELECT count(*)::int AS n FROM webhook_settings WHERE tenant_id = $1', [live.tenantId]))[0].n, 0);
  });

  await t.test('settings: only admin scopes; the value is bounded; one tenant\'s scale is not another\'s', async () => {
    const ingestKey = (await keyWithScopes(svc, sandbox, ['ingest'])).key;
    for (const method of ['GET', 'PATCH']) {
      const forbidden = await svc.request(method, SETTINGS, { key: ingestKey, body: method === 'PATCH' ? { webhook_backoff_scale: 0.01 } : undefined });
      assert.equal(forbidden.status, 403, method);
      assert.equal(forbidden.body.code, 'AUTH_FORBIDDEN');
    }
    assert.equal((await svc.request('PATCH', SETTINGS, { body: { webhook_backoff_scale: 0.01 } })).status, 401);
    for (const value of [0.0009, 0, 1.5, '0.5', null]) {
      const refused = await svc.request('PATCH', SETTINGS, { key: sandbox.apiKey, body: { webhook_backoff_scale: value } });
      assert.equal(refused.status, 400, `${value}: ${refused.text}`);
      assert.equal(refused.body.code, 'VALIDATION_INVALID_REQUEST');
    }
    assert.equal((await svc.request('PATCH', SETTINGS, { key: sandbox.apiKey, body: {} })).status, 400);
    assert.equal((await svc.request('PATCH', SETTINGS, { key: sandbox.apiKey, body: { webhook_backoff_scale: 0.5, extra: 1 } })).status, 400);

    const gamifyKey = (await keyWithScopes(svc, sandbox, ['gamify:admin'])).key;
    const set = await svc.request('PATCH', SETTINGS, { key: gamifyKey, body: { webhook_backoff_scale: 0.01 } });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.environment, 'sandbox');
    assert.equal(set.body.webhook_backoff_scale, 0.01);
    assert.deepEqual(set.body.retry_delays_seconds, [0.3, 3, 18, 18, 18]);
    assert.ok(set.body.updated_at);
    const byJwt = await svc.request('GET', SETTINGS, { bearer: await svc.login(sandbox) });
    assert.equal(byJwt.body.webhook_backoff_scale, 0.01);
    const other = await svc.request('GET', SETTINGS, { key: otherSandbox.apiKey });
    assert.equal(other.body.webhook_backoff_scale, 1, "another tenant's settings are untouched");
    const mismatch = await svc.request('PATCH', SETTINGS, { key: sandbox.apiKey, headers: { 'x-service-tenant': otherSandbox.tenantId }, body: { webhook_backoff_scale: 0.5 } });
    assert.equal(mismatch.status, 403);
    assert.equal(mismatch.body.code, 'AUTH_TENANT_MISMATCH');
    assert.equal((await svc.request('GET', SETTINGS, { key: otherSandbox.apiKey })).body.webhook_backoff_scale, 1);
  });

  await t.test('with scale 0.01 each retry is scheduled 0.3 s, 3 s, 18 s, 18 s, 18 s after its failed attempt (spec × 0.01), job included', async () => {
    const failing = await startReceiver((_r, res) => {
      res.statusCode = 500;
      res.end('down');
    });
    t.after(() => failing.close());
    const waits = async (tenant: TestTenant, attempts: number) => {
      const destination = await svc.request('POST', BASE, {
        key: tenant.apiKey,
        body: { name: 'failing', url: `${failing.url}/fail`, events: ['badge.earned.v1'], retry_count: 5, allow_private_network: true },
      });
      assert.equal(destination.status, 201, destination.text);
      const ids = await svc.service.db.tenant(tenant.tenantId, (tx) =>
        emit(tx, tenant.tenantId, { event: 'badge.earned.v1', participantId: 'p-1', data: { participant_id: 'p-1', badge_code: 'b', badge_name: 'B', earned_at: new Date().toISOString() } }),
      );
      await dispatch(context, tenant.tenantId, ids);
      const [{ id }] = await svc.sql('SELECT id FROM webhook_deliveries WHERE tenant_id = $1 AND destination_id = $2', [tenant.tenantId, destination.body.id]);
      const observed: number[] = [];
      for (let attempt = 1; attempt <= attempts; attempt++) {
        // The attempt is made now, whatever its time: the schedule is what is checked.
        const status = await attemptDelivery(context, tenant.tenantId, id);
        const [row] = await svc.sql('SELECT status, next_attempt_at, updated_at FROM webhook_deliveries WHERE tenant_id = $1 AND id = $2', [tenant.tenantId, id]);
        if (status === 'EXHAUSTED') {
          assert.equal(row.next_attempt_at, null);
          break;
        }
        assert.equal(status, 'RETRYING');
        observed.push(row.next_attempt_at.getTime() - row.updated_at.getTime());
        const [job] = await svc.sql(`SELECT max(run_at) AS run_at FROM graphile_worker._private_jobs WHERE payload->>'delivery_id' = $1`, [id]);
        assert.equal(job.run_at.getTime(), row.next_attempt_at.getTime(), 'the delivery job runs when the delivery says');
      }
      return observed;
    };
    assert.deepEqual(await waits(sandbox, 6), [300, 3_000, 18_000, 18_000, 18_000]);
    assert.deepEqual(await waits(otherSandbox, 1), [30_000], 'a tenant without a scale keeps the spec timing');
  });

  await t.test('with scale 0.001 and the job runner, a failing receiver sees its retries seconds apart instead of half an hour', async () => {
    // The first service runs without a job worker; this one runs the jobs, on the same rules.
    const runner = await startTestService(t, { config: { TIME_SCALE: '1' }, jobs: true });
    const tenant = await runner.createTenant({ environment: 'sandbox' });
    assert.equal((await runner.request('PATCH', SETTINGS, { key: tenant.apiKey, body: { webhook_backoff_scale: 0.001 } })).status, 200);
    const flaky = await startReceiver((_r, res) => {
      res.statusCode = flaky.received.length < 4 ? 503 : 200;
      res.end();
    });
    t.after(() => flaky.close());
    const destination = await runner.request('POST', BASE, {
      key: tenant.apiKey,
      body: { name: 'flaky', url: `${flaky.url}/flaky`, events: ['badge.earned.v1'], retry_count: 3, allow_private_network: true },
    });
    assert.equal(destination.status, 201, destination.text);
    await runner.service.db.tenant(tenant.tenantId, (tx) =>
      emit(tx, tenant.tenantId, { event: 'badge.earned.v1', participantId: 'p-2', data: { participant_id: 'p-2', badge_code: 'b', badge_name: 'B', earned_at: new Date().toISOString() } }),
    );
    await waitFor('four attempts at the receiver', () => flaky.received.length >= 4, 30_000);
    const gaps = flaky.received.slice(1, 4).map((r, i) => r.receivedAt - flaky.received[i].receivedAt);
    t.diagnostic(`gaps between attempts: ${gaps.join(', ')} ms (scheduled 30, 300, 1800)`);
    gaps.forEach((gap, i) => assert.ok(gap >= [30, 300, 1800][i] - 5, `gap ${i + 1} is ${gap} ms`));
    assert.ok(gaps[2] < 60_000, 'the 30-minute wait took seconds');
    const logs = await waitFor('the delivery succeeded', async () => {
      const response = await runner.request('GET', `${BASE}/${destination.body.id}/logs`, { key: tenant.apiKey });
      return response.body.deliveries[0]?.status === 'SUCCEEDED' ? response.body : null;
    });
    assert.deepEqual(logs.deliveries[0].attempt_log.map((a: { response_status: number }) => a.response_status), [503, 503, 503, 200]);
  });
});

test('resolving a private-network destination: single-label names and private answers pass, metadata and public-then-metadata answers do not', async () => {
  const answers: Record<string, string[]> = { receiver: ['172.18.0.5'], metadata: ['169.254.169.254'], mixed: ['10.0.0.7', 'fd00:ec2::254'], 'hooks.example.com': ['93.184.216.34'] };
  const resolver: Resolver = async (hostname) => (answers[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  const privateNetwork = { allowLoopback: true, allowHttp: true, allowPrivateNetwork: true };
  assert.equal((await resolveSafeTarget('http://receiver:8080/hook', privateNetwork, resolver)).address, '172.18.0.5');
  assert.equal((await resolveSafeTarget('https://hooks.example.com/', privateNetwork, resolver)).address, '93.184.216.34', 'public receivers stay reachable');
  await assert.rejects(resolveSafeTarget('http://metadata/', privateNetwork, resolver), UnsafeUrlError);
  await assert.rejects(resolveSafeTarget('http://mixed/', privateNetwork, resolver), /cloud metadata endpoint/);
  const strict = { allowLoopback: false, allowHttp: false };
  await assert.rejects(resolveSafeTarget('https://receiver/hook', strict, resolver), /not a fully qualified domain name/);
});

/** A CA and a server certificate for 127.0.0.1 signed by it, made with the openssl CLI in a temporary folder. */
function makeCertificates(): { dir: string; caFile: string; key: string; cert: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-ca-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ecKey, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=Webhook test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  openssl('req', ...ecKey, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=127.0.0.1');
  fs.writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.pem'), '-days', '2', '-extfile', file('server.ext'));
  return { dir, caFile: file('ca.pem'), key: fs.readFileSync(file('server.key'), 'utf8'), cert: fs.readFileSync(file('server.pem'), 'utf8') };
}

test('WEBHOOK_CA_FILE: a receiver with its own CA is trusted with it and refused without it', async (t) => {
  const certificates = makeCertificates();
  t.after(() => fs.rmSync(certificates.dir, { recursive: true, force: true }));

  await t.test('loadConfig: readable, at least one valid certificate, refused in production', () => {
    const loaded = loadConfig({ WEBHOOK_CA_FILE: certificates.caFile });
    assert.equal(loaded.webhookCa?.pems.length, 1);
    assert.match(loaded.webhookCa!.fingerprint, /^[0-9a-f]{64}$/);
    assert.equal(loadConfig({}).webhookCa, null);
    assert.throws(() => loadConfig({ WEBHOOK_CA_FILE: path.join(certificates.dir, 'missing.pem') }), (e: unknown) => e instanceof ConfigError && /WEBHOOK_CA_FILE .* cannot be read/.test(e.message));
    fs.writeFileSync(path.join(certificates.dir, 'empty.pem'), 'not a certificate\n');
    assert.throws(() => loadConfig({ WEBHOOK_CA_FILE: path.join(certificates.dir, 'empty.pem') }), /holds no PEM certificate/);
    fs.writeFileSync(path.join(certificates.dir, 'broken.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    assert.throws(() => loadConfig({ WEBHOOK_CA_FILE: path.join(certificates.dir, 'broken.pem') }), /certificate 1 of 1 is not a valid certificate/);
    const secret = 'x'.repeat(32);
    for (const file of [certificates.caFile, '/nonexistent/ca.pem']) {
      assert.throws(
        () => loadConfig({ APP_ENV: 'production', JWT_SECRET: secret, WEBHOOK_CA_FILE: file }),
        (e: unknown) => e instanceof ConfigError && /WEBHOOK_CA_FILE may not be set in production/.test(e.message),
      );
    }
  });

  const receiver = await startReceiver(undefined, { tls: { key: certificates.key, cert: certificates.cert } });
  t.after(() => receiver.close());
  const pingThrough = async (svc: TestService) => {
    const tenant = await svc.createTenant({ environment: 'sandbox' });
    const created = await svc.request('POST', BASE, {
      key: tenant.apiKey,
      body: { name: 'own CA', url: `${receiver.url}/tls`, events: ['badge.earned.v1'], allow_private_network: true },
    });
    assert.equal(created.status, 201, created.text);
    const ping = await svc.request('POST', `${BASE}/${created.body.id}/test`, { key: tenant.apiKey });
    assert.equal(ping.status, 200, ping.text);
    return ping.body;
  };

  await t.test('with WEBHOOK_CA_FILE the https delivery succeeds', async () => {
    const trusting = await startTestService(t, { config: { WEBHOOK_CA_FILE: certificates.caFile } });
    const delivery = await pingThrough(trusting);
    assert.equal(delivery.status, 'SUCCEEDED', JSON.stringify(delivery.attempt_log));
    assert.equal(delivery.attempt_log[0].response_status, 200);
    assert.equal(receiver.received.length, 1);
    assert.equal(receiver.received[0].headers['x-service-event'], 'ping');
  });

  await t.test('without it the same receiver fails the TLS check, and the attempt records the TLS error', async () => {
    const plain = await startTestService(t);
    const delivery = await pingThrough(plain);
    assert.equal(delivery.status, 'EXHAUSTED');
    assert.equal(delivery.attempt_log[0].response_status, null);
    t.diagnostic(`the attempt's error without WEBHOOK_CA_FILE: ${delivery.attempt_log[0].error}`);
    assert.match(delivery.attempt_log[0].error, /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT/);
    assert.equal(receiver.received.length, 1, 'nothing reached the receiver');
  });
});
