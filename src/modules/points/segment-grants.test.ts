import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, waitFor, type TestService, type TestTenant } from '../../../test/helper.js';
import { assertPointsInvariants } from './testing.js';

/** Grants to the members of a segment (issue 36): dry run, the bulk grant's job, idempotency, audit, tenancy. */

const CONFIG = { RATE_LIMIT_KEY_PER_MINUTE: '1000000' };
const ROUTE = '/api/v1/admin/points/segment-grants';

async function grant(svc: TestService, tenant: TestTenant, participantId: string, amount: number) {
  const response = await svc.request('POST', '/api/v1/gamify/points/grant', {
    key: tenant.apiKey,
    body: { participant_id: participantId, amount, reason: 'seed', idempotency_key: `seed-${participantId}` },
  });
  assert.equal(response.status, 200, response.text);
}

async function segment(svc: TestService, tenant: TestTenant, minPoints: number): Promise<string> {
  const created = await svc.request('POST', '/api/v1/admin/segments', {
    key: tenant.apiKey,
    body: { name: `At least ${minPoints} points`, filter: { all: [{ fact: 'available_points', operator: 'gte', value: minPoints }] } },
  });
  assert.equal(created.status, 201, created.text);
  return created.body.id;
}

test('points: grants to a segment', async (t) => {
  const svc = await startTestService(t, { config: CONFIG, jobs: true });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const members = Array.from({ length: 25 }, (_, i) => `reg-${String(i).padStart(2, '0')}`);
  const outsiders = Array.from({ length: 5 }, (_, i) => `new-${i}`);
  for (const id of members) await grant(svc, tenant, id, 120);
  for (const id of outsiders) await grant(svc, tenant, id, 5);
  const regulars = await segment(svc, tenant, 100);
  const foreign = await segment(svc, other, 1);

  let jobId = '';
  await t.test('a dry run counts members and points and writes nothing; the grant then gives exactly that', async () => {
    const ledgerBefore = await svc.sql('SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1', [tenant.tenantId]);
    const dry = await svc.request('POST', ROUTE, { key: tenant.apiKey, body: { segment_id: regulars, amount: 40, reason: 'thanks', dry_run: true } });
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(dry.body, { dry_run: true, segment_id: regulars, participants: 25, points: 1000, livemode: true });
    assert.deepEqual(await svc.sql('SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1', [tenant.tenantId]), ledgerBefore);
    assert.equal((await svc.sql('SELECT count(*)::int AS n FROM points_bulk_grants WHERE tenant_id = $1', [tenant.tenantId]))[0].n, 0);
    assert.equal((await svc.sql("SELECT count(*)::int AS n FROM idempotency_keys WHERE tenant_id = $1 AND scope = 'points.bulk'", [tenant.tenantId]))[0].n, 0);

    const started = await svc.request('POST', ROUTE, { key: tenant.apiKey, headers: { 'idempotency-key': 'thanks-1' }, body: { segment_id: regulars, amount: 40, reason: 'thanks' } });
    assert.equal(started.status, 202, started.text);
    assert.equal(started.body.total, 25);
    assert.equal(started.body.segment_id, regulars);
    assert.equal(started.body.duplicate, false);
    jobId = started.body.job_id;
    const done = await waitFor('the segment grant', async () => {
      const status = await svc.request('GET', `/api/v1/admin/points/bulk-grant/${jobId}`, { key: tenant.apiKey });
      return status.body.status === 'completed' ? status.body : null;
    });
    assert.equal(done.done, dry.body.participants);
    assert.equal(done.segment_id, regulars);
    const [{ n, total }] = await svc.sql("SELECT count(*)::int AS n, sum(delta)::int AS total FROM points_ledger WHERE tenant_id = $1 AND source_kind = 'bulk' AND source_id = $2", [tenant.tenantId, jobId]);
    assert.deepEqual({ n, total }, { n: dry.body.participants, total: dry.body.points });
    const granted = await svc.sql("SELECT participant_id FROM points_ledger WHERE tenant_id = $1 AND source_id = $2 ORDER BY participant_id", [tenant.tenantId, jobId]);
    assert.deepEqual(granted.map((r) => r.participant_id), members, 'exactly the members');
    await assertPointsInvariants(svc, tenant.tenantId);
  });

  await t.test('a repeat of the key answers the same job and grants nobody twice; concurrent repeats too', async () => {
    const body = { segment_id: regulars, amount: 40, reason: 'thanks' };
    const repeat = await svc.request('POST', ROUTE, { key: tenant.apiKey, headers: { 'idempotency-key': 'thanks-1' }, body });
    assert.equal(repeat.status, 202, repeat.text);
    assert.equal(repeat.body.job_id, jobId);
    assert.equal(repeat.body.duplicate, true);
    assert.equal(repeat.headers.get('idempotent-replayed'), 'true');
    const reused = await svc.request('POST', ROUTE, { key: tenant.apiKey, headers: { 'idempotency-key': 'thanks-1' }, body: { ...body, amount: 41 } });
    assert.equal(reused.status, 422, reused.text);

    const both = await Promise.all(
      [1, 2, 3].map(() => svc.request('POST', ROUTE, { key: tenant.apiKey, headers: { 'idempotency-key': 'twice' }, body: { ...body, amount: 7, reason: 'double click' } })),
    );
    for (const answer of both) assert.equal(answer.status, 202, answer.text);
    assert.equal(new Set(both.map((a) => a.body.job_id)).size, 1, 'one job');
    assert.deepEqual(both.map((a) => a.body.duplicate).sort(), [false, true, true]);
    const job = both[0].body.job_id;
    await waitFor('the double-clicked grant', async () => {
      const [row] = await svc.sql('SELECT status FROM points_bulk_grants WHERE tenant_id = $1 AND id = $2', [tenant.tenantId, job]);
      return row.status === 'completed';
    });
    const [{ n }] = await svc.sql("SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1 AND reason = 'double click'", [tenant.tenantId]);
    assert.equal(n, 25, 'each member granted once');
    assert.equal((await svc.sql("SELECT count(*)::int AS n FROM points_bulk_grants WHERE tenant_id = $1 AND reason = 'double click'", [tenant.tenantId]))[0].n, 1);
  });

  await t.test('the grant is in the audit log, the dry run is not', async () => {
    const log = await svc.request('GET', '/api/v1/admin/audit-log?resource_type=points', { key: tenant.apiKey });
    assert.equal(log.status, 200, log.text);
    const entries = log.body.entries.filter((e: { action: string }) => e.action === 'segment-grants');
    assert.equal(entries.length, 2, JSON.stringify(log.body.entries.map((e: { action: string; resource_id: string }) => [e.action, e.resource_id])));
    assert.ok(entries.some((e: { resource_id: string }) => e.resource_id === jobId));
    assert.ok(entries.every((e: { details: { body: { dry_run?: boolean } } }) => e.details.body.dry_run !== true));
  });

  await t.test("another tenant's or an unknown segment: 404 on segment_id; bad bodies: 400; a grant needs a key", async () => {
    for (const segmentId of [foreign, `seg_${'f'.repeat(32)}`]) {
      for (const dryRun of [true, false]) {
        const refused = await svc.request('POST', ROUTE, {
          key: tenant.apiKey,
          headers: { 'idempotency-key': `x-${segmentId}-${dryRun}` },
          body: { segment_id: segmentId, amount: 1, reason: 'r', dry_run: dryRun },
        });
        assert.equal(refused.status, 404, refused.text);
        assert.equal(refused.body.code, 'SEGMENT_NOT_FOUND');
        assert.deepEqual(refused.body.errors?.map((e: { path: string }) => e.path), ['/segment_id']);
      }
    }
    const noKey = await svc.request('POST', ROUTE, { key: tenant.apiKey, body: { segment_id: regulars, amount: 1, reason: 'r' } });
    assert.equal(noKey.status, 400, noKey.text);
    assert.equal(noKey.body.code, 'IDEMPOTENCY_KEY_REQUIRED');
    for (const body of [
      { segment_id: 'vip', amount: 1, reason: 'r', dry_run: true },
      { segment_id: regulars, amount: 0, reason: 'r', dry_run: true },
      { segment_id: regulars, amount: 1, reason: '', dry_run: true },
      { segment_id: regulars, amount: 1, reason: 'r', dry_run: true, extra: 1 },
    ]) {
      const response = await svc.request('POST', ROUTE, { key: tenant.apiKey, body });
      assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.text}`);
      assert.ok(response.body.errors.length > 0);
    }
    assert.equal((await svc.sql('SELECT count(*)::int AS n FROM points_bulk_grants WHERE tenant_id = $1', [other.tenantId]))[0].n, 0);
  });
});
