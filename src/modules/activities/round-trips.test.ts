import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { startTestService } from '../../../test/helper.js';
import type { Database } from '../../platform/db.js';
import { complete, createEngagement, createReward, session, wheel } from '../engagements/testing.js';

/**
 * The texts sent to the database by the application pool's connections
 * until the test ends: one per round trip (a message of several statements
 * is one `query`).
 */
function recordRoundTrips(t: TestContext, db: Database): () => string[] {
  const sent: string[] = [];
  const pool = db.app as pg.Pool & { connect: () => Promise<pg.PoolClient> };
  const connect = pool.connect.bind(pool);
  const wrapped = new WeakSet<object>();
  pool.connect = async () => {
    const client = await connect();
    if (!wrapped.has(client)) {
      wrapped.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        if (recording) sent.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string }).text ?? args[0]));
        return query(...args);
      };
    }
    return client;
  };
  let recording = true;
  t.after(() => {
    recording = false;
    pool.connect = connect;
  });
  return () => sent;
}

test("a first spin's round trips: the activity with BEGIN, the draw's reads with the take, the prize and the completion's points together, the record with COMMIT", async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const coupon = await createReward(svc, tenant, { id: 'spin-coupon', name: '5% off', type: 'coupon', metadata: { discount_percent: 5 } });
  const engagement = await createEngagement(svc, tenant, {
    activities: [
      wheel({
        max_attempts: 1,
        // The coupon's segment can never be drawn (inventory 0), but the wheel's draw still reads its stock and the reward.
        segments: [
          { label: '10 points', prize_type: 'points', prize_value: 10, weight: 1 },
          { label: '5% off', prize_type: 'reward', reward_id: coupon.id, weight: 1, inventory: 0 },
        ],
        on_completion: [{ type: 'award_points', amount: 1, reason: 'spun' }],
      }),
    ],
  });
  const s = await session(svc, tenant, engagement.id);
  const sent = recordRoundTrips(t, svc.service.db);
  const done = await complete(svc, s, 'wheel1', 'spin_wheel');
  assert.equal(done.status, 200, done.text);
  assert.deepEqual(
    done.body.actions_executed.map((a: { source: string; points_awarded: number; new_balance: number }) => [a.source, a.points_awarded, a.new_balance]),
    [
      ['prize', 10, 10],
      ['on_completion', 1, 11],
    ],
  );
  const trips = sent();
  const listing = trips.map((text, i) => `${i + 1}. ${text.replace(/\s+/g, ' ').slice(0, 100)}`).join('\n');
  // Six round trips; the challenges' read and the contests' match (the fact handlers) are the two between the grants and the record.
  assert.equal(trips.length, 6, listing);
  const [begin, take, grants, , , record] = trips;
  assert.match(begin, /^BEGIN;[\s\S]*engagement_activities/, 'the activity is read with BEGIN');
  for (const table of ['activity_participations', 'spin_segment_awards', 'reward_codes']) assert.ok(take.includes(table), `the take's trip reads ${table} too\n${listing}`);
  assert.ok(grants.includes('points_ledger'), `the third trip grants\n${listing}`);
  assert.equal(grants.split('EXECUTE ').length - 1, 2, `the prize and the completion's points: two grants in one trip\n${listing}`);
  for (const part of ['activity_attempts', 'outbox_events', 'COMMIT']) assert.ok(record.includes(part), `the record's trip holds ${part}\n${listing}`);
});
