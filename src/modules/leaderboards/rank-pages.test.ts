import { test } from 'node:test';
import assert from 'node:assert/strict';
import { participantSession, startTestService, testCluster } from '../../../test/helper.js';
import { migrate } from '../../platform/migrate.js';
import { readCacheControl } from './read-cache.js';

/**
 * A ranking is kept in pages of 100 ranks and a look-up of ranks in as many
 * buckets (store.ts): a board of 2,345 participants has 24 of each, and
 * every read must answer as a row per participant would. Seeded with SQL (the
 * balances a lifetime board ranks, many ties), read through HTTP.
 */
const COUNT = 2345;

test('a ranking of several pages: the top page, each participant\'s rank and neighbours across page boundaries, and the rankings of before migration 1480', async (t) => {
  const svc = await startTestService(t);
  t.after(() => readCacheControl.configure({}));
  readCacheControl.configure({ ttlMs: 0 });
  const tenant = await svc.createTenant();
  const engagementId = await svc.createEngagement(tenant);
  // Scores 1..400 (about six participants per score) reached within 30 seconds of each other: every tie-break is used.
  await svc.sql(
    `INSERT INTO participants (tenant_id, participant_id, display_name) SELECT $1, 'p' || i, 'Player ' || i FROM generate_series(1, $2) i`,
    [tenant.tenantId, COUNT],
  );
  await svc.sql(
    `INSERT INTO points_balances (tenant_id, participant_id, available, lifetime, last_earned_at, updated_at)
     SELECT $1, 'p' || i, (i * 7919) % 400 + 1, (i * 7919) % 400 + 1, timestamptz '2026-11-01 00:00:00Z' + (i % 30) * interval '1 second', now()
     FROM generate_series(1, $2) i`,
    [tenant.tenantId, COUNT],
  );
  const expected = Array.from({ length: COUNT }, (_, k) => ({ id: `p${k + 1}`, score: ((k + 1) * 7919) % 400 + 1, at: (k + 1) % 30 }))
    .sort((a, b) => b.score - a.score || a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((row, k) => ({ rank: k + 1, participant_id: row.id, score: row.score, display_name: `Player ${row.id.slice(1)}` }));
  const created = await svc.request('POST', '/api/v1/admin/leaderboards', { key: tenant.apiKey, body: { leaderboard_code: 'crowd', name: 'Crowd', metric: 'lifetime_points' } });
  assert.equal(created.status, 201, created.text);
  const read = (query: string) => svc.request('GET', `/api/v1/public/leaderboards/crowd?engagement_id=${engagementId}${query}`, { key: tenant.apiKey });
  const shown = (entries: Array<{ rank: number; participant_id: string; score: number; display_name: string }>) =>
    entries.map(({ rank, participant_id, score, display_name }) => ({ rank, participant_id, score, display_name }));
  const sessions = new Map<number, string>();
  // Ranks at each edge of a page (100 ranks each), and the last.
  const probes = [1, 2, 26, 27, 99, 100, 101, 1200, 1201, COUNT - 1, COUNT];

  async function checkEveryRead(label: string) {
    const top = await read('&limit=100');
    assert.equal(top.status, 200, top.text);
    assert.equal(top.body.total_participants, COUNT, label);
    assert.deepEqual(shown(top.body.entries), expected.slice(0, 100), `${label}: the top page`);
    for (const rank of probes) {
      const me = expected[rank - 1];
      if (!sessions.has(rank)) sessions.set(rank, await participantSession(svc, tenant, me.participant_id, engagementId));
      const view = await read(`&limit=1&around=25&session_id=${sessions.get(rank)}`);
      assert.equal(view.status, 200, view.text);
      assert.deepEqual(shown([view.body.me]), [me], `${label}: rank ${rank}`);
      assert.deepEqual(shown(view.body.around_me), expected.slice(Math.max(rank - 26, 0), rank + 25), `${label}: around rank ${rank}`);
    }
  }

  await t.test('24 pages and 24 look-up buckets, read as a row per participant would be', async () => {
    const [snapshot] = await svc.sql(`SELECT lookup_buckets, total_participants FROM leaderboard_snapshots WHERE tenant_id = $1`, [tenant.tenantId]);
    assert.deepEqual(snapshot, { lookup_buckets: 24, total_participants: COUNT });
    const pages = await svc.sql(`SELECT page, cardinality(participant_ids) AS n FROM leaderboard_rank_pages WHERE tenant_id = $1 ORDER BY page`, [tenant.tenantId]);
    assert.deepEqual(pages, Array.from({ length: 24 }, (_, page) => ({ page, n: page < 23 ? 100 : COUNT - 2300 })));
    const buckets = await svc.sql(`SELECT bucket, cardinality(ranks) AS n FROM leaderboard_rank_lookup WHERE tenant_id = $1 ORDER BY bucket`, [tenant.tenantId]);
    assert.deepEqual(buckets.map((b) => b.bucket), Array.from({ length: 24 }, (_, bucket) => bucket));
    assert.equal(buckets.reduce((sum, b) => sum + b.n, 0), COUNT);
    await checkEveryRead('built');
    // The admin's standings read the same pages.
    const standings = await svc.request('GET', '/api/v1/admin/leaderboards/crowd/standings?limit=100', { key: tenant.apiKey });
    assert.equal(standings.status, 200, standings.text);
    assert.deepEqual(shown(standings.body.entries), expected.slice(0, 100));
  });

  await t.test('a refresh replaces both: one generation of pages and of buckets stays', async () => {
    assert.equal((await svc.request('POST', '/api/v1/admin/leaderboards/crowd/refresh', { key: tenant.apiKey })).status, 200);
    const generations = await svc.sql(
      `SELECT DISTINCT generation FROM (SELECT generation FROM leaderboard_rank_pages WHERE tenant_id = $1 UNION ALL SELECT generation FROM leaderboard_rank_lookup WHERE tenant_id = $1) g`,
      [tenant.tenantId],
    );
    assert.deepEqual(generations, [{ generation: 2 }]);
    await checkEveryRead('refreshed');
  });

  await t.test('ANALYZE, as autovacuum runs it after every rebuild, keeps statistics of the keys and none of the arrays (migration 1485)', async () => {
    await svc.sql('ANALYZE leaderboard_rank_pages, leaderboard_rank_lookup');
    const analyzed = await svc.sql(
      `SELECT tablename, array_agg(attname::text ORDER BY attname) AS columns FROM pg_stats
       WHERE tablename IN ('leaderboard_rank_pages', 'leaderboard_rank_lookup') GROUP BY tablename ORDER BY tablename`,
    );
    assert.deepEqual(analyzed, [
      { tablename: 'leaderboard_rank_lookup', columns: ['bucket', 'generation', 'leaderboard_id', 'period_start', 'tenant_id'] },
      { tablename: 'leaderboard_rank_pages', columns: ['generation', 'leaderboard_id', 'page', 'period_start', 'tenant_id'] },
    ]);
    await checkEveryRead('analyzed');
  });

  await t.test('migration 1480 pages the rankings kept before it (a period\'s final ranking is never rebuilt)', async () => {
    // The schema before 1480 (migration 0520's table), holding this board's ranking a row per participant.
    await svc.sql(`CREATE TABLE leaderboard_rankings (
      tenant_id uuid NOT NULL, leaderboard_id uuid NOT NULL, period_start date NOT NULL, generation bigint NOT NULL,
      rank integer NOT NULL, participant_id text NOT NULL, score bigint NOT NULL,
      PRIMARY KEY (tenant_id, leaderboard_id, period_start, generation, rank))`);
    await svc.sql(
      `INSERT INTO leaderboard_rankings SELECT g.tenant_id, g.leaderboard_id, g.period_start, g.generation, (g.page * 100 + x.i)::int, x.participant_id, x.score
       FROM leaderboard_rank_pages g, unnest(g.participant_ids, g.scores) WITH ORDINALITY AS x(participant_id, score, i)`,
    );
    await svc.sql('DROP TABLE leaderboard_rank_pages, leaderboard_rank_lookup');
    await svc.sql('ALTER TABLE leaderboard_snapshots DROP COLUMN lookup_buckets');
    // A database from before 1480 has not run the migrations after it either.
    await svc.sql(`DELETE FROM schema_migrations WHERE name >= '1480_leaderboard_rank_pages.sql'`);
    await migrate(svc.ownerUrl, testCluster().appPassword);
    assert.deepEqual(await svc.sql(`SELECT to_regclass('leaderboard_rankings') AS old`), [{ old: null }]);
    await checkEveryRead('migrated');
  });
});
