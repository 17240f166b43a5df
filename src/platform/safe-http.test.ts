import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockedAddressReason, checkUrlSyntax, resolveSafeTarget, safePost, UnsafeUrlError, type Resolver } from './safe-http.js';
import { startTestService } from '../../test/helper.js';
import { startReceiver } from '../modules/webhooks/test-support.js';

/**
 * Server-side request forgery: every spelling of a non-public address is
 * refused at registration (through the API) and before every request, names
 * are resolved once and every answer checked, and the connection goes to the
 * checked address.
 */
const STRICT = { allowLoopback: false, allowHttp: false };
const BLOCKED_URLS = [
  'https://127.1/',
  'https://2130706433/',
  'https://0x7f.1/',
  'https://017700000001/',
  'https://0.0.0.0/',
  'https://[::1]/',
  'https://[::ffff:127.0.0.1]/',
  'https://[::ffff:7f00:1]/',
  'https://[64:ff9b::a9fe:a9fe]/',
  'https://[2002:a9fe:a9fe::]/',
  'https://169.254.169.254/latest/meta-data/',
  'https://100.64.0.1/',
  'https://10.0.0.1/',
  'https://10.255.255.255/',
  'https://172.16.0.1/',
  'https://172.31.255.254/',
  'https://192.168.1.1/',
  'https://[fc00::1]/',
  'https://[fd12:3456::1]/',
  'https://[fe80::1]/',
  'https://224.0.0.1/',
  'https://255.255.255.255/',
  'https://localhost/',
  'https://localhost./',
  'https://api.localhost/',
  'https://user@127.0.0.1/',
  'https://user:pass@93.184.216.34/',
  'http://93.184.216.34/',
  'https://intranet/',
];

test('safe-http: every blocked spelling is refused without resolving anything', () => {
  for (const url of BLOCKED_URLS) {
    assert.throws(() => checkUrlSyntax(url, STRICT), UnsafeUrlError, url);
  }
  assert.equal(checkUrlSyntax('https://93.184.216.34/hook', STRICT).hostname, '93.184.216.34');
  assert.equal(checkUrlSyntax('https://[2606:4700:4700::1111]/', STRICT).hostname, '[2606:4700:4700::1111]');
  assert.equal(checkUrlSyntax('https://hooks.example.com/x', STRICT).hostname, 'hooks.example.com');
});

test('safe-http: address ranges', () => {
  for (const address of ['127.0.0.1', '::1', '10.1.2.3', '172.20.0.1', '192.168.0.1', '169.254.1.1', '100.100.0.1', 'fc00::1', 'fe80::1', '224.0.0.1', 'ff02::1', '0.0.0.0', '::', '::ffff:10.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::', '2001::1']) {
    assert.ok(blockedAddressReason(address, STRICT), address);
  }
  for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
    assert.equal(blockedAddressReason(address, STRICT), null, address);
  }
  assert.equal(blockedAddressReason('127.0.0.1', { allowLoopback: true }), null, 'loopback only with the development setting');
  assert.ok(blockedAddressReason('10.0.0.1', { allowLoopback: true }), 'the setting allows loopback, not private ranges');
});

test('safe-http: a name is refused when any of its addresses is blocked, even after a public one', async () => {
  const rebinding: Resolver = async () => [
    { address: '93.184.216.34', family: 4 },
    { address: '127.0.0.1', family: 4 },
  ];
  await assert.rejects(resolveSafeTarget('https://rebind.example.com/', STRICT, rebinding), /blocked address/);
  const privateOnly: Resolver = async () => [{ address: '::ffff:192.168.0.10', family: 6 }];
  await assert.rejects(resolveSafeTarget('https://inside.example.com/', STRICT, privateOnly), /non-public/);
  const publicOnly: Resolver = async () => [{ address: '93.184.216.34', family: 4 }];
  const target = await resolveSafeTarget('https://ok.example.com/', STRICT, publicOnly);
  assert.equal(target.address, '93.184.216.34');
});

test('safe-http: delivery re-checks the name and connects to the checked address only', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  // A name no DNS server knows reaches the local receiver: the connection uses the pinned address.
  const pinned: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
  const allowed = await safePost(`http://receiver.webhooks.test:${receiver.port}/pinned`, { 'content-type': 'application/json' }, '{}', 3000, { allowLoopback: true, allowHttp: true }, pinned);
  assert.equal(allowed.status, 200, allowed.error ?? '');
  assert.equal(receiver.received[0].headers.host, `receiver.webhooks.test:${receiver.port}`);
  // The same name, now answering loopback, without the development setting: nothing is sent.
  const blocked = await safePost(`http://receiver.webhooks.test:${receiver.port}/blocked`, {}, '{}', 3000, { allowLoopback: false, allowHttp: true }, pinned);
  assert.equal(blocked.status, null);
  assert.match(blocked.error!, /^blocked:/);
  assert.equal(receiver.received.length, 1);
});

test('safe-http: registration through the API refuses every blocked URL with 422', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  for (const url of BLOCKED_URLS) {
    const response = await svc.request('POST', '/api/v1/gamify/webhooks', { key: tenant.apiKey, body: { name: 'x', url, events: ['badge.earned.v1'] } });
    assert.equal(response.status, 422, `${url}: ${response.text}`);
    assert.equal(response.body.code, 'VALIDATION_INVALID_VALUE');
  }
  const rows = await svc.sql('SELECT count(*)::int AS n FROM webhook_destinations');
  assert.equal(rows[0].n, 0);
});
