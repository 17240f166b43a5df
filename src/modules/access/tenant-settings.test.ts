import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { asPerson, invitePerson, signInConsole } from '../../../test/console-people.js';

/**
 * The tenant's settings (`PATCH /tenant`) and key rotation
 * (`POST /events/api-keys/{id}/rotate`), through HTTP with the console's
 * cookie, as the console calls them.
 */
test('tenant settings and key rotation', { timeout: 120_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const ownerPerson = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const owner = asPerson(ownerPerson);
  const marketer = asPerson(await invitePerson(svc, ownerPerson, `marketer@${tenant.slug}.example`, 'marketer'));
  const analyst = asPerson(await invitePerson(svc, ownerPerson, `analyst@${tenant.slug}.example`, 'analyst'));

  await t.test('a new tenant reads UTC, USD and en-US', async () => {
    const read = await svc.request('GET', '/api/v1/tenant', owner);
    assert.equal(read.status, 200);
    assert.deepEqual([read.body.timezone, read.body.currency, read.body.locale], ['UTC', 'USD', 'en-US']);
  });

  await t.test('an owner changes time zone, currency and locale; the answer and the next read show them canonical', async () => {
    const changed = await svc.request('PATCH', '/api/v1/tenant', { ...owner, body: { timezone: 'Europe/Paris', currency: 'eur', locale: 'fr-fr' } });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual([changed.body.timezone, changed.body.currency, changed.body.locale], ['Europe/Paris', 'EUR', 'fr-FR']);
    const read = await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey });
    assert.deepEqual([read.body.timezone, read.body.currency, read.body.locale], ['Europe/Paris', 'EUR', 'fr-FR']);
    const partial = await svc.request('PATCH', '/api/v1/tenant', { ...owner, body: { locale: 'de' } });
    assert.deepEqual([partial.body.timezone, partial.body.currency, partial.body.locale], ['Europe/Paris', 'EUR', 'de']);
  });

  await t.test('the new time zone decides the calendar days at once (analytics answers in it)', async () => {
    await svc.request('PATCH', '/api/v1/tenant', { ...owner, body: { timezone: 'Asia/Tokyo' } });
    const overview = await svc.request('GET', '/api/v1/admin/analytics/overview', owner);
    assert.equal(overview.status, 200, overview.text);
    assert.equal(overview.body.timezone, 'Asia/Tokyo');
  });

  await t.test('bad input is refused with 400 and nothing changes', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ timezone: 'Mars/Olympus_Mons' }, 'TENANT_TIMEZONE_UNKNOWN'],
      [{ timezone: 'posix/Europe/Paris' }, 'TENANT_TIMEZONE_UNKNOWN'],
      [{ currency: 'XYZ' }, 'TENANT_CURRENCY_UNKNOWN'],
      [{ currency: 'EURO' }, 'VALIDATION_INVALID_VALUE'],
      [{ locale: 'not a locale!' }, 'TENANT_LOCALE_INVALID'],
      [{}, 'VALIDATION_INVALID_VALUE'],
      [{ name: 'Renamed' }, 'VALIDATION_INVALID_VALUE'],
    ];
    for (const [body, code] of cases) {
      const response = await svc.request('PATCH', '/api/v1/tenant', { ...owner, body });
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.text}`);
      if (code !== 'VALIDATION_INVALID_VALUE') assert.equal(response.body.code, code, JSON.stringify(body));
      assert.ok(response.body.detail, `${JSON.stringify(body)} is answered with a detail`);
    }
    const read = await svc.request('GET', '/api/v1/tenant', owner);
    assert.deepEqual([read.body.timezone, read.body.currency, read.body.locale], ['Asia/Tokyo', 'EUR', 'de']);
  });

  await t.test('each change is in the audit log with the settings before and after; a refused one leaves no entry', async () => {
    const entries = async () => {
      const log = await svc.request('GET', '/api/v1/admin/audit-log?resource_type=tenant', owner);
      assert.equal(log.status, 200, log.text);
      return log.body.entries as Array<{ route: string; actor_type: string; before: any; after: any }>;
    };
    const count = (await entries()).length;
    assert.equal((await svc.request('PATCH', '/api/v1/tenant', { ...owner, body: { currency: 'XYZ' } })).status, 400);
    assert.equal((await entries()).length, count);
    const changed = await svc.request('PATCH', '/api/v1/tenant', { ...owner, body: { timezone: 'America/New_York', currency: 'jpy', locale: 'ja' } });
    assert.equal(changed.status, 200, changed.text);
    const [latest] = await entries();
    assert.equal(latest.route, '/api/v1/tenant');
    assert.equal(latest.actor_type, 'user');
    assert.deepEqual([latest.before.timezone, latest.before.currency, latest.before.locale], ['Asia/Tokyo', 'EUR', 'de']);
    assert.deepEqual([latest.after.timezone, latest.after.currency, latest.after.locale], ['America/New_York', 'JPY', 'ja']);
    const other = await svc.createTenant();
    const otherLog = await svc.request('GET', '/api/v1/admin/audit-log?resource_type=tenant', { key: other.apiKey });
    assert.equal(otherLog.body.entries.length, 0, "another tenant's log does not show the change");
    const otherRead = await svc.request('GET', '/api/v1/tenant', { key: other.apiKey });
    assert.deepEqual([otherRead.body.timezone, otherRead.body.currency, otherRead.body.locale], ['UTC', 'USD', 'en-US']);
  });

  await t.test('without OPERATOR_TOKEN the operator routes are off (403), even for a token-shaped credential', async () => {
    const response = await svc.request('PATCH', `/api/v1/operator/tenants/${tenant.tenantId}/limits`, {
      headers: { authorization: `Bearer ${'a'.repeat(64)}` },
      body: { requests_per_minute: 5 },
    });
    assert.equal(response.status, 403, response.text);
    assert.equal(response.body.code, 'OPERATOR_ROUTES_OFF');
  });

  await t.test('roles without settings:write get 403; the change is in the audit log', async () => {
    for (const person of [marketer, analyst]) {
      const refused = await svc.request('PATCH', '/api/v1/tenant', { ...person, body: { timezone: 'UTC' } });
      assert.equal(refused.status, 403, refused.text);
    }
    const log = await svc.request('GET', '/api/v1/admin/audit-log?resource_type=tenant', owner);
    assert.equal(log.status, 200, log.text);
    assert.ok(log.body.entries.some((entry: { method: string; route: string }) => entry.method === 'PATCH' && entry.route === '/api/v1/tenant'), JSON.stringify(log.body.entries));
  });

  await t.test('a rotated key works with its new secret and the old one is refused at once; a revoked key cannot be rotated', async () => {
    const created = await svc.request('POST', '/api/v1/events/api-keys', { ...owner, body: { name: 'integration', scopes: ['ingest', 'admin'] } });
    assert.equal(created.status, 201, created.text);
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: created.body.key })).status, 200);
    const rotated = await svc.request('POST', `/api/v1/events/api-keys/${created.body.id}/rotate`, owner);
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal(rotated.body.id, created.body.id);
    assert.deepEqual(rotated.body.scopes, ['ingest', 'admin']);
    assert.notEqual(rotated.body.key, created.body.key);
    assert.equal(rotated.body.prefix, rotated.body.key.slice(0, 16));
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: created.body.key })).status, 401);
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: rotated.body.key })).status, 200);
    const log = await svc.request('GET', '/api/v1/admin/audit-log', owner);
    assert.ok(!JSON.stringify(log.body).includes(rotated.body.key), 'the new secret is not in the audit log');
    assert.equal((await svc.request('DELETE', `/api/v1/events/api-keys/${created.body.id}`, owner)).status, 200);
    const again = await svc.request('POST', `/api/v1/events/api-keys/${created.body.id}/rotate`, owner);
    assert.equal(again.status, 404, again.text);
  });

  await t.test('an analyst may neither create nor rotate keys (403)', async () => {
    const create = await svc.request('POST', '/api/v1/events/api-keys', { ...analyst, body: { name: 'nope', scopes: ['ingest'] } });
    assert.equal(create.status, 403, create.text);
    const list = await svc.request('GET', '/api/v1/events/api-keys', analyst);
    assert.equal(list.status, 403, list.text);
  });
});
