/**
 * Leaderboard and challenge benchmark: `npx tsx bench/leaderboards.bench.ts`
 *
 * Starts its own embedded PostgreSQL (or uses BENCH_DATABASE_URL, an owner
 * URL of an empty database) and the API in this process on a loopback port.
 * Seeds one tenant with BENCH_PARTICIPANTS (default 1,000,000) participants,
 * each with lifetime points, on one progression leaderboard, then measures in
 * one run:
 *
 * - the refresh: rebuilding the materialised ranking of every participant;
 * - through HTTP: the top-100 read and a single participant's rank (p50/p99),
 *   with `GET /healthz` through the same client as the HTTP floor;
 * - the baseline the materialised ranking replaces: the same two answers
 *   computed on the fly by SQL over the points totals;
 * - challenge progress: facts recorded through runFactHandlers for enrolled
 *   participants (updates/s), against the same fact transaction for
 *   participants with no enrollment.
 *
 * Loopback only; bounded in time; prints a markdown table and exits.
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { openBenchDatabase, percentile, runBench } from './support.js';
import { seedLifetimePoints } from './leaderboard-seed.js';
import { startService } from '../src/service.js';
import { createLogger } from '../src/platform/logger.js';
import { runFactHandlers } from '../src/platform/facts.js';
import { prefixedId } from '../src/platform/ids.js';
import { createTenant } from '../src/modules/access/index.js';
import * as leaderboards from '../src/modules/leaderboards/service.js';
import { AROUND_SQL, TOP_SQL } from '../src/modules/leaderboards/store.js';
import { LIFETIME_POINTS_SQL } from '../src/modules/points/index.js';

const PARTICIPANTS = Number(process.env.BENCH_PARTICIPANTS ?? 1_000_000);
const READS = Number(process.env.BENCH_READS ?? 2000);
const READ_CONCURRENCY = 4;
const REFRESHES = Number(process.env.BENCH_REFRESHES ?? 3);
const ON_THE_FLY_QUERIES = 20;
const SESSIONS = 200;
const ENROLLED = 1000;
const FACTS = Number(process.env.BENCH_FACTS ?? 4000);
const FACT_CONCURRENCY = 8;

const ms = (value: number) => `${value.toFixed(2)} ms`;

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const started = process.hrtime.bigint();
  const result = await fn();
  return [result, Number(process.hrtime.bigint() - started) / 1e6];
}

/** Runs `total` calls of `fn(i)` with `concurrency` in flight; returns each call's latency in ms and the wall time. */
async function load(total: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<{ latencies: number[]; wallMs: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const [, elapsed] = await timed(() => fn(i));
        latencies.push(elapsed);
      }
    }),
  );
  return { latencies, wallMs: Number(process.hrtime.bigint() - started) / 1e6 };
}

