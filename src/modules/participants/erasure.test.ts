import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService, type TestTenant } from '../../../test/helper.js';
import { coalesceProfileInTx, ensureParticipant } from './index.js';

const PROFILE = {
  email: 'zenobia.q@example.org',
  first_name: 'Zenobia',
  last_name: 'Quartermaine',
  full_name: 'Zenobia Quartermaine',
  mobile_number: '+4915112345678',
  country_code: 'DE',
  date_of_birth: '1987-03-14',
  gender: 'female',
  city: 'Quedlinburg',
  postal_code: 'SW1A 9ZQ',
  external_id: 'crm-778899',
};
const DISPLAY_NAME = 'Zen Q';
const CARD = 'LC-5550001';
/** Every personal value of the participant, as the scan looks for them. */
const PERSONAL_VALUES = [
  PROFILE.email,
  PROFILE.first_name,
  PROFILE.last_name,
  PROFILE.full_name,
  PROFILE.mobile_number,
  PROFILE.mobile_number.slice(1),
  PROFILE.date_of_birth,
  PROFILE.city,
  PROFILE.postal_code,
  PROFILE.external_id,
  DISPLAY_NAME,
  CARD,
];

/**
 * Tables that stand in for other modules' copies of personal data: one that
 * references participants (contest entries), one that only names the
 * participant (an event store), and an append-only one guarded by a trigger
 * that lets erasures through (a ledger).
 */
async function createStandInTables(svc: TestService): Promise<void> {
  await svc.sql(`
    CREATE TABLE test_contest_entries (
      tenant_id uuid NOT NULL, id text NOT NULL, participant_id text NOT NULL,
      display_name text NOT NULL, note text, payload jsonb, score integer NOT NULL,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE);
    CALL enable_tenant_rls('test_contest_entries');
    CREATE TABLE test_event_store (
      tenant_id uuid NOT NULL, id text NOT NULL, participant_id text, event_name text NOT NULL, properties jsonb NOT NULL, raw json,
      PRIMARY KEY (tenant_id, id));
    CALL enable_tenant_rls('test_event_store');
    CREATE TABLE test_ledger (
      tenant_id uuid NOT NULL, id text NOT NULL, participant_id text NOT NULL, delta bigint NOT NULL, memo text,
      PRIMARY KEY (tenant_id, id),
      FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE);
    CALL enable_tenant_rls('test_ledger');
    CREATE FUNCTION test_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF current_setting('app.erasure', true) = 'on' THEN RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END; END IF;
      RAISE EXCEPTION 'test_ledger is append-only';
    END $$;
    CREATE TRIGGER test_ledger_append_only BEFORE UPDATE OR DELETE ON test_ledger FOR EACH ROW EXECUTE FUNCTION test_ledger_append_only();
  `);
}

