import test from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { inBatch } from '../../platform/batch.js';
import { awardInTx } from './service.js';

test('points: a batch holds its grants and sends them before any statement on the points tables, whoever sends it', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const seen = await svc.service.db.tenant(tenant.tenantId, (tx) =>
    inBatch(tx, async (batchTx) => {
      await awardInTx(batchTx, tenant.tenantId, { participantId: 'held', amount: 7, reason: 'held' });
      await awardInTx(batchTx, tenant.tenantId, { participantId: 'held', amount: 5, reason: 'held' });
      const balance = 'SELECT coalesce(sum(available), 0)::int AS available FROM points_balances WHERE tenant_id = $1 AND participant_id = $2';
      // The caller's own transaction on the same connection is outside the batch: the grants are still held.
      const outside = (await tx.query(balance, [tenant.tenantId, 'held'])).rows[0].available;
      // A statement through the batch's transaction, not through the points module, sees them.
      const inside = (await batchTx.query(balance, [tenant.tenantId, 'held'])).rows[0].available;
      const events = (await batchTx.query("SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = $1 AND participant_id = 'held'", [tenant.tenantId])).rows[0].n;
      return { outside, inside, events };
    }),
  );
  // The outbox rows of the held grants are written when the batch ends, with the batch's other events.
  assert.deepEqual(seen, { outside: 0, inside: 12, events: 0 });
  const [{ n }] = await svc.sql("SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = $1 AND participant_id = 'held' AND event = 'points.awarded.v1'", [tenant.tenantId]);
  assert.equal(n, 2);
});
