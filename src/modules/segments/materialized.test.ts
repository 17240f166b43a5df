import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantPoints, startTestService } from '../../../test/helper.js';
import { collectJobs } from '../../service.js';
import { parseCrontab } from 'graphile-worker';
import segmentsModule, { assertSegmentsExistInTx, membershipsInTx, membersSqlInTx } from './index.js';
import { REFRESH_TASK } from './jobs.js';
import { BASE, ok } from './testing.js';

const outcome = ({ entered, left, size }: { entered: number; left: number; size: number }) => ({ entered, left, size });

/**
 * Materialized segments: the membership table, its refresh (route, job, a
 * filter change) with segment.entered.v1 / segment.left.v1 in the same
 * transaction, concurrency, and the functions other modules call.
 */
test('segments: materialized membership, events, concurrency and the index functions', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const key = tenant.apiKey;
  const db = svc.service.db;
  for (const id of ['m1', 'm2', 'm3']) await ok(grantPoints(svc, tenant, id, 100));
  const events = (segmentId: string) =>
    svc.sql<{ event: string; participant_id: string; data: Record<string, unknown> }>(
      `SELECT event, participant_id, data FROM outbox_events WHERE tenant_id = $1 AND event LIKE 'segment.%' AND data->>'segment_id' = $2 ORDER BY seq`,
      [tenant.tenantId, segmentId],
    );
  const rows = (segmentId: string) =>
    svc.sql<{ participant_id: string }>('SELECT participant_id FROM segment_members WHERE tenant_id = $1 AND segment_id = $2 ORDER BY participant_id', [tenant.tenantId, segmentId]);

  const created = await ok(
    svc.request('POST', BASE, { key, body: { name: 'High earners', materialized: true, filter: { all: [{ fact: 'lifetime_points', operator: 'gte', value: 200 }] } } }),
    201,
  );
  const id = created.body.id as string;

  await t.test('creation sets the baseline silently; a refresh emits who entered and left', async () => {
    assert.equal(created.body.materialized, true);
    assert.equal(created.body.size, 0);
    assert.ok(created.body.refreshed_at);
    await ok(grantPoints(svc, tenant, 'm1', 150));
    await ok(grantPoints(svc, tenant, 'm2', 150));
    const refreshed = await ok(svc.request('POST', `${BASE}/${id}/refresh`, { key }));
    assert.deepEqual(outcome(refreshed.body), { entered: 2, left: 0, size: 2 });
    assert.deepEqual((await rows(id)).map((r) => r.participant_id), ['m1', 'm2']);
    const entered = await events(id);
    assert.deepEqual(entered.map((e) => [e.event, e.participant_id]), [['segment.entered.v1', 'm1'], ['segment.entered.v1', 'm2']]);
    assert.equal(entered[0].data.segment_name, 'High earners');
    assert.equal((await ok(svc.request('GET', `${BASE}/${id}`, { key }))).body.size, 2);
    const size = await ok(svc.request('GET', `${BASE}/${id}/size`, { key }));
    assert.equal(size.body.size, 2);
    const members = await ok(svc.request('GET', `${BASE}/${id}/members`, { key }));
    assert.deepEqual(members.body.members.map((m: { participant_id: string }) => m.participant_id), ['m1', 'm2']);
    // Nothing changed: nothing emitted.
    assert.deepEqual(outcome((await ok(svc.request('POST', `${BASE}/${id}/refresh`, { key }))).body), { entered: 0, left: 0, size: 2 });
    assert.equal((await events(id)).length, 2);
  });

  await t.test('the minute job refreshes every materialized segment; a filter change emits too', async () => {
    const { handlers, crontab } = await collectJobs();
    assert.ok(parseCrontab(crontab).some((item) => item.task === REFRESH_TASK && item.match({ min: 7, hour: 3, date: 1, month: 1, dow: 1 } as never)));
    assert.ok(segmentsModule.tasks![REFRESH_TASK]);
    await ok(grantPoints(svc, tenant, 'm3', 150));
    await handlers[REFRESH_TASK]({}, { db, config: svc.config, log: svc.service.log });
    assert.deepEqual((await rows(id)).map((r) => r.participant_id), ['m1', 'm2', 'm3']);
    const updated = await ok(svc.request('PATCH', `${BASE}/${id}`, { key, body: { filter: { all: [{ fact: 'lifetime_points', operator: 'gte', value: 200 }, { fact: 'profile.city', operator: 'equals', value: 'Halle' }] } } }));
    assert.equal(updated.body.size, 0);
    const all = await events(id);
    assert.deepEqual(all.slice(3).map((e) => [e.event, e.participant_id]), [['segment.left.v1', 'm1'], ['segment.left.v1', 'm2'], ['segment.left.v1', 'm3']]);
    await ok(svc.request('PATCH', `/api/v1/gamify/admin/participants/m2/profile`, { key, body: { city: 'Halle' } }));
    await handlers[REFRESH_TASK]({}, { db, config: svc.config, log: svc.service.log });
    assert.deepEqual((await rows(id)).map((r) => r.participant_id), ['m2']);
  });

  await t.test('100 parallel refreshes and updates write each row and event once', async () => {
    await ok(svc.request('PATCH', `${BASE}/${id}`, { key, body: { filter: { all: [{ fact: 'lifetime_points', operator: 'gte', value: 1 }] } } }));
    const before = (await events(id)).length;
    await ok(grantPoints(svc, tenant, 'm4', 10));
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        i % 4 === 0
          ? svc.request('PATCH', `${BASE}/${id}`, { key, body: { name: `High earners ${i}`, filter: { all: [{ fact: 'lifetime_points', operator: 'gte', value: 1 }] } } })
          : svc.request('POST', `${BASE}/${id}/refresh`, { key }),
      ),
    );
    for (const answer of answers) assert.equal(answer.status, 200, answer.text);
    assert.deepEqual((await rows(id)).map((r) => r.participant_id), ['m1', 'm2', 'm3', 'm4']);
    const after = (await events(id)).slice(before);
    assert.deepEqual(after.map((e) => e.participant_id).sort(), ['m4'], 'm4 entered once; m1 to m3 entered once before');
    const total = await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM segment_members WHERE tenant_id = $1 AND segment_id = $2', [tenant.tenantId, id]);
    assert.equal(total[0].n, 4);
  });

  await t.test('membershipsInTx, membersSqlInTx and assertSegmentsExistInTx', async () => {
    const live = await ok(svc.request('POST', BASE, { key, body: { name: 'Live', filter: { all: [{ fact: 'lifetime_points', operator: 'lt', value: 200 }] } } }), 201);
    const liveId = live.body.id as string;
    const unknown = 'seg_00000000000000000000000000000000';
    await db.tenant(tenant.tenantId, async (tx) => {
      assert.deepEqual([...(await membershipsInTx(tx, tenant.tenantId, 'm4', [id, liveId, unknown]))].sort(), [id, liveId].sort());
      assert.deepEqual([...(await membershipsInTx(tx, tenant.tenantId, 'm1', [id, liveId]))], [id]);
      assert.deepEqual([...(await membershipsInTx(tx, tenant.tenantId, 'nobody', [id, liveId]))], []);
      assert.deepEqual([...(await membershipsInTx(tx, tenant.tenantId, 'm1', []))], []);
      for (const segmentId of [id, liveId]) {
        const { sql, params } = await membersSqlInTx(tx, tenant.tenantId, segmentId, 3);
        const result = await tx.query(`SELECT $1::int AS a, $2::int AS b, m.participant_id FROM (${sql}) m ORDER BY 3`, [1, 2, ...params]);
        assert.deepEqual(
          result.rows.map((r: { participant_id: string }) => r.participant_id),
          segmentId === id ? ['m1', 'm2', 'm3', 'm4'] : ['m4'],
        );
      }
      await assert.rejects(membersSqlInTx(tx, tenant.tenantId, unknown, 1, '/segment_id'), (error: { code: string; status: number; extra: { errors: Array<{ path: string }> } }) => {
        assert.equal(error.code, 'SEGMENT_NOT_FOUND');
        assert.equal(error.status, 404);
        assert.equal(error.extra.errors[0].path, '/segment_id');
        return true;
      });
      await assertSegmentsExistInTx(tx, tenant.tenantId, [id, liveId], '/segment_ids');
      await assert.rejects(assertSegmentsExistInTx(tx, tenant.tenantId, [id, unknown], '/conditions/all/0/value'), (error: { status: number; extra: { errors: Array<{ path: string }> } }) => {
        assert.equal(error.status, 422);
        assert.deepEqual(error.extra.errors.map((e) => e.path), ['/conditions/all/0/value/1']);
        return true;
      });
    });
    // Another tenant's ids are unknown to it.
    const other = await svc.createTenant();
    await db.tenant(other.tenantId, async (tx) => {
      assert.deepEqual([...(await membershipsInTx(tx, other.tenantId, 'm1', [id]))], []);
      await assert.rejects(assertSegmentsExistInTx(tx, other.tenantId, [id], '/segment_id'));
    });
  });

  await t.test('a segment no longer materialized drops its rows; refresh is refused for it', async () => {
    const off = await ok(svc.request('PATCH', `${BASE}/${id}`, { key, body: { materialized: false } }));
    assert.equal(off.body.size, null);
    assert.equal((await rows(id)).length, 0);
    const refused = await svc.request('POST', `${BASE}/${id}/refresh`, { key });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.code, 'SEGMENT_NOT_MATERIALIZED');
    // Deleting a segment drops its membership with it (no events: no one moved).
    await ok(svc.request('PATCH', `${BASE}/${id}`, { key, body: { materialized: true } }));
    assert.equal((await rows(id)).length, 4);
    await ok(svc.request('DELETE', `${BASE}/${id}`, { key }), 204);
    assert.equal((await rows(id)).length, 0);
  });
});
