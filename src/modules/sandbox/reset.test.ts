import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../../../test/helper.js';
import { CONFIGURATION_TABLES, DATA_TABLES, JOBS_KEY, KEPT_TABLES } from './reset.js';
import { runImport } from '../files/imports.js';
import { runExport } from '../files/exports.js';

/**
 * POST /tenant/sandbox/reset through HTTP: it empties the sandbox (data, or
 * everything), keeps keys, settings and the audit log, never touches the live
 * tenant's rows, refuses bad bodies and credentials without the admin scope,
 * and leaves consistent rows when writes race with it.
 */
const KEYS = '/api/v1/events/api-keys';
const RESET = '/api/v1/tenant/sandbox/reset';

/** Every base table of the schema with a tenant_id column. */
async function tenantTables(svc: TestService): Promise<string[]> {
  const rows = await svc.sql<{ table_name: string }>(
    `SELECT c.table_name FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
     WHERE c.table_schema = 'public' AND c.column_name = 'tenant_id' ORDER BY 1`,
  );
  return rows.map((r) => r.table_name);
}

/** Every row of the tenant in every tenant table, as text, table by table (for row-for-row comparison). */
async function snapshot(svc: TestService, tenantId: string, tables: string[]): Promise<Record<string, string[]>> {
  const result: Record<string, string[]> = {};
  for (const table of tables) {
    const rows = await svc.sql<{ row: string }>(`SELECT to_jsonb(x)::text AS row FROM ${table} x WHERE tenant_id = $1 ORDER BY 1`, [tenantId]);
    result[table] = rows.map((r) => r.row);
  }
  return result;
}

