import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { keyWithScopes, startTestService, type TestService } from '../../../test/helper.js';
import type { AuthContext } from '../../platform/auth.js';
import participantsModule, { coalesceProfileInTx, maskProfile, participantsWithBirthdayInTx, recordPiiAccessInTx } from './index.js';
import { retentionCutoff } from './retention.js';
import { collectJobs } from '../../service.js';
import { RETENTION_TASK } from '../../platform/retention.js';
import { loadConfig } from '../../config.js';
import { clock } from '../../platform/clock.js';
import { parseCrontab } from 'graphile-worker';
import { readStatePart } from '../../platform/module.js';

const FULL = {
  email: 'zenobia.q@example.org',
  first_name: 'Zenobia',
  last_name: 'Quartermaine',
  full_name: 'Zenobia Quartermaine',
  mobile_number: '+4915112345678',
  country_code: 'DE',
  date_of_birth: '1987-03-14',
  gender: 'female',
  city: 'Quedlinburg',
  postal_code: '06484',
  external_id: 'crm-778899',
};
const MASKED = {
  email: 'z***@example.org',
  first_name: 'Ze***',
  last_name: 'Qu***',
  full_name: 'Z.Q.',
  mobile_number: '***5678',
  country_code: 'DE',
  date_of_birth: '1987',
  gender: '***',
  city: 'Quedlinburg',
  postal_code: '06484',
  external_id: 'crm-778899',
};
const PERSONAL_FIELDS = ['custom.loyalty_card', 'date_of_birth', 'email', 'first_name', 'full_name', 'gender', 'last_name', 'mobile_number'];

function pick(body: Record<string, unknown>, keys: string[]) {
  return Object.fromEntries(keys.map((k) => [k, body[k]]));
}

async function logRows(svc: TestService, tenantId: string) {
  return svc.sql('SELECT * FROM pii_access_log WHERE tenant_id = $1 ORDER BY occurred_at, id', [tenantId]);
}

