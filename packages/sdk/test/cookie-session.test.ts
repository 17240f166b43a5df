import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLoyaltyClient } from '@loyalty/sdk';

/** A browser signed in with a cookie (the console): no API key, the fetch credentials mode, and the CSRF token on writes. */
function recordingFetch() {
  const calls: Array<{ url: string; init: RequestInit }> = [];
  const impl: typeof fetch = async (input, init) => {
    calls.push({ url: String(input), init: init ?? {} });
    return new Response(JSON.stringify({ available: 1, lifetime: 1, delta: 1, duplicate: false, ledger_entry_id: 'x', rules: [], next_cursor: null }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  };
  return { calls, impl };
}

test('with credentials, server operations go without an API key and the CSRF token rides on every write, read at each call', async () => {
  const recorder = recordingFetch();
  let token = 'first';
  const client = createLoyaltyClient({ baseUrl: 'https://loyalty.example.com', credentials: 'same-origin', csrfToken: () => token, fetch: recorder.impl });
  await client.listRules();
  await client.grantPoints({ body: { participant_id: 'p-1', amount: 5, reason: 'goodwill' } });
  token = 'renewed';
  await client.grantPoints({ body: { participant_id: 'p-1', amount: 5, reason: 'goodwill' } });
  const [read, write, later] = recorder.calls.map((call) => ({ headers: call.init.headers as Record<string, string>, credentials: call.init.credentials }));
  for (const call of [read, write, later]) {
    assert.equal(call.credentials, 'same-origin');
    assert.equal(call.headers['x-api-key'], undefined);
  }
  assert.equal(read.headers['x-csrf-token'], undefined, 'a GET carries no token');
  assert.equal(write.headers['x-csrf-token'], 'first');
  assert.equal(later.headers['x-csrf-token'], 'renewed');
});

test('without credentials or a key, a server operation is refused before sending, as before', async () => {
  const recorder = recordingFetch();
  const client = createLoyaltyClient({ baseUrl: 'https://loyalty.example.com', fetch: recorder.impl });
  await assert.rejects(() => client.listRules(), /apiKey/);
  assert.equal(recorder.calls.length, 0);
});

test("console operations (API keys) go with the console's cookie only: never a key, and refused without credentials", async () => {
  const recorder = recordingFetch();
  const keyed = createLoyaltyClient({ baseUrl: 'https://loyalty.example.com', apiKey: 'lk_live_00000000000000000000000000000000', fetch: recorder.impl });
  await assert.rejects(() => keyed.rotateApiKey({ path: { id: '00000000-0000-4000-8000-000000000000' } }), /credentials/);
  assert.equal(recorder.calls.length, 0);
  const console = createLoyaltyClient({ baseUrl: 'https://loyalty.example.com', credentials: 'same-origin', csrfToken: 'token', fetch: recorder.impl });
  await console.rotateApiKey({ path: { id: '00000000-0000-4000-8000-000000000000' } }).catch(() => undefined);
  const [call] = recorder.calls;
  assert.match(call.url, /\/api\/v1\/events\/api-keys\/00000000-0000-4000-8000-000000000000\/rotate$/);
  const headers = call.init.headers as Record<string, string>;
  assert.equal(headers['x-api-key'], undefined);
  assert.equal(headers['x-csrf-token'], 'token');
  assert.equal(call.init.credentials, 'same-origin');
});
