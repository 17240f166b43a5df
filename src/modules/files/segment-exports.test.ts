import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyWithScopes, startTestService } from '../../../test/helper.js';
import { runExport } from './exports.js';

/** Exports of a segment (issue 36): the participants export with `segment_id` holds exactly the members, masked as exports are. */

test('files: a participants export of a segment', async (t) => {
  const svc = await startTestService(t, { config: { RATE_LIMIT_KEY_PER_MINUTE: '1000000' } });
  const db = svc.service.db;
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const pii = (await keyWithScopes(svc, tenant, ['admin', 'read:pii'])).key;
  const plain = (await keyWithScopes(svc, tenant, ['admin'])).key;
  const berliners = ['b-1', 'b-2', 'b-3', 'b-4'];
  for (const [id, city] of [...berliners.map((id) => [id, 'Berlin']), ['p-1', 'Paris'], ['p-2', 'Paris'], ['n-1', 'Naples']]) {
    const written = await svc.request('PATCH', `/api/v1/gamify/admin/participants/${id}/profile`, { key: pii, body: { city, email: `${id}@example.com` } });
    assert.equal(written.status, 200, written.text);
  }
  async function segment(key: string, materialized: boolean): Promise<string> {
    const created = await svc.request('POST', '/api/v1/admin/segments', {
      key,
      body: { name: `Berlin${materialized ? ' (kept)' : ''}`, materialized, filter: { all: [{ fact: 'profile.city', operator: 'equals', value: 'Berlin' }] } },
    });
    assert.equal(created.status, 201, created.text);
    return created.body.id;
  }
  const live = await segment(plain, false);
  const kept = await segment(plain, true);
  assert.equal((await svc.request('POST', `/api/v1/admin/segments/${kept}/refresh`, { key: plain })).status, 200);
  const foreign = await segment(other.apiKey, false);

  async function exported(key: string, body: Record<string, unknown>) {
    const started = await svc.request('POST', '/api/v1/admin/exports', { key, body });
    assert.equal(started.status, 202, started.text);
    await runExport(db, tenant.tenantId, started.body.export_id);
    const done = await svc.request('GET', `/api/v1/admin/exports/${started.body.export_id}`, { key });
    assert.equal(done.body.status, 'completed', done.text);
    const file = await svc.request('GET', done.body.file_url, { key });
    assert.equal(file.status, 200, file.text);
    return { view: done.body, text: file.text };
  }

  await t.test('masked (no read:pii): exactly the members, personal values masked as in every export', async () => {
    for (const segmentId of [live, kept]) {
      const { view, text } = await exported(plain, { kind: 'participants', format: 'jsonl', segment_id: segmentId });
      assert.equal(view.filters.segment_id, segmentId);
      assert.equal(view.masked, true);
      const records = text.trimEnd().split('\n').map((line) => JSON.parse(line));
      assert.deepEqual(records.map((r) => r.participant_id).sort(), berliners);
      for (const record of records) {
        assert.equal(record.city, 'Berlin');
        assert.equal(record.masked, true);
        assert.notEqual(record.email, `${record.participant_id}@example.com`);
      }
    }
  });

  await t.test('full (read:pii): the members only, in clear, and logged like every full export', async () => {
    const { view, text } = await exported(pii, { kind: 'participants', format: 'csv', segment_id: live });
    assert.equal(view.masked, false);
    const [header, ...rows] = text.trimEnd().split('\r\n');
    assert.ok(header.startsWith('participant_id,'), header);
    assert.deepEqual(rows.map((r) => r.split(',')[0]).sort(), berliners);
    assert.ok(rows.every((r) => r.includes('@example.com')), 'in clear for read:pii');
    const logged = await svc.sql("SELECT participant_ids FROM pii_access_log WHERE tenant_id = $1 AND export_format = 'csv' AND cardinality(participant_ids) > 0", [tenant.tenantId]);
    assert.equal(logged.length, 1, 'the page of clear values is in the personal-data access log');
    assert.deepEqual([...logged[0].participant_ids].sort(), berliners, 'naming the members only');
    const everyone = await exported(plain, { kind: 'participants', format: 'jsonl' });
    assert.equal(everyone.view.filters.segment_id, null, 'an export without a segment says so');
    assert.equal(everyone.text.trimEnd().split('\n').length, 7);
  });

  await t.test('refusals on segment_id: another kind, an unknown or foreign segment, a malformed id', async () => {
    const ledger = await svc.request('POST', '/api/v1/admin/exports', { key: plain, body: { kind: 'ledger', format: 'csv', segment_id: live } });
    assert.equal(ledger.status, 400, ledger.text);
    assert.equal(ledger.body.code, 'EXPORT_FILTER_NOT_APPLICABLE');
    assert.deepEqual(ledger.body.errors.map((e: { path: string }) => e.path), ['/segment_id']);
    for (const segmentId of [foreign, `seg_${'a'.repeat(32)}`]) {
      const refused = await svc.request('POST', '/api/v1/admin/exports', { key: plain, body: { kind: 'participants', format: 'csv', segment_id: segmentId } });
      assert.equal(refused.status, 422, refused.text);
      assert.equal(refused.body.code, 'SEGMENT_NOT_FOUND');
      assert.deepEqual(refused.body.errors.map((e: { path: string }) => e.path), ['/segment_id']);
    }
    const malformed = await svc.request('POST', '/api/v1/admin/exports', { key: plain, body: { kind: 'participants', format: 'csv', segment_id: 'berlin' } });
    assert.equal(malformed.status, 400, malformed.text);
    assert.ok(malformed.body.errors.some((e: { path: string }) => e.path === '/segment_id'), malformed.text);
    assert.equal((await svc.sql('SELECT count(*)::int AS n FROM file_exports WHERE tenant_id = $1 AND kind = $2', [tenant.tenantId, 'ledger']))[0].n, 0);
  });
});
