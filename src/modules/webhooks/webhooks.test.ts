import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, waitFor, type TestService, type TestTenant } from '../../../test/helper.js';
import { emit, type OutboxEvent } from '../../platform/outbox.js';
import Stripe from 'stripe';
import { startReceiver, verifySignature, type Receiver } from './testing.js';

/**
 * Destinations, the delivery contract, retries, logs, replays and the test
 * delivery, end to end: real HTTP in, real HTTP out to a local receiver.
 * Loopback and plain-http receivers are allowed here through the development
 * settings, which are off by default and refused in production.
 */
const DEV_CONFIG = { ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true', TIME_SCALE: '0.0001' };
const ENGAGEMENT_A = '11111111-1111-4111-8111-111111111111';
const ENGAGEMENT_B = '22222222-2222-4222-8222-222222222222';
const BASE = '/api/v1/gamify/webhooks';

async function emitCommitted(svc: TestService, tenantId: string, events: OutboxEvent | OutboxEvent[]): Promise<string[]> {
  return svc.service.db.tenant(tenantId, (tx) => emit(tx, tenantId, events));
}

function awarded(participantId: string, engagementId: string | null = null, amount = 10): OutboxEvent {
  return {
    event: 'points.awarded.v1',
    participantId,
    engagementId,
    data: { participant_id: participantId, amount, available: amount, lifetime: amount, reason: 'test', ledger_entry_id: 'led_1', source_kind: 'grant', multiplier: null },
  };
}

async function createDestination(svc: TestService, tenant: TestTenant, body: Record<string, unknown>) {
  const response = await svc.request('POST', BASE, { key: tenant.apiKey, body: { name: 'receiver', events: ['points.awarded.v1'], ...body } });
  assert.equal(response.status, 201, response.text);
  return response.body as { id: string; secret: string };
}

test('webhooks: destinations and their validation', async (t) => {
  const svc = await startTestService(t, { config: DEV_CONFIG });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();

  await t.test('creation returns the signing secret once, with the defaults of the spec', async () => {
    const created = await svc.request('POST', BASE, { key: tenant.apiKey, body: { name: 'crm', url: 'https://93.184.216.34/hooks', events: ['badge.earned.v1'] } });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.body.retry_count, 3);
    assert.equal(created.body.timeout_seconds, 10);
    assert.deepEqual(created.body.custom_headers, {});
    assert.equal(created.body.engagement_id, null);
    assert.equal(created.body.active, true);
    const read = await svc.request('GET', `${BASE}/${created.body.id}`, { key: tenant.apiKey });
    assert.equal(read.status, 200);
    assert.equal(read.body.secret, undefined, 'the secret is shown only at creation');
    const list = await svc.request('GET', BASE, { key: tenant.apiKey });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.destinations.map((d: { id: string }) => d.id), [created.body.id]);
  });

  await t.test('Errors 4: 401 AUTH_UNAUTHENTICATED without a credential, 403 AUTH_FORBIDDEN without an admin scope', async () => {
    const body = { name: 'x', url: 'https://93.184.216.34/', events: ['badge.earned.v1'] };
    const anonymous = await svc.request('POST', BASE, { body });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.body.code, 'AUTH_UNAUTHENTICATED');
    const jwt = await svc.login(tenant);
    const ingestKey = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'ingest only', scopes: ['ingest'] } });
    assert.equal(ingestKey.status, 201);
    for (const [method, path] of [['POST', BASE], ['GET', BASE], ['GET', `${BASE}/whk_x`], ['DELETE', `${BASE}/whk_x`]] as const) {
      const forbidden = await svc.request(method, path, { key: ingestKey.body.key, body: method === 'POST' ? body : undefined });
      assert.equal(forbidden.status, 403, `${method} ${path}`);
      assert.equal(forbidden.body.code, 'AUTH_FORBIDDEN');
    }
    const gamifyKey = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'gamify', scopes: ['gamify:admin'] } });
    const allowed = await svc.request('POST', BASE, { key: gamifyKey.body.key, body });
    assert.equal(allowed.status, 201, 'gamify:admin is enough');
  });

  await t.test('Errors 4: every rule violation is 422 VALIDATION_INVALID_VALUE and creates nothing', async () => {
    const valid = { name: 'ok', url: 'https://93.184.216.34/', events: ['badge.earned.v1'] };
    const cases: Array<[string, Record<string, unknown>]> = [
      ['unknown event name', { events: ['badge.earned.v1', 'no.such.event'] }],
      ['ping is not subscribable', { events: ['ping'] }],
      ['empty event list', { events: [] }],
      ['non-https URL', { url: 'ftp://93.184.216.34/' }],
      ['forgery-blocked URL', { url: 'https://10.0.0.1/' }],
      ['reserved [system] prefix', { name: '[system] audit' }],
      ['reserved prefix in other case', { name: '[SYSTEM]x' }],
      ['empty name', { name: '' }],
      ['name over 100 characters', { name: 'n'.repeat(101) }],
      ['retry_count below 0', { retry_count: -1 }],
      ['retry_count above 5', { retry_count: 6 }],
      ['timeout_seconds below 3', { timeout_seconds: 2 }],
      ['timeout_seconds above 60', { timeout_seconds: 61 }],
      ['reserved custom header', { custom_headers: { 'X-Service-Signature': 'forged' } }],
      ['custom header with a line break', { custom_headers: { 'X-Tenant': 'a\r\nb' } }],
    ];
    const before = await svc.sql('SELECT count(*)::int AS n FROM webhook_destinations WHERE tenant_id = $1', [tenant.tenantId]);
    for (const [label, change] of cases) {
      const response = await svc.request('POST', BASE, { key: tenant.apiKey, body: { ...valid, ...change } });
      assert.equal(response.status, 422, `${label}: ${response.text}`);
      assert.equal(response.body.code, 'VALIDATION_INVALID_VALUE', label);
      assert.equal(response.body.error_version, 1);
      assert.ok(response.body.detail.length > 0);
    }
    const after = await svc.sql('SELECT count(*)::int AS n FROM webhook_destinations WHERE tenant_id = $1', [tenant.tenantId]);
    assert.equal(after[0].n, before[0].n);
    const boundary = await svc.request('POST', BASE, { key: tenant.apiKey, body: { ...valid, name: 'n'.repeat(100), retry_count: 5, timeout_seconds: 60 } });
    assert.equal(boundary.status, 201, 'the limits themselves are allowed');
    const low = await svc.request('POST', BASE, { key: tenant.apiKey, body: { ...valid, retry_count: 0, timeout_seconds: 3 } });
    assert.equal(low.status, 201);
    const unknownField = await svc.request('POST', BASE, { key: tenant.apiKey, body: { ...valid, secret: 'mine' } });
    assert.equal(unknownField.status, 400, 'bodies are closed');
  });

  await t.test('PATCH updates url, events, retries, timeout and active state, and re-validates the URL', async () => {
    const created = await createDestination(svc, tenant, { url: 'https://93.184.216.34/a' });
    const blocked = await svc.request('PATCH', `${BASE}/${created.id}`, { key: tenant.apiKey, body: { url: 'https://169.254.169.254/latest/meta-data' } });
    assert.equal(blocked.status, 422);
    assert.equal(blocked.body.code, 'VALIDATION_INVALID_VALUE');
    const outOfRange = await svc.request('PATCH', `${BASE}/${created.id}`, { key: tenant.apiKey, body: { retry_count: 9 } });
    assert.equal(outOfRange.status, 422);
    const updated = await svc.request('PATCH', `${BASE}/${created.id}`, {
      key: tenant.apiKey,
      body: { url: 'https://93.184.216.34/b', events: ['tier.changed.v1', 'badge.earned.v1'], retry_count: 1, timeout_seconds: 5, active: false },
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.url, 'https://93.184.216.34/b');
    assert.deepEqual(updated.body.events, ['tier.changed.v1', 'badge.earned.v1']);
    assert.equal(updated.body.retry_count, 1);
    assert.equal(updated.body.timeout_seconds, 5);
    assert.equal(updated.body.active, false);
    const renamed = await svc.request('PATCH', `${BASE}/${created.id}`, { key: tenant.apiKey, body: { name: 'other' } });
    assert.equal(renamed.status, 400, 'the name is not updatable');
  });

  await t.test("another tenant's destination is a 404 on every route", async () => {
    const created = await createDestination(svc, tenant, { url: 'https://93.184.216.34/x' });
    const paths: Array<[string, string, unknown?]> = [
      ['GET', `${BASE}/${created.id}`],
      ['PATCH', `${BASE}/${created.id}`, { active: false }],
      ['DELETE', `${BASE}/${created.id}`],
      ['POST', `${BASE}/${created.id}/test`],
      ['GET', `${BASE}/${created.id}/logs`],
      ['POST', `${BASE}/${created.id}/replay`, {}],
      ['GET', `${BASE}/${created.id}/replay-jobs/wrj_x`],
      ['POST', `${BASE}/${created.id}/deliveries/dlv_x/replay`],
    ];
    for (const [method, path, body] of paths) {
      const response = await svc.request(method, path, { key: other.apiKey, body });
      assert.equal(response.status, 404, `${method} ${path}`);
    }
    const still = await svc.request('GET', `${BASE}/${created.id}`, { key: tenant.apiKey });
    assert.equal(still.body.active, true);
    const deleted = await svc.request('DELETE', `${BASE}/${created.id}`, { key: tenant.apiKey });
    assert.equal(deleted.status, 204);
    assert.equal((await svc.request('GET', `${BASE}/${created.id}`, { key: tenant.apiKey })).status, 404);
  });

  await t.test('loopback and plain-http receivers are refused when the development settings are off', async () => {
    const strict = await startTestService(t);
    const strictTenant = await strict.createTenant();
    for (const url of ['http://93.184.216.34/', 'https://127.0.0.1:8443/', 'https://localhost/', 'https://api.localhost/']) {
      const response = await strict.request('POST', BASE, { key: strictTenant.apiKey, body: { name: 'x', url, events: ['badge.earned.v1'] } });
      assert.equal(response.status, 422, url);
    }
  });
});

