/**
 * Contest benchmark: `npx tsx bench/contests.bench.ts`
 *
 * Starts its own embedded PostgreSQL (or uses BENCH_DATABASE_URL, an owner URL
 * of an empty database) and the service's HTTP API in this process, then, for
 * one active contest with BENCH_ENTRIES entries (100,000) and every fraud cap set:
 *
 * - baseline: the same number of facts per transaction written as one bare
 *   INSERT each (the floor of any per-fact statement), on a sample of facts;
 * - baseline: public leaderboard read latency over HTTP with no scoring running;
 * - scoring: BENCH_FACTS facts (1,000,000) through `runFactHandlers` in batches,
 *   as ingestion's lanes record them (one processing batch per transaction,
 *   emits held), on SCORING_WORKERS connections, with the
 *   lifecycle tick (rank recompute and rank-jump check) running meanwhile;
 * - leaderboard read latency (public and admin, over HTTP) during scoring;
 * - the final sweep: window closed, tie-breakers, prize allocation, completion.
 *
 * BENCH_SCORING_SECONDS (600) bounds the scoring phase; the table says how many
 * facts were processed. Loopback only; bounded in time; prints a markdown table and exits.
 */
import os from 'node:os';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config.js';
import { openBenchDatabase, openStatementsTable, percentile, runBench, STATEMENTS_SETTINGS } from './support.js';
import { startService } from '../src/service.js';
import { createLogger } from '../src/platform/logger.js';
import { runFactHandlers, type Fact } from '../src/platform/facts.js';
import { inBatch } from '../src/platform/batch.js';
import { clock } from '../src/platform/clock.js';
import { createTenant } from '../src/modules/access/index.js';
import { createContest, publishContest, advanceContest } from '../src/modules/contests/service.js';

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 100_000);
const FACTS = Number(process.env.BENCH_FACTS ?? 1_000_000);
const BASELINE_FACTS = Math.min(FACTS, 20_000);
const FACTS_PER_TRANSACTION = 100;
const SCORING_WORKERS = 4;
const READ_INTERVAL_MS = 20;
const IDLE_READS = 500;
const TICK_INTERVAL_MS = 30_000;
/** The scoring phase stops at this bound even if not every fact was sent (the machine is shared). */
const SCORING_LIMIT_MS = Number(process.env.BENCH_SCORING_SECONDS ?? 600) * 1000;
const CONTEST_ID = 'bench-cup';
const WARMUP_FACTS = 2_000;
/** BENCH_CONTESTS_STATEMENTS=1 prints the scoring phase's top statements by total time (pg_stat_statements). */
const STATEMENTS = process.env.BENCH_CONTESTS_STATEMENTS === '1';