test('participants: profiles, masking, the access log, search and custom fields', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const pii = await keyWithScopes(svc, tenant, ['admin', 'read:pii']);
  const plain = await keyWithScopes(svc, tenant, ['gamify:admin']);

  await t.test('custom fields: created, listed, read; duplicates, reserved and malformed keys refused', async () => {
    const card = await svc.request('POST', '/api/v1/gamify/admin/participant-fields', {
      key: tenant.apiKey,
      body: { key: 'loyalty_card', type: 'string', personal: true, description: 'card number' },
    });
    assert.equal(card.status, 201, card.text);
    assert.equal(card.body.personal, true);
    const pref = await svc.request('POST', '/api/v1/gamify/admin/participant-fields', { key: tenant.apiKey, body: { key: 'newsletter', type: 'boolean', personal: false } });
    assert.equal(pref.status, 201);
    const visits = await svc.request('POST', '/api/v1/gamify/admin/participant-fields', { key: tenant.apiKey, body: { key: 'visits', type: 'number', personal: false } });
    assert.equal(visits.status, 201);
    const again = await svc.request('POST', '/api/v1/gamify/admin/participant-fields', { key: tenant.apiKey, body: { key: 'newsletter', type: 'string', personal: false } });
    assert.equal(again.status, 409);
    const reserved = await svc.request('POST', '/api/v1/gamify/admin/participant-fields', { key: tenant.apiKey, body: { key: 'email', type: 'string', personal: true } });
    assert.equal(reserved.status, 400);
    assert.match(reserved.body.detail, /standard profile field/);
    const badKey = await svc.request('POST', '/api/v1/gamify/admin/participant-fields', { key: tenant.apiKey, body: { key: 'Bad-Key', type: 'string', personal: true } });
    assert.equal(badKey.status, 400);
    const badType = await svc.request('POST', '/api/v1/gamify/admin/participant-fields', { key: tenant.apiKey, body: { key: 'x', type: 'object', personal: true } });
    assert.equal(badType.status, 400);
    const list = await svc.request('GET', '/api/v1/gamify/admin/participant-fields', { key: tenant.apiKey });
    assert.deepEqual(list.body.fields.map((f: { key: string }) => f.key), ['loyalty_card', 'newsletter', 'visits']);
    const one = await svc.request('GET', '/api/v1/gamify/admin/participant-fields/newsletter', { key: tenant.apiKey });
    assert.equal(one.body.type, 'boolean');
    assert.equal((await svc.request('GET', '/api/v1/gamify/admin/participant-fields/newsletter', { key: other.apiKey })).status, 404);
  });

  await t.test('the upsert with read:pii writes every field and returns them in full, logging the read', async () => {
    const response = await svc.request('PATCH', '/api/v1/gamify/admin/participants/p-1/profile', {
      key: pii.key,
      body: { ...FULL, email: ' Zenobia.Q@EXAMPLE.org ', mobile_number: '+49 151 1234-5678', display_name: 'Zen', custom: { loyalty_card: 'LC-5550001', newsletter: true, visits: 7 } },
    });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(pick(response.body, Object.keys(FULL)), { ...FULL, email: 'Zenobia.Q@example.org' });
    assert.deepEqual(response.body.custom, { loyalty_card: 'LC-5550001', newsletter: true, visits: 7 });
    assert.equal(response.body.masked, false);
    assert.equal(response.body.display_name, 'Zen');
    const rows = await logRows(svc, tenant.tenantId);
    assert.equal(rows.length, 1);
    // Put the email back in the form the other tests expect.
    const fixed = await svc.request('PATCH', '/api/v1/gamify/admin/participants/p-1/profile', { key: pii.key, body: { email: FULL.email } });
    assert.equal(fixed.body.email, FULL.email);
  });

  await t.test('a single read without read:pii shows the exact masks and writes no log row', async () => {
    const before = (await logRows(svc, tenant.tenantId)).length;
    for (const path of ['/api/v1/gamify/admin/participants/p-1', '/api/v1/gamify/state/p-1?include=profile', '/api/v1/gamify/participants/p-1']) {
      const response = await svc.request('GET', path, { key: plain.key });
      assert.equal(response.status, 200, response.text);
      const body = path.includes('/admin/') ? response.body : response.body.profile;
      assert.deepEqual(pick(body, Object.keys(MASKED)), MASKED);
      assert.deepEqual(body.custom, { loyalty_card: '***', newsletter: true, visits: 7 });
      assert.equal(body.masked, true);
      assert.ok(!response.text.includes('Zenobia') && !response.text.includes('12345678') && !response.text.includes('1987-03-14'));
    }
    assert.equal((await logRows(svc, tenant.tenantId)).length, before);
  });

  await t.test('the state read and the deprecated full read show the profile in full with read:pii, each read logged once', async () => {
    for (const path of ['/api/v1/gamify/state/p-1?include=profile', '/api/v1/gamify/participants/p-1']) {
      const before = (await logRows(svc, tenant.tenantId)).length;
      const response = await svc.request('GET', path, { key: pii.key });
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(pick(response.body.profile, Object.keys(FULL)), FULL);
      const rows = await logRows(svc, tenant.tenantId);
      assert.equal(rows.length, before + 1);
      assert.equal(rows[rows.length - 1].row_count, 1);
      assert.equal(rows[rows.length - 1].ip_address, '127.0.0.1');
    }
  });

  await t.test('a single read with read:pii is full and writes exactly one log row with every field of the record', async () => {
    const before = (await logRows(svc, tenant.tenantId)).length;
    const response = await svc.request('GET', '/api/v1/gamify/admin/participants/p-1', { key: pii.key });
    assert.deepEqual(pick(response.body, Object.keys(FULL)), FULL);
    assert.equal(response.body.custom.loyalty_card, 'LC-5550001');
    const rows = await logRows(svc, tenant.tenantId);
    assert.equal(rows.length, before + 1);
    const row = rows[rows.length - 1];
    assert.equal(row.actor_type, 'admin');
    assert.equal(row.actor_id, `api_key:${pii.id}`);
    assert.equal(row.participant_id, 'p-1');
    assert.deepEqual(row.participant_ids, ['p-1']);
    assert.deepEqual(row.fields_accessed, PERSONAL_FIELDS);
    assert.equal(row.row_count, 1);
    assert.equal(row.export_format, null);
    assert.equal(row.ip_address, '127.0.0.1');
    assert.ok(row.occurred_at instanceof Date);
    assert.match(row.id, /^[0-9a-f-]{36}$/);
  });

  await t.test('an admin login token reads in full and is logged as the admin user', async () => {
    const jwt = await svc.login(tenant);
    const response = await svc.request('GET', '/api/v1/gamify/admin/participants/p-1', { bearer: jwt });
    assert.equal(response.body.email, FULL.email);
    const rows = await logRows(svc, tenant.tenantId);
    assert.match(rows[rows.length - 1].actor_id, /^admin_user:[0-9a-f-]{36}$/);
  });

  await t.test('setting personal fields without read:pii is refused and changes nothing; visible fields may be set', async () => {
    const refused = await svc.request('PATCH', '/api/v1/gamify/admin/participants/p-1/profile', { key: plain.key, body: { email: 'other@example.org', city: 'Halle' } });
    assert.equal(refused.status, 403);
    assert.match(refused.body.detail, /read:pii.*email/);
    const personalCustom = await svc.request('PATCH', '/api/v1/gamify/admin/participants/p-1/profile', { key: plain.key, body: { custom: { loyalty_card: 'X' } } });
    assert.equal(personalCustom.status, 403);
    const [row] = await svc.sql('SELECT email, city FROM participants WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, 'p-1']);
    assert.deepEqual(row, { email: FULL.email, city: FULL.city });
    const allowed = await svc.request('PATCH', '/api/v1/gamify/admin/participants/p-1/profile', { key: plain.key, body: { city: 'Halle', custom: { visits: 8 } } });
    assert.equal(allowed.status, 200, allowed.text);
    assert.equal(allowed.body.city, 'Halle');
    assert.equal(allowed.body.email, MASKED.email);
    await svc.request('PATCH', '/api/v1/gamify/admin/participants/p-1/profile', { key: plain.key, body: { city: FULL.city } });
  });

  await t.test('bad input gets 400 with a detail and changes nothing', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ email: 'not-an-email' }, /email/],
      [{ email: 'a@b' }, /email/],
      [{ mobile_number: '0151 1234' }, /E\.164/],
      [{ mobile_number: '+49abc12345678' }, /E\.164/],
      [{ date_of_birth: '1987-02-30' }, /real calendar date/],
      [{ date_of_birth: '14.03.1987' }, /YYYY-MM-DD/],
      [{ date_of_birth: '2999-01-01' }, /future/],
      [{ country_code: 'ZZ' }, /ISO 3166/],
      [{ gender: 'f' }, /gender/],
      [{ first_name: 'x'.repeat(101) }, /first_name/],
      [{ external_id: 'e'.repeat(129) }, /external_id/],
      [{ custom: { unknown_field: 'x' } }, /not a defined custom field/],
      [{ custom: { visits: 'many' } }, /custom\.visits must be a number/],
      [{ custom: { loyalty_card: 'x'.repeat(501) } }, /custom/],
      [{ tenant_id: tenant.tenantId }, /not allowed/],
      [{}, /fewer than 1|must NOT have fewer/],
    ];
    for (const [body, detail] of cases) {
      const response = await svc.request('PATCH', '/api/v1/gamify/admin/participants/p-1/profile', { key: pii.key, body });
      assert.equal(response.status, 400, `${JSON.stringify(body).slice(0, 60)}: ${response.text}`);
      assert.match(response.body.detail, detail);
    }
    const [row] = await svc.sql('SELECT email, mobile_number, date_of_birth::text AS dob FROM participants WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, 'p-1']);
    assert.deepEqual(row, { email: FULL.email, mobile_number: FULL.mobile_number, dob: FULL.date_of_birth });
    const badId = await svc.request('GET', '/api/v1/gamify/admin/participants/unknown-one', { key: pii.key });
    assert.equal(badId.status, 404);
  });

  await t.test('locale: any admin caller sets it, stored canonical and never masked; a malformed one is refused and changes nothing', async () => {
    const path = '/api/v1/gamify/admin/participants/p-1/profile';
    const set = await svc.request('PATCH', path, { key: plain.key, body: { locale: ' pt-br ' } });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.locale, 'pt-BR');
    assert.equal(set.body.masked, true);
    for (const locale of ['de_DE', 'x-private', 'e', 'not a language', 'de-'.repeat(20), 42]) {
      const refused = await svc.request('PATCH', path, { key: plain.key, body: { locale, city: 'Halle' } });
      assert.equal(refused.status, 400, `${locale}: ${refused.text}`);
      assert.match(refused.body.detail, /locale/);
    }
    const [row] = await svc.sql('SELECT locale, city FROM participants WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, 'p-1']);
    assert.deepEqual(row, { locale: 'pt-BR', city: FULL.city });
    assert.equal((await svc.request('GET', '/api/v1/gamify/admin/participants/p-1', { key: plain.key })).body.locale, 'pt-BR');
    const cleared = await svc.request('PATCH', path, { key: plain.key, body: { locale: null } });
    assert.equal(cleared.body.locale, null);
  });

  await t.test('another tenant cannot read the participant', async () => {
    assert.equal((await svc.request('GET', '/api/v1/gamify/admin/participants/p-1', { key: other.apiKey })).status, 404);
    const list = await svc.request('GET', '/api/v1/gamify/admin/participants', { key: other.apiKey });
    assert.equal(list.body.participants.length, 0);
  });

  await t.test('the listing pages with a cursor, filters, masks without read:pii and logs one row per full page', async () => {
    for (const [id, country] of [['p-2', 'FR'], ['p-3', 'DE'], ['p-4', 'DE']] as const) {
      const created = await svc.request('PATCH', `/api/v1/gamify/admin/participants/${id}/profile`, {
        key: pii.key,
        body: { email: `${id}@example.org`, first_name: 'Marta', country_code: country },
      });
      assert.equal(created.status, 200);
    }
    const before = (await logRows(svc, tenant.tenantId)).length;
    const masked = await svc.request('GET', '/api/v1/gamify/admin/participants?limit=3', { key: plain.key });
    assert.equal(masked.status, 200, masked.text);
    assert.deepEqual(masked.body.participants.map((p: { participant_id: string }) => p.participant_id), ['p-1', 'p-2', 'p-3']);
    assert.deepEqual(masked.body.participants.map((p: { email: string }) => p.email), ['z***@example.org', 'p***@example.org', 'p***@example.org']);
    assert.ok(masked.body.next_cursor);
    const rest = await svc.request('GET', `/api/v1/gamify/admin/participants?limit=3&cursor=${masked.body.next_cursor}`, { key: plain.key });
    assert.deepEqual(rest.body.participants.map((p: { participant_id: string }) => p.participant_id), ['p-4']);
    assert.equal(rest.body.next_cursor, null);
    assert.equal((await logRows(svc, tenant.tenantId)).length, before);

    const full = await svc.request('GET', '/api/v1/gamify/admin/participants?country_code=de', { key: pii.key });
    assert.deepEqual(full.body.participants.map((p: { participant_id: string }) => p.participant_id), ['p-1', 'p-3', 'p-4']);
    assert.equal(full.body.participants[1].email, 'p-3@example.org');
    const rows = await logRows(svc, tenant.tenantId);
    assert.equal(rows.length, before + 1);
    const row = rows[rows.length - 1];
    assert.equal(row.row_count, 3);
    assert.equal(row.participant_id, null);
    assert.deepEqual(row.participant_ids, ['p-1', 'p-3', 'p-4']);
    assert.equal(row.export_format, 'json');
    assert.deepEqual(row.fields_accessed, PERSONAL_FIELDS);

    const badCursor = await svc.request('GET', '/api/v1/gamify/admin/participants?cursor=nonsense', { key: plain.key });
    assert.equal(badCursor.status, 400);
    const badLimit = await svc.request('GET', '/api/v1/gamify/admin/participants?limit=1000', { key: plain.key });
    assert.equal(badLimit.status, 400);
  });

  await t.test('search: external id and email hash for anyone, exact email and personal attributes only with read:pii', async () => {
    const byExternal = await svc.request('GET', '/api/v1/admin/participants/search?external_id=crm-778899', { key: plain.key });
    assert.equal(byExternal.status, 200, byExternal.text);
    assert.deepEqual(byExternal.body.participants.map((p: { participant_id: string }) => p.participant_id), ['p-1']);
    assert.equal(byExternal.body.participants[0].first_name, 'Ze***');
    const hash = createHash('sha256').update(FULL.email).digest('hex');
    const byHash = await svc.request('GET', `/api/v1/admin/participants/search?email_hash=${hash}`, { key: plain.key });
    assert.deepEqual(byHash.body.participants.map((p: { participant_id: string }) => p.participant_id), ['p-1']);
    const byEmailRefused = await svc.request('GET', `/api/v1/admin/participants/search?email=${encodeURIComponent(FULL.email)}`, { key: plain.key });
    assert.equal(byEmailRefused.status, 403);
    const before = (await logRows(svc, tenant.tenantId)).length;
    const byEmail = await svc.request('GET', `/api/v1/admin/participants/search?email=${encodeURIComponent('ZENOBIA.Q@example.org')}`, { key: pii.key });
    assert.deepEqual(byEmail.body.participants.map((p: { email: string }) => p.email), [FULL.email]);
    const rows = await logRows(svc, tenant.tenantId);
    assert.equal(rows.length, before + 1);
    assert.equal(rows[rows.length - 1].row_count, 1);
    const personalAttribute = await svc.request('GET', '/api/v1/admin/participants/search?attribute=loyalty_card:LC-5550001', { key: plain.key });
    assert.equal(personalAttribute.status, 403);
    const withPii = await svc.request('GET', '/api/v1/admin/participants/search?attribute=loyalty_card:LC-5550001', { key: pii.key });
    assert.deepEqual(withPii.body.participants.map((p: { participant_id: string }) => p.participant_id), ['p-1']);
    const attributes = await svc.request('GET', '/api/v1/admin/participants/search?attribute=newsletter:true&attribute=visits:8', { key: plain.key });
    assert.deepEqual(attributes.body.participants.map((p: { participant_id: string }) => p.participant_id), ['p-1']);
    const none = await svc.request('GET', '/api/v1/admin/participants/search?attribute=visits:9', { key: plain.key });
    assert.equal(none.body.participants.length, 0);
    for (const query of ['', 'attribute=nokey', 'attribute=unknown:1', 'attribute=visits:many', 'email_hash=xyz', 'email=bad']) {
      const response = await svc.request('GET', `/api/v1/admin/participants/search?${query}`, { key: pii.key });
      assert.equal(response.status, 400, `${query}: ${response.text}`);
    }
    const otherTenant = await svc.request('GET', '/api/v1/admin/participants/search?external_id=crm-778899', { key: other.apiKey });
    assert.equal(otherTenant.body.participants.length, 0);
  });

  await t.test('the profile state part is masked per caller and logs full reads', async () => {
    const part = participantsModule.stateParts!.profile;
    const auth = (scopes: string[]): AuthContext => ({
      kind: 'key',
      tenantId: tenant.tenantId,
      scopes: new Set(scopes),
      actorId: pii.id,
      plan: 'enterprise',
      tenantRequestsPerMinute: null,
      keyRequestsPerMinute: null,
      ipAddress: '10.1.2.3',
    });
    const session: AuthContext = { ...auth([]), kind: 'session', participantId: 'p-1' };
    const before = (await logRows(svc, tenant.tenantId)).length;
    const masked = (await svc.service.db.tenant(tenant.tenantId, (tx) => readStatePart(part, tx, tenant.tenantId, 'p-1', auth(['admin'])))) as Record<string, unknown>;
    assert.deepEqual(pick(masked, Object.keys(MASKED)), MASKED);
    const forSession = (await svc.service.db.tenant(tenant.tenantId, (tx) => readStatePart(part, tx, tenant.tenantId, 'p-1', session))) as Record<string, unknown>;
    assert.deepEqual(pick(forSession, Object.keys(MASKED)), MASKED);
    assert.equal((await logRows(svc, tenant.tenantId)).length, before);
    const full = (await svc.service.db.tenant(tenant.tenantId, (tx) => readStatePart(part, tx, tenant.tenantId, 'p-1', auth(['admin', 'read:pii'])))) as Record<string, unknown>;
    assert.deepEqual(pick(full, Object.keys(FULL)), FULL);
    const rows = await logRows(svc, tenant.tenantId);
    assert.equal(rows.length, before + 1);
    assert.equal(rows[rows.length - 1].ip_address, '10.1.2.3');
    assert.equal(await svc.service.db.tenant(tenant.tenantId, (tx) => readStatePart(part, tx, tenant.tenantId, 'nobody', auth(['admin']))), null);
  });

  await t.test('coalescing: later observations win, blanks never erase, malformed values are ignored, external_id keeps its first value', async () => {
    const db = svc.service.db;
    const t0 = new Date('2026-01-01T00:00:00Z');
    const first = await db.tenant(tenant.tenantId, (tx) =>
      coalesceProfileInTx(tx, tenant.tenantId, 'c-1', { email: 'first@example.org', first_name: 'Ann', external_id: 'ext-1', amount: 12, visits: 3, newsletter: 'yes' }, { observedAt: t0 }),
    );
    assert.deepEqual(first.accepted.sort(), ['custom.visits', 'email', 'external_id', 'first_name']);
    assert.deepEqual(first.ignored, [{ field: 'custom.newsletter', reason: 'custom.newsletter must be true or false' }]);
    const later = new Date(t0.getTime() + 60_000);
    const earlier = new Date(t0.getTime() - 60_000);
    const second = await db.tenant(tenant.tenantId, (tx) =>
      coalesceProfileInTx(tx, tenant.tenantId, 'c-1', { email: 'second@example.org', first_name: '', last_name: 'Berg', mobile_number: 'call me', external_id: 'ext-2' }, { observedAt: later }),
    );
    assert.deepEqual(second.ignored.map((i) => i.field), ['mobile_number']);
    await db.tenant(tenant.tenantId, (tx) => coalesceProfileInTx(tx, tenant.tenantId, 'c-1', { email: 'stale@example.org', visits: 1 }, { observedAt: earlier }));
    const [row] = await svc.sql(
      `SELECT email, email_hash, first_name, last_name, mobile_number, external_id,
              (SELECT value FROM participant_custom_values v WHERE v.tenant_id = p.tenant_id AND v.participant_id = p.participant_id AND key = 'visits') AS visits
       FROM participants p WHERE tenant_id = $1 AND participant_id = 'c-1'`,
      [tenant.tenantId],
    );
    assert.deepEqual(row, {
      email: 'second@example.org',
      email_hash: createHash('sha256').update('second@example.org').digest('hex'),
      first_name: 'Ann',
      last_name: 'Berg',
      mobile_number: null,
      external_id: 'ext-1',
      visits: 3,
    });
    const nothing = await db.tenant(tenant.tenantId, (tx) => coalesceProfileInTx(tx, tenant.tenantId, 'c-2', { amount: 5 }));
    assert.deepEqual(nothing, { accepted: [], ignored: [], anonymized: false });
    // The explicit upsert may change external_id.
    const explicit = await svc.request('PATCH', '/api/v1/gamify/admin/participants/c-1/profile', { key: pii.key, body: { external_id: 'ext-9', last_name: null } });
    assert.equal(explicit.body.external_id, 'ext-9');
    assert.equal(explicit.body.last_name, null);
  });

  await t.test('birthday look-up pages participants born on a month and day', async () => {
    for (const [id, dob] of [['b-1', '1990-07-04'], ['b-2', '1985-07-04'], ['b-3', '1985-07-05']]) {
      await svc.request('PATCH', `/api/v1/gamify/admin/participants/${id}/profile`, { key: pii.key, body: { date_of_birth: dob } });
    }
    const db = svc.service.db;
    const first = await db.tenant(tenant.tenantId, (tx) => participantsWithBirthdayInTx(tx, tenant.tenantId, { month: 7, day: 4, after: null, limit: 1 }));
    assert.deepEqual(first, ['b-1']);
    const next = await db.tenant(tenant.tenantId, (tx) => participantsWithBirthdayInTx(tx, tenant.tenantId, { month: 7, day: 4, after: 'b-1', limit: 10 }));
    assert.deepEqual(next, ['b-2']);
    const otherTenant = await db.tenant(other.tenantId, (tx) => participantsWithBirthdayInTx(tx, other.tenantId, { month: 7, day: 4, after: null, limit: 10 }));
    assert.deepEqual(otherTenant, []);
  });

  await t.test('a custom field can change its personal flag, and deleting it removes its values', async () => {
    const patched = await svc.request('PATCH', '/api/v1/gamify/admin/participant-fields/visits', { key: tenant.apiKey, body: { personal: true } });
    assert.equal(patched.body.personal, true);
    const read = await svc.request('GET', '/api/v1/gamify/admin/participants/p-1', { key: plain.key });
    assert.equal(read.body.custom.visits, '***');
    const deleted = await svc.request('DELETE', '/api/v1/gamify/admin/participant-fields/visits', { key: tenant.apiKey });
    assert.equal(deleted.status, 200);
    const [{ n }] = await svc.sql(`SELECT count(*)::int AS n FROM participant_custom_values WHERE tenant_id = $1 AND key = 'visits'`, [tenant.tenantId]);
    assert.equal(n, 0);
    assert.equal((await svc.request('DELETE', '/api/v1/gamify/admin/participant-fields/visits', { key: tenant.apiKey })).status, 404);
    assert.equal((await svc.request('PATCH', '/api/v1/gamify/admin/participant-fields/visits', { key: tenant.apiKey, body: { personal: false } })).status, 404);
  });

  await t.test('webhook deliveries log through recordPiiAccessInTx; the application cannot alter the log', async () => {
    await svc.service.db.tenant(tenant.tenantId, (tx) =>
      recordPiiAccessInTx(tx, tenant.tenantId, {
        actorType: 'webhook',
        actorId: 'dest_123',
        participantId: 'p-1',
        fieldsAccessed: ['email'],
        rowCount: 1,
        exportFormat: 'json',
        ipAddress: '203.0.113.9',
      }),
    );
    const [row] = await svc.sql(`SELECT * FROM pii_access_log WHERE tenant_id = $1 AND actor_type = 'webhook'`, [tenant.tenantId]);
    assert.equal(row.actor_id, 'dest_123');
    assert.equal(row.ip_address, '203.0.113.9');
    await assert.rejects(svc.service.db.tenant(tenant.tenantId, (tx) => tx.query('DELETE FROM pii_access_log WHERE tenant_id = $1', [tenant.tenantId])), /permission denied/);
    await assert.rejects(svc.service.db.tenant(tenant.tenantId, (tx) => tx.query(`UPDATE pii_access_log SET actor_id = 'x' WHERE tenant_id = $1`, [tenant.tenantId])), /permission denied/);
  });

  await t.test('the retention job deletes rows older than 12 months and keeps the rest', async () => {
    const now = clock.now();
    const thirteenMonthsAgo = new Date(now.getTime());
    thirteenMonthsAgo.setUTCMonth(thirteenMonthsAgo.getUTCMonth() - 13);
    const elevenMonthsAgo = new Date(now.getTime());
    elevenMonthsAgo.setUTCMonth(elevenMonthsAgo.getUTCMonth() - 11);
    for (const [id, at] of [['00000000-0000-4000-8000-000000000001', thirteenMonthsAgo], ['00000000-0000-4000-8000-000000000002', elevenMonthsAgo]] as const) {
      await svc.sql(
        `INSERT INTO pii_access_log (tenant_id, id, actor_type, actor_id, participant_id, participant_ids, fields_accessed, row_count, occurred_at)
         VALUES ($1, $2, 'admin', 'api_key:old', 'p-1', '{p-1}', '["email"]', 1, $3)`,
        [tenant.tenantId, id, at],
      );
    }
    const total = (await logRows(svc, tenant.tenantId)).length;
    const { handlers, crontab } = await collectJobs();
    await handlers[RETENTION_TASK]({}, { db: svc.service.db, config: svc.config, log: svc.service.log });
    const rows = await logRows(svc, tenant.tenantId);
    assert.equal(rows.length, total - 1);
    assert.ok(!rows.some((r) => r.id === '00000000-0000-4000-8000-000000000001'));
    assert.ok(rows.some((r) => r.id === '00000000-0000-4000-8000-000000000002'));
    assert.ok(parseCrontab(crontab).some((item) => item.task === RETENTION_TASK));
    assert.ok(participantsModule.retention!.some((rule) => rule.name === 'personal-data access log'));
  });
});

