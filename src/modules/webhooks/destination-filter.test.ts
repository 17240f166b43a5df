import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { AppError } from '../../platform/errors.js';
import type { Resolver } from '../../platform/safe-http.js';
import { BLOCKED_ADDRESS_FORMS } from '../../platform/blocked-address-forms.js';
import * as service from './service.js';

/**
 * The destination filter against every address form in the shared table
 * (src/platform/blocked-address-forms.ts), with the production policy (no
 * loopback, https only): each form is refused when a destination is created
 * and when one is updated, through HTTP and through a host name that resolves
 * to it; and a destination whose name resolved to a public address when it
 * was registered, and resolves to the form when a delivery is made, is not
 * contacted: the attempt is recorded as failed and blocked.
 */
const BASE = '/api/v1/gamify/webhooks';
const PUBLIC_ADDRESS = '93.184.216.34';
const VALID = { name: 'receiver', url: `https://${PUBLIC_ADDRESS}/hooks`, events: ['badge.earned.v1'] };

/** A resolver whose answer the test changes, as a DNS record would. */
function changingResolver(): { resolver: Resolver; answer(address: string): void } {
  let current = PUBLIC_ADDRESS;
  return {
    resolver: async (hostname) => [{ address: current, family: current.includes(':') ? 6 : 4 }],
    answer(address) {
      current = address;
    },
  };
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  assert.fail('expected a refusal');
}

test('destination filter: every blocked address form, at creation, at update and at delivery after a DNS change', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const countDestinations = async () => (await svc.sql('SELECT count(*)::int AS n FROM webhook_destinations WHERE tenant_id = $1', [tenant.tenantId]))[0].n as number;
  assert.ok(BLOCKED_ADDRESS_FORMS.length >= 40, `${BLOCKED_ADDRESS_FORMS.length} forms`);

  await t.test('creation through HTTP is 422 naming the problem, and stores nothing', async () => {
    for (const form of BLOCKED_ADDRESS_FORMS) {
      const response = await svc.request('POST', BASE, { key: tenant.apiKey, body: { ...VALID, url: form.url } });
      assert.equal(response.status, 422, `${form.label}: ${response.text}`);
      assert.equal(response.body.code, 'VALIDATION_INVALID_VALUE', form.label);
      assert.match(response.body.detail, /^url is not allowed: /, form.label);
      assert.match(response.body.detail, form.reason, form.label);
    }
    assert.equal(await countDestinations(), 0);
  });

  await t.test('an update through HTTP is 422 naming the problem, and leaves the destination as it was', async () => {
    const created = await svc.request('POST', BASE, { key: tenant.apiKey, body: VALID });
    assert.equal(created.status, 201, created.text);
    const before = await svc.request('GET', `${BASE}/${created.body.id}`, { key: tenant.apiKey });
    for (const form of BLOCKED_ADDRESS_FORMS) {
      const response = await svc.request('PATCH', `${BASE}/${created.body.id}`, { key: tenant.apiKey, body: { url: form.url, retry_count: 1 } });
      assert.equal(response.status, 422, `${form.label}: ${response.text}`);
      assert.equal(response.body.code, 'VALIDATION_INVALID_VALUE', form.label);
      assert.match(response.body.detail, form.reason, form.label);
    }
    const after = await svc.request('GET', `${BASE}/${created.body.id}`, { key: tenant.apiKey });
    assert.deepEqual(after.body, before.body, 'neither the URL nor the other fields of the refused updates were applied');
    await svc.request('DELETE', `${BASE}/${created.body.id}`, { key: tenant.apiKey });
  });

  await t.test('a host name resolving to the form is refused at creation and at update', async () => {
    const dns = changingResolver();
    const context = { db: svc.service.db, config: svc.config, log: svc.service.log, resolver: dns.resolver };
    const existing = await service.createDestination(context, tenant.tenantId, { ...VALID, url: 'https://existing.hooks.example.com/h' });
    for (const form of BLOCKED_ADDRESS_FORMS) {
      dns.answer(form.answer);
      const atCreation = await refusal(service.createDestination(context, tenant.tenantId, { ...VALID, url: 'https://new.hooks.example.com/h' }));
      assert.equal(atCreation.kind, 'rule_violation', form.label);
      assert.match(atCreation.message, /resolves to a blocked address/, form.label);
      assert.match(atCreation.message, form.answerReason ?? form.reason, form.label);
      const atUpdate = await refusal(service.updateDestination(context, tenant.tenantId, existing.id, { url: 'https://moved.hooks.example.com/h' }));
      assert.equal(atUpdate.kind, 'rule_violation', form.label);
      assert.match(atUpdate.message, form.answerReason ?? form.reason, form.label);
    }
    dns.answer(PUBLIC_ADDRESS);
    const unchanged = await service.readDestination(context, tenant.tenantId, existing.id);
    assert.equal(unchanged.url, 'https://existing.hooks.example.com/h');
    assert.equal(await countDestinations(), 1);
    await service.deleteDestination(context, tenant.tenantId, existing.id);
  });

  await t.test('a delivery to a name that now resolves to the form does not connect and is recorded as failed, blocked', async () => {
    for (const [index, form] of BLOCKED_ADDRESS_FORMS.entries()) {
      const dns = changingResolver();
      const lookups: string[] = [];
      const context = {
        db: svc.service.db,
        config: svc.config,
        log: svc.service.log,
        resolver: (async (hostname) => {
          lookups.push(hostname);
          return dns.resolver(hostname);
        }) satisfies Resolver,
      };
      const url = `https://receiver-${index}.hooks.example.com/h`;
      const destination = await service.createDestination(context, tenant.tenantId, { ...VALID, url });
      assert.equal(destination.url, url, `${form.label}: registered while the name resolved to a public address`);
      dns.answer(form.answer);
      const delivery = await service.sendTestDelivery(context, tenant.tenantId, destination.id);
      assert.deepEqual(lookups, [`receiver-${index}.hooks.example.com`, `receiver-${index}.hooks.example.com`], form.label);
      assert.equal(delivery.status, 'EXHAUSTED', form.label);
      assert.equal(delivery.last_response_status, null, form.label);
      assert.equal(delivery.attempt_log.length, 1, form.label);
      const [attempt] = delivery.attempt_log;
      assert.equal(attempt.outcome, 'failed', form.label);
      assert.equal(attempt.response_status, null, form.label);
      assert.match(attempt.error ?? '', /^blocked: the host "receiver-\d+\.hooks\.example\.com" resolves to a blocked address: /, form.label);
      assert.match(attempt.error ?? '', form.answerReason ?? form.reason, form.label);
    }
    // The log reads the same through HTTP.
    const [first] = await svc.sql<{ id: string }>('SELECT id FROM webhook_destinations WHERE tenant_id = $1 AND url = $2', [tenant.tenantId, 'https://receiver-0.hooks.example.com/h']);
    const logs = await svc.request('GET', `${BASE}/${first.id}/logs`, { key: tenant.apiKey });
    assert.equal(logs.status, 200, logs.text);
    assert.equal(logs.body.deliveries.length, 1);
    assert.equal(logs.body.deliveries[0].status, 'EXHAUSTED');
    assert.match(logs.body.deliveries[0].last_error, /^blocked: .*IPv4-compatible IPv6 \(::\/96\), which embeds the IPv4 address 127\.0\.0\.1/);
  });
});
