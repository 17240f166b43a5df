import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.ts';
import {
  createLoyaltyClient,
  LoyaltyAuthenticationError,
  LoyaltyError,
  LoyaltyInsufficientPointsError,
  LoyaltyNotFoundError,
  LoyaltyPermissionError,
  LoyaltyRateLimitError,
  LoyaltyUnprocessableError,
  LoyaltyValidationError,
  type RetryInfo,
} from '@loyalty/sdk';

/** The client against a running service, through real HTTP. */

interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: any;
}

/** fetch that records what is sent; `loseResponses` answers reach the service but are dropped, as on a broken connection. */
function recordingFetch(options: { loseResponses?: number } = {}) {
  const sent: Recorded[] = [];
  let toLose = options.loseResponses ?? 0;
  const impl: typeof fetch = async (input, init) => {
    sent.push({
      method: init?.method ?? 'GET',
      url: String(input),
      headers: { ...(init?.headers as Record<string, string>) },
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    const response = await fetch(input, init);
    if (toLose > 0) {
      toLose -= 1;
      await response.arrayBuffer();
      throw new TypeError('fetch failed: the connection was reset before the response arrived');
    }
    return response;
  };
  return { sent, impl, loseNext: (count: number) => (toLose = count) };
}

test('server client: grants and deducts with generated idempotency keys, typed errors', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const recorder = recordingFetch();
  const client = createLoyaltyClient({ baseUrl: svc.baseUrl, apiKey: tenant.apiKey, fetch: recorder.impl });

  await t.test('a grant without a key gets a generated UUID key and applies once', async () => {
    const granted = await client.grantPoints({ body: { participant_id: 'p-1', amount: 100, reason: 'welcome' } });
    assert.deepEqual({ available: granted.available, lifetime: granted.lifetime, delta: granted.delta, duplicate: granted.duplicate }, { available: 100, lifetime: 100, delta: 100, duplicate: false });
    const sent = recorder.sent.at(-1)!;
    assert.match(sent.body.idempotency_key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(sent.headers['x-api-key'], tenant.apiKey);
  });

  await t.test('a grant whose response is lost is retried with the same key: duplicate: true, applied once', async () => {
    const before = recorder.sent.length;
    recorder.loseNext(1);
    const granted = await client.grantPoints({ body: { participant_id: 'p-1', amount: 40, reason: 'refund' } });
    const attempts = recorder.sent.slice(before);
    assert.equal(attempts.length, 2);
    assert.equal(attempts[0].body.idempotency_key, attempts[1].body.idempotency_key);
    assert.equal(granted.duplicate, true);
    assert.equal(granted.available, 140);
    const rows = await svc.sql('SELECT count(*)::int AS n, sum(delta)::int AS total FROM points_ledger WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, 'p-1']);
    assert.deepEqual(rows[0], { n: 2, total: 140 });
  });

  await t.test('a deduct whose response is lost is retried with the same key and applied once', async () => {
    const before = recorder.sent.length;
    recorder.loseNext(1);
    const deducted = await client.deductPoints({ body: { participant_id: 'p-1', amount: 30, reason: 'coffee' } });
    const attempts = recorder.sent.slice(before);
    assert.equal(attempts.length, 2);
    assert.equal(attempts[0].body.idempotency_key, attempts[1].body.idempotency_key);
    assert.equal(deducted.delta, -30);
    assert.equal(deducted.duplicate, true);
    assert.equal(deducted.available, 110);
  });

  await t.test('a key given by the caller is used as is, and repeating it returns duplicate: true', async () => {
    const first = await client.grantPoints({ body: { participant_id: 'p-2', amount: 5, reason: 'bonus', idempotency_key: 'order-77' } });
    const again = await client.grantPoints({ body: { participant_id: 'p-2', amount: 5, reason: 'bonus' }, idempotencyKey: 'order-77' });
    assert.equal(first.duplicate, false);
    assert.equal(again.duplicate, true);
    assert.equal(again.available, 5);
  });

  await t.test('events get a generated key, per event in a batch', async () => {
    const single = await client.ingestEvent({ body: { event_name: 'purchase', participant_id: 'p-3', properties: { total: 12 } } });
    assert.equal(single.accepted, true);
    assert.equal(single.duplicate, false);
    assert.ok(recorder.sent.at(-1)!.body.idempotency_key);
    await client.postEventBatch({ body: { events: [{ event_name: 'visit', participant_id: 'p-3' }, { event_name: 'visit', participant_id: 'p-4', idempotency_key: 'mine-1' }] } });
    const keys = recorder.sent.at(-1)!.body.events.map((event: { idempotency_key: string }) => event.idempotency_key);
    assert.equal(keys[1], 'mine-1');
    assert.ok(keys[0] && keys[0] !== 'mine-1');
  });

  await t.test('an Idempotency-Key header given by the caller is the key: the body carries it and a repeat returns duplicate: true', async () => {
    const event = { event_name: 'purchase', participant_id: 'p-5' };
    const first = await client.ingestEvent({ body: event, headers: { 'Idempotency-Key': 'header-event-1' } });
    assert.equal(recorder.sent.at(-1)!.body.idempotency_key, 'header-event-1');
    assert.equal(first.duplicate, false);
    const again = await client.ingestEvent({ body: event, headers: { 'idempotency-key': 'header-event-1' } });
    assert.equal(again.duplicate, true);
    assert.equal(again.message_id, first.message_id);

    const grant = { participant_id: 'p-5', amount: 4, reason: 'bonus' };
    const granted = await client.grantPoints({ body: grant, headers: { 'Idempotency-Key': 'header-grant-1' } });
    const repeated = await client.grantPoints({ body: grant, headers: { 'Idempotency-Key': 'header-grant-1' } });
    assert.equal(granted.duplicate, false);
    assert.equal(repeated.duplicate, true);
    assert.equal(repeated.available, 4);
  });

  await t.test('insufficient points: 422 LoyaltyInsufficientPointsError with available and required; nothing leaves', async () => {
    const error = await client.deductPoints({ body: { participant_id: 'p-1', amount: 1000, reason: 'tv' } }).then(
      () => assert.fail('expected a 422'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof LoyaltyInsufficientPointsError);
    assert.ok(error instanceof LoyaltyUnprocessableError);
    assert.equal(error.status, 422);
    assert.equal(error.kind, 'unprocessable');
    assert.equal(error.available, 110);
    assert.equal(error.required, 1000);
    assert.equal(error.error_version, 1);
    assert.equal(typeof error.code, 'string');
    assert.ok(error.detail.length > 0);
    assert.ok(error.requestId);
    const [balance] = await svc.sql('SELECT available::int AS available FROM points_balances WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, 'p-1']);
    assert.equal(balance.available, 110);
  });

  await t.test('401 with a wrong key: LoyaltyAuthenticationError with code and detail', async () => {
    const stranger = createLoyaltyClient({ baseUrl: svc.baseUrl, apiKey: `lk_test_${'0'.repeat(32)}` });
    const error = await stranger.listWebhooks().catch((e: unknown) => e);
    assert.ok(error instanceof LoyaltyAuthenticationError, String(error));
    assert.equal(error.status, 401);
    assert.equal(error.kind, 'unauthenticated');
    assert.ok(error.code.length > 0);
    assert.ok(error.detail.length > 0);
    assert.equal(error.error_version, 1);
  });

  await t.test('404 for an unknown or another tenant\'s resource: LoyaltyNotFoundError', async () => {
    const error = await client.getWebhook({ path: { destination_id: '00000000-0000-4000-8000-000000000000' } }).catch((e: unknown) => e);
    assert.ok(error instanceof LoyaltyNotFoundError, String(error));
    assert.equal(error.status, 404);
    assert.ok(error.detail.length > 0);
    const other = await svc.createTenant();
    await createLoyaltyClient({ baseUrl: svc.baseUrl, apiKey: other.apiKey }).createBadge({ body: { code: 'gold', name: 'Gold' } });
    const crossTenant = await client.getBadge({ path: { code: 'gold' } }).catch((e: unknown) => e);
    assert.ok(crossTenant instanceof LoyaltyNotFoundError, String(crossTenant));
  });

  await t.test('422 with the coded envelope: LoyaltyUnprocessableError carrying code VALIDATION_INVALID_VALUE', async () => {
    const error = await client.createWebhook({ body: { name: 'crm', url: 'https://hooks.example.com/x', events: ['no.such.event'] } }).catch((e: unknown) => e);
    assert.ok(error instanceof LoyaltyUnprocessableError, String(error));
    assert.equal(error.code, 'VALIDATION_INVALID_VALUE');
    assert.match(error.detail, /no\.such\.event/);
    assert.deepEqual((error.body as Record<string, unknown>).code, 'VALIDATION_INVALID_VALUE');
    // The entry at fault, as a typed field error.
    assert.deepEqual(error.errors.map((e) => [e.in, e.path, e.code]), [['body', '/events/0', 'unknown_event']]);
  });

  await t.test('403 from a participant-facing route: LoyaltyPermissionError with the code', async () => {
    const engagementId = await svc.createEngagement(tenant);
    await svc.request('POST', `/api/v1/admin/engagements/${engagementId}/publish`, { key: tenant.apiKey });
    const [row] = await svc.sql('SELECT site_slug FROM engagements WHERE tenant_id = $1 AND id = $2', [tenant.tenantId, engagementId]);
    const error = await client.createSiteSession({ path: { tenantSlug: tenant.slug, siteSlug: row.site_slug }, body: {} }).catch((e: unknown) => e);
    assert.ok(error instanceof LoyaltyPermissionError, String(error));
    assert.equal(error.status, 403);
    assert.equal(error.code, 'ANONYMOUS_SESSIONS_DISABLED');
    // The SDK never sends the API key on participant routes (the service would refuse it with 403).
    const session = await svc.createSession(tenant, { engagementId });
    const asParticipant = createLoyaltyClient({ baseUrl: svc.baseUrl, apiKey: tenant.apiKey, session: { sessionId: session.sessionId, engagementId }, fetch: recorder.impl });
    const balance = await asParticipant.getPointsBalance();
    assert.equal(balance.available_points, 0);
    assert.equal(recorder.sent.at(-1)!.headers['x-api-key'], undefined);
    assert.equal(recorder.sent.at(-1)!.body.session_id, session.sessionId);
  });

  await t.test('malformed arguments are refused before anything is sent', async () => {
    const before = recorder.sent.length;
    const bad: Array<[string, () => Promise<unknown>]> = [
      ['body.amount', () => client.grantPoints({ body: { participant_id: 'p', amount: 0, reason: 'r' } })],
      ['body.amount', () => client.grantPoints({ body: { participant_id: 'p', amount: -5, reason: 'r' } })],
      ['body.amount', () => client.grantPoints({ body: { participant_id: 'p', amount: 1.5, reason: 'r' } })],
      ['body.amount', () => client.deductPoints({ body: { participant_id: 'p', amount: Number.NaN, reason: 'r' } })],
      ['body.amount', () => client.deductPoints({ body: { participant_id: 'p', amount: 2 ** 53, reason: 'r' } })],
      ['body.amount', () => client.grantPoints({ body: { participant_id: 'p', amount: '10' as unknown as number, reason: 'r' } })],
      ['body.participant_id', () => client.grantPoints({ body: { participant_id: '', amount: 1, reason: 'r' } })],
      ['body.participant_id', () => client.grantPoints({ body: { participant_id: 'a\nb', amount: 1, reason: 'r' } })],
      ['body.reason', () => client.grantPoints({ body: { participant_id: 'p', amount: 1, reason: '  ' } })],
      ['path.destination_id', () => client.getWebhook({ path: { destination_id: '' } })],
      ['path.participant_id', () => client.getParticipantState({ path: { participant_id: undefined as unknown as string } })],
      ['body.event_name', () => client.ingestEvent({ body: { event_name: '', participant_id: 'p' } })],
      ['body.timestamp', () => client.ingestEvent({ body: { event_name: 'x', participant_id: 'p', timestamp: 'yesterday' } })],
      ['body.events', () => client.postEventBatch({ body: { events: [] } })],
      ['body.events[1].participant_id', () => client.ingestEventBatch({ body: { events: [{ event_name: 'a', participant_id: 'p' }, { event_name: 'a', participant_id: '' }] } })],
      ['body', () => client.grantPoints(undefined as never)],
      ['session', () => client.getPointsBalance()],
    ];
    for (const [field, call] of bad) {
      const error = await call().catch((e: unknown) => e);
      assert.ok(error instanceof LoyaltyValidationError, `${field}: ${String(error)}`);
      assert.equal(error.field, field);
      assert.equal(error.status, 0);
      assert.equal(error.kind, 'validation');
    }
    const keyless = createLoyaltyClient({ baseUrl: svc.baseUrl, fetch: recorder.impl });
    const error = await keyless.listWebhooks().catch((e: unknown) => e);
    assert.ok(error instanceof LoyaltyValidationError && error.field === 'apiKey');
    assert.equal(recorder.sent.length, before, 'no request was sent');
    assert.throws(() => createLoyaltyClient({ baseUrl: 'not a url' }), LoyaltyValidationError);
  });
});

test('429: the client waits for Retry-After and tries again; without retries it throws LoyaltyRateLimitError', async (t) => {
  // A burst of 2 ingestion requests per second: the third within a second gets 429 with Retry-After 1.
  const svc = await startTestService(t, { config: { RATE_LIMIT_INGEST_BURST_PER_SECOND: '2' } });
  const tenant = await svc.createTenant();
  const retries: RetryInfo[] = [];
  const recorder = recordingFetch();
  const client = createLoyaltyClient({ baseUrl: svc.baseUrl, apiKey: tenant.apiKey, fetch: recorder.impl, maxRetries: 3, onRetry: (info) => retries.push(info) });
  const started = Date.now();
  const results = [];
  for (let i = 0; i < 4; i++) results.push(await client.ingestEvent({ body: { event_name: 'visit', participant_id: `p-${i}` } }));
  const elapsedMs = Date.now() - started;
  assert.ok(results.every((result) => result.accepted));
  assert.ok(retries.length >= 1, 'at least one call was rate limited');
  for (const retry of retries) {
    assert.equal(retry.status, 429);
    assert.equal(retry.reason, 'rate_limited');
    assert.ok(retry.delayMs >= 1000 && retry.delayMs % 1000 === 0, `waited ${retry.delayMs} ms, the Retry-After in seconds`);
  }
  assert.ok(elapsedMs >= retries.reduce((sum, retry) => sum + retry.delayMs, 0), 'the client really waited');
  // The retried request carried the same idempotency key, and only 4 events were stored.
  const keys = recorder.sent.map((request) => request.body.idempotency_key);
  assert.equal(new Set(keys).size, 4);
  const [stored] = await svc.sql('SELECT count(*)::int AS n FROM ingested_events WHERE tenant_id = $1', [tenant.tenantId]);
  assert.equal(stored.n, 4);

  const impatient = createLoyaltyClient({ baseUrl: svc.baseUrl, apiKey: tenant.apiKey, maxRetries: 0 });
  let limited: unknown = null;
  for (let i = 0; i < 5 && !limited; i++) {
    limited = await impatient.ingestEvent({ body: { event_name: 'visit', participant_id: 'q' } }).then(() => null, (e: unknown) => e);
  }
  assert.ok(limited instanceof LoyaltyRateLimitError, String(limited));
  assert.equal(limited.status, 429);
  assert.ok(limited.retryAfterSeconds !== null && limited.retryAfterSeconds >= 1);
  assert.equal(limited.code, 'RATE_LIMITED');
});
