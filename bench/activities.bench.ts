/**
 * Activity completion benchmark: `npx tsx bench/activities.bench.ts`
 *
 * Starts its own embedded PostgreSQL (or uses BENCH_DATABASE_URL, an owner
 * URL of an empty database) and the service's HTTP API on a loopback port,
 * publishes an engagement whose quiz awards points and claims a reward
 * (a generated coupon code) on completion, and measures with autocannon at
 * 64 connections, in one run:
 *
 * - baseline: `GET /healthz`, a bare Fastify route;
 * - validate: `POST /activities/{id}/validate` of the quiz (session check,
 *   activity look-up and answer check; no writes);
 * - complete-with-actions: award_points + award_reward, each request a new
 *   attempt of one of BENCH_PARTICIPANTS participants — attempt, ledger entry,
 *   lot, balance, claim with its code, fact, and four outbox events in one
 *   transaction.
 *
 * Loopback only; bounded in time; prints a markdown table and exits.
 */
import os from 'node:os';
import autocannon from 'autocannon';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config.js';
import { openBenchDatabase, runBench } from './support.js';
import { startService } from '../src/service.js';
import { createLogger } from '../src/platform/logger.js';
import { createTenant } from '../src/modules/access/index.js';

const CONNECTIONS = 64;
const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PARTICIPANTS = Number(process.env.BENCH_PARTICIPANTS ?? 512);
const P99_TARGET_MS = 100;

interface Row {
  scenario: string;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

async function run(title: string, options: autocannon.Options): Promise<Row> {
  const result = await autocannon({ connections: CONNECTIONS, duration: DURATION_SECONDS, ...options });
  const ok = result['2xx'];
  return {
    scenario: title,
    requests: ok,
    perSecond: Math.round(ok / DURATION_SECONDS),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

async function main(): Promise<void> {
  const log = createLogger('warn');
  const database = await openBenchDatabase('activities');
  const { ownerUrl, appPassword, appUrl } = database;
  const config = loadConfig({
    APP_ENV: 'development',
    DATABASE_URL: ownerUrl,
    DB_APP_PASSWORD: appPassword,
    SERVICE_ROLE: 'api',
    HOST: '127.0.0.1',
    PORT: '0',
    DB_POOL_SIZE: process.env.BENCH_POOL ?? '20',
    RATE_LIMIT_IP_PER_MINUTE: '10000000',
    RATE_LIMIT_KEY_PER_MINUTE: '10000000',
    LOG_LEVEL: 'warn',
  });
  const service = await startService({ config, log, server: { ownerUrl, appUrl, stop: async () => undefined } });
  const base = `http://127.0.0.1:${(service.app!.server.address() as AddressInfo).port}`;
  try {
    const tenant = await createTenant(service.db, { name: 'Bench', slug: `bench-${process.pid}`, plan: 'enterprise', adminEmail: `admin@bench-${process.pid}.example`, requestsPerMinute: 10_000_000 });
    const key = tenant.api_key;
    const call = async (method: string, url: string, body?: unknown) => {
      const headers: Record<string, string> = body === undefined ? { 'x-api-key': key } : { 'x-api-key': key, 'content-type': 'application/json' };
      const response = await fetch(`${base}${url}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${text}`);
      return JSON.parse(text);
    };
    await call('POST', '/api/v1/admin/rewards', { id: 'bench-coupon', name: '5% off', type: 'coupon', metadata: { discount_percent: 5 } });
    const engagement = await call('POST', '/api/v1/admin/engagements', {
      name: 'Bench',
      site_slug: 'bench',
      activities: [
        {
          id: 'quiz',
          type: 'quiz',
          max_attempts: 1_000_000,
          pass_percent: 50,
          questions: [
            { id: 'q1', text: 'One?', options: ['a', 'b'], correct_option: 0 },
            { id: 'q2', text: 'Two?', options: ['a', 'b'], correct_option: 1 },
          ],
          on_completion: [
            { type: 'award_points', amount: 10 },
            { type: 'award_reward', reward_id: 'bench-coupon' },
          ],
        },
      ],
    });
    await call('POST', `/api/v1/admin/engagements/${engagement.id}/publish`);
    const sessions: string[] = [];
    for (let i = 0; i < PARTICIPANTS; i++) {
      const session = await call('POST', '/api/v1/sessions', { participant_id: `bench-${i}`, engagement_id: engagement.id, ttl_seconds: 3600 });
      sessions.push(session.session_id);
    }
    const answers = [
      { question_id: 'q1', selected_option: 0 },
      { question_id: 'q2', selected_option: 1 },
    ];
    let next = 0;
    const body = () => JSON.stringify({ session_id: sessions[next++ % sessions.length], engagement_id: engagement.id, activity_type: 'quiz', payload: { answers } });
    const json = { 'content-type': 'application/json' };

    const rows: Row[] = [];
    rows.push(await run('baseline: GET /healthz (bare route)', { url: `${base}/healthz` }));
    rows.push(
      await run('validate (quiz, no writes)', {
        url: `${base}/api/v1/activities/quiz/validate`,
        method: 'POST',
        headers: json,
        requests: [{ setupRequest: (request) => ({ ...request, body: body() }) }],
      }),
    );
    rows.push(
      await run('complete-with-actions: award_points + award_reward', {
        url: `${base}/api/v1/activities/quiz/complete-with-actions`,
        method: 'POST',
        headers: json,
        requests: [{ setupRequest: (request) => ({ ...request, body: body() }) }],
      }),
    );

    // The figures count only real completions: check them against the database.
    const { rows: counted } = await service.db.system.query(
      `SELECT (SELECT count(*)::int FROM activity_attempts WHERE tenant_id = $1 AND status = 'completed') AS attempts,
              (SELECT count(*)::int FROM reward_claims WHERE tenant_id = $1) AS claims,
              (SELECT count(*)::int FROM points_ledger WHERE tenant_id = $1) AS ledger`,
      [tenant.tenant_id],
    );
    const completion = rows[2];
    console.log(`\n${CONNECTIONS} connections, ${DURATION_SECONDS} s per scenario, ${PARTICIPANTS} participants, DB pool ${config.dbPoolSize}, ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)}\n`);
    console.log('| scenario | 2xx responses | per second | p50 ms | p99 ms | errors |');
    console.log('|---|---|---|---|---|---|');
    for (const row of rows) console.log(`| ${row.scenario} | ${row.requests} | ${row.perSecond} | ${row.p50} | ${row.p99} | ${row.errors} |`);
    console.log(`\nDatabase after the run: ${counted[0].attempts} completed attempts, ${counted[0].claims} reward claims, ${counted[0].ledger} ledger entries (completions answered 2xx: ${completion.requests}).`);
    console.log(`Completion p99 ${completion.p99} ms against the target of ${P99_TARGET_MS} ms: ${completion.p99 < P99_TARGET_MS ? 'met' : 'NOT met'}.`);
  } finally {
    await service.stop();
    await database.stop();
  }
}

runBench(main);
