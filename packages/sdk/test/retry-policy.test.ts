import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLoyaltyClient, parseRetryAfter, LoyaltyConnectionError, LoyaltyRateLimitError, LoyaltyServerError, type RetryInfo } from '@loyalty/sdk';

/**
 * The retry rules in isolation, with a scripted fetch (the 429 path against
 * the real service is in client.test.ts; a 503 or a dropped connection cannot
 * be provoked there on demand).
 */
const BASE_URL = 'http://127.0.0.1:9';
const KEY = `lk_test_${'a'.repeat(32)}`;

function scripted(...answers: Array<(() => Response) | Error>) {
  const calls: Array<{ method: string; body: unknown; idempotencyKey: string | null }> = [];
  const impl: typeof fetch = async (_input, init) => {
    const idempotencyKey = new Headers(init?.headers as HeadersInit | undefined).get('idempotency-key');
    calls.push({ method: init?.method ?? 'GET', body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined, idempotencyKey });
    const next = answers[Math.min(calls.length - 1, answers.length - 1)];
    if (next instanceof Error) throw next;
    return next();
  };
  return { calls, impl };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => () =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const unavailable = json(503, { detail: 'the database does not answer', code: 'DATABASE_UNAVAILABLE', error_version: 1 });
const limited = (seconds: string) => json(429, { detail: 'slow down', code: 'RATE_LIMITED', error_version: 1 }, { 'retry-after': seconds });
const reset = new TypeError('fetch failed: ECONNRESET');
const CONVERSION = { code: 'ADA-7K2Q', referred_session_id: 'ses_9c41d7e2a0b34f58' };

test('503 is retried for a GET and for a credentialed POST (same idempotency key), never for a public POST', async () => {
  const retries: RetryInfo[] = [];
  const get = scripted(unavailable, json(200, { items: [] }));
  await createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: get.impl, onRetry: (info) => retries.push(info) }).listBadges();
  assert.equal(get.calls.length, 2);
  assert.equal(retries[0].reason, 'unavailable');
  assert.ok(retries[0].delayMs >= 250 && retries[0].delayMs <= 500);

  const grant = scripted(unavailable, json(200, { available: 1, lifetime: 1, delta: 1, duplicate: true, ledger_entry_id: 'x' }));
  await createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: grant.impl }).grantPoints({ body: { participant_id: 'p', amount: 1, reason: 'r' } });
  assert.equal(grant.calls.length, 2);
  assert.deepEqual(grant.calls[0].body, grant.calls[1].body, 'the retry repeats the same idempotency key');

  // A creating POST carries an Idempotency-Key header, kept across its retries: the service replays the first answer.
  const create = scripted(unavailable, json(201, {}));
  await createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: create.impl }).createBadge({ body: { code: 'gold', name: 'Gold' } });
  assert.equal(create.calls.length, 2);
  assert.match(create.calls[0].idempotencyKey ?? '', /^[0-9a-f-]{36}$/);
  assert.equal(create.calls[1].idempotencyKey, create.calls[0].idempotencyKey);
  const chosen = scripted(json(201, {}));
  await createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: chosen.impl }).createBadge({ body: { code: 'gold', name: 'Gold' }, idempotencyKey: 'badge-gold' });
  assert.equal(chosen.calls[0].idempotencyKey, 'badge-gold');

  // A public POST has no idempotency key on the service: it is not repeated.
  const convert = scripted(unavailable, json(200, {}));
  await assert.rejects(createLoyaltyClient({ baseUrl: BASE_URL, fetch: convert.impl }).convertReferral({ body: CONVERSION }), LoyaltyServerError);
  assert.equal(convert.calls.length, 1);
  assert.equal(convert.calls[0].idempotencyKey, null);
});

test('a dropped connection is retried only for idempotent requests', async () => {
  const convert = scripted(reset, json(200, {}));
  const error = await createLoyaltyClient({ baseUrl: BASE_URL, fetch: convert.impl }).convertReferral({ body: CONVERSION }).catch((e: unknown) => e);
  assert.ok(error instanceof LoyaltyConnectionError);
  assert.equal(error.status, 0);
  assert.equal(error.code, 'NETWORK_ERROR');
  assert.equal(convert.calls.length, 1);

  const create = scripted(reset, json(201, {}));
  await createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: create.impl }).createBadge({ body: { code: 'gold', name: 'Gold' } });
  assert.equal(create.calls.length, 2);
  assert.equal(create.calls[1].idempotencyKey, create.calls[0].idempotencyKey);

  const event = scripted(reset, json(202, { accepted: true, message_id: 'm', duplicate: false }));
  await createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: event.impl }).ingestEvent({ body: { event_name: 'visit', participant_id: 'p' } });
  assert.equal(event.calls.length, 2);
  assert.equal((event.calls[0].body as any).idempotency_key, (event.calls[1].body as any).idempotency_key);
});

test('a connection dropped in the middle of the answer counts as a network failure', async () => {
  const cutOff = () =>
    new Response(
      new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"items": ['));
          controller.error(new Error('socket hang up'));
        },
      }),
      { status: 200, headers: { 'content-type': 'application/json' } },
    );
  const read = scripted(cutOff, json(200, { items: [] }));
  assert.deepEqual(await createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: read.impl }).listBadges(), { items: [] });
  assert.equal(read.calls.length, 2);
  const write = scripted(cutOff);
  const error = await createLoyaltyClient({ baseUrl: BASE_URL, fetch: write.impl }).convertReferral({ body: CONVERSION }).catch((e: unknown) => e);
  assert.ok(error instanceof LoyaltyConnectionError);
  assert.match(error.detail, /socket hang up/);
  assert.equal(write.calls.length, 1);
});

