import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { grantPoints, startTestService, type TestResponse, type TestService, type TestTenant } from './helper.js';
import { createEngagement } from '../src/modules/engagements/testing.js';

/**
 * Every public and participant-facing route of the interface, called as a new
 * integrator would: with exactly the parameters the interface documents, and
 * nothing else (no key, no session unless documented, no X-Service-Tenant).
 * Where the documented parameters name no tenant, the answer says which
 * parameter to add.
 */

const HOUR_MS = 3_600_000;

function assertOk(response: TestResponse, status = 200): void {
  assert.equal(response.status, status, response.text);
}

function assertError(response: TestResponse, status: number, code: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.code, code, response.text);
  assert.equal(response.body.error_version, 1);
  assert.equal(typeof response.body.detail, 'string');
}

async function publishedEngagement(svc: TestService, tenant: TestTenant) {
  return createEngagement(svc, tenant, { screens: [{ id: 'home', components: [] }], allow_anonymous_sessions: true });
}

async function leaderboard(svc: TestService, tenant: TestTenant, code: string, engagementId: string | null = null) {
  const created = await svc.request('POST', '/api/v1/admin/leaderboards', {
    key: tenant.apiKey,
    body: { leaderboard_code: code, name: `Board ${code}`, metric: 'lifetime_points', ...(engagementId ? { engagement_id: engagementId } : {}) },
  });
  assertOk(created, 201);
}

async function activeChallenge(svc: TestService, tenant: TestTenant): Promise<string> {
  const now = Date.now();
  const created = await svc.request('POST', '/api/v1/admin/challenges', {
    key: tenant.apiKey,
    body: {
      name: 'Spring',
      starts_at: new Date(now - HOUR_MS).toISOString(),
      ends_at: new Date(now + 24 * HOUR_MS).toISOString(),
      status: 'active',
      objectives: [{ id: 'buy', name: 'Buy', evaluator: 'event_count', event_name: 'purchase', target: 2 }],
      milestones: [],
    },
  });
  assertOk(created, 201);
  return created.body.id;
}