test('participants: maskProfile masks any profile-shaped record, such as event properties', () => {
  const auth = (scopes: string[]): AuthContext => ({
    kind: 'key', tenantId: '00000000-0000-4000-8000-000000000000', scopes: new Set(scopes), actorId: 'k', plan: 'enterprise', tenantRequestsPerMinute: null, keyRequestsPerMinute: null,
  });
  const properties = { ...FULL, amount: 12, custom: { loyalty_card: 'LC-1', newsletter: true } };
  const masked = maskProfile(properties, auth(['admin']), { personalCustomKeys: ['loyalty_card'] });
  assert.deepEqual(masked, { ...MASKED, amount: 12, custom: { loyalty_card: '***', newsletter: true } });
  assert.equal(maskProfile(properties, auth(['read:pii'])), properties);
  assert.deepEqual(maskProfile({ email: 'no-address', date_of_birth: '14.03.1987', mobile_number: 4915112345678, first_name: null }, auth([])), {
    email: '***',
    date_of_birth: '***',
    mobile_number: '***',
    first_name: null,
  });
});

test('participants: access log retention is at least 12 months, longer only when configured', () => {
  assert.equal(loadConfig({}).piiAccessLogRetentionMonths, 12);
  assert.equal(loadConfig({ PII_ACCESS_LOG_RETENTION_MONTHS: '24' }).piiAccessLogRetentionMonths, 24);
  assert.throws(() => loadConfig({ PII_ACCESS_LOG_RETENTION_MONTHS: '11' }), /PII_ACCESS_LOG_RETENTION_MONTHS/);
  assert.equal(retentionCutoff(new Date('2026-11-21T10:00:00Z'), 12).toISOString(), '2025-11-21T10:00:00.000Z');
});