async function seedParticipant(svc: TestService, tenant: TestTenant, participantId: string): Promise<void> {
  const profile = await svc.request('PATCH', `/api/v1/gamify/admin/participants/${participantId}/profile`, {
    key: tenant.apiKey,
    body: { ...PROFILE, display_name: DISPLAY_NAME, custom: { loyalty_card: CARD, newsletter: true } },
  });
  assert.equal(profile.status, 200, profile.text);
  // A real module's copy: the points ledger keeps the memo.
  const grant = await svc.request('POST', '/api/v1/gamify/points/grant', {
    key: tenant.apiKey,
    body: { participant_id: participantId, amount: 50, reason: 'goodwill', memo: `called ${PROFILE.mobile_number}`, idempotency_key: `${participantId}-grant-1` },
  });
  assert.equal(grant.status, 200, grant.text);
  const t = tenant.tenantId;
  await svc.sql(
    `INSERT INTO test_contest_entries VALUES ($1, $2 || '-entry', $2, $3, $4, $5, 5)`,
    [t, participantId, DISPLAY_NAME, `winner ${PROFILE.full_name} from ${PROFILE.city}`, JSON.stringify({ email: PROFILE.email, nested: [{ phone: PROFILE.mobile_number }], score: 5 })],
  );
  await svc.sql(`INSERT INTO test_event_store VALUES ($1, $2 || '-evt', $2, 'purchase', $3, $4)`, [
    t,
    participantId,
    JSON.stringify({ email: PROFILE.email, first_name: PROFILE.first_name, date_of_birth: PROFILE.date_of_birth, city: PROFILE.city, loyalty_card: CARD, amount: 12 }),
    JSON.stringify({ text: `contact ${PROFILE.email.toUpperCase()} or ${PROFILE.mobile_number}` }),
  ]);
  await svc.sql(`INSERT INTO test_ledger VALUES ($1, $2 || '-l1', $2, 100, $3), ($1, $2 || '-l2', $2, -40, 'redemption')`, [
    t,
    participantId,
    `goodwill for ${PROFILE.email}`,
  ]);
  await svc.sql(`INSERT INTO outbox_events (tenant_id, id, event, participant_id, data, created_at) VALUES ($1, $2 || '-out', 'badge.earned.v1', $2, $3, now())`, [
    t,
    participantId,
    JSON.stringify({ participant_id: participantId, badge_name: `${PROFILE.first_name}'s first badge` }),
  ]);
}

/** The counts of the tables this test controls (other modules' tables come and go). */
function ownTables(counts: Record<string, number>): Record<string, number> {
  const own = ['outbox_events', 'participant_custom_values', 'participants', 'sessions', 'test_contest_entries', 'test_event_store', 'test_ledger'];
  return Object.fromEntries(Object.entries(counts).filter(([table]) => own.includes(table)));
}

/** Every text and JSON column of every table in the database that holds one of the values. */
async function scanFor(svc: TestService, values: string[]): Promise<string[]> {
  const columns = await svc.sql<{ schema: string; table: string; column: string }>(
    `SELECT c.table_schema AS schema, c.table_name AS table, c.column_name AS column
     FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
     WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema') AND c.table_schema NOT LIKE 'pg_toast%'
       AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'USER-DEFINED')`,
  );
  assert.ok(columns.length > 20, 'the scan sees the schema');
  const patterns = values.map((v) => `%${v.replaceAll('\\', '\\\\').replaceAll('%', '\\%').replaceAll('_', '\\_')}%`);
  const hits: string[] = [];
  for (const { schema, table, column } of columns) {
    const [{ n }] = await svc.sql(`SELECT count(*)::int AS n FROM "${schema}"."${table}" WHERE "${column}"::text ILIKE ANY ($1::text[])`, [patterns]);
    if (n > 0) hits.push(`${schema}.${table}.${column} (${n})`);
  }
  return hits;
}