const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main(): Promise<void> {
  const started = Date.now();
  const log = createLogger('warn');
  const database = await openBenchDatabase('contests', STATEMENTS ? { settings: STATEMENTS_SETTINGS } : {});
  const { ownerUrl, appPassword, appUrl } = database;
  const config = loadConfig({
    APP_ENV: 'development',
    DATABASE_URL: ownerUrl,
    DB_APP_PASSWORD: appPassword,
    SERVICE_ROLE: 'api',
    HOST: '127.0.0.1',
    PORT: '0',
    RATE_LIMIT_IP_PER_MINUTE: '10000000',
    RATE_LIMIT_KEY_PER_MINUTE: '10000000',
    LOG_LEVEL: 'warn',
  });
  const service = await startService({ config, log, server: { ownerUrl, appUrl, stop: async () => undefined } });
  const { db } = service;
  const baseUrl = `http://127.0.0.1:${(service.app!.server.address() as AddressInfo).port}`;

  try {
    const tenant = await createTenant(db, { name: 'Bench', slug: `bench-${randomBytes(3).toString('hex')}`, plan: 'enterprise', adminEmail: `admin-${randomUUID()}@bench.example`, requestsPerMinute: 100_000_000 });
    const tenantId = tenant.tenant_id;
    const now = clock.nowMs();
    await createContest(db, tenantId, {
      id: CONTEST_ID,
      title: 'Benchmark cup',
      starts_at: new Date(now - 60_000).toISOString(),
      ends_at: new Date(now + 24 * 3_600_000).toISOString(),
      scoring: { event_type: 'purchase', score_attribute: 'amount', weight: 1 },
      prize_structure: [
        { rank_from: 1, rank_to: 1, reward: { type: 'cash', value: 1000 } },
        { rank_from: 2, rank_to: 10, reward: { type: 'voucher', value: 100 } },
        { rank_from: 11, rank_to: 100, reward: { type: 'coupon', value: 10 } },
      ],
      max_reward_liability: 2500,
      fraud_rules: { max_score_per_minute: 1e9, max_score_per_hour: 1e9, max_rank_jump_per_hour: 1e6, review_threshold_score: 1e9 },
    });
    await publishContest(db, config, tenantId, CONTEST_ID);
    await advanceContest(db, config, tenantId, CONTEST_ID);

    // Entries are loaded in bulk: the benchmark is about scoring and reads, not 100,000 enter calls.
    const enteredAt = new Date(now - 30_000);
    await db.system.query(
      `INSERT INTO participants (tenant_id, participant_id, display_name)
       SELECT $1, 'p' || g, 'Player ' || g FROM generate_series(1, $2) g`,
      [tenantId, ENTRIES],
    );
    await db.system.query(
      `INSERT INTO contest_entries (tenant_id, contest_id, participant_id, entry_id, display_name, entered_at, reached_at)
       SELECT $1, $3, 'p' || g, 'ent_bench' || g, 'Player ' || g, $4::timestamptz + g * interval '1 microsecond', $4::timestamptz + g * interval '1 microsecond'
       FROM generate_series(1, $2) g`,
      [tenantId, ENTRIES, CONTEST_ID, enteredAt],
    );
    await db.system.query(`UPDATE contests SET entry_count = $3 WHERE tenant_id = $1 AND id = $2`, [tenantId, CONTEST_ID, ENTRIES]);
    await db.system.query('ANALYZE contest_entries; ANALYZE contests');
    await advanceContest(db, config, tenantId, CONTEST_ID);

    const token = `ses_${randomBytes(24).toString('base64url')}`;
    await db.system.query(
      `INSERT INTO sessions (tenant_id, id, token_hash, participant_id, engagement_id, expires_at) VALUES ($1, $2, $3, 'p1', $4, now() + interval '1 day')`,
      [tenantId, randomUUID(), createHash('sha256').update(token).digest('hex'), randomUUID()],
    );
    const publicUrl = `${baseUrl}/api/v1/contests/${CONTEST_ID}/leaderboard/public?limit=10&session_id=${token}`;
    const adminUrl = `${baseUrl}/api/v1/contests/${CONTEST_ID}/leaderboard?limit=10`;
    const timedGet = async (url: string, headers: Record<string, string> = {}) => {
      const t0 = performance.now();
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}`);
      return performance.now() - t0;
    };

    // Baseline 1: leaderboard reads with nothing else running.
    const idle: number[] = [];
    for (let i = 0; i < IDLE_READS; i++) idle.push(await timedGet(publicUrl));

    // Baseline 2: the bare-INSERT floor at the same batching, into a scratch table.
    await db.system.query('CREATE TABLE IF NOT EXISTS bench_fact_floor_logged (tenant_id uuid, fact_id text PRIMARY KEY, participant_id text, amount int, at timestamptz)');
    const floorStarted = performance.now();
    await runWorkers(BASELINE_FACTS, async (batch) => {
      const client = await db.system.connect();
      try {
        await client.query('BEGIN');
        for (const fact of batch) {
          await client.query('INSERT INTO bench_fact_floor_logged VALUES ($1, $2, $3, $4, $5)', [tenantId, fact.id, fact.participantId, fact.properties.amount, fact.occurredAt]);
        }
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    });
    const floorSeconds = (performance.now() - floorStarted) / 1000;

    // Warm-up: a contest that has been scoring for a minute has had its score history analyzed by
    // autovacuum; before the first ANALYZE the scoring statement has no column statistics and may
    // read the contest's whole history per fact (store.matchFacts). The warm-up facts are not counted.
    const scoreInBatches = (batch: Fact[]) =>
      // As a lane batch of ingestion applies its events: emits held, one processing batch per transaction.
      db.tenant(tenantId, (tx) =>
        inBatch(tx, async (batchTx) => {
          for (const fact of batch) await runFactHandlers(batchTx, tenantId, fact);
        }),
      );
    await runWorkers(WARMUP_FACTS, scoreInBatches);
    await db.system.query('ANALYZE contest_score_events');

    // Scoring, with readers and the lifecycle tick running alongside.
    const statements = await openStatementsTable(db.system, STATEMENTS, 15);
    await statements.reset();
    let scoring = true;
    const publicDuring: number[] = [];
    const adminDuring: number[] = [];
    const reader = (async () => {
      while (scoring) {
        publicDuring.push(await timedGet(publicUrl));
        adminDuring.push(await timedGet(adminUrl, { 'x-api-key': tenant.api_key }));
        await new Promise((resolve) => setTimeout(resolve, READ_INTERVAL_MS));
      }
    })();
    const tickDurations: number[] = [];
    const ticker = (async () => {
      while (scoring) {
        await new Promise((resolve) => setTimeout(resolve, TICK_INTERVAL_MS));
        if (!scoring) break;
        const t0 = performance.now();
        await advanceContest(db, config, tenantId, CONTEST_ID);
        tickDurations.push(performance.now() - t0);
      }
    })();
    const scoringStarted = performance.now();
    await runWorkers(FACTS, scoreInBatches, Date.now() + SCORING_LIMIT_MS);
    const scoringSeconds = (performance.now() - scoringStarted) / 1000;
    scoring = false;
    await statements.print('scoring phase');
    await reader;
    await ticker;

    const [{ scored, events }] = (
      await db.system.query(`SELECT sum(score)::bigint AS scored, sum(score_events)::bigint AS events FROM contest_entries WHERE tenant_id = $1 AND contest_id = $2`, [tenantId, CONTEST_ID])
    ).rows;

    // The final sweep: close the window and let the lifecycle step run it.
    await db.system.query(`UPDATE contests SET ends_at = $3 WHERE tenant_id = $1 AND id = $2`, [tenantId, CONTEST_ID, new Date(clock.nowMs() - 1)]);
    const sweepStarted = performance.now();
    const finalStatus = await advanceContest(db, config, tenantId, CONTEST_ID);
    const sweepMs = performance.now() - sweepStarted;
    const [contest] = (await db.system.query(`SELECT final_sweep_ms, liability_allocated FROM contests WHERE tenant_id = $1 AND id = $2`, [tenantId, CONTEST_ID])).rows;

    const rows: Array<[string, string, string]> = [
      ['entries', fmt(ENTRIES, 0), ''],
      ['scoring facts processed', fmt(Number(events) - WARMUP_FACTS, 0), `of ${fmt(FACTS, 0)} sent, after ${fmt(WARMUP_FACTS, 0)} warm-up facts and ANALYZE; total score ${fmt(Number(scored), 0)}`],
      ['**scoring facts/s** (runFactHandlers, one processing batch of 100 per transaction, 4 connections)', fmt((Number(events) - WARMUP_FACTS) / scoringSeconds, 0), `${fmt(scoringSeconds)} s`],
      ['baseline: bare INSERT per fact/s (same batching)', fmt(BASELINE_FACTS / floorSeconds, 0), `${fmt(BASELINE_FACTS, 0)} facts`],
      ['baseline: public leaderboard p50 / p99, idle (ms)', `${fmt(percentile(idle, 50), 2)} / ${fmt(percentile(idle, 99), 2)}`, `${idle.length} reads`],
      ['**public leaderboard p50 / p99 during scoring (ms)**', `${fmt(percentile(publicDuring, 50), 2)} / ${fmt(percentile(publicDuring, 99), 2)}`, `${publicDuring.length} reads`],
      ['admin leaderboard p50 / p99 during scoring (ms)', `${fmt(percentile(adminDuring, 50), 2)} / ${fmt(percentile(adminDuring, 99), 2)}`, `${adminDuring.length} reads`],
      ['lifecycle tick (rank recompute over all entries), mean (ms)', fmt(tickDurations.reduce((a, b) => a + b, 0) / Math.max(1, tickDurations.length), 0), `${tickDurations.length} ticks`],
      ['**final sweep** (ranks, tie-breakers, allocation, completion) (ms)', fmt(sweepMs, 0), `status ${finalStatus}; recorded final_sweep_ms ${contest.final_sweep_ms}`],
    ];
    process.stdout.write(`\n| measure | value | notes |\n|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n\n`);
    process.stdout.write(`node ${process.version}, ${os.cpus().length} cores, load average at the end ${os.loadavg().map((l) => l.toFixed(1)).join(' / ')}; total run ${fmt((Date.now() - started) / 1000)} s\n`);
  } finally {
    await service.stop();
    await database.stop();
  }
}

/** Generates `count` facts over random entries and feeds them to `workers` loops in batches; stops at the deadline. */
async function runWorkers(count: number, handle: (batch: Fact[]) => Promise<void>, deadline = Infinity): Promise<void> {
  let next = 0;
  const base = clock.nowMs() - 10_000;
  const makeBatch = (): Fact[] | null => {
    if (next >= count || Date.now() > deadline) return null;
    const size = Math.min(FACTS_PER_TRANSACTION, count - next);
    const batch: Fact[] = [];
    for (let i = 0; i < size; i++, next++) {
      batch.push({
        id: `fct_bench_${next}_${randomBytes(4).toString('hex')}`,
        name: 'purchase',
        participantId: `p${1 + Math.floor(Math.random() * ENTRIES)}`,
        engagementId: null,
        properties: { amount: 1 + Math.floor(Math.random() * 100) },
        occurredAt: new Date(base + next),
        source: 'event',
        evaluateChallenges: false,
      });
    }
    // Entries are locked in one order by every transaction (participant id), as a batch
    // ingestion path should do: concurrent batches then cannot deadlock on each other.
    return batch.sort((a, b) => (a.participantId < b.participantId ? -1 : a.participantId > b.participantId ? 1 : 0));
  };
  await Promise.all(
    Array.from({ length: SCORING_WORKERS }, async () => {
      for (let batch = makeBatch(); batch; batch = makeBatch()) await handle(batch);
    }),
  );
}

runBench(main);
