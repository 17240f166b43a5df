import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { keyWithScopes, startTestService, waitFor, type TestService } from '../../../test/helper.js';
import { asPerson, invitePerson, signInConsole } from '../../../test/console-people.js';
import { contestDefinition } from '../contests/testing.js';
import { purgeAll } from '../../platform/retention.js';
import { runImport, IMPORT_BATCH_ROWS, UPLOAD_BATCH_ROWS } from './imports.js';
import { runExport, EXPORT_PAGE_ROWS } from './exports.js';
import filesModule, { UPLOAD_ABANDONED_AFTER_DAYS } from './index.js';

/**
 * Files in and out through HTTP. Jobs are off: each test runs the import or
 * export job function itself, so that it can also stop one midway (a killed
 * worker) and run it again.
 */

/** A participants CSV of `rows` rows (p-bulk-1 …), several upload batches long. */
function participantsCsv(rows: number, prefix = 'p-bulk'): string {
  let csv = 'participant_id,city\r\n';
  for (let i = 1; i <= rows; i++) csv += `${prefix}-${i},Leeds\r\n`;
  return csv;
}

function upload(svc: TestService, key: string, kind: string, format: 'csv' | 'jsonl', text: string, contentType?: string) {
  return svc.request('POST', `/api/v1/admin/imports?kind=${kind}&format=${format}`, {
    key,
    raw: text,
    headers: { 'content-type': contentType ?? (format === 'csv' ? 'text/csv' : 'application/x-ndjson') },
  });
}

