import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyPluginAsync } from 'fastify';
import { keyWithScopes, startTestService, type TestResponse } from './helper.js';
import { runImport } from '../src/modules/files/imports.js';

/**
 * Review findings 6 and 7 (issue 32). Finding 6: PostgreSQL's own error text
 * reached clients (class 22, "data exception": forged cursors, U+0000 in
 * strings, a lone surrogate in event properties, a NUL byte in a CSV import).
 * Each such input now gets a 4xx in words of ours that names the field, and
 * none of the server's wording. Finding 7: a JSON lines import held a whole
 * line in memory before its 64 KiB check (its splitter's own test is
 * src/modules/files/line-split.test.ts).
 */

/** Phrases of PostgreSQL's class 22 messages that must never reach a client. */
const POSTGRES_WORDING =
  /invalid input syntax|unsupported Unicode escape|invalid byte sequence|value out of range|field value out of range|for type (json|jsonb|uuid|integer|bigint|smallint|timestamp)|surrogate must|cannot be converted to text|invalid input value/i;

function assertOurWords(response: TestResponse, name: string): void {
  assert.ok(response.status >= 400 && response.status < 500, `${name}: expected a 4xx, got ${response.status} ${response.text.slice(0, 300)}`);
  assert.doesNotMatch(response.text, POSTGRES_WORDING, `${name}: the body repeats PostgreSQL's text: ${response.text.slice(0, 300)}`);
  assert.equal(response.body.error_version, 1, `${name}: error_version`);
  assert.equal(typeof response.body.code, 'string', `${name}: code`);
  assert.equal(typeof response.body.detail, 'string', `${name}: detail`);
}

const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Two routes that reach the database with what no check caught: a class 22 error, and another database error. */
const databaseProbes: FastifyPluginAsync = async (app) => {
  app.get('/probe/data-exception', { config: { auth: 'public' } }, async () => {
    await app.ctx.db.system.query(`SELECT 'not a number'::int`);
    return { ok: true };
  });
  app.get('/probe/missing-table', { config: { auth: 'public' } }, async () => {
    await app.ctx.db.system.query('SELECT * FROM no_such_table_for_review');
    return { ok: true };
  });
};

