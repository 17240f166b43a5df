/**
 * Activity completion benchmark (issue 19, item 4): `npm run bench -- activities`
 *
 * Starts its own embedded PostgreSQL (or uses BENCH_DATABASE_URL, an owner
 * URL of an empty database) and the service as `npm start` runs it (one
 * process, SERVICE_ROLE=all, compiled), publishes an engagement whose quiz
 * awards points and claims a reward (a generated coupon code) on completion,
 * and opens a session for each of BENCH_PARTICIPANTS participants (default 512).
 *
 * For each offered rate (BENCH_ACTIVITIES_RATES, default 100,200,300,400 per
 * second), open loop for BENCH_SECONDS (default 15): request i leaves at
 * start + i / rate whatever the answers, and its latency counts from that
 * moment.
 *
 * - baseline: `GET /healthz`, a bare Fastify route, at the same rate;
 * - complete-with-actions: award_points + award_reward, each request a new
 *   attempt of the next participant — attempt, ledger entry, lot, balance,
 *   claim with its code, fact, and four outbox events in one transaction.
 *
 * After the run the completed attempts, claims and ledger entries are counted
 * in the database: every 2xx must be exactly one completion. Exits non-zero
 * when they differ. BENCH_ACTIVITIES_PROFILE=<dir> runs the service with
 * `--cpu-prof` into <dir> (read it with `node scripts/cpu-profile-summary.mjs`);
 * BENCH_ACTIVITIES_STATEMENTS=1 prints each rate's top statements by total
 * time (pg_stat_statements).
 * Loopback only; bounded in time; prints a markdown table.
 */
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Pool as HttpPool } from 'undici';
import { freePort, offerOpenLoop, openBenchDatabase, openStatementsTable, percentile, STATEMENTS_SETTINGS, runBench, startServiceProcess, stopServiceProcess, warmUp, OPEN_LOOP_HEADER, openLoopCells, tenantPoster, healthzSender, completeWithActions, type OpenLoopRow } from './support.js';
import { migrate } from '../src/platform/migrate.js';
import { Database } from '../src/platform/db.js';
import { createTenant } from '../src/modules/access/index.js';

const RATES = (process.env.BENCH_ACTIVITIES_RATES ?? '100,200,300,400').split(',').map((rate) => Number(rate.trim()));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const PARTICIPANTS = Number(process.env.BENCH_PARTICIPANTS ?? 512);
if (RATES.some((rate) => !(rate > 0 && Number.isFinite(rate))) || !(SECONDS > 0) || !(PARTICIPANTS > 0)) {
  throw new Error(`BENCH_ACTIVITIES_RATES must list positive rates, BENCH_SECONDS and BENCH_PARTICIPANTS be positive`);
}
const PROFILE_DIR = process.env.BENCH_ACTIVITIES_PROFILE ? path.resolve(process.env.BENCH_ACTIVITIES_PROFILE) : null;
const STATEMENTS = process.env.BENCH_ACTIVITIES_STATEMENTS === '1';
const STATEMENTS_TOP = 25;
const P99_TARGET_MS = 100;
const TARGET_RATE = 200;
/** Enough sockets that the sender never waits for one below a few hundred requests in flight. */
const HTTP_CONNECTIONS = 256;
const WARMUP_RATE = 100;
const WARMUP_SECONDS = 3;

const runId = randomBytes(4).toString('hex');

function progress(message: string): void {
  process.stderr.write(`[activities] ${new Date().toISOString()} ${message}\n`);
}

