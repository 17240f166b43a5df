import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pointsRequest, startTestService } from '../../../test/helper.js';
import { asPerson, invitePerson, signInConsole } from '../../../test/console-people.js';
import { runBulkGrant } from './service.js';

test('points: the history names who caused each entry: the API key or person of a direct grant or deduct or of a bulk grant, none for a replay or a refusal', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const support = await invitePerson(svc, owner, `support@${tenant.slug}.example`, 'support');

  const byKey = await pointsRequest(svc, tenant, 'grant', { participant_id: 'ann', amount: 50, reason: 'welcome bonus', idempotency_key: 'k-1' });
  assert.equal(byKey.status, 200, byKey.text);
  const replay = await pointsRequest(svc, tenant, 'grant', { participant_id: 'ann', amount: 50, reason: 'welcome bonus', idempotency_key: 'k-1' });
  assert.equal(replay.body.duplicate, true);
  const byPerson = await svc.request('POST', '/api/v1/gamify/points/deduct', {
    ...asPerson(support),
    body: { participant_id: 'ann', amount: 3, reason: 'goodwill correction', idempotency_key: 'p-1' },
  });
  assert.equal(byPerson.status, 200, byPerson.text);
  const refused = await svc.request('POST', '/api/v1/gamify/points/deduct', {
    ...asPerson(support),
    body: { participant_id: 'ann', amount: 1000, reason: 'too much to take', idempotency_key: 'p-2' },
  });
  assert.equal(refused.status, 422, refused.text);

  const history = await svc.request('GET', '/api/v1/points/history?participant_id=ann', asPerson(support, false));
  assert.equal(history.status, 200, history.text);
  const [deducted, granted] = history.body.entries;
  assert.equal(history.body.entries.length, 2);
  assert.deepEqual(deducted.actor, { type: 'user', id: support.userId, name: 'support' });
  assert.equal(granted.actor.type, 'api_key');
  assert.equal(typeof granted.actor.name, 'string');
  const [key] = await svc.sql('SELECT name FROM api_keys WHERE tenant_id = $1 AND id::text = $2', [tenant.tenantId, granted.actor.id]);
  assert.equal(granted.actor.name, key.name);
  const [{ n }] = await svc.sql('SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1 AND actor_type IS NOT NULL', [tenant.tenantId]);
  assert.equal(n, 2, 'the replay and the refused deduct record no actor');

  // A bulk grant keeps who asked for it; its entries name them.
  const bulk = await svc.request('POST', '/api/v1/admin/points/bulk-grant', {
    ...asPerson(support),
    body: { reason: 'spring bonus', idempotency_key: 'b-1', grants: [{ participant_id: 'bea', amount: 7 }] },
  });
  assert.equal(bulk.status, 202, bulk.text);
  await runBulkGrant(svc.service.db, tenant.tenantId, bulk.body.job_id);
  const bea = await svc.request('GET', '/api/v1/points/history?participant_id=bea', asPerson(support, false));
  assert.deepEqual(bea.body.entries.map((e: { amount: number; actor: unknown }) => [e.amount, e.actor]), [[7, { type: 'user', id: support.userId, name: 'support' }]]);
});