test('public routes answer a request that carries exactly the documented parameters', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const engagement = await publishedEngagement(svc, tenant);
  const engagementId: string = engagement.id;
  const siteSlug: string = engagement.site_slug;
  const participant = await svc.createSession(tenant, { engagementId, participantId: 'alice' });
  const session = participant.sessionId;
  assertOk(await grantPoints(svc, tenant, 'alice', 40));
  assertOk(await grantPoints(svc, tenant, 'bob', 70));
  await leaderboard(svc, tenant, 'all-time');
  const challengeId = await activeChallenge(svc, tenant);

  await t.test('GET /public/leaderboards/{code} with engagement_id alone (issue 16, item 6)', async () => {
    const board = await svc.request('GET', `/api/v1/public/leaderboards/all-time?engagement_id=${engagementId}`);
    assertOk(board);
    assert.deepEqual(board.body.entries.map((e: { participant_id: string; rank: number }) => [e.rank, e.participant_id]), [[1, 'bob'], [2, 'alice']]);
    assert.equal(board.body.me, null);
    // The optional documented parameters: limit, and session_id, which highlights the caller.
    const mine = await svc.request('GET', `/api/v1/public/leaderboards/all-time?engagement_id=${engagementId}&limit=1&session_id=${session}`);
    assertOk(mine);
    assert.equal(mine.body.entries.length, 1);
    assert.deepEqual([mine.body.me.rank, mine.body.me.participant_id, mine.body.me.is_me], [2, 'alice', true]);
  });

  await t.test('GET /public/challenges/{id}/leaderboard with limit alone: the challenge names its tenant', async () => {
    const board = await svc.request('GET', `/api/v1/public/challenges/${challengeId}/leaderboard?limit=5`);
    assertOk(board);
    assert.equal(board.body.challenge_id, challengeId);
    assert.equal(board.body.total_participants, 0);
    assertOk(await svc.request('GET', `/api/v1/public/challenges/${challengeId}/leaderboard`));
  });

  await t.test('session routes under /public with session_id and engagement_id', async () => {
    const both = `engagement_id=${engagementId}&session_id=${session}`;
    const badges = await svc.request('GET', `/api/v1/public/badges/status?${both}`);
    assertOk(badges);
    assert.ok(Array.isArray(badges.body.badges));
    const challenges = await svc.request('GET', `/api/v1/public/challenges?${both}`);
    assertOk(challenges);
    assert.deepEqual(challenges.body.challenges.map((c: { id: string }) => c.id), [challengeId]);
    assertOk(await svc.request('POST', `/api/v1/public/challenges/${challengeId}/enroll`, { body: { session_id: session, engagement_id: engagementId } }), 201);
    const progress = await svc.request('GET', `/api/v1/public/challenges/${challengeId}/progress?session_id=${session}&engagement_id=${engagementId}`);
    assertOk(progress);
    assert.equal(progress.body.challenge_id, challengeId);
    const rewards = await svc.request('GET', `/api/v1/public/rewards/claimed?${both}`);
    assertOk(rewards);
    assert.deepEqual(rewards.body.rewards, []);
  });

  await t.test('other participant-facing session routes: points, gates', async () => {
    const balance = await svc.request('POST', '/api/v1/points/balance', { body: { session_id: session, engagement_id: engagementId } });
    assertOk(balance);
    assert.equal(balance.body.available_points, 40);
    assertOk(await svc.request('POST', '/api/v1/points/transactions', { body: { session_id: session, engagement_id: engagementId, limit: 10, offset: 0 } }));
    const gates = await svc.request('POST', '/api/v1/runtime/gates/check', { body: { session_id: session, engagement_id: engagementId, targets: ['home'] } });
    assertOk(gates);
    assert.equal(gates.body.gates.home.locked, false);
  });

  await t.test('GET /sites/{tenantSlug}/{siteSlug} and its anonymous sessions: the slugs name the tenant', async () => {
    const site = await svc.request('GET', `/api/v1/sites/${tenant.slug}/${siteSlug}`);
    assertOk(site);
    assert.equal(site.body.engagement_id, engagementId);
    assertOk(await svc.request('POST', `/api/v1/sites/${tenant.slug}/${siteSlug}/sessions`, { body: {} }), 201);
  });

  await t.test('referrals: validate and convert need nothing but the code (it names its tenant)', async () => {
    const generated = await svc.request('POST', '/api/v1/referrals/generate', { key: tenant.apiKey, body: { participant_id: 'alice', campaign_id: randomUUID() } });
    assertOk(generated);
    const validated = await svc.request('GET', `/api/v1/referrals/validate/${generated.body.code}`);
    assertOk(validated);
    assert.equal(validated.body.valid, true);
    const referred = await svc.createSession(tenant, { engagementId, participantId: 'carol' });
    const converted = await svc.request('POST', '/api/v1/referrals/convert', { body: { code: generated.body.code, referred_session_id: referred.sessionId } });
    assertOk(converted);
    assert.equal(converted.body.referrer_id, 'alice');
  });

  await t.test('the event catalog and the embed routes need no tenant parameter', async () => {
    const catalog = await svc.request('GET', '/.well-known/events.json');
    assertOk(catalog);
    const page = await svc.request('GET', `/embed/${tenant.slug}/${siteSlug}?engagement_id=${engagementId}`);
    assertOk(page);
    assert.match(page.headers.get('content-type') ?? '', /text\/html/);
    assertOk(await svc.request('GET', '/embed/assets/runtime.js'));
    assertOk(await svc.request('GET', '/embed/assets/runtime.css'));
  });

  await t.test('the key routes under /public: eligibility, impressions, embed-url with the key they document', async () => {
    const eligibility = await svc.request('GET', `/api/v1/public/eligibility?engagement_id=${engagementId}&visitor_id=v1`, { key: tenant.apiKey });
    assertOk(eligibility);
    assertOk(await svc.request('POST', '/api/v1/public/impressions', { key: tenant.apiKey, body: { engagement_id: engagementId, visitor_id: 'v1' } }), 201);
    const embed = await svc.request('GET', `/api/v1/public/engagements/${engagementId}/embed-url`, { key: tenant.apiKey });
    assertOk(embed);
    assert.match(embed.body.embed_url, new RegExp(`/embed/${tenant.slug}/${siteSlug}\\?engagement_id=${engagementId}`));
    // Without the documented key the answer names it.
    const keyless = await svc.request('GET', `/api/v1/public/engagements/${engagementId}/embed-url`);
    assertError(keyless, 401, 'AUTH_UNAUTHENTICATED');
    assert.match(keyless.body.detail, /X-API-Key/);
  });

  await t.test('participant routes whose documented parameters name no tenant say which parameter to add', async () => {
    for (const path of ['/api/v1/contests/active', `/api/v1/contests/c1/prizes`, `/api/v1/contests/c1/leaderboard/public?limit=5`]) {
      const response = await svc.request('GET', path);
      assertError(response, 401, 'AUTH_UNAUTHENTICATED');
      assert.match(response.body.detail, /session_id/, path);
      assert.match(response.body.detail, /POST \/api\/v1\/sessions/, path);
    }
  });
});