test('review finding 6: the database never speaks to a client', { timeout: 300_000 }, async (t) => {
  const lines: string[] = [];
  const svc = await startTestService(t, { routes: databaseProbes, logDestination: { write: (line) => void lines.push(line) } });
  const tenant = await svc.createTenant();
  const key = (await keyWithScopes(svc, tenant, ['admin', 'read:pii'])).key;
  const ingestKey = tenant.apiKey;

  await t.test('U+0000 and lone surrogates in an event are refused at validation, naming the field', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['a NUL in a property', { note: 'a\u0000b' }, /body\.properties\.note contains U\+0000/],
      ['a lone high surrogate in a property', { note: '\ud800' }, /body\.properties\.note contains a lone UTF-16 surrogate \(U\+D800\)/],
      ['a lone low surrogate deep down', { order: { lines: ['ok', 'x\udc00y'] } }, /body\.properties\.order\.lines\.1 contains a lone UTF-16 surrogate \(U\+DC00\)/],
      ['a NUL in a property name', { 'a\u0000': 1 }, /body\.properties has a property name that contains U\+0000/],
    ];
    for (const [name, properties, detail] of cases) {
      const response = await svc.request('POST', '/api/v1/ingest/events', {
        key: ingestKey,
        body: { event_name: 'note_added', participant_id: 'p-text', idempotency_key: `k-${name.replaceAll(' ', '-')}`, properties },
      });
      assertOurWords(response, name);
      assert.equal(response.status, 400, `${name}: ${response.text}`);
      assert.equal(response.body.code, 'VALIDATION_INVALID_REQUEST', name);
      assert.match(response.body.detail, detail, name);
    }
    // A pair of surrogates is one character (an emoji), and is stored.
    const emoji = await svc.request('POST', '/api/v1/ingest/events', {
      key: ingestKey,
      body: { event_name: 'note_added', participant_id: 'p-text', idempotency_key: 'k-emoji', properties: { note: 'ok \ud83d\ude00' } },
    });
    assert.equal(emoji.status, 202, emoji.text);
    const [{ n }] = await svc.sql(`SELECT count(*)::int AS n FROM ingested_events WHERE tenant_id = $1 AND participant_id = 'p-text'`, [tenant.tenantId]);
    assert.equal(n, 1);
  });

  await t.test('in a batch, an event with such text is rejected alone', async () => {
    const response = await svc.request('POST', '/api/v1/ingest/events/batch', {
      key: ingestKey,
      body: {
        events: [
          { event_name: 'note_added', participant_id: 'p-batch', idempotency_key: 'b-1', properties: { note: 'fine' } },
          { event_name: 'note_added', participant_id: 'p-batch', idempotency_key: 'b-2', properties: { note: 'nul\u0000' } },
          { event_name: 'note_added', participant_id: 'p-batch', idempotency_key: 'b-3', properties: { note: '\ud800' } },
          { event_name: 'note_added', participant_id: 'p-batch\u0000', idempotency_key: 'b-4' },
        ],
      },
    });
    assert.equal(response.status, 200, response.text);
    assert.doesNotMatch(response.text, POSTGRES_WORDING);
    assert.equal(response.body.accepted, 1);
    assert.deepEqual(response.body.results.map((r: { status: string }) => r.status), ['accepted', 'rejected', 'rejected', 'rejected']);
    assert.match(response.body.results[1].detail, /event\.properties\.note contains U\+0000/);
    assert.match(response.body.results[2].detail, /event\.properties\.note contains a lone UTF-16 surrogate/);
    // The schema's pattern refuses control characters in a participant id before the text check does.
    assert.match(response.body.results[3].detail, /event\.participant_id/);
  });

  await t.test('a profile upsert, a query parameter and a path parameter with U+0000 or a lone surrogate', async () => {
    const cases: Array<[string, string, string, unknown, RegExp]> = [
      ['NUL in first_name', 'PATCH', '/api/v1/gamify/admin/participants/p-nul/profile', { first_name: 'Ada\u0000' }, /body\.first_name contains U\+0000/],
      ['lone surrogate in city', 'PATCH', '/api/v1/gamify/admin/participants/p-nul/profile', { city: 'Lo\udc00ndon' }, /body\.city contains a lone UTF-16 surrogate/],
      ['NUL in a query parameter', 'GET', '/api/v1/gamify/admin/participants?city=Lee%00ds', undefined, /querystring\.city contains U\+0000/],
      ['NUL in a path parameter', 'GET', '/api/v1/gamify/admin/participants/p%00x', undefined, /params\.participant_id contains U\+0000/],
    ];
    for (const [name, method, path, body, detail] of cases) {
      const response = await svc.request(method, path, { key, body });
      assertOurWords(response, name);
      assert.equal(response.status, 400, `${name}: ${response.text}`);
      assert.match(response.body.detail, detail, name);
    }
  });

  await t.test('forged cursors are refused as cursors, before SQL sees them', async () => {
    const cases: Array<[string, string]> = [
      ['participants: a NUL in the id', `/api/v1/gamify/admin/participants?cursor=${forged({ created_at: '2026-01-01T00:00:00Z', participant_id: 'a\u0000b' })}`],
      ['points history: February 30th', `/api/v1/points/history?cursor=${forged({ c: '2026-02-30T00:00:00Z', s: 1 })}`],
      ['points history: the year 0', `/api/v1/points/history?cursor=${forged({ c: '0000-01-01T00:00:00Z', s: 1 })}`],
      ['event search: a word for a time', `/api/v1/events/search?cursor=${forged({ at: 'yesterday', seq: 1 })}`],
      ['engagements: an id that is no UUID', `/api/v1/admin/engagements?cursor=${forged({ created_at: '2026-01-01T00:00:00Z', id: 'not-a-uuid' })}`],
      ['imports: a lone surrogate in the id', `/api/v1/admin/imports?cursor=${forged({ created_at: '2026-01-01T00:00:00.123456+00:00', id: 'imp_\ud800' })}`],
      ['imports: a field too many', `/api/v1/admin/imports?cursor=${forged({ created_at: '2026-01-01T00:00:00Z', id: 'imp_1', admin: true })}`],
      ['not JSON at all', `/api/v1/gamify/admin/participants?cursor=${Buffer.from('{"created_at":').toString('base64url')}`],
      ['an array', `/api/v1/points/history?cursor=${forged([1, 2])}`],
    ];
    for (const [name, path] of cases) {
      const response = await svc.request('GET', path, { key });
      assertOurWords(response, name);
      assert.equal(response.status, 400, `${name}: ${response.text}`);
      assert.equal(response.body.code, 'INVALID_CURSOR', `${name}: ${response.text}`);
      assert.match(response.body.detail, /cursor is not valid/, name);
    }
  });

  await t.test('a cursor the service issued still pages', async () => {
    for (let i = 0; i < 3; i++) {
      const written = await svc.request('PATCH', `/api/v1/gamify/admin/participants/p-page-${i}/profile`, { key, body: { city: 'Leeds' } });
      assert.ok(written.status < 300, written.text);
    }
    const first = await svc.request('GET', '/api/v1/gamify/admin/participants?limit=2', { key });
    assert.equal(first.status, 200, first.text);
    assert.ok(first.body.next_cursor);
    const second = await svc.request('GET', `/api/v1/gamify/admin/participants?limit=2&cursor=${first.body.next_cursor}`, { key });
    assert.equal(second.status, 200, second.text);
  });

  await t.test('a CSV cell with a NUL byte and a JSON line with a lone surrogate are row errors naming row and column', async () => {
    const csv = await svc.request('POST', '/api/v1/admin/imports?kind=participants&format=csv', {
      key,
      raw: Buffer.from('participant_id,first_name\r\np-csv-1,Ada\r\np-csv-2,Gr\u0000ace\r\n'),
      headers: { 'content-type': 'text/csv' },
    });
    assert.equal(csv.status, 202, csv.text);
    const jsonl = await svc.request('POST', '/api/v1/admin/imports?kind=participants&format=jsonl', {
      key,
      raw: '{"participant_id":"p-jl-1","first_name":"Ada"}\n{"participant_id":"p-jl-2","first_name":"\\ud800"}\n{"participant_id":"p-jl-3","city":"Leeds","a\\u0000":"x"}\n',
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(jsonl.status, 202, jsonl.text);
    const expected: Array<[TestResponse, Array<[number, RegExp]>]> = [
      [csv, [[2, /row 2 \(line 3\), column first_name contains U\+0000/]]],
      [jsonl, [[2, /row 2 \(line 2\), column first_name contains a lone UTF-16 surrogate/], [3, /row 3 \(line 3\) has a property name that contains U\+0000/]]],
    ];
    for (const [started, rowErrors] of expected) {
      const id = started.body.import_id;
      await runImport(svc.service.db, tenant.tenantId, id);
      const status = await svc.request('GET', `/api/v1/admin/imports/${id}`, { key });
      assert.equal(status.body.status, 'completed', status.text);
      assert.equal(status.body.rows_failed, rowErrors.length, status.text);
      const report = await svc.request('GET', `/api/v1/admin/imports/${id}/errors`, { key });
      assert.equal(report.status, 200, report.text);
      assert.doesNotMatch(report.text, POSTGRES_WORDING);
      assert.deepEqual(report.body.errors.map((e: { row: number }) => e.row), rowErrors.map(([row]) => row));
      rowErrors.forEach(([, detail], i) => assert.match(report.body.errors[i].detail, detail));
    }
  });

  await t.test('a class 22 error that escapes every check is a 400 in our words, logged with the request id; others stay a bare 500', async () => {
    const refused = await svc.request('GET', '/api/v1/probe/data-exception');
    assertOurWords(refused, 'data exception');
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'VALIDATION_INVALID_REQUEST');
    const requestId = refused.headers.get('x-request-id');
    assert.ok(requestId);
    const logged = lines.map((line) => JSON.parse(line)).find((entry) => entry.reqId === requestId && entry.sqlState === '22P02');
    assert.ok(logged, 'the refusal is logged with the request id and the SQLSTATE');

    const broken = await svc.request('GET', '/api/v1/probe/missing-table');
    assert.equal(broken.status, 500);
    assert.deepEqual(Object.keys(broken.body).sort(), ['code', 'detail', 'doc_url', 'error_version', 'request_id']);
    assert.equal(broken.body.code, 'INTERNAL_ERROR');
    assert.doesNotMatch(broken.text, /no_such_table|relation|does not exist/);
  });
});

test('review finding 7: a JSON lines import with an 8 MB line is refused while it streams', { timeout: 300_000 }, async (t) => {
  await t.test('an import with one 8 MB line is refused with the line error', async () => {
    const svc = await startTestService(t);
    const tenant = await svc.createTenant();
    const key = (await keyWithScopes(svc, tenant, ['admin', 'read:pii'])).key;
    const text = `{"participant_id":"p-short","city":"Leeds"}\n{"participant_id":"p-long","city":"${'x'.repeat(8 * 1024 * 1024)}"}\n{"participant_id":"p-after"}\n`;
    const response = await svc.request('POST', '/api/v1/admin/imports?kind=participants&format=jsonl', {
      key,
      raw: text,
      headers: { 'content-type': 'application/x-ndjson' },
    });
    assert.equal(response.status, 400, response.text.slice(0, 300));
    assert.equal(response.body.code, 'FILE_LINE_TOO_LONG');
    assert.match(response.body.detail, /line 2 /);
    assert.match(response.body.detail, /65536 bytes \(64 KiB\)/);
    const imports = await svc.request('GET', '/api/v1/admin/imports', { key });
    assert.equal(imports.body.imports.length, 0, 'the refused upload leaves no import behind');
  });
});
