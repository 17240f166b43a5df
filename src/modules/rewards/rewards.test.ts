import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { complete, createEngagement, createReward, outbox, session, wheel } from '../engagements/testing.js';
import rewardsModule from './index.js';
import { readStatePart } from '../../platform/module.js';

const LIMITS = { RATE_LIMIT_KEY_PER_MINUTE: '1000000', DB_POOL_SIZE: '30' };
const NO_PRIZE = [
  { label: 'a', prize_type: 'none', weight: 1 },
  { label: 'b', prize_type: 'none', weight: 1 },
];

test('rewards: catalogue, codes, inventory, expiry, claimed list', async (t) => {
  const svc = await startTestService(t, { config: LIMITS });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  t.after(() => clock.reset());

  await t.test('the five types carry their display_type and metadata shapes', async () => {
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['coupon', { discount_percent: 15, min_order_value: 50, currency: 'EUR' }, 'coupon', 'generated'],
      ['voucher', { value: 25, currency: 'USD' }, 'voucher', 'generated'],
      ['physical', { sku: 'MUG-1' }, 'gift_card', 'none'],
      ['digital', { kind: 'download', url: 'https://example.com/e-book.pdf' }, 'simple', 'generated'],
      ['points_multiplier', { multiplier: 2, duration_hours: 24, event_type: 'purchase' }, 'simple', 'none'],
    ];
    for (const [type, metadata, displayType, codeSource] of cases) {
      const reward = await createReward(svc, tenant, { id: `r-${type}`, name: type, type, metadata });
      assert.equal(reward.display_type, displayType, type);
      assert.equal(reward.code_source, codeSource, type);
      assert.deepEqual(reward.metadata, metadata);
    }
    const list = await svc.request('GET', '/api/v1/admin/rewards?limit=2', { key: tenant.apiKey });
    assert.equal(list.body.rewards.length, 2);
    const next = await svc.request('GET', `/api/v1/admin/rewards?limit=10&cursor=${list.body.next_cursor}`, { key: tenant.apiKey });
    assert.equal(next.body.rewards.length, 3);
    assert.equal(next.body.next_cursor, null);
  });

  await t.test('bad catalogue input is refused with detail', async () => {
    const bad: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ name: 'x', type: 'coupon', metadata: { discount_percent: 150 } }, 400, /discount_percent/],
      [{ name: 'x', type: 'voucher', metadata: { value: 5 } }, 400, /currency/],
      [{ name: 'x', type: 'coupon', metadata: { discount_percent: 5, colour: 'red' } }, 400, /metadata/],
      [{ name: 'x', type: 'points_multiplier', metadata: { multiplier: 0.5, duration_hours: 1, event_type: 'e' } }, 400, /multiplier/],
      [{ name: 'x', type: 'lottery' }, 400, /type/],
      [{ name: 'x', type: 'coupon', metadata: { discount_percent: 5 }, code_source: 'none', code_prefix: 'AB' }, 400, /code_prefix/],
      [{ name: 'x', type: 'coupon', metadata: { discount_percent: 5 }, image_url: 'http://images.example.com/a.png' }, 400, /image_url/],
      [{ name: 'x', type: 'coupon', metadata: { discount_percent: 5 }, image_url: `https://images.example.com/${'a'.repeat(2048)}` }, 400, /image_url/],
      [{ id: 'r-coupon', name: 'again', type: 'coupon', metadata: { discount_percent: 5 } }, 409, /already exists/],
    ];
    for (const [body, status, detail] of bad) {
      const response = await svc.request('POST', '/api/v1/admin/rewards', { key: tenant.apiKey, body });
      assert.equal(response.status, status, response.text);
      assert.match(response.body.detail, detail);
    }
    const codesOnGenerated = await svc.request('POST', '/api/v1/admin/rewards/r-coupon/codes', { key: tenant.apiKey, body: { codes: ['A'] } });
    assert.equal(codesOnGenerated.status, 422);
    const otherTenant = await svc.request('GET', '/api/v1/admin/rewards/r-coupon', { key: other.apiKey });
    assert.equal(otherTenant.status, 404);
  });

  await t.test('image_url: an https picture set on create and update, read back, cleared with null; anything else refused', async () => {
    const image = 'https://images.example.com/rewards/mug.png';
    const created = await createReward(svc, tenant, { id: 'r-mug', name: 'Mug', type: 'physical', image_url: image });
    assert.equal(created.image_url, image);
    assert.equal((await svc.request('GET', '/api/v1/admin/rewards/r-mug', { key: tenant.apiKey })).body.image_url, image);
    const refused = await svc.request('PATCH', '/api/v1/admin/rewards/r-mug', { key: tenant.apiKey, body: { image_url: 'javascript:alert(1)' } });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.body.detail, /image_url/);
    const changed = await svc.request('PATCH', '/api/v1/admin/rewards/r-mug', { key: tenant.apiKey, body: { image_url: `${image}?v=2` } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.image_url, `${image}?v=2`);
    const cleared = await svc.request('PATCH', '/api/v1/admin/rewards/r-mug', { key: tenant.apiKey, body: { image_url: null } });
    assert.equal(cleared.body.image_url, null);
    assert.equal((await svc.request('GET', '/api/v1/admin/rewards/r-coupon', { key: tenant.apiKey })).body.image_url, null);
  });

  await t.test('200 parallel claims on a pool of 10 codes hand out exactly 10, each once', async () => {
    await createReward(svc, tenant, { id: 'pool10', name: 'Gift card', type: 'voucher', code_source: 'pool', metadata: { value: 10, currency: 'EUR' } });
    const codes = Array.from({ length: 10 }, (_, i) => `GIFT-${i}`);
    const upload = await svc.request('POST', '/api/v1/admin/rewards/pool10/codes', { key: tenant.apiKey, body: { codes: [...codes, 'GIFT-0'] } });
    assert.deepEqual(upload.body, { added: 10, duplicates: 1, codes_available: 10, livemode: true });
    const engagement = await createEngagement(svc, tenant, {
      activities: [wheel({ id: 'claim', segments: NO_PRIZE, on_completion: [{ type: 'award_points', amount: 7 }, { type: 'award_reward', reward_id: 'pool10' }] })],
    });
    const sessions = [];
    for (let i = 0; i < 200; i += 50) sessions.push(...(await Promise.all(Array.from({ length: 50 }, () => session(svc, tenant, engagement.id)))));
    const responses = await Promise.all(sessions.map((s) => complete(svc, s, 'claim', 'spin_wheel')));
    const won = responses.filter((r) => r.status === 200);
    assert.equal(won.length, 10);
    assert.ok(responses.filter((r) => r.status !== 200).every((r) => r.status === 422 && r.body.code === 'REWARD_OUT_OF_STOCK'));
    const handedOut = won.map((r) => r.body.actions_executed[1].reward_claimed.code).sort();
    assert.deepEqual(handedOut, [...codes].sort());
    const claims = await svc.sql('SELECT count(*)::int AS n FROM reward_claims WHERE tenant_id = $1 AND reward_id = $2', [tenant.tenantId, 'pool10']);
    assert.equal(claims[0].n, 10);
    // All or none: the 190 refused completions granted no points.
    const ledger = await svc.sql("SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1 AND reason = 'spin_wheel_completed'", [tenant.tenantId]);
    assert.equal(ledger[0].n, 10);
    const events = await outbox(svc, tenant.tenantId, 'reward.claimed.v1');
    const poolEvents = events.filter((e) => e.data.reward_id === 'pool10');
    assert.equal(poolEvents.length, 10);
    for (const key of ['participant_id', 'reward_id', 'claim_id', 'reward_type', 'code']) assert.ok(key in poolEvents[0].data, key);
    assert.equal(poolEvents[0].data.reward_type, 'voucher');
    const read = await svc.request('GET', '/api/v1/admin/rewards/pool10', { key: tenant.apiKey });
    assert.equal(read.body.codes_available, 0);
    assert.equal(read.body.claimed_count, 10);
  });

  await t.test('a limit set on an unlimited reward counts the claims already made', async () => {
    await createReward(svc, tenant, { id: 'later-limited', name: 'Sticker', type: 'physical', metadata: { sku: 'STK' } });
    const engagement = await createEngagement(svc, tenant, { activities: [wheel({ id: 'sticker', segments: NO_PRIZE, on_completion: [{ type: 'award_reward', reward_id: 'later-limited' }] })] });
    const claimOnce = async () => complete(svc, await session(svc, tenant, engagement.id), 'sticker', 'spin_wheel');
    for (let i = 0; i < 3; i++) assert.equal((await claimOnce()).status, 200);
    const lowered = await svc.request('PATCH', '/api/v1/admin/rewards/later-limited', { key: tenant.apiKey, body: { inventory: 2 } });
    assert.equal(lowered.status, 422, lowered.text);
    assert.equal(lowered.body.code, 'INVENTORY_BELOW_CLAIMED');
    const limited = await svc.request('PATCH', '/api/v1/admin/rewards/later-limited', { key: tenant.apiKey, body: { inventory: 4 } });
    assert.equal(limited.status, 200, limited.text);
    assert.equal(limited.body.claimed_count, 3);
    assert.equal((await claimOnce()).status, 200);
    const refused = await claimOnce();
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.body.code, 'REWARD_OUT_OF_STOCK');
    const claims = await svc.sql("SELECT count(*)::int AS n FROM reward_claims WHERE tenant_id = $1 AND reward_id = 'later-limited'", [tenant.tenantId]);
    assert.equal(claims[0].n, 4);
  });

  await t.test('a limited inventory never oversells under concurrency', async () => {
    await createReward(svc, tenant, { id: 'limited3', name: 'Mug', type: 'physical', inventory: 3, metadata: { sku: 'MUG' } });
    const engagement = await createEngagement(svc, tenant, { activities: [wheel({ id: 'mug', segments: NO_PRIZE, on_completion: [{ type: 'award_reward', reward_id: 'limited3' }] })] });
    const sessions = await Promise.all(Array.from({ length: 30 }, () => session(svc, tenant, engagement.id)));
    const responses = await Promise.all(sessions.map((s) => complete(svc, s, 'mug', 'spin_wheel')));
    assert.equal(responses.filter((r) => r.status === 200).length, 3);
    const reward = await svc.request('GET', '/api/v1/admin/rewards/limited3', { key: tenant.apiKey });
    assert.equal(reward.body.claimed_count, 3);
    const lowered = await svc.request('PATCH', '/api/v1/admin/rewards/limited3', { key: tenant.apiKey, body: { inventory: 2 } });
    assert.equal(lowered.status, 422);
    const raised = await svc.request('PATCH', '/api/v1/admin/rewards/limited3', { key: tenant.apiKey, body: { inventory: 4 } });
    assert.equal(raised.status, 200);
    assert.equal(raised.body.inventory, 4);
    const claimed = responses.find((r) => r.status === 200)!;
    assert.equal(claimed.body.actions_executed[0].reward_claimed.code, null, 'physical rewards have no code by default');
    assert.equal(claimed.body.actions_executed[0].reward_claimed.display_type, 'gift_card');
  });

  await t.test('expiry: claims expire after valid_for_days; a reward past available_until cannot be claimed', async () => {
    const until = new Date(clock.nowMs() + 3_600_000).toISOString();
    const image = 'https://images.example.com/rewards/5-off.png';
    await createReward(svc, tenant, { id: 'short', name: '5 off', type: 'coupon', code_prefix: 'SUM-', valid_for_days: 7, available_until: until, metadata: { discount_percent: 5 }, image_url: image });
    const engagement = await createEngagement(svc, tenant, { activities: [wheel({ id: 'exp', max_attempts: 5, segments: NO_PRIZE, on_completion: [{ type: 'award_reward', reward_id: 'short' }] })] });
    const s = await session(svc, tenant, engagement.id, undefined, 30 * 86_400);
    const first = await complete(svc, s, 'exp', 'spin_wheel');
    assert.equal(first.status, 200, first.text);
    const claim = first.body.actions_executed[0].reward_claimed;
    assert.match(claim.code, /^SUM-[A-Z2-9]{10}$/);
    // The completion names the reward and shows its picture.
    assert.equal(claim.title, '5 off');
    assert.equal(claim.image_url, image);
    assert.equal(new Date(claim.expires_at).getTime() - clock.nowMs() > 6.9 * 86_400_000, true);

    const listed = await svc.request('GET', `/api/v1/public/rewards/claimed?session_id=${s.sessionId}&engagement_id=${s.engagementId}`);
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.rewards.length, 1);
    assert.deepEqual(
      { ...listed.body.rewards[0], claimed_at: undefined, expires_at: undefined, claim_id: undefined },
      { reward_id: 'short', name: '5 off', type: 'coupon', code: claim.code, display_type: 'coupon', status: 'active', metadata: { discount_percent: 5 }, image_url: image, claimed_at: undefined, expires_at: undefined, claim_id: undefined },
    );

    clock.advance(2 * 3_600_000);
    const late = await complete(svc, s, 'exp', 'spin_wheel');
    assert.equal(late.status, 422);
    assert.equal(late.body.code, 'REWARD_EXPIRED');
    clock.advance(8 * 86_400_000);
    const expired = await svc.request('GET', `/api/v1/public/rewards/claimed?session_id=${s.sessionId}&engagement_id=${s.engagementId}`);
    assert.equal(expired.body.rewards[0].status, 'expired');

    // The state read part lists the same claims.
    const part = await svc.service.db.tenant(tenant.tenantId, (tx) => readStatePart(rewardsModule.stateParts!.rewards, tx, tenant.tenantId, s.participantId, null as never));
    assert.equal((part as unknown[]).length, 1);
    // Another participant sees only their own rewards; an API key cannot use the session route.
    const stranger = await session(svc, tenant, engagement.id);
    const none = await svc.request('GET', `/api/v1/public/rewards/claimed?session_id=${stranger.sessionId}&engagement_id=${stranger.engagementId}`);
    assert.deepEqual(none.body, { rewards: [], next_cursor: null, livemode: true });
    const withKey = await svc.request('GET', `/api/v1/public/rewards/claimed?session_id=${s.sessionId}&engagement_id=${s.engagementId}`, { key: tenant.apiKey });
    assert.equal(withKey.status, 403);
  });

  await t.test('a points_multiplier reward creates a multiplier for the claiming participant', async () => {
    const engagement = await createEngagement(svc, tenant, { activities: [wheel({ id: 'mult', segments: NO_PRIZE, on_completion: [{ type: 'award_reward', reward_id: 'r-points_multiplier' }] })] });
    const s = await session(svc, tenant, engagement.id);
    const response = await complete(svc, s, 'mult', 'spin_wheel');
    assert.equal(response.status, 200, response.text);
    const rows = await svc.sql('SELECT multiplier, participant_id, event_type FROM points_multipliers WHERE tenant_id = $1', [tenant.tenantId]);
    assert.deepEqual(rows, [{ multiplier: 2, participant_id: s.participantId, event_type: 'purchase' }]);
  });
});