test('files: imports and exports', { timeout: 120_000 }, async (t) => {
  const svc = await startTestService(t);
  const db = svc.service.db;
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const pii = (await keyWithScopes(svc, tenant, ['admin', 'read:pii'])).key;
  const plain = (await keyWithScopes(svc, tenant, ['admin'])).key;
  const ingestOnly = (await keyWithScopes(svc, tenant, ['ingest'])).key;

  async function exported(key: string, body: Record<string, unknown>): Promise<{ id: string; text: string }> {
    const started = await svc.request('POST', '/api/v1/admin/exports', { key, body });
    assert.equal(started.status, 202, started.text);
    assert.equal(started.body.status, 'queued');
    await runExport(db, tenant.tenantId, started.body.export_id);
    const done = await svc.request('GET', `/api/v1/admin/exports/${started.body.export_id}`, { key });
    assert.equal(done.body.status, 'completed', done.text);
    const file = await svc.request('GET', done.body.file_url, { key });
    assert.equal(file.status, 200, file.text);
    assert.match(file.headers.get('content-disposition') ?? '', new RegExp(`attachment; filename="${body.kind}-${started.body.export_id}\\.${body.format}"`));
    return { id: started.body.export_id, text: file.text };
  }

  await t.test('a participants CSV with one bad row imports the good rows and reports the bad one by row, field and detail', async () => {
    const field = await svc.request('POST', '/api/v1/gamify/admin/participant-fields', { key: pii, body: { key: 'loyalty_club', type: 'boolean', personal: false } });
    assert.equal(field.status, 201, field.text);
    const csv = [
      'participant_id,email,first_name,city,loyalty_club,locale',
      'p-1,ada@example.com,Ada,London,true,en-gb',
      'p-2,not-an-email,Bob,Paris,false,de',
      '"p-3","grace@example.com","Grace ""Amazing""","New York, NY",,',
    ].join('\r\n');
    const started = await upload(svc, pii, 'participants', 'csv', csv);
    assert.equal(started.status, 202, started.text);
    assert.deepEqual([started.body.status, started.body.rows_total, started.body.rows_pending], ['queued', 3, 3]);
    await runImport(db, tenant.tenantId, started.body.import_id);

    const status = await svc.request('GET', `/api/v1/admin/imports/${started.body.import_id}`, { key: pii });
    assert.deepEqual([status.body.status, status.body.rows_done, status.body.rows_failed, status.body.rows_pending], ['completed', 2, 1, 0]);
    const errors = await svc.request('GET', `/api/v1/admin/imports/${started.body.import_id}/errors`, { key: pii });
    assert.equal(errors.status, 200, errors.text);
    assert.equal(errors.body.errors.length, 1);
    assert.equal(errors.body.errors[0].row, 2);
    assert.match(errors.body.errors[0].detail, /email/);

    const grace = await svc.request('GET', '/api/v1/gamify/admin/participants/p-3', { key: pii });
    assert.equal(grace.body.first_name, 'Grace "Amazing"');
    assert.equal(grace.body.city, 'New York, NY');
    const ada = await svc.request('GET', '/api/v1/gamify/admin/participants/p-1', { key: pii });
    assert.deepEqual([ada.body.email, ada.body.custom.loyalty_club, ada.body.locale], ['ada@example.com', true, 'en-GB'], 'the locale column is stored canonical');
    const bob = await svc.request('GET', '/api/v1/gamify/admin/participants/p-2', { key: pii });
    assert.equal(bob.status, 404, 'the refused row wrote nothing');
  });

  await t.test('a set-based batch (a repeated participant, a bad row, an anonymized participant) ends as the same rows upserted one by one', async () => {
    const rows = [
      { participant_id: 'p-1', city: 'London', tier: 'silver' },
      { participant_id: 'p-2', email: 'not-an-email' },
      { participant_id: 'gone', city: 'Leeds' },
      { participant_id: 'p-1', tier: null, first_name: 'Ada' },
      { participant_id: 'p-3', display_name: 'Three', external_id: 'ext-1', tier: 'bronze' },
      { participant_id: 'p-1', city: 'York' },
      { participant_id: 'p-3', external_id: null },
    ];
    async function prepared(): Promise<{ key: string; tenantId: string }> {
      const fresh = await svc.createTenant();
      const key = (await keyWithScopes(svc, fresh, ['admin', 'read:pii'])).key;
      const field = await svc.request('POST', '/api/v1/gamify/admin/participant-fields', { key, body: { key: 'tier', type: 'string', personal: false } });
      assert.equal(field.status, 201, field.text);
      for (const [id, body] of [['p-1', { city: 'Paris', custom: { tier: 'gold' } }], ['gone', { city: 'Oslo' }]] as const) {
        const written = await svc.request('PATCH', `/api/v1/gamify/admin/participants/${id}/profile`, { key, body });
        assert.equal(written.status, 200, written.text);
      }
      const erased = await svc.request('DELETE', '/api/v1/gamify/admin/participants/gone?anonymize=true', { key });
      assert.equal(erased.status, 200, erased.text);
      return { key, tenantId: fresh.tenantId };
    }
    const batch = await prepared();
    const started = await upload(svc, batch.key, 'participants', 'jsonl', rows.map((row) => JSON.stringify(row)).join('\n'));
    assert.equal(started.status, 202, started.text);
    await runImport(db, batch.tenantId, started.body.import_id);
    const status = await svc.request('GET', `/api/v1/admin/imports/${started.body.import_id}`, { key: batch.key });
    assert.deepEqual([status.body.rows_done, status.body.rows_failed], [5, 2]);
    const report = await svc.request('GET', `/api/v1/admin/imports/${started.body.import_id}/errors`, { key: batch.key });

    const oneByOne = await prepared();
    const refusals: Array<Record<string, unknown>> = [];
    for (const [i, { participant_id: id, tier, ...fields }] of rows.entries()) {
      const body = tier === undefined ? fields : { ...fields, custom: { tier } };
      const written = await svc.request('PATCH', `/api/v1/gamify/admin/participants/${id}/profile`, { key: oneByOne.key, body });
      if (written.status !== 200) refusals.push({ row: i + 1, field: null, code: written.body.code, detail: written.body.detail });
    }
    assert.deepEqual(report.body.errors, refusals);
    assert.deepEqual(
      refusals.map((r) => r.code),
      ['PROFILE_INVALID_VALUE', 'PARTICIPANT_ANONYMIZED'],
    );
    const comparable = ({ created_at: _c, updated_at: _u, anonymized_at: _a, request_id: _r, ...rest }: Record<string, unknown>) => rest;
    for (const id of ['p-1', 'p-2', 'p-3', 'gone']) {
      const [fromBatch, fromRows] = await Promise.all(
        [batch, oneByOne].map((side) => svc.request('GET', `/api/v1/gamify/admin/participants/${id}`, { key: side.key })),
      );
      assert.equal(fromBatch.status, fromRows.status, id);
      assert.deepEqual(comparable(fromBatch.body), comparable(fromRows.body), id);
    }
    const p1 = await svc.request('GET', '/api/v1/gamify/admin/participants/p-1', { key: batch.key });
    assert.deepEqual([p1.body.city, p1.body.first_name, p1.body.custom], ['York', 'Ada', {}], 'the later rows won; null cleared the custom value');
  });

  await t.test('a batch the database refuses whole is applied again row by row: only the refused row fails', async () => {
    // A rule the service does not check in memory, so that only the database refuses the row.
    const fresh = await svc.createTenant();
    const key = (await keyWithScopes(svc, fresh, ['admin'])).key;
    await svc.sql(`ALTER TABLE participants ADD CONSTRAINT test_refused_city CHECK (city IS DISTINCT FROM 'Refused') NOT VALID`);
    try {
      const started = await upload(svc, key, 'participants', 'csv', 'participant_id,city\r\np-fb-1,Leeds\r\np-fb-2,Refused\r\np-fb-1,York\r\np-fb-3,Leeds');
      assert.equal(started.status, 202, started.text);
      await runImport(db, fresh.tenantId, started.body.import_id);
      const status = await svc.request('GET', `/api/v1/admin/imports/${started.body.import_id}`, { key });
      assert.deepEqual([status.body.rows_done, status.body.rows_failed], [3, 1]);
      const report = await svc.request('GET', `/api/v1/admin/imports/${started.body.import_id}/errors`, { key });
      assert.equal(report.body.errors.length, 1);
      assert.deepEqual([report.body.errors[0].row, report.body.errors[0].code], [2, 'PROFILE_REFUSED_BY_DATABASE']);
      assert.match(report.body.errors[0].detail, /SQLSTATE 23514/);
      const [first, refused, third] = await Promise.all(['p-fb-1', 'p-fb-2', 'p-fb-3'].map((id) => svc.request('GET', `/api/v1/gamify/admin/participants/${id}`, { key })));
      assert.deepEqual([first.body.city, refused.status, third.body.city], ['York', 404, 'Leeds']);
    } finally {
      await svc.sql('ALTER TABLE participants DROP CONSTRAINT test_refused_city');
    }
  });

  await t.test('an upload is refused whole for a missing or unknown column (400), personal columns without read:pii (403), a wrong media type (415), a large body (413)', async () => {
    const missing = await upload(svc, pii, 'point_grants', 'csv', 'participant_id,amount\r\np-1,5');
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'IMPORT_MISSING_COLUMN');
    assert.match(missing.body.detail, /reason/);
    const unknown = await upload(svc, pii, 'participants', 'csv', 'participant_id,shoe_size\r\np-9,44');
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.detail, /shoe_size/);
    const personal = await upload(svc, plain, 'participants', 'csv', 'participant_id,email\r\np-9,x@example.com');
    assert.equal(personal.status, 403);
    assert.match(personal.body.detail, /read:pii.*email/);
    const json = await upload(svc, pii, 'participants', 'csv', '{"participant_id":"p-9"}', 'application/json');
    assert.equal(json.status, 415);
    assert.match(json.body.detail, /text\/csv/);
    const badFormat = await svc.request('POST', '/api/v1/admin/imports?kind=participants&format=xlsx', { key: pii, raw: 'x', headers: { 'content-type': 'text/csv' } });
    assert.equal(badFormat.status, 400);
    const broken = await upload(svc, pii, 'participants', 'csv', 'participant_id,city\r\n"p-9,London');
    assert.equal(broken.status, 400);
    assert.equal(broken.body.code, 'FILE_INVALID_CSV');

    process.env.FILES_IMPORT_BYTES_MAX = '2048';
    try {
      const large = await upload(svc, pii, 'participants', 'csv', `participant_id,city\r\n${'p-x,London\r\n'.repeat(400)}`);
      assert.equal(large.status, 413, large.text);
    } finally {
      delete process.env.FILES_IMPORT_BYTES_MAX;
    }
    const count = await svc.sql('SELECT count(*)::int AS n FROM file_imports WHERE tenant_id = $1', [tenant.tenantId]);
    assert.equal(count[0].n, 1, 'no refused upload left an import behind');
    const noScope = await upload(svc, ingestOnly, 'participants', 'csv', 'participant_id\r\np-9');
    assert.equal(noScope.status, 403);
  });

  await t.test('an upload refused halfway, after batches of rows were stored, leaves no import and no rows (broken CSV, too large, client gone)', async () => {
    const stored = async () => {
      const [counts] = await svc.sql(
        `SELECT (SELECT count(*)::int FROM file_imports WHERE tenant_id = $1 AND status = 'uploading') AS imports,
                (SELECT count(*)::int FROM file_import_rows WHERE tenant_id = $1) AS rows`,
        [tenant.tenantId],
      );
      return counts as { imports: number; rows: number };
    };
    const rows = UPLOAD_BATCH_ROWS * 3;
    const broken = await upload(svc, pii, 'participants', 'csv', `${participantsCsv(rows)}"p-9,London`);
    assert.equal(broken.status, 400, broken.text);
    assert.equal(broken.body.code, 'FILE_INVALID_CSV');
    assert.deepEqual(await stored(), { imports: 0, rows: 0 });

    const file = participantsCsv(rows);
    process.env.FILES_IMPORT_BYTES_MAX = String(Math.floor(file.length * 0.8));
    try {
      const large = await upload(svc, pii, 'participants', 'csv', file);
      assert.equal(large.status, 413, large.text);
    } finally {
      delete process.env.FILES_IMPORT_BYTES_MAX;
    }
    assert.deepEqual(await stored(), { imports: 0, rows: 0 });

    // A client that sends two batches' worth of rows, then goes away: while it sends, the import shows as uploading.
    const url = new URL(`${svc.baseUrl}/api/v1/admin/imports?kind=participants&format=csv`);
    const part = participantsCsv(UPLOAD_BATCH_ROWS * 2 + 10, 'p-gone');
    const request = http.request(url, { method: 'POST', headers: { 'x-api-key': pii, 'content-type': 'text/csv', 'content-length': String(part.length * 2) } });
    request.on('error', () => undefined);
    request.write(part);
    const listed = await waitFor('the import listed as uploading', async () => {
      const r = await svc.request('GET', '/api/v1/admin/imports?limit=1', { key: pii });
      return r.body.imports[0]?.status === 'uploading' && r.body.imports[0].rows_total >= UPLOAD_BATCH_ROWS && r;
    });
    assert.equal(listed.body.imports[0].status, 'uploading', listed.text);
    const read = await svc.request('GET', `/api/v1/admin/imports/${listed.body.imports[0].import_id}`, { key: pii });
    assert.deepEqual([read.status, read.body.status], [200, 'uploading']);
    request.destroy();
    const left = await waitFor('the abandoned upload deleted', async () => {
      const counts = await stored();
      return counts.imports === 0 && counts;
    });
    assert.deepEqual(left, { imports: 0, rows: 0 }, 'the abandoned upload deleted its import and rows');
  });

  let grantsImportId = '';
  await t.test('JSON lines point grants: balances are right, and a run stopped midway then repeated applies no row twice', async () => {
    const lines: string[] = [];
    for (let i = 1; i <= IMPORT_BATCH_ROWS + 20; i++) lines.push(JSON.stringify({ participant_id: `g-${i % 10}`, amount: 1, reason: 'migration' }));
    lines.push('{"participant_id": "g-1", "amount": -5, "reason": "bad"}');
    lines.push('not json');
    const started = await upload(svc, plain, 'point_grants', 'jsonl', `${lines.join('\n')}\n`);
    assert.equal(started.status, 202, started.text);
    grantsImportId = started.body.import_id;
    // A worker that dies after its first batch.
    await runImport(db, tenant.tenantId, grantsImportId, { batchesMax: 1 });
    const midway = await svc.request('GET', `/api/v1/admin/imports/${grantsImportId}`, { key: plain });
    assert.deepEqual([midway.body.status, midway.body.rows_done, midway.body.rows_pending], ['running', IMPORT_BATCH_ROWS, 22]);
    await runImport(db, tenant.tenantId, grantsImportId);
    await runImport(db, tenant.tenantId, grantsImportId);
    const done = await svc.request('GET', `/api/v1/admin/imports/${grantsImportId}`, { key: plain });
    assert.deepEqual([done.body.status, done.body.rows_done, done.body.rows_failed], ['completed', IMPORT_BATCH_ROWS + 20, 2]);
    const balances = await svc.sql('SELECT participant_id, available FROM points_balances WHERE tenant_id = $1 ORDER BY participant_id', [tenant.tenantId]);
    assert.equal(balances.reduce((sum: number, b: { available: number }) => sum + Number(b.available), 0), IMPORT_BATCH_ROWS + 20);
    assert.equal(Number(balances.find((b: { participant_id: string }) => b.participant_id === 'g-1').available), 52);
    const errors = await svc.request('GET', `/api/v1/admin/imports/${grantsImportId}/errors?limit=1`, { key: plain });
    assert.deepEqual([errors.body.errors[0].row, errors.body.errors[0].field], [IMPORT_BATCH_ROWS + 21, 'amount']);
    const next = await svc.request('GET', `/api/v1/admin/imports/${grantsImportId}/errors?limit=1&cursor=${errors.body.next_cursor}`, { key: plain });
    assert.equal(next.body.errors[0].row, IMPORT_BATCH_ROWS + 22);
    assert.match(next.body.errors[0].detail, /not valid JSON/);
    assert.equal(next.body.next_cursor, null);
  });

  await t.test('a grant the write refuses (a balance past its limit) fails its row alone; the rest of the batch is granted', async () => {
    await svc.sql("INSERT INTO participants (tenant_id, participant_id) VALUES ($1, 'rich')", [tenant.tenantId]);
    await svc.sql(`INSERT INTO points_balances (tenant_id, participant_id, available, lifetime, updated_at) VALUES ($1, 'rich', 0, $2, now())`, [
      tenant.tenantId,
      Number.MAX_SAFE_INTEGER - 1,
    ]);
    const started = await upload(svc, plain, 'point_grants', 'csv', 'participant_id,amount,reason\nfine-1,3,x\nrich,5,x\nfine-2,4,x\n');
    assert.equal(started.status, 202, started.text);
    await runImport(db, tenant.tenantId, started.body.import_id);
    const done = await svc.request('GET', `/api/v1/admin/imports/${started.body.import_id}`, { key: plain });
    assert.deepEqual([done.body.rows_done, done.body.rows_failed], [2, 1]);
    const errors = await svc.request('GET', `/api/v1/admin/imports/${started.body.import_id}/errors`, { key: plain });
    assert.deepEqual(errors.body.errors.map((e: { row: number; code: string }) => [e.row, e.code]), [[2, 'POINTS_BALANCE_LIMIT']]);
    const balances = await svc.sql("SELECT participant_id, available FROM points_balances WHERE tenant_id = $1 AND participant_id IN ('fine-1', 'fine-2', 'rich') ORDER BY participant_id", [tenant.tenantId]);
    assert.deepEqual(balances.map((b: { participant_id: string; available: number }) => [b.participant_id, Number(b.available)]), [['fine-1', 3], ['fine-2', 4], ['rich', 0]]);
  });

  await t.test('the same file sent again with its Idempotency-Key answers the first import and grants once; another file with the key is 422', async () => {
    const file = 'participant_id,amount,reason\nonce-1,10,retry\n';
    const send = (text: string) =>
      svc.request('POST', '/api/v1/admin/imports?kind=point_grants&format=csv', { key: plain, raw: text, headers: { 'content-type': 'text/csv', 'idempotency-key': 'upload-1' } });
    const first = await send(file);
    assert.equal(first.status, 202, first.text);
    assert.equal(first.body.duplicate, false);
    const again = await send(file);
    assert.equal(again.status, 202, again.text);
    assert.deepEqual([again.body.duplicate, again.body.import_id], [true, first.body.import_id]);
    const other = await send('participant_id,amount,reason\nonce-1,99,retry\n');
    assert.equal(other.status, 422);
    assert.equal(other.body.code, 'IDEMPOTENCY_KEY_REUSED');
    // The route's header schema is the shared one: a key that is too long is refused before the upload is read.
    const long = await svc.request('POST', '/api/v1/admin/imports?kind=point_grants&format=csv', { key: plain, raw: file, headers: { 'content-type': 'text/csv', 'idempotency-key': 'k'.repeat(256) } });
    assert.equal(long.status, 400, long.text);
    assert.equal(long.body.code, 'VALIDATION_INVALID_REQUEST');
    assert.match(long.body.detail, /idempotency-key/i);
    await runImport(db, tenant.tenantId, first.body.import_id);
    const imports = await svc.sql("SELECT count(*)::int AS n FROM file_imports WHERE tenant_id = $1 AND columns = '{participant_id,amount,reason}' AND rows_total = 1", [tenant.tenantId]);
    assert.equal(imports[0].n, 1, 'the repeats stored nothing');
    const [balance] = await svc.sql("SELECT available FROM points_balances WHERE tenant_id = $1 AND participant_id = 'once-1'", [tenant.tenantId]);
    assert.equal(Number(balance.available), 10);
  });

  await t.test('reward codes: codes land in the pool; an unknown reward fails its rows', async () => {
    const reward = await svc.request('POST', '/api/v1/admin/rewards', { key: plain, body: { id: 'gift', name: 'Gift card', type: 'voucher', code_source: 'pool', metadata: { value: 10, currency: 'EUR' } } });
    assert.equal(reward.status, 201, reward.text);
    const started = await upload(svc, plain, 'reward_codes', 'csv', 'reward_id,code\ngift,AAA-1\ngift,AAA-2\nnope,BBB-1\ngift,has space\ngift,AAA-1\n');
    assert.equal(started.status, 202, started.text);
    await runImport(db, tenant.tenantId, started.body.import_id);
    const done = await svc.request('GET', `/api/v1/admin/imports/${started.body.import_id}`, { key: plain });
    assert.deepEqual([done.body.rows_done, done.body.rows_failed], [3, 2]);
    const codes = await svc.sql("SELECT code FROM reward_codes WHERE tenant_id = $1 AND reward_id = 'gift' ORDER BY code", [tenant.tenantId]);
    assert.deepEqual(codes.map((c: { code: string }) => c.code), ['AAA-1', 'AAA-2']);
    const errors = await svc.request('GET', `/api/v1/admin/imports/${started.body.import_id}/errors`, { key: plain });
    assert.deepEqual(errors.body.errors.map((e: { row: number; field: string }) => [e.row, e.field]), [[3, 'reward_id'], [4, 'code']]);
  });

  await t.test('a participants export is masked without read:pii and full with it, CSV and JSON lines', async () => {
    const full = await exported(pii, { kind: 'participants', format: 'csv' });
    const [header, ...rows] = full.text.trimEnd().split('\r\n');
    assert.ok(header.startsWith('participant_id,display_name,email,'), header);
    assert.ok(header.includes('custom.loyalty_club'), header);
    assert.ok(rows.some((r) => r.startsWith('p-1,') && r.includes('ada@example.com') && r.includes(',true,')), rows.join('\n'));
    assert.ok(rows.some((r) => r.includes('"Grace ""Amazing"""') && r.includes('"New York, NY"')));
    const logged = await svc.sql("SELECT count(*)::int AS n FROM pii_access_log WHERE tenant_id = $1 AND export_format = 'csv'", [tenant.tenantId]);
    assert.ok(logged[0].n >= 1, 'the full export is in the personal-data access log');

    const masked = await exported(plain, { kind: 'participants', format: 'jsonl' });
    const records = masked.text.trimEnd().split('\n').map((line) => JSON.parse(line));
    const ada = records.find((r) => r.participant_id === 'p-1');
    const api = await svc.request('GET', '/api/v1/gamify/admin/participants/p-1', { key: plain });
    // `livemode` is part of every answer's envelope (sandbox mode), not of the participant: a file row does not carry it.
    const { livemode, ...profile } = api.body;
    assert.equal(livemode, true);
    assert.deepEqual(ada, profile, 'the export shows what the participants API shows the same caller');
    assert.equal(ada.masked, true);
    assert.notEqual(ada.email, 'ada@example.com');
    assert.equal(ada.city, 'London');
    assert.equal(ada.locale, 'en-GB', 'the locale is not personal: shown without read:pii');
    const view = await svc.request('GET', `/api/v1/admin/exports/${masked.id}`, { key: plain });
    assert.equal(view.body.masked, true);
  });

  await t.test("an erasure sends the tenant's finished exports back to the start: the file is written again without the erased participant", async () => {
    const written = await svc.request('PATCH', '/api/v1/gamify/admin/participants/p-erased/profile', { key: pii, body: { email: 'erased@example.com', city: 'Oslo' } });
    assert.equal(written.status, 200, written.text);
    const before = await exported(pii, { kind: 'participants', format: 'csv' });
    assert.ok(before.text.includes('erased@example.com'));
    const third = await svc.createTenant();
    const othersExport = await svc.request('POST', '/api/v1/admin/exports', { key: third.apiKey, body: { kind: 'ledger', format: 'csv' } });
    await runExport(db, third.tenantId, othersExport.body.export_id);

    const erased = await svc.request('DELETE', '/api/v1/gamify/admin/participants/p-erased', { key: pii });
    assert.equal(erased.status, 200, erased.text);
    const restarted = await svc.request('GET', `/api/v1/admin/exports/${before.id}`, { key: pii });
    assert.equal(restarted.body.status, 'queued');
    assert.equal(restarted.body.restarts_after_erasure, 1);
    assert.equal(restarted.body.rows_written, 0);
    assert.equal((await svc.request('GET', `/api/v1/admin/exports/${before.id}/file`, { key: pii })).status, 409, 'the old file is gone');
    const chunks = await svc.sql('SELECT count(*)::int AS n FROM file_export_chunks WHERE tenant_id = $1 AND export_id = $2', [tenant.tenantId, before.id]);
    assert.equal(chunks[0].n, 0);
    const jobs = await svc.sql(
      `SELECT count(*)::int AS n FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
        WHERE t.identifier = 'files.export' AND j.key = $1`,
      [`files.export:${before.id}`],
    );
    assert.equal(jobs[0].n, 1, 'the export job is queued again');
    const othersView = await svc.request('GET', `/api/v1/admin/exports/${othersExport.body.export_id}`, { key: third.apiKey });
    assert.equal(othersView.body.status, 'completed', "another tenant's export is not touched");
    assert.equal(othersView.body.restarts_after_erasure, 0);

    await runExport(db, tenant.tenantId, before.id);
    const after = await svc.request('GET', `/api/v1/admin/exports/${before.id}`, { key: pii });
    assert.equal(after.body.status, 'completed');
    const file = await svc.request('GET', after.body.file_url, { key: pii });
    assert.ok(!file.text.includes('erased@example.com') && !file.text.includes('p-erased'), 'the file written again has no erased participant');
    assert.ok(file.text.includes('ada@example.com'), 'and still everyone else');
  });

  await t.test('ledger, contest results and webhook deliveries exports hold their rows', async () => {
    const ledger = await exported(plain, { kind: 'ledger', format: 'csv' });
    const ledgerRows = ledger.text.trimEnd().split('\r\n');
    assert.equal(ledgerRows[0], 'id,participant_id,type,amount,reason,memo,source_kind,source_id,activity_id,engagement_id,available_after,lifetime_after,created_at');
    assert.equal(ledgerRows.filter((row) => row.includes(',migration,')).length, IMPORT_BATCH_ROWS + 20);
    assert.ok(ledgerRows[1].includes(`,bonus,1,migration,,bulk,${grantsImportId}:1,`), ledgerRows[1]);
    const future = await exported(plain, { kind: 'ledger', format: 'jsonl', from: new Date(Date.now() + 3_600_000).toISOString() });
    assert.equal(future.text, '');

    const contest = await svc.request('POST', '/api/v1/admin/contests', { key: plain, body: contestDefinition('c-files') });
    assert.equal(contest.status, 201, contest.text);
    for (const [participant, score, status] of [['p-1', 5, 'active'], ['p-3', 9, 'active'], ['g-1', 7, 'disqualified']] as const) {
      await svc.sql(
        `INSERT INTO contest_entries (tenant_id, contest_id, participant_id, entry_id, entered_at, reached_at, score, status)
         VALUES ($1, 'c-files', $2, $3, now(), now(), $4, $5)`,
        [tenant.tenantId, participant, `e-${participant}`, score, status],
      );
    }
    const results = await exported(plain, { kind: 'contest_results', format: 'jsonl', contest_id: 'c-files' });
    const ranked = results.text.trimEnd().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(ranked.map((r) => [r.rank, r.participant_id, r.score, r.status]), [[1, 'p-3', 9, 'active'], [2, 'p-1', 5, 'active'], [null, 'g-1', 7, 'disqualified']]);
    const noContest = await svc.request('POST', '/api/v1/admin/exports', { key: plain, body: { kind: 'contest_results', format: 'csv' } });
    assert.equal(noContest.status, 400);
    const unknownContest = await svc.request('POST', '/api/v1/admin/exports', { key: plain, body: { kind: 'contest_results', format: 'csv', contest_id: 'nope' } });
    assert.equal(unknownContest.status, 404);

    await svc.sql(
      `INSERT INTO webhook_destinations (tenant_id, id, name, url, events, retry_count, timeout_seconds, secret, created_at, updated_at)
       VALUES ($1, 'd-1', 'CRM', 'https://crm.example/hook', '{points.awarded.v1}', 3, 10, 'whsec_x', now(), now())`,
      [tenant.tenantId],
    );
    await svc.sql(
      `INSERT INTO webhook_deliveries (tenant_id, id, destination_id, event_id, event, occurred_at, status, attempts, max_attempts, last_error, created_at, updated_at)
       VALUES ($1, 'wd-1', 'd-1', 'ev-1', 'points.awarded.v1', now(), 'SUCCEEDED', 1, 3, NULL, now() - interval '1 minute', now()),
              ($1, 'wd-2', 'd-1', 'ev-2', 'points.awarded.v1', now(), 'EXHAUSTED', 3, 3, '=HYPERLINK("x"), timeout', now(), now())`,
      [tenant.tenantId],
    );
    const deliveries = await exported(plain, { kind: 'webhook_deliveries', format: 'csv' });
    const lines = deliveries.text.trimEnd().split('\r\n');
    assert.equal(lines.length, 3);
    assert.ok(lines[1].startsWith('wd-1,d-1,ev-1,points.awarded.v1,,SUCCEEDED,1,'), lines[1]);
    assert.ok(lines[2].includes(`"'=HYPERLINK(""x""), timeout"`), `a formula-like cell is neutralised: ${lines[2]}`);
  });

  await t.test('a file is 409 until its export completes; another tenant gets 404; a role without the permission gets 403', async () => {
    const started = await svc.request('POST', '/api/v1/admin/exports', { key: plain, body: { kind: 'ledger', format: 'jsonl' } });
    const early = await svc.request('GET', `/api/v1/admin/exports/${started.body.export_id}/file`, { key: plain });
    assert.equal(early.status, 409);
    for (const path of [`/api/v1/admin/exports/${started.body.export_id}`, `/api/v1/admin/exports/${started.body.export_id}/file`, `/api/v1/admin/imports/${grantsImportId}`, `/api/v1/admin/imports/${grantsImportId}/errors`]) {
      const foreign = await svc.request('GET', path, { key: other.apiKey });
      assert.equal(foreign.status, 404, path);
    }
    const foreignList = await svc.request('GET', '/api/v1/admin/exports', { key: other.apiKey });
    assert.deepEqual(foreignList.body.exports, []);
    const ownList = await svc.request('GET', '/api/v1/admin/imports?limit=2', { key: plain });
    assert.equal(ownList.body.imports.length, 2);
    assert.ok(ownList.body.next_cursor);

    const noScope = await svc.request('POST', '/api/v1/admin/exports', { key: ingestOnly, body: { kind: 'ledger', format: 'csv' } });
    assert.equal(noScope.status, 403);

    // A marketer may read participants (masked) but not webhook deliveries, nor import participants.
    const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
    const marketer = asPerson(await invitePerson(svc, owner, `m@${tenant.slug}.example`, 'marketer')).headers;
    const refused = await svc.request('POST', '/api/v1/admin/exports', { headers: marketer, body: { kind: 'webhook_deliveries', format: 'csv' } });
    assert.equal(refused.status, 403);
    assert.match(refused.body.detail, /marketer.*developers:read/);
    const refusedImport = await svc.request('POST', '/api/v1/admin/imports?kind=participants&format=csv', { raw: 'participant_id\r\nm-1', headers: { ...marketer, 'content-type': 'text/csv' } });
    assert.equal(refusedImport.status, 403);
    const allowed = await svc.request('POST', '/api/v1/admin/exports', { headers: marketer, body: { kind: 'participants', format: 'jsonl' } });
    assert.equal(allowed.status, 202, allowed.text);
    await runExport(db, tenant.tenantId, allowed.body.export_id);
    const file = await svc.request('GET', `/api/v1/admin/exports/${allowed.body.export_id}/file`, { headers: marketer });
    const ada = file.text.trimEnd().split('\n').map((line) => JSON.parse(line)).find((r) => r.participant_id === 'p-1');
    assert.equal(ada.masked, true, 'the marketer role (no read:pii) gets masked values');
    assert.notEqual(ada.email, 'ada@example.com');
  });

  await t.test('concurrent uploads: the same file twice with one key makes one import (the repeat leaves no rows); another upload goes its own way', async () => {
    const fresh = await svc.createTenant();
    const twice = participantsCsv(UPLOAD_BATCH_ROWS * 2 + 1, 'p-twice');
    const keyed = () =>
      svc.request('POST', '/api/v1/admin/imports?kind=participants&format=csv', { key: fresh.apiKey, raw: twice, headers: { 'content-type': 'text/csv', 'idempotency-key': 'twice-1' } });
    const [first, second, alone] = await Promise.all([keyed(), keyed(), upload(svc, fresh.apiKey, 'participants', 'csv', participantsCsv(700, 'p-alone'))]);
    for (const answer of [first, second, alone]) assert.equal(answer.status, 202, answer.text);
    assert.deepEqual([first.body.duplicate, second.body.duplicate].sort(), [false, true]);
    assert.equal(first.body.import_id, second.body.import_id);
    assert.deepEqual([first.body.status, first.body.rows_total, alone.body.rows_total, alone.body.duplicate], ['queued', UPLOAD_BATCH_ROWS * 2 + 1, 700, false]);
    const kept = await svc.sql('SELECT id, status, (SELECT count(*)::int FROM file_import_rows r WHERE r.tenant_id = i.tenant_id AND r.import_id = i.id) AS rows FROM file_imports i WHERE tenant_id = $1 ORDER BY rows', [
      fresh.tenantId,
    ]);
    assert.deepEqual(kept, [
      { id: alone.body.import_id, status: 'queued', rows: 700 },
      { id: first.body.import_id, status: 'queued', rows: UPLOAD_BATCH_ROWS * 2 + 1 },
    ]);
    const rows = await svc.sql('SELECT count(*)::int AS n FROM file_import_rows WHERE tenant_id = $1', [fresh.tenantId]);
    assert.equal(rows[0].n, 700 + UPLOAD_BATCH_ROWS * 2 + 1, 'the repeat left no rows behind');

    // An upload whose process died stays `uploading`; the retention job deletes it, with its rows, after a day.
    const days = (n: number) => new Date(Date.now() - n * 24 * 3_600_000);
    for (const [id, createdAt] of [['imp_stale', days(UPLOAD_ABANDONED_AFTER_DAYS + 1)], ['imp_recent', days(UPLOAD_ABANDONED_AFTER_DAYS / 2)]] as const) {
      await svc.sql(
        `INSERT INTO file_imports (tenant_id, id, kind, format, status, requested_by, columns, rows_total, bytes, created_at)
         VALUES ($1, $2, 'participants', 'csv', 'uploading', '{}', '{participant_id}', 2, 20, $3)`,
        [fresh.tenantId, id, createdAt],
      );
      await svc.sql(`INSERT INTO file_import_rows (tenant_id, import_id, row_number, data) SELECT $1, $2, n, '{"participant_id": "x"}' FROM generate_series(1, 2) AS n`, [fresh.tenantId, id]);
    }
    await svc.sql('UPDATE file_imports SET created_at = $3 WHERE tenant_id = $1 AND id = $2', [fresh.tenantId, alone.body.import_id, days(UPLOAD_ABANDONED_AFTER_DAYS + 1)]);
    const recent = await svc.request('GET', '/api/v1/admin/imports/imp_recent', { key: fresh.apiKey });
    assert.deepEqual([recent.body.status, recent.body.rows_total, recent.body.rows_pending], ['uploading', 2, 2]);
    const client = await svc.service.db.system.connect();
    try {
      const purged = await purgeAll(client, filesModule.retention!, svc.config, Date.now() + 60_000);
      assert.deepEqual([purged['rows of abandoned import uploads'], purged['abandoned import uploads']], [2, 1]);
    } finally {
      client.release();
    }
    const left = await svc.sql('SELECT i.id, count(r.row_number)::int AS rows FROM file_imports i LEFT JOIN file_import_rows r ON r.tenant_id = i.tenant_id AND r.import_id = i.id WHERE i.tenant_id = $1 GROUP BY i.id ORDER BY rows', [
      fresh.tenantId,
    ]);
    assert.deepEqual(left, [
      { id: 'imp_recent', rows: 2 },
      { id: alone.body.import_id, rows: 700 },
      { id: first.body.import_id, rows: UPLOAD_BATCH_ROWS * 2 + 1 },
    ], 'the stale upload is gone; a recent one and older finished ones stay');
    const stale = await svc.request('GET', '/api/v1/admin/imports/imp_stale', { key: fresh.apiKey });
    assert.equal(stale.status, 404);
  });

  await t.test('20,000 rows stream in, apply in batches and export in pages within seconds', async () => {
    const rows = 20_000;
    const reward = await svc.request('POST', '/api/v1/admin/rewards', { key: plain, body: { id: 'bulk', name: 'Bulk codes', type: 'voucher', code_source: 'pool', metadata: { value: 5, currency: 'EUR' } } });
    assert.equal(reward.status, 201, reward.text);
    let csv = 'reward_id,code\n';
    for (let i = 0; i < rows; i++) csv += `bulk,CODE-${i}\n`;
    const uploaded = await upload(svc, plain, 'reward_codes', 'csv', csv);
    assert.equal(uploaded.status, 202, uploaded.text);
    assert.equal(uploaded.body.rows_total, rows);
    await runImport(db, tenant.tenantId, uploaded.body.import_id);
    const done = await svc.request('GET', `/api/v1/admin/imports/${uploaded.body.import_id}`, { key: plain });
    assert.deepEqual([done.body.rows_done, done.body.rows_failed], [rows, 0]);
    const codes = await svc.sql("SELECT count(*)::int AS n FROM reward_codes WHERE tenant_id = $1 AND reward_id = 'bulk'", [tenant.tenantId]);
    assert.equal(codes[0].n, rows);
    const pending = await svc.sql('SELECT count(*)::int AS n FROM file_import_rows WHERE tenant_id = $1', [tenant.tenantId]);
    assert.equal(pending[0].n, 0, 'applied rows are not kept');

    await svc.sql(
      `INSERT INTO participants (tenant_id, participant_id, email, created_at, updated_at)
       SELECT $1, 'many-' || i, 'many' || i || '@example.com', now() + interval '1 hour', now() FROM generate_series(1, $2) AS i`,
      [tenant.tenantId, rows],
    );
    const file = await exported(plain, { kind: 'participants', format: 'csv', from: new Date(Date.now() + 1_800_000).toISOString() });
    const lines = file.text.trimEnd().split('\r\n');
    assert.equal(lines.length, rows + 1);
    assert.ok(lines.slice(1).every((line) => line.startsWith('many-') && !/,many\d+@example\.com,/.test(line) && line.includes('@example.com')), 'every row is masked');
    const chunks = await svc.sql('SELECT count(*)::int AS n FROM file_export_chunks WHERE tenant_id = $1 AND export_id = $2', [tenant.tenantId, file.id]);
    assert.equal(chunks[0].n, 1 + rows / EXPORT_PAGE_ROWS, 'the header and one chunk per page');
  });
});

