import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';

/**
 * Promotion through HTTP: the diff between a sandbox's configuration (rules,
 * engagements, rewards, badge and streak definitions) and its live tenant's, then its application to live
 * in one audited transaction, only with a live credential and only while the
 * previewed diff is still the diff.
 */
const PROMOTION = '/api/v1/tenant/sandbox/promotion';
const KINDS = ['rules', 'engagements', 'rewards', 'badges', 'streaks'];
const nothing = { created: 0, updated: 0 };

const quiz = (rewardId: string) => ({
  name: 'Spring quiz',
  site_slug: 'spring',
  activities: [
    {
      id: 'q',
      type: 'quiz',
      questions: [{ id: 'q1', text: 'Which season?', options: ['Spring', 'Autumn'], correct_option: 0 }],
      on_completion: [{ type: 'award_reward', reward_id: rewardId }],
    },
  ],
});
const welcome = { name: 'Welcome bonus', event_name: 'signed_up', effects: [{ type: 'award_points', points: 100 }] };

test('sandbox promotion: a diff shown first, then applied to live in one audited step', async (t) => {
  const svc = await startTestService(t, { config: { RATE_LIMIT_KEY_PER_MINUTE: '1000000' } });
  const live = await svc.createTenant();
  const other = await svc.createTenant();
  const jwt = await svc.login(live);
  const created = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'ci', environment: 'test', scopes: ['admin', 'gamify:admin'] } });
  assert.equal(created.status, 201, created.text);
  const testKey: string = created.body.key;
  const call = async (method: string, path: string, key: string, body?: unknown, expected = 0) => {
    const answer = await svc.request(method, path, { key, body });
    if (expected) assert.equal(answer.status, expected, `${method} ${path}: ${answer.text}`);
    return answer;
  };

  // The sandbox: two rewards, an engagement naming one, two rules. Live: the same tote, an older welcome rule, a rule of its own.
  await call('POST', '/api/v1/admin/rewards', testKey, { id: 'free-coffee', type: 'coupon', name: 'Free coffee', metadata: { discount_percent: 100 }, inventory: 50 }, 201);
  await call('POST', '/api/v1/admin/rewards', testKey, { id: 'tote', type: 'physical', name: 'Tote bag' }, 201);
  await call('POST', '/api/v1/admin/engagements', testKey, quiz('free-coffee'), 201);
  await call('POST', '/api/v1/admin/rules', testKey, { name: 'Purchase points', event_name: 'purchase_completed', effects: [{ type: 'award_points', points: 5 }] }, 201);
  await call('POST', '/api/v1/admin/rules', testKey, { ...welcome, priority: 10 }, 201);
  await call('POST', '/api/v1/admin/rewards', live.apiKey, { id: 'tote', type: 'physical', name: 'Tote bag' }, 201);
  const liveWelcome = (await call('POST', '/api/v1/admin/rules', live.apiKey, welcome, 201)).body;
  const legacy = (await call('POST', '/api/v1/admin/rules', live.apiKey, { name: 'Legacy signup', event_name: 'signed_up', effects: [{ type: 'award_points', points: 1 }] }, 201)).body;

  let fingerprint = '';

  await t.test('the diff lists create, update (before → after), unchanged and live_only, alike from either side', async () => {
    const fromLive = await call('GET', PROMOTION, live.apiKey, undefined, 200);
    const fromSandbox = await call('GET', PROMOTION, testKey, undefined, 200);
    assert.equal(fromSandbox.body.fingerprint, fromLive.body.fingerprint);
    assert.equal(fromSandbox.body.livemode, false);
    const diff = fromLive.body;
    assert.match(diff.fingerprint, /^[0-9a-f]{64}$/);
    assert.equal(diff.live_tenant_id, live.tenantId);
    assert.deepEqual(diff.rewards.create.map((e: any) => e.key), ['free-coffee']);
    assert.equal(diff.rewards.unchanged, 1);
    assert.deepEqual(diff.engagements.create.map((e: any) => e.key), ['spring']);
    assert.deepEqual(diff.rules.create.map((e: any) => e.key), ['Purchase points']);
    assert.deepEqual(diff.rules.update, [{ key: 'Welcome bonus', sandbox_id: diff.rules.update[0].sandbox_id, live_id: liveWelcome.id, changes: { priority: { before: 0, after: 10 } } }]);
    assert.deepEqual(diff.rules.live_only, [{ key: 'Legacy signup', live_id: legacy.id }]);
    for (const kind of KINDS) assert.deepEqual(diff[kind].blocked, []);
    fingerprint = diff.fingerprint;
  });

  await t.test('a sandbox credential may not apply (403 LIVE_CREDENTIAL_REQUIRED); a bad body is 400; both change nothing', async () => {
    const refused = await call('POST', PROMOTION, testKey, { fingerprint }, 403);
    assert.equal(refused.body.code, 'LIVE_CREDENTIAL_REQUIRED');
    for (const body of [{}, { fingerprint: 'abc' }, { fingerprint, extra: true }]) {
      const bad = await call('POST', PROMOTION, live.apiKey, body, 400);
      assert.ok(bad.body.detail);
    }
    const [{ n }] = await svc.sql("SELECT count(*)::int AS n FROM earn_rules WHERE tenant_id = $1 AND name = 'Purchase points'", [live.tenantId]);
    assert.equal(n, 0);
  });

  await t.test('a stale fingerprint is 409 PROMOTION_DIFF_CHANGED with the current one, and changes nothing', async () => {
    const stale = await call('POST', PROMOTION, live.apiKey, { fingerprint: '0'.repeat(64) }, 409);
    assert.equal(stale.body.code, 'PROMOTION_DIFF_CHANGED');
    assert.equal(stale.body.fingerprint, fingerprint);
    const [{ n }] = await svc.sql('SELECT count(*)::int AS n FROM rewards WHERE tenant_id = $1', [live.tenantId]);
    assert.equal(n, 1);
  });

  await t.test('another tenant sees only its own pair, and cannot apply this one', async () => {
    const none = await call('GET', PROMOTION, other.apiKey, undefined, 404);
    assert.equal(none.body.code, 'SANDBOX_NOT_FOUND');
    await call('POST', '/api/v1/tenant/sandbox', other.apiKey, undefined, 201);
    const own = await call('GET', PROMOTION, other.apiKey, undefined, 200);
    assert.equal(own.body.live_tenant_id, other.tenantId);
    assert.equal(own.body.rules.create.length + own.body.rules.live_only.length, 0);
    const refused = await call('POST', PROMOTION, other.apiKey, { fingerprint }, 409);
    assert.notEqual(refused.body.fingerprint, fingerprint);
  });

  let auditId = '';
  await t.test('applying makes live equal for those items, leaves live-only items alone, and writes one audit row in the same step', async () => {
    const applied = await call('POST', PROMOTION, live.apiKey, { fingerprint }, 200);
    assert.deepEqual(applied.body.applied, {
      rules: { created: 1, updated: 1 },
      engagements: { created: 1, updated: 0 },
      rewards: { created: 1, updated: 0 },
      badges: nothing,
      streaks: nothing,
    });
    assert.equal(applied.body.fingerprint, fingerprint);
    auditId = applied.body.audit_id;

    const rules = (await call('GET', '/api/v1/admin/rules', live.apiKey, undefined, 200)).body.rules;
    const byName = Object.fromEntries(rules.map((rule: any) => [rule.name, rule]));
    assert.equal(byName['Purchase points'].status, 'draft', 'a promoted rule arrives as a draft');
    assert.equal(byName['Welcome bonus'].priority, 10);
    assert.equal(byName['Welcome bonus'].status, 'active', 'an update keeps the live status');
    const { livemode: _livemode, ...legacyRule } = legacy;
    assert.deepEqual(byName['Legacy signup'], legacyRule, 'a live-only rule is untouched');
    const engagements = (await call('GET', '/api/v1/admin/engagements', live.apiKey, undefined, 200)).body.engagements;
    assert.equal(engagements.length, 1);
    assert.equal(engagements[0].status, 'draft', 'a promoted engagement arrives as a draft');
    assert.equal(engagements[0].activities[0].on_completion[0].reward_id, 'free-coffee');
    const reward = await call('GET', '/api/v1/admin/rewards/free-coffee', live.apiKey, undefined, 200);
    assert.equal(reward.body.inventory, 50);

    const rows = await svc.sql("SELECT id::text, action, actor_type, resource_id, details FROM audit_log WHERE tenant_id = $1 AND route = '/api/v1/tenant/sandbox/promotion'", [live.tenantId]);
    assert.equal(rows.length, 1, 'one audit row, not a second one after commit');
    assert.equal(rows[0].id, auditId);
    assert.equal(rows[0].action, 'sandbox.promote');
    assert.equal(rows[0].actor_type, 'api_key');
    assert.equal(rows[0].details.fingerprint, fingerprint);
    assert.equal(rows[0].details.rules.create[0].key, 'Purchase points');
  });

  await t.test('after the apply the diff is empty; the same fingerprint again is 409 and duplicates nothing', async () => {
    const after = (await call('GET', PROMOTION, live.apiKey, undefined, 200)).body;
    assert.notEqual(after.fingerprint, fingerprint);
    for (const kind of KINDS) assert.deepEqual([after[kind].create, after[kind].update], [[], []]);
    assert.equal(after.rules.unchanged, 2);
    const again = await call('POST', PROMOTION, live.apiKey, { fingerprint }, 409);
    assert.equal(again.body.fingerprint, after.fingerprint);
    const empty = await call('POST', PROMOTION, live.apiKey, { fingerprint: after.fingerprint }, 200);
    assert.equal(empty.body.audit_id, null);
    const [{ n }] = await svc.sql("SELECT count(*)::int AS n FROM earn_rules WHERE tenant_id = $1 AND name = 'Purchase points'", [live.tenantId]);
    assert.equal(n, 1);
  });

  await t.test('a badge new in the sandbox is promoted before the rule awarding it; a streak update shows and applies its fields', async () => {
    await call('POST', '/api/v1/admin/badges', testKey, { code: 'vip', name: 'VIP', image_url: 'https://cdn.example.com/vip.png' }, 201);
    await call('POST', '/api/v1/admin/rules', testKey, { name: 'VIP badge', event_name: 'purchase_completed', effects: [{ type: 'award_badge', badge_code: 'vip' }] }, 201);
    await call('POST', '/api/v1/admin/streaks', testKey, { code: 'daily-visit', name: 'Daily visit', period: 'daily', event_name: 'visit', grace_periods: 1 }, 201);
    await call('POST', '/api/v1/admin/streaks', live.apiKey, { code: 'daily-visit', name: 'Visits', period: 'daily', event_name: 'visit' }, 201);
    const diff = (await call('GET', PROMOTION, live.apiKey, undefined, 200)).body;
    assert.deepEqual(diff.badges.create, [{ key: 'vip', sandbox_id: 'vip', fields: { name: 'VIP', description: null, image_url: 'https://cdn.example.com/vip.png' } }]);
    assert.deepEqual(diff.rules.create.map((e: any) => e.key), ['VIP badge']);
    assert.deepEqual(diff.rules.blocked, [], 'the badge comes along, so the rule awarding it is not blocked');
    assert.deepEqual(diff.streaks.update, [
      { key: 'daily-visit', sandbox_id: 'daily-visit', live_id: 'daily-visit', changes: { grace_periods: { before: 0, after: 1 }, name: { before: 'Visits', after: 'Daily visit' } } },
    ]);
    const applied = await call('POST', PROMOTION, live.apiKey, { fingerprint: diff.fingerprint }, 200);
    assert.deepEqual(applied.body.applied, { rules: { created: 1, updated: 0 }, engagements: nothing, rewards: nothing, badges: { created: 1, updated: 0 }, streaks: { created: 0, updated: 1 } });
    const badge = (await call('GET', '/api/v1/admin/badges/vip', live.apiKey, undefined, 200)).body;
    assert.deepEqual([badge.name, badge.image_url], ['VIP', 'https://cdn.example.com/vip.png']);
    const rules = (await call('GET', '/api/v1/admin/rules', live.apiKey, undefined, 200)).body.rules;
    assert.equal(rules.find((rule: any) => rule.name === 'VIP badge').status, 'draft');
    const streak = (await call('GET', '/api/v1/admin/streaks/daily-visit', live.apiKey, undefined, 200)).body;
    assert.deepEqual([streak.name, streak.grace_periods], ['Daily visit', 1]);
    const after = (await call('GET', PROMOTION, live.apiKey, undefined, 200)).body;
    for (const kind of KINDS) assert.deepEqual([after[kind].create, after[kind].update, after[kind].blocked], [[], [], []]);
    assert.deepEqual([after.badges.unchanged, after.streaks.unchanged], [1, 1]);
  });

  await t.test('an item that cannot be brought is blocked with why, blocks what names it, and refuses the whole promotion (422)', async () => {
    await call('POST', '/api/v1/admin/streaks', testKey, { code: 'weekly-login', name: 'Weekly login', period: 'weekly' }, 201);
    await call('POST', '/api/v1/admin/streaks', live.apiKey, { code: 'weekly-login', name: 'Weekly login', period: 'daily' }, 201);
    await call('POST', '/api/v1/admin/rules', testKey, { name: 'Login streak', event_name: 'logged_in', effects: [{ type: 'continue_streak', streak_code: 'weekly-login' }] }, 201);
    await call('PATCH', '/api/v1/admin/rewards/tote', testKey, { name: 'Canvas tote bag' }, 200);
    const diff = (await call('GET', PROMOTION, live.apiKey, undefined, 200)).body;
    assert.deepEqual(diff.streaks.blocked.map((e: any) => e.key), ['weekly-login']);
    assert.match(diff.streaks.blocked[0].reason, /period differs \(live "daily", sandbox "weekly"\)/);
    assert.deepEqual(diff.rules.blocked.map((e: any) => e.key), ['Login streak']);
    assert.match(diff.rules.blocked[0].reason, /streak "weekly-login", which is blocked/);
    assert.deepEqual(diff.rewards.update[0].changes, { name: { before: 'Tote bag', after: 'Canvas tote bag' } });
    const refused = await call('POST', PROMOTION, live.apiKey, { fingerprint: diff.fingerprint }, 422);
    assert.equal(refused.body.code, 'PROMOTION_BLOCKED');
    assert.deepEqual(refused.body.blocked.map((e: any) => e.kind), ['streaks', 'rules']);
    const tote = await call('GET', '/api/v1/admin/rewards/tote', live.apiKey, undefined, 200);
    assert.equal(tote.body.name, 'Tote bag', 'nothing of a refused promotion is applied');
  });

  await t.test('an update of a published live engagement replaces its draft and never publishes it', async () => {
    const liveEngagement = (await call('GET', '/api/v1/admin/engagements', live.apiKey, undefined, 200)).body.engagements[0];
    await call('POST', `/api/v1/admin/engagements/${liveEngagement.id}/publish`, live.apiKey, undefined, 200);
    const sandboxRules = (await call('GET', '/api/v1/admin/rules', testKey, undefined, 200)).body.rules;
    await call('DELETE', `/api/v1/admin/rules/${sandboxRules.find((rule: any) => rule.name === 'Login streak').id}`, testKey, undefined, 204);
    await call('DELETE', '/api/v1/admin/streaks/weekly-login', testKey, undefined, 204);
    const sandboxEngagement = (await call('GET', '/api/v1/admin/engagements', testKey, undefined, 200)).body.engagements[0];
    await call('PATCH', `/api/v1/admin/engagements/${sandboxEngagement.id}`, testKey, { name: 'Spring quiz 2' }, 200);
    const diff = (await call('GET', PROMOTION, live.apiKey, undefined, 200)).body;
    assert.deepEqual(diff.engagements.update[0].changes, { name: { before: 'Spring quiz', after: 'Spring quiz 2' } });
    const applied = await call('POST', PROMOTION, live.apiKey, { fingerprint: diff.fingerprint }, 200);
    assert.deepEqual(applied.body.applied.engagements, { created: 0, updated: 1 });
    assert.deepEqual(applied.body.applied.rewards, { created: 0, updated: 1 });
    const after = await call('GET', `/api/v1/admin/engagements/${liveEngagement.id}`, live.apiKey, undefined, 200);
    assert.equal(after.body.name, 'Spring quiz 2');
    assert.equal(after.body.status, 'published');
    assert.equal(after.body.has_unpublished_changes, true, 'the published version keeps serving until it is published again');
    assert.equal((await call('GET', '/api/v1/admin/rewards/tote', live.apiKey, undefined, 200)).body.name, 'Canvas tote bag');
  });

  await t.test('a sandbox definition the admin route would refuse is refused by the promotion too (400), which changes nothing', async () => {
    const { sandbox_tenant_id: sandboxTenantId } = (await call('GET', PROMOTION, live.apiKey, undefined, 200)).body;
    // Written behind the route's back: the admin route refuses a name over 100 characters.
    await svc.sql("INSERT INTO badge_definitions (tenant_id, code, name, created_at, updated_at) VALUES ($1, 'long', repeat('x', 101), now(), now())", [sandboxTenantId]);
    const diff = (await call('GET', PROMOTION, live.apiKey, undefined, 200)).body;
    assert.deepEqual(diff.badges.create.map((e: any) => e.key), ['long']);
    const refused = await call('POST', PROMOTION, live.apiKey, { fingerprint: diff.fingerprint }, 400);
    assert.match(refused.body.detail, /badge "long": name must NOT have more than 100 characters/);
    await call('GET', '/api/v1/admin/badges/long', live.apiKey, undefined, 404);
  });
});
