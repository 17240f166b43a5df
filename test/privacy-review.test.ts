import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestService } from './helper.js';
import { asPerson, invitePerson, signInConsole, CONSOLE_TEST_PASSWORD } from './console-people.js';
import { contestDefinition } from '../src/modules/contests/testing.js';

/**
 * The review's findings on personal data and credentials (issue 32: 1, 3, 4,
 * 10), each as the person who found it tried it, through HTTP.
 */
test('review findings: audit entries hold no credential nor personal value; contest entries and events are masked', { timeout: 300_000 }, async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const key = tenant.apiKey;
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const analyst = await invitePerson(svc, owner, 'analyst@staff.example.com', 'analyst');
  const marketer = await invitePerson(svc, owner, 'marketer@staff.example.com', 'marketer');

  await t.test('1: an analyst cannot read an owner invitation from the audit log and accept it', async () => {
    const invited = await svc.request('POST', '/api/v1/admin/users', { ...asPerson(owner), body: { email: 'next-owner@staff.example.com', role: 'owner' } });
    assert.equal(invited.status, 201, invited.text);
    const token = decodeURIComponent(/#token=(.+)$/.exec(invited.body.invite_url)![1]);
    const log = await svc.request('GET', '/api/v1/admin/audit-log?limit=200', asPerson(analyst, false));
    assert.equal(log.status, 200, log.text);
    const entry = log.body.entries.find((e: any) => e.route === '/api/v1/admin/users' && e.method === 'POST' && e.after?.user?.id === invited.body.user.id);
    assert.ok(entry, 'the invitation is in the audit log');
    assert.equal(entry.after.invite_url, undefined);
    assert.equal(entry.after.user.role, 'owner');
    assert.ok(!log.text.includes(token), 'the invitation token is not in the log');
    assert.ok(!log.text.includes('#token='), 'no invitation link is in the log');
    const stored = await svc.sql('SELECT after::text AS after FROM audit_log WHERE tenant_id = $1 AND route = $2', [tenant.tenantId, '/api/v1/admin/users']);
    assert.ok(stored.every((row) => !row.after.includes('invite_url')));
    // Nothing in the log lets anyone but the invited person in.
    const guessed = await svc.request('POST', '/api/v1/console/invitations/accept', { body: { token: entry.id.padEnd(40, 'x'), password: CONSOLE_TEST_PASSWORD } });
    assert.notEqual(guessed.status, 200);
  });

  await t.test('1: the migration scrubs credentials and personal values from entries written before', async () => {
    await svc.sql(
      `INSERT INTO audit_log (tenant_id, occurred_at, actor_type, actor_id, action, method, route, resource_type, status, before, after, details)
       VALUES ($1, now(), 'user', 'u', 'create', 'POST', '/api/v1/admin/users', 'users', 201, NULL, $2, $3)`,
      [
        tenant.tenantId,
        JSON.stringify({ user: { id: 'u-1', role: 'owner' }, invite_url: 'https://console.example/#token=leaked', secret: 'whsec_leaked' }),
        JSON.stringify({ body: { email: 'old@example.org', custom: { loyalty_card: 'CARD-OLD', colour: 'blue' }, rules: [{ points: 5 }] } }),
      ],
    );
    const migration = fs.readFileSync(path.resolve(import.meta.dirname, '../migrations/1320_audit_log_scrub.sql'), 'utf8');
    await svc.sql(migration);
    const [row] = await svc.sql(`SELECT after, details FROM audit_log WHERE tenant_id = $1 AND actor_id = 'u'`, [tenant.tenantId]);
    assert.deepEqual(row.after, { user: { id: 'u-1', role: 'owner' } });
    assert.deepEqual(row.details, { body: { email: '[redacted]', custom: { loyalty_card: '[redacted]', colour: '[redacted]' }, rules: [{ points: 5 }] } });
  });

  await t.test('3: personal custom fields are redacted in audit entries; other custom fields are kept', async () => {
    for (const body of [
      { key: 'loyalty_card', type: 'string', personal: true },
      { key: 'favourite_colour', type: 'string', personal: false },
    ]) {
      assert.equal((await svc.request('POST', '/api/v1/gamify/admin/participant-fields', { key, body })).status, 201);
    }
    const changed = await svc.request('PATCH', '/api/v1/gamify/admin/participants/p-custom/profile', {
      ...asPerson(owner),
      body: { email: 'custom.person@example.org', custom: { loyalty_card: 'CARD-4411-ZZ', favourite_colour: 'teal' } },
    });
    assert.equal(changed.status, 200, changed.text);
    const [row] = await svc.sql(`SELECT details FROM audit_log WHERE tenant_id = $1 AND route LIKE '%/profile' ORDER BY id DESC LIMIT 1`, [tenant.tenantId]);
    assert.deepEqual(row.details.body, { email: '[redacted]', custom: { loyalty_card: '[redacted]', favourite_colour: 'teal' } });
    const log = await svc.request('GET', '/api/v1/admin/audit-log?limit=200', asPerson(owner, false));
    assert.ok(!log.text.includes('CARD-4411-ZZ') && !log.text.includes('custom.person@example.org'), 'not even the owner reads them back from the log');
  });

  await t.test('4: a contest entry shows its signals and prize code masked to roles without read:pii, in full to the owner', async () => {
    assert.equal((await svc.request('POST', '/api/v1/admin/contests', { key, body: contestDefinition('review-cup') })).status, 201);
    assert.equal((await svc.request('POST', '/api/v1/admin/contests/review-cup/publish', { key })).status, 200);
    const entered = await svc.request('POST', '/api/v1/admin/contests/review-cup/entries', {
      key,
      body: { participant_id: 'p-entrant', email: 'entrant.person@example.org', payment_method: 'pm-visa-4242', device_fingerprint: 'fp-123456', display_name: 'Ent' },
    });
    assert.equal(entered.status, 201, entered.text);
    const masked = await svc.request('GET', '/api/v1/admin/contests/review-cup/entries/p-entrant', asPerson(marketer, false));
    assert.equal(masked.status, 200, masked.text);
    assert.deepEqual(masked.body.signals, { email: 'e***@example.org', payment_method: '***', device_fingerprint: '***', publish_consent: masked.body.signals.publish_consent });
    const full = await svc.request('GET', '/api/v1/admin/contests/review-cup/entries/p-entrant', asPerson(owner, false));
    assert.equal(full.body.signals.email, 'entrant.person@example.org');
    assert.equal(full.body.signals.payment_method, 'pm-visa-4242');
    const [audit] = await svc.sql(`SELECT details::text AS details FROM audit_log WHERE tenant_id = $1 AND route LIKE '%/entries' ORDER BY id DESC LIMIT 1`, [tenant.tenantId]);
    assert.ok(!audit.details.includes('pm-visa-4242') && !audit.details.includes('fp-123456') && !audit.details.includes('entrant.person'), audit.details);
  });

  await t.test('10: the events browser masks personal names at any depth of the properties', async () => {
    const sent = await svc.request('POST', '/api/v1/ingest/events', {
      key,
      body: {
        event_name: 'checkout',
        participant_id: 'p-buyer',
        idempotency_key: 'review-10',
        properties: { total: 40, customer: { email: 'deep.buyer@example.org', first_name: 'Theodora', address: { mobile_number: '+4915199887766' } }, items: [{ sku: 'A1', gender: 'female' }] },
      },
    });
    assert.equal(sent.status, 202, sent.text);
    const read = await svc.request('GET', `/api/v1/admin/events/${sent.body.message_id}`, asPerson(analyst, false));
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body.properties, {
      total: 40,
      customer: { email: 'd***@example.org', first_name: 'Th***', address: { mobile_number: '***7766' } },
      items: [{ sku: 'A1', gender: '***' }],
    });
    const full = await svc.request('GET', `/api/v1/admin/events/${sent.body.message_id}`, { key });
    assert.equal(full.body.properties.customer.email, 'deep.buyer@example.org');
  });
});