test('files: the worker runs imports and exports by itself', { timeout: 60_000 }, async (t) => {
  const svc = await startTestService(t, { jobs: true });
  const tenant = await svc.createTenant();

  const started = await upload(svc, tenant.apiKey, 'point_grants', 'jsonl', '{"participant_id":"w-1","amount":7,"reason":"welcome"}\n');
  assert.equal(started.status, 202, started.text);
  const imported = await waitFor('the import completed', async () => {
    const r = await svc.request('GET', `/api/v1/admin/imports/${started.body.import_id}`, { key: tenant.apiKey });
    return r.body.status === 'completed' && r;
  });
  assert.deepEqual([imported.body.status, imported.body.rows_done], ['completed', 1]);
  const requested = await svc.request('POST', '/api/v1/admin/exports', { key: tenant.apiKey, body: { kind: 'ledger', format: 'jsonl' } });
  const exported = await waitFor('the export completed', async () => {
    const r = await svc.request('GET', `/api/v1/admin/exports/${requested.body.export_id}`, { key: tenant.apiKey });
    return r.body.status === 'completed' && r;
  });
  assert.equal(exported.body.rows_written, 1);
  const file = await svc.request('GET', exported.body.file_url, { key: tenant.apiKey });
  assert.equal(JSON.parse(file.text).amount, 7);
});