test('erasure: anonymization and hard delete', async (t) => {
  // The test writes a hand-made event with personal data into the outbox: no event contract check.
  const svc = await startTestService(t, { eventContract: false });
  await createStandInTables(svc);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  for (const key of [tenant.apiKey, other.apiKey]) {
    await svc.request('POST', '/api/v1/gamify/admin/participant-fields', { key, body: { key: 'loyalty_card', type: 'string', personal: true } });
    await svc.request('POST', '/api/v1/gamify/admin/participant-fields', { key, body: { key: 'newsletter', type: 'boolean', personal: false } });
  }
  await seedParticipant(svc, tenant, 'p-anon');
  await seedParticipant(svc, tenant, 'p-del');
  // The same person known to another tenant under the same id: erasure in one tenant must not touch it.
  await seedParticipant(svc, other, 'p-anon');
  // A full read, so that the access log holds rows about the participant.
  await svc.request('GET', '/api/v1/gamify/admin/participants/p-anon', { key: tenant.apiKey });

  await t.test('the scan finds the personal values before erasure', async () => {
    const hits = await scanFor(svc, PERSONAL_VALUES);
    for (const where of ['public.participants.email', 'public.test_contest_entries.note', 'public.test_event_store.properties', 'public.test_ledger.memo', 'public.outbox_events.data']) {
      assert.ok(hits.some((h) => h.startsWith(where)), `${where} in ${hits.join(', ')}`);
    }
  });

  await t.test('another tenant cannot erase the participant: 404 and nothing changes', async () => {
    const otherTenantOnly = await svc.createTenant();
    for (const path of ['/api/v1/gamify/admin/participants/p-del', '/api/v1/gamify/admin/participants/p-del?anonymize=true']) {
      const response = await svc.request('DELETE', path, { key: otherTenantOnly.apiKey });
      assert.equal(response.status, 404, response.text);
    }
    const [{ n }] = await svc.sql(`SELECT count(*)::int AS n FROM participants WHERE tenant_id = $1 AND participant_id = 'p-del' AND email IS NOT NULL`, [tenant.tenantId]);
    assert.equal(n, 1);
  });

  await t.test('unknown participants get 404; a malformed anonymize flag gets 400', async () => {
    assert.equal((await svc.request('DELETE', '/api/v1/gamify/admin/participants/nobody', { key: tenant.apiKey })).status, 404);
    assert.equal((await svc.request('DELETE', '/api/v1/gamify/admin/participants/nobody?anonymize=true', { key: tenant.apiKey })).status, 404);
    assert.equal((await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-del?anonymize=maybe', { key: tenant.apiKey })).status, 400);
    assert.equal((await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-del?purge=true', { key: tenant.apiKey })).status, 400);
  });

  let evidence: Record<string, unknown> = {};
  await t.test('anonymization nulls personal data everywhere, keeps the rows, and returns per-table evidence', async () => {
    const response = await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-anon?anonymize=true', { key: tenant.apiKey });
    assert.equal(response.status, 200, response.text);
    evidence = response.body;
    assert.equal(response.body.action, 'anonymized');
    assert.equal(response.body.duplicate, false);
    assert.equal(response.body.row_counts.points_ledger, 1, 'the ledger memo held the mobile number');
    assert.equal(response.body.rows_kept.points_ledger, 1);
    assert.deepEqual(ownTables(response.body.row_counts), {
      outbox_events: 1,
      participant_custom_values: 1,
      participants: 1,
      test_contest_entries: 1,
      test_event_store: 1,
      test_ledger: 1,
    });
    assert.deepEqual(ownTables(response.body.rows_kept), {
      outbox_events: 2,
      participant_custom_values: 1,
      participants: 1,
      test_contest_entries: 1,
      test_event_store: 1,
      test_ledger: 2,
    });
    const [stored] = await svc.sql(`SELECT * FROM participant_erasures WHERE tenant_id = $1 AND participant_id = 'p-anon'`, [tenant.tenantId]);
    assert.deepEqual(stored.row_counts, response.body.row_counts);
  });

  await t.test('after anonymization no personal value of the participant remains in any table or column of this tenant', async () => {
    const hits = await scanFor(svc, PERSONAL_VALUES);
    // The other tenant's participant and p-del (not erased yet) still hold the same values: look at this participant's rows only.
    const remaining = await svc.sql(
      `SELECT 'participants' AS t, row_to_json(p)::text AS row FROM participants p WHERE tenant_id = $1 AND participant_id = 'p-anon'
       UNION ALL SELECT 'custom', row_to_json(v)::text FROM participant_custom_values v WHERE tenant_id = $1 AND participant_id = 'p-anon'
       UNION ALL SELECT 'entries', row_to_json(e)::text FROM test_contest_entries e WHERE tenant_id = $1 AND participant_id = 'p-anon'
       UNION ALL SELECT 'events', row_to_json(e)::text FROM test_event_store e WHERE tenant_id = $1 AND participant_id = 'p-anon'
       UNION ALL SELECT 'ledger', row_to_json(l)::text FROM test_ledger l WHERE tenant_id = $1 AND participant_id = 'p-anon'
       UNION ALL SELECT 'outbox', row_to_json(o)::text FROM outbox_events o WHERE tenant_id = $1 AND participant_id = 'p-anon'
       UNION ALL SELECT 'log', row_to_json(l)::text FROM pii_access_log l WHERE tenant_id = $1
       UNION ALL SELECT 'erasures', row_to_json(e)::text FROM participant_erasures e WHERE tenant_id = $1`,
      [tenant.tenantId],
    );
    for (const { t: table, row } of remaining) {
      for (const value of PERSONAL_VALUES) assert.ok(!row.toLowerCase().includes(value.toLowerCase()), `${table} still holds "${value}": ${row}`);
    }
    assert.ok(hits.length > 0, 'the unerased participants still hold values, so the scan does look');
  });

  await t.test('the whole-database scan is clean once every holder of the values is erased', async () => {
    assert.equal((await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-anon?anonymize=true', { key: other.apiKey })).status, 200);
    assert.equal((await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-del?anonymize=true', { key: tenant.apiKey })).status, 200);
    assert.deepEqual(await scanFor(svc, PERSONAL_VALUES), []);
  });

  await t.test('events, facts and ledger are kept; the participant reads as a deleted user', async () => {
    const [entry] = await svc.sql(`SELECT display_name, note, payload, score FROM test_contest_entries WHERE tenant_id = $1 AND participant_id = 'p-anon'`, [tenant.tenantId]);
    assert.deepEqual(entry, { display_name: 'Deleted user', note: 'winner [redacted] from [redacted]', payload: { email: null, nested: [{ phone: null }], score: 5 }, score: 5 });
    const [event] = await svc.sql(`SELECT event_name, properties FROM test_event_store WHERE tenant_id = $1 AND participant_id = 'p-anon'`, [tenant.tenantId]);
    assert.equal(event.event_name, 'purchase');
    assert.equal(event.properties.amount, 12);
    assert.equal(event.properties.email, null);
    const [points] = await svc.sql(`SELECT delta, reason, memo FROM points_ledger WHERE tenant_id = $1 AND participant_id = 'p-anon'`, [tenant.tenantId]);
    assert.deepEqual(points, { delta: 50, reason: 'goodwill', memo: 'called [redacted]' });
    const ledger = await svc.sql(`SELECT delta, memo FROM test_ledger WHERE tenant_id = $1 AND participant_id = 'p-anon' ORDER BY id`, [tenant.tenantId]);
    assert.deepEqual(ledger, [{ delta: 100, memo: 'goodwill for [redacted]' }, { delta: -40, memo: 'redemption' }]);
    const [custom] = await svc.sql(`SELECT key, value FROM participant_custom_values WHERE tenant_id = $1 AND participant_id = 'p-anon'`, [tenant.tenantId]);
    assert.deepEqual(custom, { key: 'newsletter', value: true });
    const read = await svc.request('GET', '/api/v1/gamify/admin/participants/p-anon', { key: tenant.apiKey });
    assert.equal(read.body.display_name, 'Deleted user');
    assert.equal(read.body.anonymized, true);
    for (const field of Object.keys(PROFILE)) assert.equal(read.body[field], null, field);
    const list = await svc.request('GET', '/api/v1/gamify/admin/participants?anonymized=true', { key: tenant.apiKey });
    assert.deepEqual(list.body.participants.map((p: { participant_id: string }) => p.participant_id), ['p-anon', 'p-del']);
  });

  await t.test('anonymizing twice returns the same evidence and emits one event', async () => {
    const again = await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-anon?anonymize=true', { key: tenant.apiKey });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, { ...evidence, duplicate: true });
    const events = await svc.sql(`SELECT data FROM outbox_events WHERE tenant_id = $1 AND event = 'participant.anonymized.v1' AND participant_id = 'p-anon'`, [tenant.tenantId]);
    assert.equal(events.length, 1);
    assert.deepEqual(events[0].data, { participant_id: 'p-anon', anonymized_at: evidence.performed_at, row_counts: evidence.row_counts });
  });

  await t.test('personal data never comes back to an anonymized participant', async () => {
    const db = svc.service.db;
    const result = await db.tenant(tenant.tenantId, (tx) => coalesceProfileInTx(tx, tenant.tenantId, 'p-anon', { email: 'new@example.org', loyalty_card: 'LC-1' }));
    assert.equal(result.anonymized, true);
    await db.tenant(tenant.tenantId, (tx) => ensureParticipant(tx, tenant.tenantId, 'p-anon', 'Zen Again'));
    const upsert = await svc.request('PATCH', '/api/v1/gamify/admin/participants/p-anon/profile', { key: tenant.apiKey, body: { city: 'Halle' } });
    assert.equal(upsert.status, 409);
    const [row] = await svc.sql(`SELECT email, display_name, city FROM participants WHERE tenant_id = $1 AND participant_id = 'p-anon'`, [tenant.tenantId]);
    assert.deepEqual(row, { email: null, display_name: null, city: null });
    const [{ n }] = await svc.sql(`SELECT count(*)::int AS n FROM participant_custom_values WHERE tenant_id = $1 AND participant_id = 'p-anon' AND key = 'loyalty_card'`, [tenant.tenantId]);
    assert.equal(n, 0);
  });

  await t.test('hard delete removes the participant and every row of theirs, through append-only guards, and emits participant.deleted.v1', async () => {
    await assert.rejects(svc.sql(`DELETE FROM test_ledger WHERE tenant_id = $1 AND participant_id = 'p-del'`, [tenant.tenantId]), /append-only/);
    const response = await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-del', { key: tenant.apiKey });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.action, 'deleted');
    assert.deepEqual(response.body.rows_kept, {});
    assert.equal(response.body.row_counts.points_ledger, 1);
    assert.deepEqual(ownTables(response.body.row_counts), {
      outbox_events: 3,
      participant_custom_values: 1,
      participants: 1,
      test_contest_entries: 1,
      test_event_store: 1,
      test_ledger: 2,
    });
    for (const table of ['participants', 'participant_custom_values', 'points_ledger', 'test_contest_entries', 'test_event_store', 'test_ledger']) {
      const [{ n }] = await svc.sql(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1 AND participant_id = 'p-del'`, [tenant.tenantId]);
      assert.equal(n, 0, table);
    }
    const outbox = await svc.sql(`SELECT event, data FROM outbox_events WHERE tenant_id = $1 AND participant_id = 'p-del'`, [tenant.tenantId]);
    assert.deepEqual(outbox.map((o) => o.event), ['participant.deleted.v1']);
    assert.equal(outbox[0].data.deleted_at, response.body.performed_at);
    const again = await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-del', { key: tenant.apiKey });
    assert.deepEqual(again.body, { ...response.body, duplicate: true });
    assert.equal((await svc.request('GET', '/api/v1/gamify/admin/participants/p-del', { key: tenant.apiKey })).status, 404);
    assert.equal((await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-del?anonymize=true', { key: tenant.apiKey })).status, 404);
    // The other tenant's participant of the same id is untouched by either erasure.
    const [{ n }] = await svc.sql(`SELECT count(*)::int AS n FROM test_ledger WHERE tenant_id = $1 AND participant_id = 'p-del'`, [other.tenantId]);
    assert.equal(n, 0);
    const [{ m }] = await svc.sql(`SELECT count(*)::int AS m FROM test_ledger WHERE tenant_id = $1`, [other.tenantId]);
    assert.equal(m, 2);
  });

  await t.test('an anonymized participant can still be hard deleted', async () => {
    const response = await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-anon', { key: tenant.apiKey });
    assert.equal(response.status, 200);
    assert.equal(response.body.row_counts.test_ledger, 2);
  });

  await t.test('erasure needs an admin scope', async () => {
    const jwt = await svc.login(tenant);
    const created = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'ingest only', scopes: ['ingest'] } });
    const response = await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-anon', { key: created.body.key });
    assert.equal(response.status, 403);
  });
});
