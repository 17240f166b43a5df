import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { parseCrontab } from 'graphile-worker';
import { grantPoints, participantSession, startTestService } from '../../../test/helper.js';
import { clock } from '../../platform/clock.js';
import leaderboardsModule from './index.js';
import { READ_CACHE_TTL_MS, readCacheControl } from './read-cache.js';
import { loadConfig } from '../../config.js';

test('the crontab lines parse and name tasks of the module', () => {
  for (const item of parseCrontab((leaderboardsModule.crontab ?? []).join('\n'))) assert.ok(leaderboardsModule.tasks?.[item.task], item.task);
});

test('progression leaderboards', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const engagementId = randomUUID();
  t.after(() => clock.reset());
  const create = (body: Record<string, unknown>, key = tenant.apiKey) => svc.request('POST', '/api/v1/admin/leaderboards', { key, body });
  const read = (code: string, query: string, options: { key?: string; headers?: Record<string, string> } = { key: tenant.apiKey }) =>
    svc.request('GET', `/api/v1/public/leaderboards/${code}?engagement_id=${engagementId}${query}`, options);

  await t.test('definitions: validation, duplicates, scope and tenants', async () => {
    assert.equal((await create({ leaderboard_code: 'weekly', name: 'Weekly', metric: 'period_points' })).status, 400);
    assert.equal((await create({ leaderboard_code: 'life', name: 'Life', metric: 'lifetime_points', period: 'weekly' })).status, 400);
    assert.equal((await create({ leaderboard_code: 'Bad Code', name: 'x', metric: 'lifetime_points' })).status, 400);
    assert.equal((await create({ leaderboard_code: 'x', name: 'x', metric: 'lifetime_points', refresh_seconds: 0 })).status, 400);
    const created = await create({ leaderboard_code: 'all-time', name: 'All time', metric: 'lifetime_points' });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.refresh_seconds, 30);
    assert.ok(created.body.last_refreshed_at);
    const duplicate = await create({ leaderboard_code: 'all-time', name: 'Again', metric: 'lifetime_points' });
    assert.equal(duplicate.status, 409);
    assert.equal((await svc.request('GET', '/api/v1/admin/leaderboards/all-time', { key: other.apiKey })).status, 404);
    assert.equal((await svc.request('POST', '/api/v1/admin/leaderboards/all-time/refresh', { key: other.apiKey })).status, 404);
    const jwt = await svc.login(tenant);
    const ingest = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'ingest', scopes: ['ingest'] } });
    assert.equal((await create({ leaderboard_code: 'nope', name: 'x', metric: 'lifetime_points' }, ingest.body.key)).status, 403);
    const queued = await svc.sql(
      `SELECT j.key FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks k ON k.id = j.task_id WHERE k.identifier = 'leaderboards.refresh'`,
    );
    assert.ok(queued.some((j) => j.key === `leaderboards.refresh:${tenant.tenantId}:${created.body.id}`));
  });

  await t.test('lifetime ranking: order, ties, limits, me outside the top, around me', async () => {
    const names: string[] = [];
    for (let i = 1; i <= 12; i++) {
      const participant = `p${String(i).padStart(2, '0')}`;
      names.push(participant);
      await participantSession(svc, tenant, participant, engagementId, `Player ${i}`);
      clock.advance(1000);
      // p01 gets 10, p02 20, … p12 120; p05 and p06 then tie at 60 below.
      assert.equal((await grantPoints(svc, tenant, participant, i === 5 ? 60 : i * 10)).status, 200);
    }
    const before = await read('all-time', '');
    assert.equal(before.body.total_participants, 0, 'the ranking waits for its refresh');
    assert.equal((await svc.request('POST', '/api/v1/admin/leaderboards/all-time/refresh', { key: tenant.apiKey })).status, 200);

    const board = await read('all-time', '');
    assert.equal(board.status, 200, board.text);
    assert.equal(board.body.total_participants, 12);
    assert.equal(board.body.entries.length, 10);
    assert.deepEqual(board.body.entries.slice(0, 3).map((e: { rank: number; participant_id: string; score: number }) => [e.rank, e.participant_id, e.score]), [
      [1, 'p12', 120],
      [2, 'p11', 110],
      [3, 'p10', 100],
    ]);
    // p05 reached 60 before p06 did, so it ranks higher.
    const tied = board.body.entries.filter((e: { score: number }) => e.score === 60).map((e: { participant_id: string; rank: number }) => [e.rank, e.participant_id]);
    assert.deepEqual(tied, [[7, 'p05'], [8, 'p06']]);
    assert.equal(board.body.entries[0].display_name, 'Player 12');
    assert.equal(board.body.entries[0].avatar_url, null);
    assert.equal(board.body.me, null);
    assert.equal(board.body.period, null);
    assert.equal(board.body.next_reset_at, null);
    assert.ok(board.body.updated_at);

    assert.equal((await read('all-time', '&limit=100')).body.entries.length, 12);
    for (const bad of ['&limit=0', '&limit=101', '&limit=x', '&around=26']) assert.equal((await read('all-time', bad)).status, 400, bad);
    assert.equal((await svc.request('GET', '/api/v1/public/leaderboards/all-time', { key: tenant.apiKey })).status, 400, 'engagement_id is required');
    assert.equal((await read('no-such-board', '')).status, 404);

    const lowest = await participantSession(svc, tenant, 'p01', engagementId);
    const mine = await read('all-time', `&limit=3&session_id=${lowest}&around=1`, {});
    assert.equal(mine.status, 200, mine.text);
    assert.deepEqual([mine.body.me.rank, mine.body.me.participant_id, mine.body.me.is_me], [12, 'p01', true]);
    assert.deepEqual(mine.body.around_me.map((e: { rank: number }) => e.rank), [11, 12]);
    assert.equal(mine.body.entries.length, 3);
    const outsider = await participantSession(svc, tenant, 'newcomer', engagementId, 'New');
    const unranked = await read('all-time', `&session_id=${outsider}`, {});
    assert.deepEqual([unranked.body.me.rank, unranked.body.me.score, unranked.body.me.display_name], [null, 0, 'New']);
    assert.equal((await read('all-time', '&around=2')).status, 400, 'around needs a session');
  });

  await t.test('the tenant reads the standings of any of its boards without an engagement; another tenant gets a 404', async () => {
    const standings = await svc.request('GET', '/api/v1/admin/leaderboards/all-time/standings?limit=3', { key: tenant.apiKey });
    assert.equal(standings.status, 200, standings.text);
    assert.equal(standings.body.total_participants, 12);
    assert.deepEqual(standings.body.entries.map((e: { participant_id: string }) => e.participant_id), ['p12', 'p11', 'p10']);
    assert.equal(standings.body.me, null);
    const scoped = await create({ leaderboard_code: 'any-scope', name: 'Scoped', metric: 'lifetime_points', engagement_id: randomUUID() });
    assert.equal(scoped.status, 201, scoped.text);
    assert.equal((await svc.request('GET', '/api/v1/admin/leaderboards/any-scope/standings', { key: tenant.apiKey })).status, 200);
    assert.equal((await svc.request('GET', '/api/v1/admin/leaderboards/all-time/standings', { key: other.apiKey })).status, 404);
    assert.equal((await svc.request('GET', '/api/v1/admin/leaderboards/all-time/standings?limit=101', { key: tenant.apiKey })).status, 400);
    assert.equal((await svc.request('DELETE', '/api/v1/admin/leaderboards/any-scope', { key: tenant.apiKey })).status, 200);
  });

  await t.test('the tenant of the public read: engagement_id alone once published; a key, X-Service-Tenant or session must agree with it', async () => {
    // A draft engagement: its tenant's key may read the board, nobody else.
    assert.equal((await read('all-time', '', {})).body.code, 'ENGAGEMENT_NOT_FOUND');
    assert.equal((await read('all-time', '', { headers: { 'x-service-tenant': tenant.slug } })).status, 404);
    assert.equal((await svc.request('POST', `/api/v1/admin/engagements/${engagementId}/publish`, { key: tenant.apiKey })).status, 200);
    const documented = await read('all-time', '', {});
    assert.equal(documented.status, 200, documented.text);
    assert.equal(documented.body.total_participants, 12);
    assert.equal((await read('all-time', '', { headers: { 'x-service-tenant': tenant.slug } })).body.total_participants, 12);
    assert.equal((await read('all-time', '', { headers: { 'x-service-tenant': tenant.tenantId } })).body.total_participants, 12);
    assert.equal((await read('all-time', '', { key: other.apiKey })).body.code, 'ENGAGEMENT_NOT_FOUND');
    assert.equal((await read('all-time', '', { headers: { 'x-service-tenant': other.slug } })).body.code, 'ENGAGEMENT_NOT_FOUND');
    const foreignSession = await participantSession(svc, other, 'x', engagementId);
    assert.equal((await read('all-time', `&session_id=${foreignSession}`, {})).status, 404);
    const wrongEngagement = await participantSession(svc, tenant, 'p02', randomUUID());
    assert.equal((await read('all-time', `&session_id=${wrongEngagement}`, {})).status, 403);
  });

  await t.test('an engagement-scoped board is readable with its engagement only; archived boards are gone', async () => {
    const scoped = await create({ leaderboard_code: 'scoped', name: 'Scoped', metric: 'lifetime_points', engagement_id: await svc.createEngagement(tenant) });
    assert.equal(scoped.status, 201);
    assert.equal((await read('scoped', '')).status, 404);
    assert.equal((await svc.request('GET', `/api/v1/public/leaderboards/scoped?engagement_id=${scoped.body.engagement_id}`, { key: tenant.apiKey })).status, 200);
    assert.equal((await svc.request('DELETE', '/api/v1/admin/leaderboards/scoped', { key: tenant.apiKey })).body.status, 'archived');
    assert.equal((await svc.request('GET', `/api/v1/public/leaderboards/scoped?engagement_id=${scoped.body.engagement_id}`, { key: tenant.apiKey })).status, 404);
  });

  await t.test('weekly periods reset at Monday 00:00 in the tenant time zone; past periods stay readable', async () => {
    const zoned = await svc.createTenant();
    await svc.sql(`UPDATE tenants SET timezone = 'Europe/Berlin' WHERE id = $1`, [zoned.tenantId]);
    const zonedEngagement = await svc.createEngagement(zoned);
    const readZoned = (code: string, query: string) =>
      svc.request('GET', `/api/v1/public/leaderboards/${code}?engagement_id=${zonedEngagement}${query}`, { key: zoned.apiKey });
    // Sunday 22 November 2026, 23:30 in Berlin (22:30 UTC).
    clock.freeze(Date.parse('2026-11-22T22:30:00Z'));
    const created = await create({ leaderboard_code: 'weekly', name: 'This week', metric: 'period_points', period: 'weekly' }, zoned.apiKey);
    assert.equal(created.status, 201, created.text);
    assert.equal((await grantPoints(svc, zoned, 'early', 50)).status, 200);
    assert.equal((await grantPoints(svc, zoned, 'early', 25)).status, 200);
    assert.equal((await grantPoints(svc, zoned, 'both', 10)).status, 200);
    await svc.request('POST', '/api/v1/admin/leaderboards/weekly/refresh', { key: zoned.apiKey });
    const sunday = await readZoned('weekly', '');
    assert.equal(sunday.body.period_start, '2026-11-16');
    assert.equal(sunday.body.next_reset_at, '2026-11-22T23:00:00.000Z');
    assert.deepEqual(sunday.body.entries.map((e: { participant_id: string; score: number }) => [e.participant_id, e.score]), [['early', 75], ['both', 10]]);

    clock.advance(3600_000); // Monday 00:30 in Berlin: a new week
    assert.equal((await grantPoints(svc, zoned, 'both', 5)).status, 200);
    assert.equal((await grantPoints(svc, zoned, 'late', 7)).status, 200);
    await svc.request('POST', '/api/v1/admin/leaderboards/weekly/refresh', { key: zoned.apiKey });
    const monday = await readZoned('weekly', '');
    assert.equal(monday.body.period_start, '2026-11-23');
    assert.equal(monday.body.next_reset_at, '2026-11-29T23:00:00.000Z');
    assert.equal(monday.body.final, false);
    assert.deepEqual(monday.body.entries.map((e: { participant_id: string; score: number }) => [e.participant_id, e.score]), [['late', 7], ['both', 5]]);

    const past = await readZoned('weekly', '&period_start=2026-11-16');
    assert.equal(past.status, 200, past.text);
    assert.equal(past.body.final, true);
    assert.equal(past.body.period_ends_at, '2026-11-22T23:00:00.000Z');
    assert.deepEqual(past.body.entries.map((e: { participant_id: string; score: number }) => [e.participant_id, e.score]), [['early', 75], ['both', 10]]);
    assert.equal((await readZoned('weekly', '&period_start=2026-11-17')).status, 400);
    assert.equal((await readZoned('weekly', '&period_start=2026-11-30')).status, 400);
    assert.equal((await readZoned('weekly', '&period_start=2026-13-01')).status, 400);
    assert.equal((await read('all-time', '&period_start=2026-11-16')).status, 400);

    // Lifetime keeps counting across the reset.
    await create({ leaderboard_code: 'life', name: 'Life', metric: 'lifetime_points' }, zoned.apiKey);
    const life = await readZoned('life', '');
    assert.deepEqual(life.body.entries.map((e: { participant_id: string; score: number }) => [e.participant_id, e.score]), [['early', 75], ['both', 15], ['late', 7]]);
    clock.reset();
  });

  await t.test('concurrent refreshes of one board all succeed and leave one generation', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => svc.request('POST', '/api/v1/admin/leaderboards/all-time/refresh', { key: tenant.apiKey })));
    for (const r of results) assert.equal(r.status, 200, r.text);
    const generations = await svc.sql(`SELECT DISTINCT generation FROM (SELECT tenant_id, leaderboard_id, generation FROM leaderboard_rank_pages UNION ALL SELECT tenant_id, leaderboard_id, generation FROM leaderboard_rank_lookup) r JOIN leaderboards l ON l.id = r.leaderboard_id WHERE l.leaderboard_code = 'all-time' AND l.tenant_id = $1`, [tenant.tenantId]);
    assert.equal(generations.length, 1);
  });
});

