import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { asPerson, invitePerson, signInConsole } from '../../../test/console-people.js';
import { complete, createEngagement, createReward, session, wheel } from '../engagements/testing.js';
import { sendSync } from '../ingestion/testing.js';

test("participants: support's view of a person: their events with outcomes, claimed rewards with the code masked", async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const owner = await signInConsole(svc, tenant.adminEmail, tenant.adminPassword);
  const support = await invitePerson(svc, owner, `support@${tenant.slug}.example`, 'support');
  const rule = await svc.request('POST', '/api/v1/admin/rules', {
    key: tenant.apiKey,
    body: { name: 'Orders', event_name: 'purchase', conditions: { all: [] }, effects: [{ type: 'award_points', points: 10 }] },
  });
  assert.equal(rule.status, 201, rule.text);
  const sent = await sendSync(svc, tenant, { event_name: 'purchase', participant_id: 'ann', properties: { order_total: 30, email: 'ann@example.com' } });
  assert.equal(sent.status, 200, sent.text);

  await t.test('support reads the events with their outcome, personal properties masked; the store-wide search stays the developers\'', async () => {
    const page = await svc.request('GET', '/api/v1/admin/participants/ann/events?limit=5', asPerson(support, false));
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.events.length, 1);
    const [event] = page.body.events;
    assert.equal(event.event_name, 'purchase');
    assert.equal(event.outcome.points_awarded, 10);
    assert.notEqual(event.properties.email, 'ann@example.com');
    assert.equal((await svc.request('GET', '/api/v1/events/search?participant_id=ann', asPerson(support, false))).status, 403);
    const other = await svc.request('GET', '/api/v1/admin/participants/nobody/events', asPerson(support, false));
    assert.deepEqual(other.body.events, []);
  });

  await t.test('a claimed reward reads with its code masked for support, in full for the owner (read:pii)', async () => {
    await createReward(svc, tenant, { id: 'coupon', name: 'Coupon', type: 'voucher', code_source: 'pool', metadata: { value: 5, currency: 'EUR' } });
    const upload = await svc.request('POST', '/api/v1/admin/rewards/coupon/codes', { key: tenant.apiKey, body: { codes: ['SECRET-1'] } });
    assert.equal(upload.status, 200, upload.text);
    const engagement = await createEngagement(svc, tenant, {
      activities: [wheel({ id: 'claim', segments: [{ label: 'x', prize_type: 'none', weight: 1 }, { label: 'y', prize_type: 'none', weight: 1 }], on_completion: [{ type: 'award_reward', reward_id: 'coupon' }] })],
    });
    const s = await session(svc, tenant, engagement.id, 'ann');
    const claimed = await complete(svc, s, 'claim', 'spin_wheel');
    assert.equal(claimed.status, 200, claimed.text);
    const masked = await svc.request('GET', '/api/v1/gamify/state/ann?include=rewards', asPerson(support, false));
    assert.equal(masked.status, 200, masked.text);
    assert.equal(masked.body.rewards[0].name, 'Coupon');
    assert.equal(masked.body.rewards[0].code, '***');
    const full = await svc.request('GET', '/api/v1/gamify/state/ann?include=rewards', asPerson(owner, false));
    assert.equal(full.body.rewards[0].code, 'SECRET-1');
  });
});