async function main(): Promise<void> {
  const database = await openBenchDatabase('activities', STATEMENTS ? { settings: STATEMENTS_SETTINGS } : {});
  const { ownerUrl, appPassword, appUrl } = database;
  await migrate(ownerUrl, appPassword);
  const db = new Database(appUrl, ownerUrl, 2);
  let service: ChildProcess | null = null;
  let http: HttpPool | null = null;
  const loadAtStart = os.loadavg()[0];
  try {
    const statements = await openStatementsTable(db.system, STATEMENTS, STATEMENTS_TOP);
    const tenant = await createTenant(db, { name: 'Bench', slug: `bench-${runId}`, plan: 'enterprise', requestsPerMinute: 100_000_000 });
    const port = await freePort();
    progress(`starting the service (SERVICE_ROLE=all${PROFILE_DIR ? `, CPU profile into ${PROFILE_DIR}` : ''})`);
    service = await startServiceProcess({ ownerUrl, port, role: 'all', profileDir: PROFILE_DIR });
    http = new HttpPool(`http://127.0.0.1:${port}`, { connections: HTTP_CONNECTIONS });
    const call = tenantPoster(http, tenant.api_key);

    await call('/api/v1/admin/rewards', { id: 'bench-coupon', name: '5% off', type: 'coupon', metadata: { discount_percent: 5 } });
    const engagement = await call('/api/v1/admin/engagements', {
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
    await call(`/api/v1/admin/engagements/${engagement.id}/publish`);
    const sessions: string[] = [];
    for (let i = 0; i < PARTICIPANTS; i++) {
      const session = await call('/api/v1/sessions', { participant_id: `bench-${i}`, engagement_id: engagement.id, ttl_seconds: 3600 });
      sessions.push(session.session_id as string);
    }
    const answers = [
      { question_id: 'q1', selected_option: 0 },
      { question_id: 'q2', selected_option: 1 },
    ];
    const complete = (i: number) =>
      completeWithActions(http!, 'quiz', { session_id: sessions[i % sessions.length], engagement_id: engagement.id, activity_type: 'quiz', payload: { answers } });
    const healthz = healthzSender(http);

    progress(`warming up (${WARMUP_RATE} completions and ${WARMUP_RATE} GET /healthz a second for ${WARMUP_SECONDS} s)`);
    let answered = (await warmUp(WARMUP_RATE, WARMUP_SECONDS, { completions: complete, 'GET /healthz': healthz })).completions;

    const rows: OpenLoopRow[] = [];
    for (const rate of RATES) {
      progress(`${rate}/s for ${SECONDS} s: baseline, then completions`);
      rows.push({ rate, scenario: 'baseline: GET /healthz', result: await offerOpenLoop(rate, SECONDS, healthz) });
      await statements.reset();
      const result = await offerOpenLoop(rate, SECONDS, complete);
      rows.push({ rate, scenario: 'complete-with-actions', result });
      await statements.print(`completions at ${rate}/s`);
      answered += result.latencies.length;
    }

    // The figures count only real completions: check them against the database.
    const { rows: counted } = await db.system.query<{ attempts: number; claims: number; ledger: number }>(
      `SELECT (SELECT count(*)::int FROM activity_attempts WHERE tenant_id = $1 AND status = 'completed') AS attempts,
              (SELECT count(*)::int FROM reward_claims WHERE tenant_id = $1) AS claims,
              (SELECT count(*)::int FROM points_ledger WHERE tenant_id = $1) AS ledger`,
      [tenant.tenant_id],
    );
    console.log(`\nOpen loop, ${SECONDS} s per rate and scenario, ${PARTICIPANTS} participants, ${os.cpus().length} cores, load average ${loadAtStart.toFixed(1)} at the start\n`);
    console.log(OPEN_LOOP_HEADER);
    for (const row of rows) console.log(openLoopCells(row));
    const { attempts, claims, ledger } = counted[0];
    console.log(`\nDatabase after the run: ${attempts} completed attempts, ${claims} reward claims, ${ledger} ledger entries; completions answered 2xx (warm-up included): ${answered}.`);
    const target = rows.find((row) => row.rate === TARGET_RATE && row.scenario === 'complete-with-actions');
    if (target) {
      const p99 = percentile(target.result.latencies, 99);
      console.log(`Completion p99 at ${TARGET_RATE}/s: ${p99.toFixed(1)} ms against the target of ${P99_TARGET_MS} ms: ${p99 < P99_TARGET_MS ? 'met' : 'NOT met'}.`);
    }
    if (attempts !== answered || claims !== answered || ledger !== answered) {
      throw new Error(`the database holds ${attempts} attempts, ${claims} claims and ${ledger} ledger entries for ${answered} completions answered 2xx`);
    }
  } finally {
    await http?.close();
    if (service) await stopServiceProcess(service);
    await db.close();
    await database.stop();
  }
}

runBench(main);