test('the refresh job keeps a board fresh on its interval', async (t) => {
  const svc = await startTestService(t, { jobs: true });
  const tenant = await svc.createTenant();
  const engagementId = await svc.createEngagement(tenant);
  const created = await svc.request('POST', '/api/v1/admin/leaderboards', { key: tenant.apiKey, body: { leaderboard_code: 'fast', name: 'Fast', metric: 'lifetime_points', refresh_seconds: 1 } });
  assert.equal(created.status, 201, created.text);
  assert.equal((await grantPoints(svc, tenant, 'runner', 42)).status, 200);
  let seen = null;
  for (let attempt = 0; attempt < 40 && !seen; attempt++) {
    await sleep(250);
    const board = await svc.request('GET', `/api/v1/public/leaderboards/fast?engagement_id=${engagementId}`, { key: tenant.apiKey });
    seen = board.body.entries[0] ?? null;
  }
  assert.deepEqual(seen && [seen.participant_id, seen.score, seen.rank], ['runner', 42, 1]);
});

test('the public read answers from memory: the same bytes, fresh after a refresh, per tenant and caller, bounded', async (t) => {
  const svc = await startTestService(t);
  t.after(() => {
    readCacheControl.configure({});
    clock.reset();
  });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  // Both tenants own an engagement of the same id and a board of the same code: only the tenant tells the answers apart.
  const engagementId = await svc.createEngagement(tenant);
  await svc.createEngagement(other, engagementId);
  for (const [who, participant, amount] of [[tenant, 'a1', 30], [tenant, 'a2', 20], [other, 'b1', 99]] as const) {
    await participantSession(svc, who, participant, engagementId, `Name of ${participant}`);
    assert.equal((await grantPoints(svc, who, participant, amount)).status, 200);
  }
  for (const who of [tenant, other]) {
    assert.equal((await svc.request('POST', '/api/v1/admin/leaderboards', { key: who.apiKey, body: { leaderboard_code: 'shared', name: 'Shared', metric: 'lifetime_points' } })).status, 201);
  }
  const read = (query: string, options: { key?: string } = { key: tenant.apiKey }) => svc.request('GET', `/api/v1/public/leaderboards/shared?engagement_id=${engagementId}${query}`, options);
  const ids = (response: { body: { entries: Array<{ participant_id: string }> } }) => response.body.entries.map((e) => e.participant_id);

  await t.test('a cached answer is byte for byte the uncached one, with the same content type', async () => {
    const a1 = await participantSession(svc, tenant, 'a1', engagementId);
    const a2 = await participantSession(svc, tenant, 'a2', engagementId);
    for (const [query, options] of [['&limit=5', { key: tenant.apiKey }], [`&around=1&session_id=${a2}`, {}], [`&around=1&session_id=${a1}`, {}]] as const) {
      const first = await read(query, options);
      assert.equal(first.status, 200, first.text);
      const cached = await read(query, options);
      readCacheControl.configure({ ttlMs: 0 });
      const uncached = await read(query, options);
      readCacheControl.configure({});
      assert.equal(cached.text, first.text, query);
      assert.equal(uncached.text, first.text, query);
      assert.equal(cached.headers.get('content-type'), uncached.headers.get('content-type'));
    }
    // The admin standings route returns its answer as an object, serialized by Fastify as every route's is: the same
    // ranking, the same bytes (but for the `livemode` a tenant credential's route appends; a public route has none).
    const standings = await svc.request('GET', '/api/v1/admin/leaderboards/shared/standings?limit=5', { key: tenant.apiKey });
    assert.ok(standings.text.endsWith(',"livemode":true}'));
    assert.equal((await read('&limit=5')).text, `${standings.text.slice(0, -',"livemode":true}'.length)}}`);
    assert.equal((await read('&limit=5')).headers.get('content-type'), standings.headers.get('content-type'));
    // Each caller its own `me`: the answers of two sessions never mix.
    assert.equal((await read(`&around=1&session_id=${a2}`, {})).body.me.participant_id, 'a2');
    assert.equal((await read(`&around=1&session_id=${a1}`, {})).body.me.participant_id, 'a1');
    assert.deepEqual(ids(await read('')), ['a1', 'a2']);
  });

  await t.test('in gzip to a caller that accepts it (with RFC 9110 weights): the same JSON; as is to any other', async () => {
    const raw = async (accept: string | null) => {
      const response = await request(`${svc.baseUrl}/api/v1/public/leaderboards/shared?engagement_id=${engagementId}&limit=5`, { headers: { 'x-api-key': tenant.apiKey, ...(accept === null ? {} : { 'accept-encoding': accept }) } });
      const bytes = Buffer.from(await response.body.arrayBuffer());
      return { status: response.statusCode, encoding: response.headers['content-encoding'] ?? null, vary: response.headers.vary, type: response.headers['content-type'], bytes };
    };
    const plain = await raw(null);
    assert.equal(plain.status, 200);
    assert.deepEqual(ids({ body: JSON.parse(plain.bytes.toString()) }), ['a1', 'a2']);
    for (const accept of ['gzip', 'br, gzip;q=0.5', 'x-gzip', '*', 'deflate, *;q=0.1']) {
      const zipped = await raw(accept);
      assert.deepEqual([zipped.status, zipped.encoding, zipped.vary, zipped.type], [200, 'gzip', 'accept-encoding', plain.type], accept);
      assert.equal(gunzipSync(zipped.bytes).toString(), plain.bytes.toString(), accept);
      assert.ok(zipped.bytes.length < plain.bytes.length, accept);
    }
    for (const accept of ['identity', 'br', 'gzip;q=0', '*;q=0', '*, gzip;q=0', '']) {
      const unzipped = await raw(accept);
      assert.deepEqual([unzipped.status, unzipped.encoding, unzipped.vary], [200, null, 'accept-encoding'], accept);
      assert.equal(unzipped.bytes.toString(), plain.bytes.toString(), accept);
    }
  });

  await t.test('two tenants with the same board code and engagement id never see each other\'s answer', async () => {
    for (let i = 0; i < 2; i++) {
      assert.deepEqual(ids(await read('')), ['a1', 'a2']);
      assert.deepEqual(ids(await read('', { key: other.apiKey })), ['b1']);
    }
  });

  await t.test('a refresh shows up at once in this process, and another process\'s within the cache\'s TTL', async () => {
    assert.equal((await grantPoints(svc, tenant, 'a3', 50)).status, 200);
    assert.deepEqual(ids(await read('')), ['a1', 'a2'], 'not refreshed yet');
    assert.equal((await svc.request('POST', '/api/v1/admin/leaderboards/shared/refresh', { key: tenant.apiKey })).status, 200);
    const refreshed = await Promise.all(Array.from({ length: 8 }, () => read('')));
    for (const r of refreshed) assert.deepEqual(ids(r), ['a3', 'a1', 'a2']);
    // A rebuild this process did not do (the job runner of another process): stands in as a direct change of the snapshot.
    const before = await read('');
    await svc.sql(`UPDATE leaderboard_snapshots SET total_participants = 1000 WHERE tenant_id = $1`, [tenant.tenantId]);
    assert.equal((await read('')).body.total_participants, before.body.total_participants, 'within the TTL');
    clock.freeze(clock.nowMs()); // ages below count in clock time only (real time stays far below them)
    clock.advance(READ_CACHE_TTL_MS);
    assert.equal((await read('')).body.total_participants, 1000, 'after the TTL');
    // Past 0.8 of the TTL the entry is still answered while one recomputation runs; the reads after it get the new answer.
    await svc.sql(`UPDATE leaderboard_snapshots SET total_participants = 2000 WHERE tenant_id = $1`, [tenant.tenantId]);
    clock.advance(READ_CACHE_TTL_MS * 0.9);
    assert.equal((await read('')).body.total_participants, 1000, 'served while recomputed');
    await sleep(200);
    assert.equal((await read('')).body.total_participants, 2000, 'recomputed');
    // A rename or archive is seen at once.
    assert.equal((await svc.request('PATCH', '/api/v1/admin/leaderboards/shared', { key: tenant.apiKey, body: { name: 'Renamed' } })).status, 200);
    assert.equal((await read('')).body.name, 'Renamed');
  });

  await t.test('a participant\'s view is read on its own beside the board\'s shared part in memory; a rebuild by another process since then is noticed, not answered from the old generation', async () => {
    const a1 = await participantSession(svc, tenant, 'a1', engagementId);
    const a2 = await participantSession(svc, tenant, 'a2', engagementId);
    const first = await read(`&around=1&session_id=${a1}`, {});
    assert.equal(first.body.me.rank, 2);
    // Another process rebuilds (its rows under a new generation, the old one dropped): a2, not yet read, is looked up
    // against the generation the shared part in memory names, finds it gone and reads the board again.
    await svc.sql(`UPDATE leaderboard_rank_pages SET generation = generation + 1 WHERE tenant_id = $1`, [tenant.tenantId]);
    await svc.sql(`UPDATE leaderboard_rank_lookup SET generation = generation + 1 WHERE tenant_id = $1`, [tenant.tenantId]);
    await svc.sql(`UPDATE leaderboard_snapshots SET generation = generation + 1, total_participants = 77 WHERE tenant_id = $1`, [tenant.tenantId]);
    const second = await read(`&around=1&session_id=${a2}`, {});
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.me.rank, 3);
    assert.deepEqual(second.body.around_me.map((e: { participant_id: string }) => e.participant_id), ['a1', 'a2']);
    assert.equal(second.body.total_participants, 77, 'the shared part read again, of the new generation');
    assert.equal((await read('')).body.total_participants, 77, 'and every answer of the board in memory forgotten');
    // A participant with no points is not ranked: its own name, no neighbours.
    const nobody = await participantSession(svc, tenant, 'zz-unranked', engagementId);
    const unranked = await read(`&around=2&session_id=${nobody}`, {});
    assert.equal(unranked.status, 200, unranked.text);
    assert.deepEqual([unranked.body.me.rank, unranked.body.me.participant_id, unranked.body.me.is_me, unranked.body.around_me], [null, 'zz-unranked', true, []]);
  });

  await t.test('the cache keeps within its byte budget', async () => {
    readCacheControl.configure({ maxBytes: 6000 });
    for (let limit = 1; limit <= 40; limit++) assert.equal((await read(`&limit=${limit}`)).status, 200);
    const { entries, bytes, maxBytes } = readCacheControl.stats();
    assert.equal(maxBytes, 6000);
    assert.ok(bytes <= 6000, `${bytes} bytes`);
    assert.ok(entries > 0 && entries < 40, `${entries} entries`);
    const cached = await read('&limit=40');
    readCacheControl.configure({ ttlMs: 0 });
    assert.equal((await read('&limit=40')).text, cached.text);
  });
});

test('leaderboard read cache: LEADERBOARD_READ_CACHE_TTL_MS from 0 (off) to the default, anything else refused at start', () => {
  assert.equal(loadConfig({}).leaderboardReadCacheTtlMs, READ_CACHE_TTL_MS);
  assert.equal(loadConfig({ LEADERBOARD_READ_CACHE_TTL_MS: '' }).leaderboardReadCacheTtlMs, READ_CACHE_TTL_MS);
  assert.equal(loadConfig({ LEADERBOARD_READ_CACHE_TTL_MS: '0' }).leaderboardReadCacheTtlMs, 0);
  assert.equal(loadConfig({ LEADERBOARD_READ_CACHE_TTL_MS: '250' }).leaderboardReadCacheTtlMs, 250);
  for (const bad of ['-1', '1001', '2.5', 'soon']) {
    assert.throws(() => loadConfig({ LEADERBOARD_READ_CACHE_TTL_MS: bad }), /LEADERBOARD_READ_CACHE_TTL_MS must be an integer from 0 to 1000/);
  }
});
