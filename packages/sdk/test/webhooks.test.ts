import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, waitFor } from '../../../test/helper.ts';
import { startReceiver, type ReceivedRequest } from '../../../src/modules/webhooks/testing.ts';
import { createLoyaltyClient, verifyWebhook, LoyaltyWebhookSignatureError, type WebhookFailureReason } from '@loyalty/sdk';
import { verifyWebhookSync } from '@loyalty/sdk/node';

/** verifyWebhook against real deliveries of a running service to a loopback receiver. */

async function rejectsWith(promise: Promise<unknown>, reason: WebhookFailureReason): Promise<void> {
  await assert.rejects(promise, (error: unknown) => error instanceof LoyaltyWebhookSignatureError && error.reason === reason && error.kind === 'webhook_signature');
}

function syncRejectsWith(call: () => unknown, reason: WebhookFailureReason): void {
  assert.throws(call, (error: unknown) => error instanceof LoyaltyWebhookSignatureError && error.reason === reason);
}

test('verifyWebhook accepts the service\'s real deliveries and refuses tampered, stale or foreign ones', async (t) => {
  const svc = await startTestService(t, { jobs: true, config: { ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' } });
  const tenant = await svc.createTenant();
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const client = createLoyaltyClient({ baseUrl: svc.baseUrl, apiKey: tenant.apiKey });
  const destination = await client.createWebhook({ body: { name: 'receiver', url: `${receiver.url}/hooks`, events: ['points.awarded.v1'] } });
  const secret = destination.secret;
  assert.match(secret, /^whsec_/);
  const other = await client.createWebhook({ body: { name: 'other', url: `${receiver.url}/other`, events: ['badge.earned.v1'] } });

  await client.grantPoints({ body: { participant_id: 'p-1', amount: 25, reason: 'welcome' } });
  const delivery: ReceivedRequest = await waitFor('the points.awarded.v1 delivery', () => receiver.received.find((r) => r.path === '/hooks' && r.headers['x-service-event'] === 'points.awarded.v1'));
  const signature = String(delivery.headers['x-service-signature']);
  const timestamp = Number(delivery.headers['x-service-timestamp']);

  await t.test('a real delivery verifies, from a string or bytes, with Node or fetch-style headers', async () => {
    const envelope = await verifyWebhook(delivery.rawBody, delivery.headers, secret);
    assert.equal(envelope.event, 'points.awarded.v1');
    assert.equal(envelope.id, delivery.headers['x-service-delivery-id']);
    assert.equal(envelope.participant_id, 'p-1');
    assert.equal(envelope.data.amount, 25);
    const fromBytes = await verifyWebhook(new TextEncoder().encode(delivery.rawBody), new Headers({ 'X-Service-Signature': signature }), secret);
    assert.equal(fromBytes.id, envelope.id);
    assert.deepEqual(verifyWebhookSync(Buffer.from(delivery.rawBody), delivery.headers, secret), envelope);
  });

  await t.test('the signed test delivery (ping) verifies', async () => {
    const before = receiver.received.length;
    const outcome = await client.testWebhook({ path: { destination_id: destination.id } });
    assert.ok(outcome);
    const ping = await waitFor('the ping', () => receiver.received.slice(before).find((r) => r.headers['x-service-event'] === 'ping'));
    const envelope = await verifyWebhook(ping.rawBody, ping.headers, secret);
    assert.equal(envelope.event, 'ping');
  });

  await t.test('a tampered body is refused', async () => {
    const tampered = delivery.rawBody.replace('"amount":25', '"amount":2500');
    assert.notEqual(tampered, delivery.rawBody);
    await rejectsWith(verifyWebhook(tampered, delivery.headers, secret), 'signature_mismatch');
    syncRejectsWith(() => verifyWebhookSync(tampered, delivery.headers, secret), 'signature_mismatch');
    await rejectsWith(verifyWebhook(`${delivery.rawBody} `, delivery.headers, secret), 'signature_mismatch');
  });

  await t.test('a wrong secret (another destination\'s) is refused', async () => {
    await rejectsWith(verifyWebhook(delivery.rawBody, delivery.headers, other.secret), 'signature_mismatch');
    syncRejectsWith(() => verifyWebhookSync(delivery.rawBody, delivery.headers, `${secret}x`), 'signature_mismatch');
  });

  await t.test('an old timestamp is refused beyond the tolerance and accepted at its edge', async () => {
    await rejectsWith(verifyWebhook(delivery.rawBody, delivery.headers, secret, 300, { nowSeconds: timestamp + 301 }), 'timestamp_out_of_tolerance');
    await rejectsWith(verifyWebhook(delivery.rawBody, delivery.headers, secret, 300, { nowSeconds: timestamp - 301 }), 'timestamp_out_of_tolerance');
    assert.ok(await verifyWebhook(delivery.rawBody, delivery.headers, secret, 300, { nowSeconds: timestamp + 300 }));
    await rejectsWith(verifyWebhook(delivery.rawBody, delivery.headers, secret, 10, { nowSeconds: timestamp + 11 }), 'timestamp_out_of_tolerance');
    syncRejectsWith(() => verifyWebhookSync(delivery.rawBody, delivery.headers, secret, 300, { nowSeconds: timestamp + 301 }), 'timestamp_out_of_tolerance');
    // A replayed body with the timestamp moved forward no longer matches the signature.
    const moved = signature.replace(`t=${timestamp}`, `t=${timestamp + 1000}`);
    await rejectsWith(verifyWebhook(delivery.rawBody, { 'x-service-signature': moved }, secret, 300, { nowSeconds: timestamp + 1000 }), 'signature_mismatch');
  });

  await t.test('missing or malformed signature headers are refused', async () => {
    await rejectsWith(verifyWebhook(delivery.rawBody, {}, secret), 'missing_signature');
    await rejectsWith(verifyWebhook(delivery.rawBody, { 'x-service-signature': 'v1=abc' }, secret), 'malformed_signature');
    await rejectsWith(verifyWebhook(delivery.rawBody, { 'x-service-signature': `t=${timestamp}` }, secret), 'malformed_signature');
    await rejectsWith(verifyWebhook(delivery.rawBody, { 'x-service-signature': `t=${timestamp},v1=${'z'.repeat(64)}` }, secret), 'malformed_signature');
    await rejectsWith(verifyWebhook(delivery.rawBody, { 'x-service-signature': `t=soon,${signature.split(',')[1]}` }, secret), 'malformed_signature');
    syncRejectsWith(() => verifyWebhookSync(delivery.rawBody, {}, secret), 'missing_signature');
  });
});