test('webhooks: delivery contract, retries, logs, replays', async (t) => {
  const svc = await startTestService(t, { jobs: true, config: DEV_CONFIG });
  const tenant = await svc.createTenant();
  const receivers: Receiver[] = [];
  t.after(async () => {
    for (const receiver of receivers) await receiver.close();
  });
  const receiver = await startReceiver();
  receivers.push(receiver);

  await t.test('a committed event arrives signed, with every header and the envelope; a rolled-back one never does', async () => {
    const destination = await createDestination(svc, tenant, { url: `${receiver.url}/hook`, custom_headers: { 'X-Tenant-Token': 'abc' } });
    const [eventId] = await emitCommitted(svc, tenant.tenantId, awarded('p-1', ENGAGEMENT_A, 25));
    await assert.rejects(
      svc.service.db.tenant(tenant.tenantId, async (tx) => {
        await emit(tx, tenant.tenantId, awarded('p-rolled-back'));
        throw new Error('the change fails after emitting');
      }),
    );
    const delivered = await waitFor('the delivery', () => receiver.received.find((r) => r.body?.id === eventId));
    assert.equal(delivered.path, '/hook');
    assert.equal(delivered.headers['x-service-event'], 'points.awarded.v1');
    assert.equal(delivered.headers['x-service-delivery-id'], eventId);
    assert.equal(delivered.headers['x-tenant-token'], 'abc');
    assert.equal(delivered.headers['content-type'], 'application/json');
    const signature = String(delivered.headers['x-service-signature']);
    assert.match(signature, /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.equal(signature.split(',')[0], `t=${delivered.headers['x-service-timestamp']}`);
    assert.ok(verifySignature(destination.secret, signature, delivered.rawBody));
    assert.ok(!verifySignature(destination.secret, signature, delivered.rawBody.replace('25', '26')), 'a changed body fails');
    assert.ok(!verifySignature('whsec_other', signature, delivered.rawBody), 'another secret fails');
    assert.deepEqual(Object.keys(delivered.body).sort(), ['data', 'engagement_id', 'event', 'id', 'livemode', 'participant_id', 'tenant_id', 'timestamp']);
    assert.match(delivered.body.id, /^evt_/);
    assert.equal(delivered.body.tenant_id, tenant.tenantId);
    assert.equal(delivered.body.engagement_id, ENGAGEMENT_A);
    assert.equal(delivered.body.participant_id, 'p-1');
    assert.equal(delivered.body.data.amount, 25);
    assert.ok(!Number.isNaN(Date.parse(delivered.body.timestamp)));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.ok(!receiver.received.some((r) => r.body?.participant_id === 'p-rolled-back'));
    const rolledBack = await svc.sql(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE participant_id = 'p-rolled-back'`);
    assert.equal(rolledBack[0].n, 0);
    await svc.request('DELETE', `${BASE}/${destination.id}`, { key: tenant.apiKey });
  });

  await t.test('fan-out honours subscriptions, engagement scoping and the active state', async () => {
    const all = await createDestination(svc, tenant, { url: `${receiver.url}/all`, events: ['points.awarded.v1', 'badge.earned.v1'] });
    const scoped = await createDestination(svc, tenant, { url: `${receiver.url}/scoped`, engagement_id: ENGAGEMENT_A });
    const badgesOnly = await createDestination(svc, tenant, { url: `${receiver.url}/badges`, events: ['badge.earned.v1'] });
    const inactive = await createDestination(svc, tenant, { url: `${receiver.url}/inactive`, active: false });
    const ids = await emitCommitted(svc, tenant.tenantId, [awarded('p-2', ENGAGEMENT_A), awarded('p-2', ENGAGEMENT_B), awarded('p-2', null)]);
    await waitFor('fan-out', async () => (await svc.sql(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = ANY($1) AND status = 'SUCCEEDED'`, [ids]))[0].n === 4);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const byPath = (path: string) => receiver.received.filter((r) => r.path === path && ids.includes(r.body?.id)).map((r) => r.body.engagement_id).sort();
    assert.deepEqual(byPath('/all'), [ENGAGEMENT_A, ENGAGEMENT_B, null].sort());
    assert.deepEqual(byPath('/scoped'), [ENGAGEMENT_A]);
    assert.deepEqual(byPath('/badges'), []);
    assert.deepEqual(byPath('/inactive'), []);
    for (const d of [all, scoped, badgesOnly, inactive]) await svc.request('DELETE', `${BASE}/${d.id}`, { key: tenant.apiKey });
  });

  await t.test('a failing receiver gets retry_count + 1 attempts, then the delivery is EXHAUSTED and every attempt is logged', async () => {
    const failing = await startReceiver((_r, res) => {
      res.statusCode = 503;
      res.end('x'.repeat(5000));
    });
    receivers.push(failing);
    const destination = await createDestination(svc, tenant, { url: `${failing.url}/down`, retry_count: 2 });
    const [eventId] = await emitCommitted(svc, tenant.tenantId, awarded('p-3'));
    const logs = await waitFor('exhaustion', async () => {
      const response = await svc.request('GET', `${BASE}/${destination.id}/logs`, { key: tenant.apiKey });
      return response.body.deliveries[0]?.status === 'EXHAUSTED' ? response.body : null;
    });
    const delivery = logs.deliveries[0];
    assert.equal(delivery.delivery_id, eventId);
    assert.equal(delivery.attempts, 3);
    assert.equal(delivery.max_attempts, 3);
    assert.equal(delivery.last_response_status, 503);
    assert.equal(delivery.next_attempt_at, null);
    assert.deepEqual(delivery.attempt_log.map((a: { attempt: number }) => a.attempt), [1, 2, 3]);
    for (const attempt of delivery.attempt_log) {
      assert.equal(attempt.outcome, 'failed');
      assert.equal(attempt.response_status, 503);
      assert.equal(attempt.response_body.length, 1024, 'the response body is stored truncated');
      assert.equal(typeof attempt.duration_ms, 'number');
    }
    const sent = failing.received.filter((r) => r.body?.id === eventId);
    assert.equal(sent.length, 3);
    assert.ok(sent.every((r) => r.headers['x-service-delivery-id'] === eventId), 'the delivery id is stable across retries');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(failing.received.filter((r) => r.body?.id === eventId).length, 3, 'EXHAUSTED is never re-sent automatically');

    // Single replay: a new delivery (new log id) of the same event, with the same envelope id.
    failing.respond = (_r, res) => res.end('fine now');
    const replay = await svc.request('POST', `${BASE}/${destination.id}/deliveries/${delivery.log_id}/replay`, { key: tenant.apiKey });
    assert.equal(replay.status, 202, replay.text);
    assert.notEqual(replay.body.log_id, delivery.log_id);
    assert.equal(replay.body.delivery_id, eventId);
    assert.equal(replay.body.replay_of, delivery.log_id);
    await waitFor('the replay', async () => {
      const response = await svc.request('GET', `${BASE}/${destination.id}/logs?status=SUCCEEDED`, { key: tenant.apiKey });
      return response.body.deliveries.some((d: { log_id: string }) => d.log_id === replay.body.log_id);
    });
    const replayed = failing.received.filter((r) => r.body?.id === eventId);
    assert.equal(replayed.length, 4);
    assert.equal(replayed[3].headers['x-service-delivery-id'], eventId);
    const again = await svc.request('POST', `${BASE}/${destination.id}/deliveries/dlv_nope/replay`, { key: tenant.apiKey });
    assert.equal(again.status, 404);
  });

  await t.test('retry backoff follows immediate, +30 s, +5 min, +30 min, scaled by TIME_SCALE', async () => {
    const { backoffSecondsBefore } = await import('./delivery.js');
    assert.deepEqual([1, 2, 3, 4, 5, 6].map(backoffSecondsBefore), [0, 30, 300, 1800, 1800, 1800]);
    const failing = await startReceiver((_r, res) => {
      res.statusCode = 500;
      res.end();
    });
    receivers.push(failing);
    const destination = await createDestination(svc, tenant, { url: `${failing.url}/slow-retry`, retry_count: 1 });
    // With the spec's timing (TIME_SCALE 1) the second attempt is scheduled 30 s after the first.
    const spec = await startTestService(t, { jobs: true, config: { ...DEV_CONFIG, TIME_SCALE: '1' } });
    const specTenant = await spec.createTenant();
    const specDestination = await createDestination(spec, specTenant, { url: `${failing.url}/spec`, retry_count: 5 });
    await spec.service.db.tenant(specTenant.tenantId, (tx) => emit(tx, specTenant.tenantId, awarded('p-4')));
    const row = await waitFor('the first attempt', async () => (await spec.sql(`SELECT * FROM webhook_deliveries WHERE destination_id = $1 AND status = 'RETRYING'`, [specDestination.id]))[0]);
    const delay = new Date(row.next_attempt_at).getTime() - new Date(row.updated_at).getTime();
    assert.equal(delay, 30_000);
    await svc.request('DELETE', `${BASE}/${destination.id}`, { key: tenant.apiKey });
  });

  await t.test('3xx is a failure and is never followed; a receiver that trickles its answer is cut at timeout_seconds', async () => {
    const target = await startReceiver();
    receivers.push(target);
    const redirecting = await startReceiver((_r, res) => {
      res.statusCode = 307;
      res.setHeader('location', `${target.url}/stolen`);
      res.end();
    });
    receivers.push(redirecting);
    const redirect = await createDestination(svc, tenant, { url: `${redirecting.url}/r`, retry_count: 0 });
    const ping = await svc.request('POST', `${BASE}/${redirect.id}/test`, { key: tenant.apiKey });
    assert.equal(ping.status, 200);
    assert.equal(ping.body.status, 'EXHAUSTED');
    assert.equal(ping.body.last_response_status, 307);
    assert.equal(target.received.length, 0, 'the redirect was not followed');

    const trickling = await startReceiver((_r, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 200);
      res.on('close', () => clearInterval(timer));
    });
    receivers.push(trickling);
    const slow = await createDestination(svc, tenant, { url: `${trickling.url}/t`, retry_count: 0, timeout_seconds: 3 });
    const started = Date.now();
    const result = await svc.request('POST', `${BASE}/${slow.id}/test`, { key: tenant.apiKey });
    const elapsed = Date.now() - started;
    assert.equal(result.body.status, 'EXHAUSTED');
    assert.match(result.body.last_error, /timed out after 3000 ms/);
    assert.ok(elapsed >= 3000 && elapsed < 5000, `cut at the timeout (${elapsed} ms)`);
  });

  await t.test('POST /test sends a signed ping and reports the attempt', async () => {
    const destination = await createDestination(svc, tenant, { url: `${receiver.url}/ping` });
    const response = await svc.request('POST', `${BASE}/${destination.id}/test`, { key: tenant.apiKey });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.status, 'SUCCEEDED');
    assert.equal(response.body.event, 'ping');
    assert.equal(response.body.attempt_log[0].response_status, 200);
    assert.equal(response.body.attempt_log[0].response_body, 'ok');
    const received = receiver.received.find((r) => r.body?.id === response.body.delivery_id)!;
    assert.equal(received.headers['x-service-event'], 'ping');
    assert.equal(received.body.event, 'ping');
    assert.ok(verifySignature(destination.secret, String(received.headers['x-service-signature']), received.rawBody));
  });

  await t.test("the signature verifies with Stripe's own verifier (same t=…,v1=… scheme)", async () => {
    const destination = await createDestination(svc, tenant, { url: `${receiver.url}/stripe-style` });
    const response = await svc.request('POST', `${BASE}/${destination.id}/test`, { key: tenant.apiKey });
    const received = receiver.received.find((r) => r.body?.id === response.body.delivery_id)!;
    const stripe = new Stripe('sk_test_unused');
    const verified = stripe.webhooks.constructEvent(received.rawBody, String(received.headers['x-service-signature']), destination.secret) as unknown as { id: string };
    assert.equal(verified.id, response.body.delivery_id);
    assert.throws(() => stripe.webhooks.constructEvent(received.rawBody, String(received.headers['x-service-signature']), 'whsec_wrong'));
  });

  await t.test('bulk replay is a job with a status that replays the exhausted deliveries', async () => {
    const flaky = await startReceiver((_r, res) => {
      res.statusCode = 500;
      res.end();
    });
    receivers.push(flaky);
    const destination = await createDestination(svc, tenant, { url: `${flaky.url}/bulk`, retry_count: 0 });
    const ids = await emitCommitted(svc, tenant.tenantId, [awarded('p-5'), awarded('p-6'), awarded('p-7')]);
    await waitFor('three exhausted deliveries', async () => (await svc.sql(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE destination_id = $1 AND status = 'EXHAUSTED'`, [destination.id]))[0].n === 3);
    flaky.respond = (_r, res) => res.end('ok');
    const started = await svc.request('POST', `${BASE}/${destination.id}/replay`, { key: tenant.apiKey, body: { statuses: ['EXHAUSTED'] } });
    assert.equal(started.status, 202, started.text);
    assert.match(started.body.job_id, /^wrj_/);
    assert.equal(started.body.status, 'queued');
    const finished = await waitFor('the replay job', async () => {
      const response = await svc.request('GET', `${BASE}/${destination.id}/replay-jobs/${started.body.job_id}`, { key: tenant.apiKey });
      return response.body.status === 'completed' ? response.body : null;
    });
    assert.equal(finished.matched, 3);
    assert.equal(finished.replayed, 3);
    await waitFor('the replays', () => ids.every((id) => flaky.received.filter((r) => r.body?.id === id).length === 2));
    // Running it again finds nothing: the latest delivery of each event succeeded.
    await waitFor('successes', async () => (await svc.sql(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE destination_id = $1 AND status = 'SUCCEEDED'`, [destination.id]))[0].n === 3);
    const second = await svc.request('POST', `${BASE}/${destination.id}/replay`, { key: tenant.apiKey, body: {} });
    const secondDone = await waitFor('the second replay job', async () => {
      const response = await svc.request('GET', `${BASE}/${destination.id}/replay-jobs/${second.body.job_id}`, { key: tenant.apiKey });
      return response.body.status === 'completed' ? response.body : null;
    });
    assert.equal(secondDone.replayed, 0);
    const inverted = await svc.request('POST', `${BASE}/${destination.id}/replay`, { key: tenant.apiKey, body: { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' } });
    assert.equal(inverted.status, 422);
  });
});