test('the public progression leaderboard refuses what does not belong together, in the standard error shape', async (t) => {
  const svc = await startTestService(t);
  const tenantA = await svc.createTenant();
  const tenantB = await svc.createTenant();
  const engagementA: string = (await publishedEngagement(svc, tenantA)).id;
  const engagementB: string = (await publishedEngagement(svc, tenantB)).id;
  assertOk(await grantPoints(svc, tenantA, 'a-secret', 99));
  await leaderboard(svc, tenantA, 'shared-code');
  await leaderboard(svc, tenantB, 'shared-code');
  const sessionB = (await svc.createSession(tenantB, { engagementId: engagementB })).sessionId;
  const read = (engagementId: string, options: { query?: string; key?: string; headers?: Record<string, string> } = {}) =>
    svc.request('GET', `/api/v1/public/leaderboards/shared-code?engagement_id=${engagementId}${options.query ?? ''}`, options);

  await t.test('unknown and unpublished engagements are a 404 ENGAGEMENT_NOT_FOUND', async () => {
    assertError(await read(randomUUID()), 404, 'ENGAGEMENT_NOT_FOUND');
    const draft = await createEngagement(svc, tenantA, {}, false);
    assertError(await read(draft.id), 404, 'ENGAGEMENT_NOT_FOUND');
    // Unpublishing takes effect at once, although the tenant of an engagement is cached.
    const live = await publishedEngagement(svc, tenantA);
    assertOk(await read(live.id));
    assertOk(await svc.request('POST', `/api/v1/admin/engagements/${live.id}/unpublish`, { key: tenantA.apiKey }));
    assertError(await read(live.id), 404, 'ENGAGEMENT_NOT_FOUND');
    // The tenant's own server may read the boards of its draft engagements, as its sessions may.
    assertOk(await read(draft.id, { key: tenantA.apiKey }));
    assertError(await svc.request('GET', '/api/v1/public/leaderboards/shared-code'), 400, 'VALIDATION_INVALID_REQUEST');
  });

  await t.test("tenant A's engagement with tenant B's session, key or X-Service-Tenant is refused and shows nothing of A", async () => {
    const withSession = await read(engagementA, { query: `&session_id=${sessionB}` });
    assertError(withSession, 403, 'SESSION_ENGAGEMENT_MISMATCH');
    for (const header of [tenantB.slug, tenantB.tenantId]) {
      const response = await read(engagementA, { headers: { 'x-service-tenant': header } });
      assertError(response, 404, 'ENGAGEMENT_NOT_FOUND');
      assert.doesNotMatch(response.text, /a-secret/);
    }
    const withKey = await read(engagementA, { key: tenantB.apiKey });
    assertError(withKey, 404, 'ENGAGEMENT_NOT_FOUND');
    assert.doesNotMatch(withKey.text, /a-secret/);
    assertError(await read(engagementA, { key: tenantA.apiKey, headers: { 'x-service-tenant': tenantB.slug } }), 403, 'AUTH_TENANT_MISMATCH');
    // The same requests with the right tenant do read A's board.
    const own = await read(engagementA, { headers: { 'x-service-tenant': tenantA.slug } });
    assertOk(own);
    assert.equal(own.body.entries[0].participant_id, 'a-secret');
    // And B's engagement reads B's board of the same code, not A's.
    const other = await read(engagementB);
    assertOk(other);
    assert.equal(other.body.total_participants, 0);
  });

  await t.test('the challenge leaderboard: unknown and draft challenges are a 404 without a credential too', async () => {
    assertError(await svc.request('GET', `/api/v1/public/challenges/${randomUUID()}/leaderboard`), 404, 'RESOURCE_NOT_FOUND');
    const draft = await svc.request('POST', '/api/v1/admin/challenges', {
      key: tenantA.apiKey,
      body: { name: 'Draft', starts_at: new Date().toISOString(), ends_at: new Date(Date.now() + HOUR_MS).toISOString(), objectives: [{ id: 'o', name: 'O', evaluator: 'event_count', event_name: 'x', target: 1 }], milestones: [] },
    });
    assertOk(draft, 201);
    assertError(await svc.request('GET', `/api/v1/public/challenges/${draft.body.id}/leaderboard`), 404, 'RESOURCE_NOT_FOUND');
    const active = await activeChallenge(svc, tenantA);
    assertError(await svc.request('GET', `/api/v1/public/challenges/${active}/leaderboard`, { headers: { 'x-service-tenant': tenantB.slug } }), 404, 'RESOURCE_NOT_FOUND');
  });
});