async function main(): Promise<void> {
  const database = await openBenchDatabase('leaderboards', { fast: true });
  const { ownerUrl, appPassword, appUrl } = database;
  const config = loadConfig({
    APP_ENV: 'development',
    DATABASE_URL: ownerUrl,
    DB_APP_PASSWORD: appPassword,
    SERVICE_ROLE: 'api',
    HOST: '127.0.0.1',
    PORT: '0',
    RATE_LIMIT_IP_PER_MINUTE: '10000000',
    LOG_LEVEL: 'warn',
  });
  const log = createLogger(config.logLevel);
  const service = await startService({ config, log, server: { ownerUrl, appUrl, stop: async () => undefined } });
  const { db } = service;
  const baseUrl = `http://127.0.0.1:${(service.app!.server.address() as { port: number }).port}`;
  const owner = new pg.Pool({ connectionString: ownerUrl, max: 4 });
  owner.on('error', () => undefined);
  const rows: Array<[string, string, string]> = [];

  try {
    const tenant = await createTenant(db, { name: 'Bench', slug: `bench-${process.pid}`, plan: 'enterprise', requestsPerMinute: 100_000_000 });
    const tenantId = tenant.tenant_id;
    const key = tenant.api_key;

    // Seeding is not measured: one statement per table, scores spread over 0..100,000 with many ties.
    const [, seedMs] = await timed(() => seedLifetimePoints(owner, tenantId, PARTICIPANTS));
    process.stderr.write(`seeded ${PARTICIPANTS} participants in ${(seedMs / 1000).toFixed(1)} s\n`);

    // The refresh: the definition builds the first ranking, then timed rebuilds.
    const [, createMs] = await timed(() => leaderboards.create(db, tenantId, { leaderboard_code: 'bench', name: 'Bench', metric: 'lifetime_points' }));
    const refreshTimes: number[] = [createMs];
    for (let i = 0; i < REFRESHES; i++) {
      const [result, elapsed] = await timed(() => leaderboards.refreshNow(db, tenantId, 'bench'));
      if (result.total_participants !== PARTICIPANTS) throw new Error(`ranked ${result.total_participants} of ${PARTICIPANTS}`);
      refreshTimes.push(elapsed);
    }
    await owner.query('VACUUM ANALYZE leaderboard_rank_pages, leaderboard_rank_lookup');
    rows.push([`refresh: rebuild the ranking of ${PARTICIPANTS.toLocaleString('en')} participants (${refreshTimes.length} runs)`, `median ${ms(percentile(refreshTimes, 50))}`, `max ${ms(Math.max(...refreshTimes))}`]);

    // Sessions for rank reads, spread over the whole ranking, for an engagement of the tenant (sessions need one that exists).
    const engagement = await fetch(`${baseUrl}/api/v1/admin/engagements`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ name: 'Bench', site_slug: 'bench' }),
    });
    if (engagement.status !== 201) throw new Error(`engagement: ${engagement.status} ${await engagement.text()}`);
    const engagementId = ((await engagement.json()) as { id: string }).id;
    const sessions: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const participant = `p${1 + Math.floor((i * PARTICIPANTS) / SESSIONS)}`;
      const response = await fetch(`${baseUrl}/api/v1/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ participant_id: participant, engagement_id: engagementId }),
      });
      if (response.status !== 201) throw new Error(`session: ${response.status} ${await response.text()}`);
      sessions.push(((await response.json()) as { session_id: string }).session_id);
    }

    async function get(url: string, headers: Record<string, string> = {}): Promise<void> {
      const response = await fetch(url, { headers });
      if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    }

    const floor = await load(READS, READ_CONCURRENCY, () => get(`${baseUrl}/healthz`));
    rows.push([`baseline: GET /healthz through the same client (${READS} requests, ${READ_CONCURRENCY} in flight)`, `p50 ${ms(percentile(floor.latencies, 50))}`, `p99 ${ms(percentile(floor.latencies, 99))}`]);
    const topRead = await load(READS, READ_CONCURRENCY, () => get(`${baseUrl}/api/v1/public/leaderboards/bench?engagement_id=${engagementId}&limit=100`, { 'x-api-key': key }));
    rows.push([`top-100 read, GET /public/leaderboards/{code}?limit=100`, `p50 ${ms(percentile(topRead.latencies, 50))}`, `p99 ${ms(percentile(topRead.latencies, 99))}`]);
    const rankRead = await load(READS, READ_CONCURRENCY, (i) =>
      get(`${baseUrl}/api/v1/public/leaderboards/bench?engagement_id=${engagementId}&limit=1&session_id=${sessions[i % SESSIONS]}`),
    );
    rows.push([`a participant's rank, GET …?session_id=…&limit=1 (participants across the whole ranking)`, `p50 ${ms(percentile(rankRead.latencies, 50))}`, `p99 ${ms(percentile(rankRead.latencies, 99))}`]);
    const aroundRead = await load(Math.round(READS / 2), READ_CONCURRENCY, (i) =>
      get(`${baseUrl}/api/v1/public/leaderboards/bench?engagement_id=${engagementId}&limit=10&around=5&session_id=${sessions[i % SESSIONS]}`),
    );
    rows.push([`top-10 + me + 5 around me`, `p50 ${ms(percentile(aroundRead.latencies, 50))}`, `p99 ${ms(percentile(aroundRead.latencies, 99))}`]);

    // The database's own share of a read (EXPLAIN ANALYZE execution time), which CPU contention from other processes inflates least.
    const generation = (await owner.query(`SELECT s.generation FROM leaderboard_snapshots s JOIN leaderboards l ON l.id = s.leaderboard_id WHERE l.tenant_id = $1 AND l.leaderboard_code = 'bench'`, [tenantId])).rows[0].generation;
    const leaderboardId = (await owner.query(`SELECT id FROM leaderboards WHERE tenant_id = $1 AND leaderboard_code = 'bench'`, [tenantId])).rows[0].id;
    const executionMs = async (sql: string, params: unknown[]) => {
      const { rows: plan } = await owner.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
      return plan[0]['QUERY PLAN'][0]['Execution Time'] as number;
    };
    const topExec: number[] = [];
    const rankExec: number[] = [];
    for (let i = 0; i < ON_THE_FLY_QUERIES * 5; i++) {
      topExec.push(await executionMs(TOP_SQL, [tenantId, leaderboardId, '1970-01-01', generation, 100]));
      rankExec.push(await executionMs(AROUND_SQL, [tenantId, leaderboardId, '1970-01-01', generation, `p${1 + Math.floor(Math.random() * PARTICIPANTS)}`, 0]));
    }
    rows.push([`database execution of the top-100 query (EXPLAIN ANALYZE, ${topExec.length} runs)`, `p50 ${ms(percentile(topExec, 50))}`, `p99 ${ms(percentile(topExec, 99))}`]);
    rows.push([`database execution of one participant's rank: its look-up bucket and its page (EXPLAIN ANALYZE)`, `p50 ${ms(percentile(rankExec, 50))}`, `p99 ${ms(percentile(rankExec, 99))}`]);

    // Baseline: the same answers computed on the fly from the totals (what a refresh-free design would do per read).
    const onTheFlyTop: number[] = [];
    const onTheFlyRank: number[] = [];
    for (let i = 0; i < ON_THE_FLY_QUERIES; i++) {
      const [, topMs] = await timed(() =>
        db.tenant(tenantId, (tx) =>
          tx.query(`SELECT participant_id, score FROM (${LIFETIME_POINTS_SQL}) s ORDER BY score DESC, reached_at, participant_id LIMIT 100`, [tenantId]),
        ),
      );
      onTheFlyTop.push(topMs);
      const participant = `p${1 + Math.floor(Math.random() * PARTICIPANTS)}`;
      const [, rankMs] = await timed(() =>
        db.tenant(tenantId, (tx) =>
          tx.query(
            `SELECT 1 + count(*) AS rank FROM (${LIFETIME_POINTS_SQL}) o, (${LIFETIME_POINTS_SQL}) me
             WHERE me.participant_id = $2
               AND (o.score, me.reached_at, me.participant_id) > (me.score, o.reached_at, o.participant_id)`,
            [tenantId, participant],
          ),
        ),
      );
      onTheFlyRank.push(rankMs);
    }
    rows.push([`baseline: top-100 computed on the fly in SQL (${ON_THE_FLY_QUERIES} queries)`, `p50 ${ms(percentile(onTheFlyTop, 50))}`, `p99 ${ms(percentile(onTheFlyTop, 99))}`]);
    rows.push([`baseline: one participant's rank computed on the fly in SQL`, `p50 ${ms(percentile(onTheFlyRank, 50))}`, `p99 ${ms(percentile(onTheFlyRank, 99))}`]);

    // Challenge progress from facts.
    const challengeId = randomUUID();
    await owner.query(
      `INSERT INTO challenges (tenant_id, id, name, description, status, starts_at, ends_at, objectives, milestones, created_at, updated_at)
       VALUES ($1, $2, 'Bench', '', 'active', now() - interval '1 day', now() + interval '30 days',
               '[{"id":"visits","name":"Visits","evaluator":"event_count","event_name":"visit","target":1000000,"weight":1}]',
               '[{"name":"half","threshold":0.5}]', now(), now())`,
      [tenantId, challengeId],
    );
    await owner.query(
      `INSERT INTO challenge_enrollments (tenant_id, challenge_id, participant_id, enrolled_at, score_reached_at)
       SELECT $1, $2, 'p' || i, now() - interval '1 hour', now() - interval '1 hour' FROM generate_series(1, $3) i`,
      [tenantId, challengeId, ENROLLED],
    );
    const recordFact = (participantId: string) =>
      db.tenant(tenantId, (tx) =>
        runFactHandlers(tx, tenantId, {
          id: prefixedId('fct'),
          name: 'visit',
          participantId,
          engagementId: null,
          properties: { page: 'home' },
          occurredAt: new Date(),
          source: 'event',
          evaluateChallenges: true,
        }),
      );
    const unenrolled = await load(FACTS, FACT_CONCURRENCY, (i) => recordFact(`p${ENROLLED + 1 + (i % ENROLLED)}`));
    rows.push([
      `baseline: fact transaction for participants with no enrollment (${FACTS} facts, ${FACT_CONCURRENCY} in flight)`,
      `${Math.round((FACTS / unenrolled.wallMs) * 1000)} facts/s`,
      `p99 ${ms(percentile(unenrolled.latencies, 99))}`,
    ]);
    const enrolled = await load(FACTS, FACT_CONCURRENCY, (i) => recordFact(`p${1 + (i % ENROLLED)}`));
    const counted = (await owner.query('SELECT sum((progress->>\'visits\')::int)::int AS n FROM challenge_enrollments WHERE tenant_id = $1 AND challenge_id = $2', [tenantId, challengeId])).rows[0].n;
    if (counted !== FACTS) throw new Error(`counted ${counted} of ${FACTS} facts`);
    rows.push([
      `challenge progress: facts for ${ENROLLED} enrolled participants (${FACTS} facts, ${FACT_CONCURRENCY} in flight)`,
      `${Math.round((FACTS / enrolled.wallMs) * 1000)} updates/s`,
      `p99 ${ms(percentile(enrolled.latencies, 99))}`,
    ]);

    process.stdout.write(`\n| measurement | result | |\n|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
    process.stdout.write(`\n${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, ${PARTICIPANTS.toLocaleString('en')} participants, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')}\n`);
  } finally {
    await owner.end();
    await service.stop();
    await database.stop();
  }
}

runBench(main);