async function count(svc: TestService, table: string, tenantId: string): Promise<number> {
  const [{ n }] = await svc.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE tenant_id = $1`, [tenantId]);
  return n;
}

/** The tenant's background jobs (graphile-worker's table; its jobs view shows no payload). */
async function jobsOf(svc: TestService, tenantId: string): Promise<number> {
  const [{ n }] = await svc.sql<{ n: number }>("SELECT count(*)::int AS n FROM graphile_worker._private_jobs WHERE payload ->> 'tenant_id' = $1", [tenantId]);
  return n;
}

/** Points state that must hold for every participant: the balance is the sum of the ledger, and the lots hold it. */
async function pointsInconsistencies(svc: TestService, tenantId: string): Promise<unknown[]> {
  return svc.sql(
    `SELECT p.participant_id, b.available, l.total, lots.remaining
     FROM participants p
     LEFT JOIN points_balances b ON b.tenant_id = p.tenant_id AND b.participant_id = p.participant_id
     LEFT JOIN (SELECT participant_id, sum(delta)::bigint AS total FROM points_ledger WHERE tenant_id = $1 GROUP BY 1) l ON l.participant_id = p.participant_id
     LEFT JOIN (SELECT participant_id, sum(remaining)::bigint AS remaining FROM points_lots WHERE tenant_id = $1 GROUP BY 1) lots ON lots.participant_id = p.participant_id
     WHERE p.tenant_id = $1
       AND (coalesce(b.available, 0) <> coalesce(l.total, 0) OR coalesce(b.available, 0) <> coalesce(lots.remaining, 0))`,
    [tenantId],
  );
}

test('sandbox reset: every tenant table is classified as data, configuration or kept, once', async (t) => {
  const svc = await startTestService(t);
  const tables = await tenantTables(svc);
  const listed = [...DATA_TABLES, ...CONFIGURATION_TABLES, ...KEPT_TABLES] as string[];
  const unclassified = tables.filter((table) => !listed.includes(table));
  assert.deepEqual(unclassified, [], 'a table with tenant_id must be listed in src/modules/sandbox/reset.ts (DATA_TABLES, CONFIGURATION_TABLES or KEPT_TABLES)');
  assert.deepEqual(listed.filter((table) => !tables.includes(table)), [], 'every listed table exists');
  assert.equal(new Set(listed).size, listed.length, 'no table is listed twice');
});

test('sandbox reset: empties the sandbox, never the live tenant', async (t) => {
  const svc = await startTestService(t, { config: { RATE_LIMIT_KEY_PER_MINUTE: '1000000', ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' } });
  const live = await svc.createTenant();
  const jwt = await svc.login(live);
  const tables = await tenantTables(svc);

  await t.test('a live tenant without a sandbox gets 404 SANDBOX_NOT_FOUND', async () => {
    const missing = await svc.request('POST', RESET, { key: live.apiKey, body: {} });
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.body.code, 'SANDBOX_NOT_FOUND');
  });

  const adminKey = await svc.request('POST', KEYS, { bearer: jwt, body: { name: 'ci', environment: 'test', scopes: ['admin', 'gamify:admin', 'ingest'] } });
  assert.equal(adminKey.status, 201, adminKey.text);
  const testKey: string = adminKey.body.key;
  const ingestOnly = await svc.request('POST', KEYS, { bearer: jwt, body: { name: 'ingest', environment: 'test', scopes: ['ingest'] } });
  const liveIngestOnly = await svc.request('POST', KEYS, { bearer: jwt, body: { name: 'live ingest', scopes: ['ingest'] } });
  const sandboxId: string = (await svc.request('GET', '/api/v1/tenant/sandbox', { key: testKey })).body.sandbox_tenant_id;

  /** The same program in live and in the sandbox: configuration, participants, points, badges, events, a claimed pool code. */
  async function populate(key: string, tenantId: string): Promise<void> {
    const post = async (path: string, body: unknown, expected: number[]) => {
      const response = await svc.request('POST', `/api/v1${path}`, { key, body });
      assert.ok(expected.includes(response.status), `${path}: ${response.status} ${response.text}`);
      return response;
    };
    await post('/admin/badges', { code: 'explorer', name: 'Explorer' }, [201]);
    await post('/admin/rewards', { id: 'gift', name: 'Gift card', type: 'voucher', code_source: 'pool', metadata: { value: 10, currency: 'EUR' } }, [201]);
    await post('/admin/rewards/gift/codes', { codes: ['G-1', 'G-2'] }, [200, 201]);
    await post('/gamify/webhooks', { name: 'hooks', url: 'http://127.0.0.1:9/in', events: ['points.*'] }, [201]);
    for (const participant of ['ada', 'grace', 'lin']) {
      await post('/gamify/points/grant', { participant_id: participant, amount: 10, reason: 'welcome', idempotency_key: `welcome-${participant}` }, [200]);
      await post('/ingest/events', { event_name: 'page_view', participant_id: participant, idempotency_key: `view-${participant}` }, [202]);
    }
    await post('/admin/badges/explorer/award', { participant_id: 'ada' }, [200, 201]);
    // A claim of a pool code, as an activity's award_reward makes it.
    await svc.sql(
      `WITH claim AS (
         INSERT INTO reward_claims (tenant_id, id, reward_id, participant_id, name, type, display_type, metadata, code, claimed_at)
         VALUES ($1, 'claim-1', 'gift', 'ada', 'Gift card', 'voucher', 'voucher', '{}', 'G-1', now()) RETURNING id)
       UPDATE reward_codes SET claim_id = (SELECT id FROM claim) WHERE tenant_id = $1 AND code = 'G-1'`,
      [tenantId],
    );
    await svc.sql("UPDATE rewards SET claimed_count = 1 WHERE tenant_id = $1 AND id = 'gift'", [tenantId]);
    // Background work waiting (this test runs no worker): one job on data, one driving a contest.
    await svc.sql("SELECT graphile_worker.add_job('ingestion.process', json_build_object('tenant_id', $1::text, 'event_ids', json_build_array()))", [tenantId]);
    await svc.sql("SELECT graphile_worker.add_job('contests.advance', json_build_object('tenant_id', $1::text, 'contest_id', 'c-1'))", [tenantId]);
  }
  await populate(live.apiKey, live.tenantId);
  await populate(testKey, sandboxId);
  const liveBefore = await snapshot(svc, live.tenantId, tables);
  assert.equal(liveBefore.participants.length, 3);

  await t.test('bad bodies are refused with detail and change nothing', async () => {
    const before = await count(svc, 'participants', sandboxId);
    for (const body of [{ scope: 'all' }, { scope: 'data', extra: true }, { scope: 1 }, ['data']]) {
      const refused = await svc.request('POST', RESET, { key: testKey, body });
      assert.equal(refused.status, 400, `${JSON.stringify(body)}: ${refused.text}`);
      assert.ok(refused.body.detail, 'the answer says what is wrong');
    }
    assert.equal(await count(svc, 'participants', sandboxId), before);
  });

  await t.test('a credential without the admin scope gets 403, sandbox or live', async () => {
    for (const key of [ingestOnly.body.key, liveIngestOnly.body.key]) {
      const refused = await svc.request('POST', RESET, { key, body: { scope: 'everything' } });
      assert.equal(refused.status, 403, refused.text);
    }
    assert.equal(await count(svc, 'participants', sandboxId), 3);
  });

  await t.test("another tenant's reset empties its own sandbox, not this one", async () => {
    const other = await svc.createTenant();
    assert.equal((await svc.request('POST', '/api/v1/tenant/sandbox', { key: other.apiKey })).status, 201);
    const reset = await svc.request('POST', RESET, { key: other.apiKey, body: { scope: 'everything' } });
    assert.equal(reset.status, 200, reset.text);
    assert.notEqual(reset.body.sandbox_tenant_id, sandboxId);
    assert.equal(await count(svc, 'participants', sandboxId), 3);
    assert.equal(await count(svc, 'rewards', sandboxId), 1);
  });

  await t.test('scope data (the default, no body): participants and what they produced go; configuration, keys and audit log stay', async () => {
    const auditBefore = await count(svc, 'audit_log', sandboxId);
    const jobsBefore = await jobsOf(svc, sandboxId);
    const liveJobsBefore = await jobsOf(svc, live.tenantId);
    assert.deepEqual([jobsBefore, liveJobsBefore], [2, 2]);
    const reset = await svc.request('POST', RESET, { key: testKey });
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body.sandbox_tenant_id, sandboxId);
    assert.equal(reset.body.scope, 'data');
    assert.equal(reset.body.livemode, false);
    assert.ok(!Number.isNaN(Date.parse(reset.body.reset_at)));
    assert.deepEqual(Object.keys(reset.body.deleted).sort(), [...DATA_TABLES, JOBS_KEY].sort(), 'every data table is reported');
    assert.equal(reset.body.deleted.participants, 3);
    assert.equal(reset.body.deleted.points_ledger, 3);
    assert.equal(reset.body.deleted.points_balances, 3);
    assert.equal(reset.body.deleted.participant_badges, 1);
    assert.equal(reset.body.deleted.reward_claims, 1);
    assert.ok(reset.body.deleted.ingested_events >= 3);
    assert.ok(reset.body.deleted.outbox_events >= 3);
    assert.equal(reset.body.released_reward_codes, 1);

    for (const table of DATA_TABLES) assert.equal(await count(svc, table, sandboxId), 0, `${table} is empty`);
    assert.equal(reset.body.deleted[JOBS_KEY], 1, 'the waiting data job of the sandbox is deleted');
    assert.equal(await jobsOf(svc, sandboxId), 1, "the contest's job stays with the contest configuration");
    assert.equal(await jobsOf(svc, live.tenantId), liveJobsBefore, 'the live jobs stay');
    assert.equal(await count(svc, 'badge_definitions', sandboxId), 1);
    assert.equal(await count(svc, 'webhook_destinations', sandboxId), 1);
    const [reward] = await svc.sql("SELECT claimed_count FROM rewards WHERE tenant_id = $1 AND id = 'gift'", [sandboxId]);
    assert.equal(reward.claimed_count, 0, 'the claim count starts over');
    const free = await svc.sql('SELECT code FROM reward_codes WHERE tenant_id = $1 AND claim_id IS NULL ORDER BY code', [sandboxId]);
    assert.deepEqual(free.map((r) => r.code), ['G-1', 'G-2'], 'the claimed pool code is free again');
    assert.ok((await count(svc, 'audit_log', sandboxId)) > auditBefore, 'the audit log is kept, and records the reset');

    const participant = await svc.request('GET', '/api/v1/gamify/participants/ada', { key: testKey });
    assert.equal(participant.status, 404, 'the participant is gone, and the key still works');
    const again = await svc.request('POST', '/api/v1/gamify/points/grant', { key: testKey, body: { participant_id: 'ada', amount: 5, reason: 'again', idempotency_key: 'welcome-ada' } });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.duplicate, false, 'idempotency keys were reset too');
    assert.equal(again.body.available, 5);

    const liveAfter = await snapshot(svc, live.tenantId, tables);
    for (const table of tables.filter((t) => t !== 'audit_log' && t !== 'api_keys')) assert.deepEqual(liveAfter[table], liveBefore[table], `live ${table} unchanged, row for row`);
  });

  await t.test('with a live credential and scope everything, the configuration goes too; keys, users and settings stay', async () => {
    const liveTenantRow = await svc.sql('SELECT * FROM tenants WHERE id = $1', [live.tenantId]);
    const reset = await svc.request('POST', RESET, { key: live.apiKey, body: { scope: 'everything' } });
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body.sandbox_tenant_id, sandboxId, 'the live credential resets its sandbox');
    assert.equal(reset.body.scope, 'everything');
    assert.equal(reset.body.livemode, true);
    assert.equal(reset.body.deleted.participants, 1);
    assert.equal(reset.body.deleted.badge_definitions, 1);
    assert.equal(reset.body.deleted.rewards, 1);
    assert.equal(reset.body.deleted.reward_codes, 2);
    assert.equal(reset.body.deleted[JOBS_KEY], 1, "the contest's job goes with the configuration");
    assert.equal(await jobsOf(svc, sandboxId), 0);
    assert.equal(await jobsOf(svc, live.tenantId), 2, 'the live jobs stay');
    for (const table of [...DATA_TABLES, ...CONFIGURATION_TABLES]) assert.equal(await count(svc, table, sandboxId), 0, `${table} is empty`);
    assert.ok((await count(svc, 'api_keys', sandboxId)) >= 2, 'the test keys stay');
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: testKey })).status, 200);

    const liveAfter = await snapshot(svc, live.tenantId, tables);
    for (const table of tables.filter((t) => t !== 'audit_log' && t !== 'api_keys')) assert.deepEqual(liveAfter[table], liveBefore[table], `live ${table} unchanged`);
    assert.deepEqual(liveAfter.api_keys.length, liveBefore.api_keys.length);
    assert.deepEqual(await svc.sql('SELECT * FROM tenants WHERE id = $1', [live.tenantId]), liveTenantRow, 'the live tenant row is unchanged');
    assert.equal((await svc.request('GET', '/api/v1/gamify/participants/ada', { key: live.apiKey })).status, 200);
  });

  await t.test('a sandbox made on its own resets with its own admin key', async () => {
    const alone = await svc.createTenant({ environment: 'sandbox' });
    const granted = await svc.request('POST', '/api/v1/gamify/points/grant', { key: alone.apiKey, body: { participant_id: 'solo', amount: 3, reason: 'x', idempotency_key: 'solo-1' } });
    assert.equal(granted.status, 200, granted.text);
    const reset = await svc.request('POST', RESET, { key: alone.apiKey, body: { scope: 'data' } });
    assert.equal(reset.status, 200, reset.text);
    assert.equal(reset.body.sandbox_tenant_id, alone.tenantId);
    assert.equal(reset.body.deleted.participants, 1);
    assert.equal(await count(svc, 'participants', sandboxId), 0);

    // An Idempotency-Key on the reset itself survives the reset: a retry replays the answer.
    const keyed = await svc.request('POST', RESET, { key: alone.apiKey, headers: { 'idempotency-key': 'reset-1' } });
    assert.equal(keyed.status, 200, keyed.text);
    const replayed = await svc.request('POST', RESET, { key: alone.apiKey, headers: { 'idempotency-key': 'reset-1' } });
    assert.equal(replayed.status, 200, replayed.text);
    assert.equal(replayed.body.reset_at, keyed.body.reset_at, 'the retry is answered from the stored answer');
  });

  await t.test('an import and an export running across a reset stop at their next step and write nothing after it', async () => {
    const db = svc.service.db;
    let csv = 'participant_id,city\r\n';
    for (let i = 1; i <= 1_200; i++) csv += `imp-${i},Leeds\r\n`;
    const imported = await svc.request('POST', '/api/v1/admin/imports?kind=participants&format=csv', { key: testKey, raw: csv, headers: { 'content-type': 'text/csv' } });
    assert.equal(imported.status, 202, imported.text);
    const exported = await svc.request('POST', '/api/v1/admin/exports', { key: testKey, body: { kind: 'ledger', format: 'csv' } });
    assert.equal(exported.status, 202, exported.text);
    // One step of each, as a worker would have taken before the reset (the import's first 500 rows, the export's header).
    await runImport(db, sandboxId, imported.body.import_id, { batchesMax: 1 });
    await runExport(db, sandboxId, exported.body.export_id, { pagesMax: 1 });
    const running = await svc.request('GET', `/api/v1/admin/imports/${imported.body.import_id}`, { key: testKey });
    assert.equal(running.body.status, 'running', running.text);

    assert.equal((await svc.request('POST', RESET, { key: testKey })).status, 200);
    // The worker's next steps find nothing to continue and end without an error.
    await runImport(db, sandboxId, imported.body.import_id);
    await runExport(db, sandboxId, exported.body.export_id);
    assert.equal(await count(svc, 'participants', sandboxId), 0, 'no imported participant arrives after the reset');
    for (const table of ['file_imports', 'file_import_rows', 'file_exports', 'file_export_chunks']) assert.equal(await count(svc, table, sandboxId), 0, table);
    assert.equal((await svc.request('GET', `/api/v1/admin/imports/${imported.body.import_id}`, { key: testKey })).status, 404);
  });

  await t.test('a reset in the middle of 50 parallel grants and events: no 500, no half-deleted state', async () => {
    const writes = Array.from({ length: 50 }, (_, i) =>
      i % 2 === 0
        ? svc.request('POST', '/api/v1/gamify/points/grant', { key: testKey, body: { participant_id: `p-${i % 7}`, amount: 1 + i, reason: 'race', idempotency_key: `race-${i}` } })
        : svc.request('POST', '/api/v1/ingest/events', { key: testKey, body: { event_name: 'page_view', participant_id: `p-${i % 7}`, idempotency_key: `race-${i}` } }),
    );
    const reset = new Promise((resolve) => setTimeout(resolve, 20)).then(() => svc.request('POST', RESET, { key: testKey }));
    const answers = await Promise.all([...writes, reset]);
    assert.deepEqual(answers.filter((a) => a.status >= 500).map((a) => a.text), [], 'no 500');
    assert.equal((await reset).status, 200);
    for (const answer of answers.slice(0, 50)) assert.ok([200, 202].includes(answer.status), answer.text);
    assert.deepEqual(await pointsInconsistencies(svc, sandboxId), [], 'every remaining balance equals its ledger and its lots');
    const orphans = await svc.sql(
      `SELECT 'balance' AS kind, participant_id FROM points_balances b WHERE tenant_id = $1 AND NOT EXISTS (SELECT 1 FROM points_ledger l WHERE l.tenant_id = b.tenant_id AND l.participant_id = b.participant_id)
       UNION ALL
       SELECT 'event', participant_id FROM ingested_events e WHERE tenant_id = $1 AND participant_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM participants p WHERE p.tenant_id = e.tenant_id AND p.participant_id = e.participant_id)`,
      [sandboxId],
    );
    assert.deepEqual(orphans, []);
    assert.deepEqual(await pointsInconsistencies(svc, live.tenantId), []);
    assert.equal(await count(svc, 'participants', live.tenantId), 3, 'live participants untouched');
  });
});
