import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantPoints, startTestService, type TestService, type TestTenant } from '../../../test/helper.js';
import { sendSync } from '../ingestion/testing.js';

/**
 * Issue 36: a multiplier for the members of one segment (`segment_id`):
 * validated, shown in its reads, and raising only members' events.
 */
async function createSegment(svc: TestService, tenant: TestTenant, name: string, filter: Record<string, unknown>): Promise<string> {
  const response = await svc.request('POST', '/api/v1/admin/segments', { key: tenant.apiKey, body: { name, filter } });
  assert.equal(response.status, 201, response.text);
  return response.body.id;
}

const HOUR = 3_600_000;

test('multipliers targeting a segment', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const post = (path: string, body: unknown, apiKey = tenant.apiKey) => svc.request('POST', `/api/v1${path}`, { key: apiKey, body });
  const window = { starts_at: new Date(Date.now() - HOUR).toISOString(), ends_at: new Date(Date.now() + 24 * HOUR).toISOString() };

  assert.equal((await grantPoints(svc, tenant, 'rich', 150)).status, 200);
  assert.equal((await grantPoints(svc, tenant, 'poor', 10)).status, 200);
  const bigSpenders = await createSegment(svc, tenant, 'Big spenders', { all: [{ fact: 'lifetime_points', operator: 'gte', value: 100 }] });
  const rule = await post('/admin/rules', { name: 'ten per purchase', event_name: 'purchase', effects: [{ type: 'award_points', points: 10 }] });
  assert.equal(rule.status, 201, rule.text);

  let targetedId = '';
  await t.test('created with segment_id and shown in its reads', async () => {
    const created = await post('/admin/points/multipliers', { multiplier: 3, ...window, match: { event_type: 'purchase' }, segment_id: bigSpenders });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.segment_id, bigSpenders);
    targetedId = created.body.id;
    const read = await svc.request('GET', `/api/v1/admin/points/multipliers/${targetedId}`, { key: tenant.apiKey });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.segment_id, bigSpenders);
    const everyone = await post('/admin/points/multipliers', { multiplier: 2, ...window, match: { event_type: 'purchase' }, segment_id: null });
    assert.equal(everyone.status, 201, everyone.text);
    assert.equal(everyone.body.segment_id, null);
    const listed = await svc.request('GET', '/api/v1/admin/points/multipliers', { key: tenant.apiKey });
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.multipliers.map((m: { multiplier: number; segment_id: string | null }) => [m.multiplier, m.segment_id]).sort(),
      [
        [2, null],
        [3, bigSpenders],
      ],
    );
  });

  await t.test('members get the segment multiplier; others the best one open to them', async () => {
    const member = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'rich' });
    assert.equal(member.status, 200, member.text);
    assert.equal(member.body.points_awarded, 30);
    assert.equal(member.body.rules[0].multiplier, 3);
    const outsider = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'poor' });
    assert.equal(outsider.body.points_awarded, 20);
    assert.equal(outsider.body.rules[0].multiplier, 2);
    // Without the multiplier for everyone, a non-member's event is not raised at all.
    await svc.sql("DELETE FROM points_multipliers WHERE tenant_id = $1 AND segment_id IS NULL", [tenant.tenantId]);
    const plain = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'poor' });
    assert.equal(plain.body.points_awarded, 10);
    assert.equal(plain.body.rules[0].multiplier, null);
  });

  await t.test('refused with the field named: a malformed id, an unknown segment, another tenant\'s', async () => {
    const body = { multiplier: 2, ...window, match: { event_type: 'purchase' } };
    const malformed = await post('/admin/points/multipliers', { ...body, segment_id: 'vip' });
    assert.equal(malformed.status, 400, malformed.text);
    assert.ok(malformed.body.errors.some((e: { path: string }) => e.path === '/segment_id'), malformed.text);
    const unknown = await post('/admin/points/multipliers', { ...body, segment_id: 'seg_00000000000000000000000000000000' });
    assert.equal(unknown.status, 422, unknown.text);
    assert.equal(unknown.body.code, 'SEGMENT_NOT_FOUND');
    assert.ok(unknown.body.errors.some((e: { path: string }) => e.path.startsWith('/segment_id')), unknown.text);
    const borrowed = await post('/admin/points/multipliers', { ...body, segment_id: bigSpenders }, other.apiKey);
    assert.equal(borrowed.status, 422, borrowed.text);
    assert.equal(borrowed.body.code, 'SEGMENT_NOT_FOUND');
    assert.equal((await svc.sql('SELECT count(*)::int AS n FROM points_multipliers WHERE tenant_id = $1', [other.tenantId]))[0].n, 0);
  });
});