test("a public read resolved through engagement_id counts against that tenant's public rate limit", async (t) => {
  const svc = await startTestService(t);
  const PUBLIC_LIMIT = 6;
  const limited = await svc.createTenant({ requestsPerMinute: PUBLIC_LIMIT });
  const other = await svc.createTenant({ requestsPerMinute: PUBLIC_LIMIT });
  // Two keyed requests each (publish, define the board): counted in the keyed tenant scope, not the public one.
  const limitedEngagement = (await publishedEngagement(svc, limited)).id;
  const otherEngagement = (await publishedEngagement(svc, other)).id;
  await leaderboard(svc, limited, 'board');
  await leaderboard(svc, other, 'board');
  const read = (engagementId: string) => svc.request('GET', `/api/v1/public/leaderboards/board?engagement_id=${engagementId}`);

  for (let i = 1; i <= PUBLIC_LIMIT; i++) {
    const response = await read(limitedEngagement);
    assertOk(response);
    assert.equal(response.headers.get('x-ratelimit-limit'), String(PUBLIC_LIMIT));
    assert.equal(response.headers.get('x-ratelimit-remaining'), String(PUBLIC_LIMIT - i));
  }
  const refused = await read(limitedEngagement);
  assertError(refused, 429, 'RATE_LIMITED');
  assert.match(refused.body.detail, new RegExp(`tenant-public: ${PUBLIC_LIMIT} requests`));
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  // The same tenant's challenge leaderboard shares the counter; another tenant has its own.
  assertError(await svc.request('GET', `/api/v1/public/challenges/${await activeChallenge(svc, limited)}/leaderboard`), 429, 'RATE_LIMITED');
  const unaffected = await read(otherEngagement);
  assertOk(unaffected);
  assert.equal(unaffected.headers.get('x-ratelimit-remaining'), String(PUBLIC_LIMIT - 1));
  // An unknown engagement names no tenant, so it is counted per address only.
  assertError(await read(randomUUID()), 404, 'ENGAGEMENT_NOT_FOUND');
});