test('the metadata fields of each reward type come from the schemas that check them', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const read = await svc.request('GET', '/api/v1/admin/rewards/types/metadata-fields', { key: tenant.apiKey });
  assert.equal(read.status, 200, read.text);
  const byType = Object.fromEntries(read.body.types.map((t: { type: string; fields: Array<Record<string, unknown>> }) => [t.type, Object.fromEntries(t.fields.map((f) => [f.key, f]))]));
  assert.deepEqual(byType.coupon.discount_percent, { key: 'discount_percent', required: true, type: 'number', exclusiveMinimum: 0, maximum: 100 });
  assert.equal(byType.voucher.currency.pattern, '^[A-Z]{3}$');
  assert.deepEqual(byType.digital.kind.enum, ['download', 'access_code', 'membership']);
  assert.equal(byType.points_multiplier.attributes.type, 'record');
  assert.deepEqual(byType.points_multiplier.attributes.value_types, ['string', 'number', 'boolean']);
  assert.equal(byType.points_multiplier.duration_hours.type, 'integer');
  // A value the field's limits refuse is refused on its field by the service too.
  const refused = await svc.request('POST', '/api/v1/admin/rewards', { key: tenant.apiKey, body: { name: 'Too much', type: 'coupon', metadata: { discount_percent: 150 } } });
  assert.equal(refused.status, 400, refused.text);
  assert.equal(refused.body.errors[0].path, '/metadata/discount_percent');
});
