import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import { QUIZ, createEngagement, createReward, wheel } from './testing.js';

const LIMITS = { RATE_LIMIT_KEY_PER_MINUTE: '1000000' };

test('engagements: definitions, publication, public site, trigger rules, anonymous sessions', async (t) => {
  const svc = await startTestService(t, { config: { ...LIMITS, PUBLIC_BASE_URL: 'https://loyalty.example.com' } });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  t.after(() => clock.reset());
  const reward = await createReward(svc, tenant, { id: 'secret-reward', name: 'Coupon', type: 'coupon', metadata: { discount_percent: 10 } });
  const definition = {
    name: 'Spring',
    site_slug: 'spring',
    description: 'Spring campaign',
    canvas: { width: 400, background: '#fff' },
    components: [{ kind: 'header', text: 'Hello' }],
    screens: [
      { id: 'intro', name: 'Intro', components: [{ kind: 'text', text: 'Welcome' }] },
      { id: 'vip', name: 'VIP room', gate: { conditions: ['quiz_completed', 'screen_visited:intro'] } },
    ],
    activities: [
      wheel({ segments: [{ label: 'Coupon', prize_type: 'reward', reward_id: reward.id, weight: 7, inventory: 3 }, { label: 'Nothing', prize_type: 'none', weight: 93 }] }),
      QUIZ,
    ],
  };

  await t.test('create, read, list, update; the draft is never served publicly', async () => {
    const created = await svc.request('POST', '/api/v1/admin/engagements', { key: tenant.apiKey, body: definition });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.status, 'draft');
    assert.equal(created.body.activities[1].questions[0].correct_option, 1, 'admins read the secrets');
    assert.equal(created.body.activities[0].max_attempts, 5);
    const id = created.body.id;
    const site = await svc.request('GET', `/api/v1/sites/${tenant.slug}/spring`);
    assert.equal(site.status, 404);

    const updated = await svc.request('PATCH', `/api/v1/admin/engagements/${id}`, { key: tenant.apiKey, body: { name: 'Spring 2' } });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.version, 2);
    assert.equal(updated.body.screens.length, 2, 'omitted fields are kept');
    const list = await svc.request('GET', '/api/v1/admin/engagements?status=draft', { key: tenant.apiKey });
    assert.ok(list.body.engagements.some((e: { id: string }) => e.id === id));
    assert.equal((await svc.request('GET', `/api/v1/admin/engagements/${id}`, { key: other.apiKey })).status, 404);
    assert.equal((await svc.request('PATCH', `/api/v1/admin/engagements/${id}`, { key: other.apiKey, body: { name: 'x' } })).status, 404);
    assert.equal((await svc.request('POST', `/api/v1/admin/engagements/${id}/publish`, { key: other.apiKey })).status, 404);

    const published = await svc.request('POST', `/api/v1/admin/engagements/${id}/publish`, { key: tenant.apiKey });
    assert.equal(published.status, 200, published.text);
    assert.equal(published.body.status, 'published');
    assert.equal(published.body.published_version, 2);

    const live = await svc.request('GET', `/api/v1/sites/${tenant.slug}/spring`);
    assert.equal(live.status, 200, live.text);
    assert.equal(live.body.engagement_id, id);
    assert.equal(live.body.name, 'Spring 2');
    assert.deepEqual(live.body.canvas, definition.canvas);
    assert.deepEqual(live.body.components, definition.components);
    assert.deepEqual(live.body.screens[1], { id: 'vip', name: 'VIP room', components: [], gated: true });
    // Never a server secret: no answers, weights, inventories, reward references or actions.
    for (const secret of ['correct_option', 'weight', 'inventory', 'reward_id', 'on_completion', 'secret-reward', 'trigger_rules', 'conditions']) {
      assert.ok(!live.text.includes(secret), `the public definition leaks ${secret}`);
    }
    assert.deepEqual(live.body.activities[0].segments, [
      { index: 0, label: 'Coupon', prize_type: 'reward' },
      { index: 1, label: 'Nothing', prize_type: 'none' },
    ]);
    assert.deepEqual(live.body.activities[1].questions[0], { id: 'q1', text: 'Colour of the sky?', options: ['green', 'blue', 'red'] });

    // Draft edits do not reach the site until published again.
    await svc.request('PATCH', `/api/v1/admin/engagements/${id}`, { key: tenant.apiKey, body: { name: 'Spring 3' } });
    assert.equal((await svc.request('GET', `/api/v1/sites/${tenant.slug}/spring`)).body.name, 'Spring 2');
    const read = await svc.request('GET', `/api/v1/admin/engagements/${id}`, { key: tenant.apiKey });
    assert.equal(read.body.has_unpublished_changes, true);

    // Another tenant's slug with the same site finds nothing; unknown tenants answer alike.
    assert.equal((await svc.request('GET', `/api/v1/sites/${other.slug}/spring`)).status, 404);
    assert.equal((await svc.request('GET', '/api/v1/sites/no-such-tenant/spring')).status, 404);

    const conflicting = await createEngagement(svc, tenant, { site_slug: 'spring' }, false);
    const clash = await svc.request('POST', `/api/v1/admin/engagements/${conflicting.id}/publish`, { key: tenant.apiKey });
    assert.equal(clash.status, 409);

    const embed = await svc.request('GET', `/api/v1/public/engagements/${id}/embed-url`, { key: tenant.apiKey });
    assert.equal(embed.status, 200, embed.text);
    assert.equal(embed.body.embed_url, `https://loyalty.example.com/embed/${tenant.slug}/spring?engagement_id=${id}`);
    assert.equal(embed.body.definition_url, `https://loyalty.example.com/api/v1/sites/${tenant.slug}/spring`);
    assert.equal((await svc.request('GET', `/api/v1/public/engagements/${id}/embed-url`, { key: other.apiKey })).status, 404);

    const unpublished = await svc.request('POST', `/api/v1/admin/engagements/${id}/unpublish`, { key: tenant.apiKey });
    assert.equal(unpublished.body.status, 'draft');
    assert.equal((await svc.request('GET', `/api/v1/sites/${tenant.slug}/spring`)).status, 404);
    assert.equal((await svc.request('POST', `/api/v1/admin/engagements/${id}/unpublish`, { key: tenant.apiKey })).status, 409);
  });

  await t.test('a draft change of site_slug moves the site only at the next publication', async () => {
    const live = await createEngagement(svc, tenant, { name: 'Mover', site_slug: 'mover-a' });
    await createEngagement(svc, tenant, { site_slug: 'mover-taken' });
    const moved = await svc.request('PATCH', `/api/v1/admin/engagements/${live.id}`, { key: tenant.apiKey, body: { site_slug: 'mover-b' } });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.site_slug, 'mover-b');
    assert.equal(moved.body.has_unpublished_changes, true);
    // The published snapshot keeps serving on its own site until published again.
    assert.equal((await svc.request('GET', `/api/v1/sites/${tenant.slug}/mover-a`)).status, 200);
    assert.equal((await svc.request('GET', `/api/v1/sites/${tenant.slug}/mover-b`)).status, 404);
    // A draft may name a site that another published engagement holds; publishing it is the conflict.
    const clash = await svc.request('PATCH', `/api/v1/admin/engagements/${live.id}`, { key: tenant.apiKey, body: { site_slug: 'mover-taken' } });
    assert.equal(clash.status, 200, clash.text);
    const refused = await svc.request('POST', `/api/v1/admin/engagements/${live.id}/publish`, { key: tenant.apiKey });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.body.code, 'SITE_IN_USE');
    assert.match(refused.body.detail, /mover-taken/);
    assert.equal((await svc.request('GET', `/api/v1/sites/${tenant.slug}/mover-a`)).status, 200);
    await svc.request('PATCH', `/api/v1/admin/engagements/${live.id}`, { key: tenant.apiKey, body: { site_slug: 'mover-b' } });
    const republished = await svc.request('POST', `/api/v1/admin/engagements/${live.id}/publish`, { key: tenant.apiKey });
    assert.equal(republished.status, 200, republished.text);
    assert.equal((await svc.request('GET', `/api/v1/sites/${tenant.slug}/mover-b`)).status, 200);
    assert.equal((await svc.request('GET', `/api/v1/sites/${tenant.slug}/mover-a`)).status, 404);
    const embed = await svc.request('GET', `/api/v1/public/engagements/${live.id}/embed-url`, { key: tenant.apiKey });
    assert.equal(embed.body.site_slug, 'mover-b');
  });

  await t.test('invalid definitions are refused with a detail saying what is wrong', async () => {
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ screens: [{ id: 'a' }, { id: 'a' }] }, 400, /repeat the id "a"/],
      [{ screens: [{ id: 'a', gate: { conditions: ['be_nice'] } }] }, 400, /unknown condition "be_nice"/],
      [{ screens: [{ id: 'a', gate: { conditions: ['screen_visited:zzz'] } }] }, 400, /screen this engagement does not have/],
      [{ activities: [{ ...QUIZ, questions: [{ id: 'q', text: 't', options: ['a', 'b'], correct_option: 2 }] }] }, 400, /outside its 2 options/],
      [{ activities: [wheel({ segments: [{ label: 'x', prize_type: 'points', weight: 1 }, { label: 'y', prize_type: 'none', weight: 1 }] })] }, 400, /needs prize_value/],
      [{ activities: [wheel({ segments: [{ label: 'x', prize_type: 'none', weight: 0 }, { label: 'y', prize_type: 'none', weight: 1 }] })] }, 400, /weight/],
      [{ activities: [wheel({ on_completion: [{ type: 'award_points' }] })] }, 400, /needs amount/],
      [{ activities: [wheel({ on_completion: [{ type: 'award_reward', reward_id: 'ghost' }] })] }, 422, /not in the reward catalogue/],
      [{ activities: [{ id: 'w', type: 'spin_wheel' }] }, 400, /needs segments/],
      [{ trigger_rules: { starts_at: '2026-02-01T00:00:00Z', ends_at: '2026-01-01T00:00:00Z' } }, 400, /before/],
      [{ site_slug: 'Not A Slug' }, 400, /site_slug/],
      [{ tenant_id: other.tenantId }, 400, /not allowed/],
    ];
    for (const [patch, status, detail] of cases) {
      const response = await svc.request('POST', '/api/v1/admin/engagements', { key: tenant.apiKey, body: { name: 'Bad', site_slug: 'bad', ...patch } });
      assert.equal(response.status, status, `${JSON.stringify(patch)}: ${response.text}`);
      assert.match(response.body.detail, detail);
    }
    const count = await svc.sql("SELECT count(*)::int AS n FROM engagements WHERE tenant_id = $1 AND site_slug = 'bad'", [tenant.tenantId]);
    assert.equal(count[0].n, 0);
  });

  await t.test('the plan limits how many engagements are published at a time', async () => {
    const starter = await svc.createTenant({ plan: 'starter' });
    for (let i = 0; i < 3; i++) await createEngagement(svc, starter, { site_slug: `s${i}` });
    const fourth = await createEngagement(svc, starter, { site_slug: 's4' }, false);
    const refused = await svc.request('POST', `/api/v1/admin/engagements/${fourth.id}/publish`, { key: starter.apiKey });
    assert.equal(refused.status, 422);
    assert.equal(refused.body.code, 'PLAN_QUOTA_EXCEEDED');
  });

  await t.test('concurrent publications stay within the plan quota', async () => {
    const starter = await svc.createTenant({ plan: 'starter' });
    const drafts = await Promise.all(Array.from({ length: 12 }, (_, i) => createEngagement(svc, starter, { site_slug: `race-${i}` }, false)));
    const responses = await Promise.all(drafts.map((d) => svc.request('POST', `/api/v1/admin/engagements/${d.id}/publish`, { key: starter.apiKey })));
    assert.equal(responses.filter((r) => r.status === 200).length, 3, JSON.stringify(responses.map((r) => r.status)));
    assert.ok(responses.filter((r) => r.status !== 200).every((r) => r.status === 422 && r.body.code === 'PLAN_QUOTA_EXCEEDED'));
    const published = await svc.sql("SELECT count(*)::int AS n FROM engagements WHERE tenant_id = $1 AND status = 'published'", [starter.tenantId]);
    assert.equal(published[0].n, 3);
  });

  await t.test('eligibility evaluates URL, time window, frequency cap and attributes; impressions feed the cap', async () => {
    const now = clock.nowMs();
    const engagement = await createEngagement(svc, tenant, {
      trigger_rules: {
        url_patterns: ['https://shop.example.com/products/*'],
        starts_at: new Date(now - 3_600_000).toISOString(),
        ends_at: new Date(now + 3_600_000).toISOString(),
        frequency_cap: { max_impressions: 2, period: 'day' },
        participant_attributes: [
          { attribute: 'country', operator: 'in', value: ['DE', 'AT'] },
          { attribute: 'orders', operator: 'gte', value: 1 },
        ],
      },
    });
    const query = (extra: string) => `/api/v1/public/eligibility?engagement_id=${engagement.id}&${extra}`;
    const good = `url=${encodeURIComponent('https://shop.example.com/products/42')}&participant_id=ann&attributes=${encodeURIComponent('{"country":"DE","orders":3}')}`;
    let response = await svc.request('GET', query(good), { key: tenant.apiKey });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.eligible, true);
    assert.deepEqual(response.body.rules.map((r: { rule: string }) => r.rule), ['published', 'url', 'time_window', 'frequency_cap', 'participant_attributes']);
    assert.equal(response.body.max_impressions, 2);

    response = await svc.request('GET', query(`url=${encodeURIComponent('https://shop.example.com/cart')}&participant_id=ann&attributes=${encodeURIComponent('{"country":"DE","orders":3}')}`), { key: tenant.apiKey });
    assert.equal(response.body.eligible, false);
    assert.equal(response.body.rules.find((r: { rule: string }) => r.rule === 'url').passed, false);
    response = await svc.request('GET', query(`url=${encodeURIComponent('https://shop.example.com/products/1')}&participant_id=ann&attributes=${encodeURIComponent('{"country":"FR","orders":3}')}`), { key: tenant.apiKey });
    assert.equal(response.body.eligible, false);

    for (let i = 0; i < 2; i++) {
      const impression = await svc.request('POST', '/api/v1/public/impressions', { key: tenant.apiKey, body: { engagement_id: engagement.id, participant_id: 'ann', url: 'https://shop.example.com/products/42' } });
      assert.equal(impression.status, 201, impression.text);
      assert.equal(impression.body.impressions_used, i + 1);
    }
    response = await svc.request('GET', query(good), { key: tenant.apiKey });
    assert.equal(response.body.eligible, false);
    assert.equal(response.body.impressions_used, 2);
    clock.advance(86_400_000 + 1000);
    // A day later the cap resets, but the time window has closed.
    response = await svc.request('GET', query(good), { key: tenant.apiKey });
    assert.equal(response.body.impressions_used, 0);
    assert.equal(response.body.rules.find((r: { rule: string }) => r.rule === 'time_window').passed, false);
    assert.equal(response.body.eligible, false);

    assert.equal((await svc.request('GET', query('attributes=not-json'), { key: tenant.apiKey })).status, 400);
    assert.equal((await svc.request('GET', query('participant_id=a&visitor_id=b'), { key: tenant.apiKey })).status, 400);
    assert.equal((await svc.request('GET', `/api/v1/public/eligibility?engagement_id=${engagement.id}`, { key: other.apiKey })).status, 404);
    assert.equal((await svc.request('GET', `/api/v1/public/eligibility?engagement_id=${engagement.id}`)).status, 401);
    assert.equal((await svc.request('POST', '/api/v1/public/impressions', { key: tenant.apiKey, body: { engagement_id: engagement.id } })).status, 400);
    const draft = await createEngagement(svc, tenant, {}, false);
    assert.equal((await svc.request('POST', '/api/v1/public/impressions', { key: tenant.apiKey, body: { engagement_id: draft.id, visitor_id: 'v' } })).status, 422);
  });

  await t.test('anonymous visitors get a session only where the engagement allows it', async () => {
    const open = await createEngagement(svc, tenant, { site_slug: 'open-door', allow_anonymous_sessions: true, activities: [wheel()] });
    const closed = await createEngagement(svc, tenant, { site_slug: 'closed-door' });
    const issued = await svc.request('POST', `/api/v1/sites/${tenant.slug}/open-door/sessions`, { body: {} });
    assert.equal(issued.status, 201, issued.text);
    assert.match(issued.body.participant_id, /^anon_/);
    assert.equal(issued.body.engagement_id, open.id);
    const spin = await svc.request('POST', '/api/v1/activities/wheel1/validate', { body: { session_id: issued.body.session_id, engagement_id: open.id, activity_type: 'spin_wheel' } });
    assert.equal(spin.status, 200, spin.text);
    const refused = await svc.request('POST', `/api/v1/sites/${tenant.slug}/closed-door/sessions`, { body: {} });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'ANONYMOUS_SESSIONS_DISABLED');
    assert.ok(closed.id);
    // Sessions for engagements that do not exist are refused.
    const ghost = await svc.request('POST', '/api/v1/sessions', { key: tenant.apiKey, body: { participant_id: 'p', engagement_id: '00000000-0000-4000-8000-000000000000' } });
    assert.equal(ghost.status, 404);
    const foreign = await svc.request('POST', '/api/v1/sessions', { key: other.apiKey, body: { participant_id: 'p', engagement_id: open.id } });
    assert.equal(foreign.status, 404);
  });
});