test('participants: the listing has a tighter rate limit than the default', async (t) => {
  const svc = await startTestService(t, { config: { RATE_LIMIT_LISTING_PER_MINUTE: '3' } });
  const tenant = await svc.createTenant();
  for (let i = 0; i < 3; i++) {
    const ok = await svc.request('GET', '/api/v1/gamify/admin/participants', { key: tenant.apiKey });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('x-ratelimit-limit'), '3');
    assert.equal(ok.headers.get('x-ratelimit-remaining'), String(2 - i));
  }
  const limited = await svc.request('GET', '/api/v1/gamify/admin/participants', { key: tenant.apiKey });
  assert.equal(limited.status, 429);
  assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  const search = await svc.request('GET', '/api/v1/admin/participants/search?external_id=x', { key: tenant.apiKey });
  assert.equal(search.status, 429);
  // Other routes keep the default limit.
  const fields = await svc.request('GET', '/api/v1/gamify/admin/participant-fields', { key: tenant.apiKey });
  assert.equal(fields.status, 200);
  assert.equal(fields.headers.get('x-ratelimit-limit'), '1000');
});

test('participants: ingested events coalesce into the profile through the ingestion module', async (t) => {
  const svc = await startTestService(t, { jobs: true });
  const tenant = await svc.createTenant();
  const sent = await svc.request('POST', '/api/v1/ingest/events', {
    key: tenant.apiKey,
    body: {
      event_name: 'signup',
      participant_id: 'ing-1',
      properties: { email: 'ing@example.org', first_name: 'Ingrid', mobile_number: 'not a number', plan: 'gold' },
      timestamp: '2026-11-01T10:00:00Z',
      idempotency_key: 'ing-1-signup',
    },
  });
  assert.ok([200, 202].includes(sent.status), sent.text);
  let profile: { status: number; body: Record<string, unknown> } = { status: 0, body: {} };
  for (let attempt = 0; attempt < 100; attempt++) {
    profile = await svc.request('GET', '/api/v1/gamify/admin/participants/ing-1', { key: tenant.apiKey });
    if (profile.status === 200 && profile.body.email) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(profile.body.email, 'ing@example.org');
  assert.equal(profile.body.first_name, 'Ingrid');
  assert.equal(profile.body.mobile_number, null);
});

test("participants: GET /public/participant answers only the session's own participant, in its own tenant", async (t) => {
  const svc = await startTestService(t);
  const [a, b] = [await svc.createTenant(), await svc.createTenant()];
  // The same participant id in both tenants, with different names and languages.
  for (const [tenant, name, locale] of [
    [a, 'Ann of A', 'de'],
    [b, 'Ben of B', 'fr-CA'],
  ] as const) {
    const patched = await svc.request('PATCH', '/api/v1/gamify/admin/participants/shared-1/profile', { key: tenant.apiKey, body: { display_name: name, locale } });
    assert.equal(patched.status, 200, patched.text);
  }
  const sessionA = await svc.createSession(a, { participantId: 'shared-1' });
  const sessionB = await svc.createSession(b, { participantId: 'shared-1' });
  const read = (sessionId: string, engagementId: string, key?: string) =>
    svc.request('GET', `/api/v1/public/participant?session_id=${encodeURIComponent(sessionId)}&engagement_id=${engagementId}`, { key });

  const own = await read(sessionA.sessionId, sessionA.engagementId);
  assert.equal(own.status, 200, own.text);
  assert.deepEqual([own.body.participant_id, own.body.display_name, own.body.locale], ['shared-1', 'Ann of A', 'de']);
  assert.ok(!('email' in own.body), 'nothing personal');
  const otherOwn = await read(sessionB.sessionId, sessionB.engagementId);
  assert.deepEqual([otherOwn.body.display_name, otherOwn.body.locale], ['Ben of B', 'fr-CA']);

  // A's session named with B's engagement, or B's session with A's: refused, never the other tenant's participant.
  for (const crossed of [read(sessionA.sessionId, sessionB.engagementId), read(sessionB.sessionId, sessionA.engagementId)]) {
    const answer = await crossed;
    assert.equal(answer.status, 403, answer.text);
    assert.equal(answer.body.code, 'SESSION_ENGAGEMENT_MISMATCH');
    assert.ok(!answer.text.includes('Ben of B') && !answer.text.includes('Ann of A'));
  }
  // Another tenant's API key beside A's session does not turn it into B's.
  const withKey = await read(sessionA.sessionId, sessionA.engagementId, b.apiKey);
  assert.ok(withKey.status === 401 || withKey.status === 403 || (withKey.status === 200 && withKey.body.display_name === 'Ann of A'), withKey.text);
});