test('retries are bounded by maxRetries, and a Retry-After beyond maxRetryAfterSeconds is not waited for', async () => {
  const always = scripted(limited('0'));
  const error = await createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: always.impl, maxRetries: 3 }).listBadges().catch((e: unknown) => e);
  assert.ok(error instanceof LoyaltyRateLimitError);
  assert.equal(always.calls.length, 4);
  assert.equal(error.retryAfterSeconds, 0);

  const capped = scripted(limited('1000'));
  const started = Date.now();
  const refused = await createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: capped.impl, maxRetries: 10_000 }).listBadges().catch((e: unknown) => e);
  assert.ok(refused instanceof LoyaltyRateLimitError);
  assert.equal(refused.retryAfterSeconds, 1000);
  assert.equal(capped.calls.length, 1);
  assert.ok(Date.now() - started < 1000);

  const many = scripted(limited('0'));
  await createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: many.impl, maxRetries: 10_000 }).listBadges().catch(() => undefined);
  assert.equal(many.calls.length, 11, 'at most 10 retries whatever maxRetries says');
});

test('timeouts and aborts', async () => {
  const hanging: typeof fetch = (_input, init) =>
    new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
  const timedOut = await createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: hanging, timeoutMs: 50, maxRetries: 1 }).listBadges().catch((e: unknown) => e);
  assert.ok(timedOut instanceof LoyaltyConnectionError);
  assert.equal(timedOut.code, 'TIMEOUT');

  const controller = new AbortController();
  const call = createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: hanging, maxRetries: 5 }).listBadges({ signal: controller.signal });
  controller.abort(new Error('the user left'));
  await assert.rejects(call, /the user left/);
});

test('a stream refused with 429 reports Retry-After and does not reconnect before it', async () => {
  const streamed = scripted(json(429, { detail: 'too many open streams', code: 'STREAM_LIMIT_REACHED', error_version: 1 }, { 'retry-after': '4' }));
  const errors: unknown[] = [];
  const client = createLoyaltyClient({ baseUrl: BASE_URL, fetch: streamed.impl, session: { sessionId: 'ses_x', engagementId: 'eng_x' } });
  const close = client.streamEvents({ onEvent: () => undefined, onError: (error) => errors.push(error) });
  try {
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    assert.equal(streamed.calls.length, 1, 'no reconnect after the default 3 s while Retry-After asks for 4 s');
    assert.ok(errors[0] instanceof LoyaltyRateLimitError);
    assert.equal(errors[0].retryAfterSeconds, 4);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(streamed.calls.length, 2, 'reconnected once the Retry-After had passed');
  } finally {
    close();
  }
});

test('Retry-After in seconds or as an HTTP date', () => {
  assert.equal(parseRetryAfter('7'), 7);
  assert.equal(parseRetryAfter(null), null);
  assert.equal(parseRetryAfter('soon'), null);
  const now = Date.parse('2026-11-22T01:00:00Z');
  assert.equal(parseRetryAfter('Sun, 22 Nov 2026 01:00:30 GMT', now), 30);
  assert.equal(parseRetryAfter('Sun, 22 Nov 2026 00:59:00 GMT', now), 0);
});

test('idempotency keys are v4 UUIDs, also where crypto.randomUUID is missing (plain-http embeds)', async () => {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  const answer = json(200, { available: 1, lifetime: 1, delta: 1, duplicate: false, ledger_entry_id: 'x' });
  const withNative = scripted(answer);
  await createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: withNative.impl }).grantPoints({ body: { participant_id: 'p', amount: 1, reason: 'r' } });
  assert.match((withNative.calls[0].body as any).idempotency_key, uuid);
  Object.defineProperty(globalThis.crypto, 'randomUUID', { value: undefined, configurable: true });
  try {
    const without = scripted(answer);
    const client = createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: without.impl });
    await client.grantPoints({ body: { participant_id: 'p', amount: 1, reason: 'r' } });
    await client.grantPoints({ body: { participant_id: 'p', amount: 1, reason: 'r' } });
    const keys = without.calls.map((call) => (call.body as any).idempotency_key);
    keys.forEach((key) => assert.match(key, uuid));
    assert.notEqual(keys[0], keys[1]);
  } finally {
    delete (globalThis.crypto as unknown as Record<string, unknown>).randomUUID;
  }
  assert.equal(typeof globalThis.crypto.randomUUID, 'function');
});

test('the deprecated full participant read warns once and still works', async (t) => {
  const warn = t.mock.method(console, 'warn', () => undefined);
  const read = scripted(json(200, { participant_id: 'p' }));
  const client = createLoyaltyClient({ baseUrl: BASE_URL, apiKey: KEY, fetch: read.impl });
  await client.getParticipant({ path: { participant_id: 'p' } });
  await client.getParticipant({ path: { participant_id: 'p' } });
  assert.equal(read.calls.length, 2);
  assert.equal(warn.mock.callCount(), 1);
  assert.match(String(warn.mock.calls[0].arguments[0]), /getParticipantState/);
});

test('503 SERVICE_OVERLOADED was refused before any work: even a public POST is sent again after Retry-After', async () => {
  const overloaded = json(503, { detail: 'the service is at its limit of 1000 requests in progress; nothing was done: retry after 1 s', code: 'SERVICE_OVERLOADED', error_version: 1 }, { 'retry-after': '0' });
  const retries: RetryInfo[] = [];
  const convert = scripted(overloaded, json(200, {}));
  await createLoyaltyClient({ baseUrl: BASE_URL, fetch: convert.impl, onRetry: (info) => retries.push(info) }).convertReferral({ body: CONVERSION });
  assert.equal(convert.calls.length, 2);
  assert.deepEqual(retries.map((retry) => [retry.status, retry.reason, retry.delayMs]), [[503, 'unavailable', 0]]);
});
