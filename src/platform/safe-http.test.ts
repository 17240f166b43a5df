import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockedAddressReason, checkUrlSyntax, resolveSafeTarget, safePost, UnsafeUrlError, type Resolver } from './safe-http.js';
import { startTestService } from '../../test/helper.js';
import { startReceiver } from '../modules/webhooks/testing.js';
import { BLOCKED_ADDRESS_FORMS, BLOCKED_NAME_URLS } from './blocked-address-forms.js';

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
  'https://user@127.0.0.1/',
  'https://user:pass@93.184.216.34/',
  'http://93.184.216.34/',
  ...BLOCKED_NAME_URLS,
  ...BLOCKED_ADDRESS_FORMS.map((form) => form.url),
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

test('safe-http: every address form of the table is refused as a URL host, naming the problem', () => {
  assert.ok(BLOCKED_ADDRESS_FORMS.length >= 40);
  for (const form of BLOCKED_ADDRESS_FORMS) {
    assert.throws(() => checkUrlSyntax(form.url, STRICT), (error: Error) => error instanceof UnsafeUrlError && form.reason.test(error.message), form.label);
  }
});

test('safe-http: every address form of the table is refused as a resolver answer, naming the problem', async () => {
  for (const form of BLOCKED_ADDRESS_FORMS) {
    const resolver: Resolver = async () => [{ address: form.answer, family: form.answer.includes(':') ? 6 : 4 }];
    await assert.rejects(resolveSafeTarget('https://hooks.example.com/', STRICT, resolver), (error: Error) => {
      return error instanceof UnsafeUrlError && /resolves to a blocked address/.test(error.message) && (form.answerReason ?? form.reason).test(error.message);
    }, form.label);
  }
});

test('safe-http: IPv6 forms embedding IPv4 are refused even when the embedded address is public; IPv4-mapped is unwrapped', () => {
  for (const address of ['::8.8.8.8', '::808:808', '::ffff:0:808:808', '64:ff9b::808:808', '64:ff9b:1:808:8:800::', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7', '2a00:1450::5efe:808:808']) {
    assert.match(blockedAddressReason(address, STRICT) ?? '', /embeds the IPv4 address 8\.8\.8\.8; IPv6 forms that embed an IPv4 address are refused/, address);
  }
  assert.equal(blockedAddressReason('::ffff:8.8.8.8', STRICT), null);
  assert.equal(blockedAddressReason('::ffff:808:808', STRICT), null);
  assert.match(blockedAddressReason('::127.0.0.1', { allowLoopback: true }) ?? '', /IPv4-compatible/, 'the loopback setting does not open IPv4-compatible forms');
  assert.equal(blockedAddressReason('::1', { allowLoopback: true }), null);
  assert.equal(blockedAddressReason('::ffff:127.0.0.1', { allowLoopback: true }), null);
});

test('safe-http: the connection is pinned to the address as checked, with its own family', async () => {
  const mapped: Resolver = async () => [{ address: '::ffff:8.8.8.8', family: 6 }];
  assert.deepEqual(await resolveSafeTarget('https://mapped.example.com/', STRICT, mapped).then(({ address, family }) => ({ address, family })), { address: '8.8.8.8', family: 4 });
  const wrongFamily: Resolver = async () => [{ address: '2606:4700:4700:0:0:0:0:1111', family: 4 }];
  assert.deepEqual(await resolveSafeTarget('https://v6.example.com/', STRICT, wrongFamily).then(({ address, family }) => ({ address, family })), { address: '2606:4700:4700::1111', family: 6 });
  const literal = await resolveSafeTarget('https://[::ffff:93.184.216.34]/', STRICT);
  assert.deepEqual({ address: literal.address, family: literal.family }, { address: '93.184.216.34', family: 4 });
});

test('safe-http: a delivery to a name now resolving to any form of the table sends nothing', async (t) => {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const policy = { allowLoopback: false, allowHttp: true };
  for (const form of BLOCKED_ADDRESS_FORMS) {
    const resolver: Resolver = async () => [{ address: form.answer, family: form.answer.includes(':') ? 6 : 4 }];
    const result = await safePost(`http://receiver.webhooks.test:${receiver.port}/`, {}, '{}', 3000, policy, resolver);
    assert.equal(result.status, null, form.label);
    assert.equal(result.address, null, `${form.label}: no address was chosen to connect to`);
    assert.match(result.error ?? '', /^blocked: /, form.label);
    assert.match(result.error ?? '', form.answerReason ?? form.reason, form.label);
  }
  assert.equal(receiver.received.length, 0);
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
