/**
 * Flash crowd on one spin wheel (issue 37): `npm run bench -- spins`
 *
 * A push notification sends a crowd to one wheel: every spin is a new
 * participant's first attempt. Starts its own embedded PostgreSQL (or uses
 * BENCH_DATABASE_URL, an owner URL of an empty database) and the service as
 * `npm start` runs it (one process, SERVICE_ROLE=all, compiled), publishes a
 * wheel whose segments are a coupon from a pool of 50 codes, 10 points and
 * "try again", plus 1 point on every completion, and opens one session per
 * participant before the load (the crowd's pages did that when they loaded).
 *
 * For each offered rate (BENCH_SPINS_RATES, default 300,600,1000 per second),
 * open loop for BENCH_SECONDS (default 10): request i leaves at start + i /
 * rate whatever the answers, and its latency counts from that moment. Beside
 * it, the baseline `GET /healthz` (a bare Fastify route in the same process)
 * at the same rate.
 *
 * After the run the database is checked: every 2xx is exactly one completed
 * attempt, one ledger entry per point award, no participant completed twice,
 * at most 50 coupons claimed and no code handed out twice. Exits non-zero
 * otherwise. BENCH_SPINS_STATEMENTS=1 prints each rate's top statements
 * (pg_stat_statements); BENCH_SPINS_PROFILE=<dir> runs the service with
 * `--cpu-prof` (read it with `node scripts/cpu-profile-summary.mjs`). The
 * service's peak resident memory is sampled from /proc every 200 ms.
 * BENCH_SPINS_WAITS=1 samples what the database's active backends wait on
 * (pg_stat_activity, every 50 ms) and prints the counts per rate.
 * Loopback only; bounded in time; prints a markdown table.
 */
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Pool as HttpPool } from 'undici';
import { freePort, offerOpenLoop, residentMb, openBenchDatabase, openStatementsTable, percentile, STATEMENTS_SETTINGS, runBench, startServiceProcess, stopServiceProcess, OPEN_LOOP_HEADER, openLoopCells, cpuMs, tenantPoster, healthzSender, completeWithActions, type OpenLoopRow } from './support.js';
import { migrate } from '../src/platform/migrate.js';
import { Database } from '../src/platform/db.js';
import { createTenant } from '../src/modules/access/index.js';

const RATES = (process.env.BENCH_SPINS_RATES ?? '300,600,1000').split(',').map((rate) => Number(rate.trim()));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
if (RATES.some((rate) => !(rate > 0 && Number.isFinite(rate))) || !(SECONDS > 0)) throw new Error('BENCH_SPINS_RATES must list positive rates and BENCH_SECONDS be positive');
const PROFILE_DIR = process.env.BENCH_SPINS_PROFILE ? path.resolve(process.env.BENCH_SPINS_PROFILE) : null;
const STATEMENTS = process.env.BENCH_SPINS_STATEMENTS === '1';
const STATEMENTS_TOP = 25;
const WAITS = process.env.BENCH_SPINS_WAITS === '1';
const CODES = 50;
const P99_TARGET_MS = 100;
const TARGET_RATE = 1000;
const HTTP_CONNECTIONS = 512;
const WARMUP_RATE = 100;
const WARMUP_SECONDS = 3;
/** Sessions opened at once while setting up. */
const SETUP_CONCURRENCY = 32;

const runId = randomBytes(4).toString('hex');

function progress(message: string): void {
  process.stderr.write(`[spins] ${new Date().toISOString()} ${message}\n`);
}

async function main(): Promise<void> {
  const database = await openBenchDatabase('spins', STATEMENTS ? { settings: STATEMENTS_SETTINGS } : {});
  const { ownerUrl, appPassword, appUrl } = database;
  await migrate(ownerUrl, appPassword);
  const db = new Database(appUrl, ownerUrl, 2);
  let service: ChildProcess | null = null;
  let http: HttpPool | null = null;
  let sampler: NodeJS.Timeout | null = null;
  const loadAtStart = os.loadavg()[0];
  try {
    const statements = await openStatementsTable(db.system, STATEMENTS, STATEMENTS_TOP);
    const tenant = await createTenant(db, { name: 'Bench', slug: `bench-${runId}`, plan: 'enterprise', requestsPerMinute: 100_000_000 });
    const port = await freePort();
    progress(`starting the service (SERVICE_ROLE=all${PROFILE_DIR ? `, CPU profile into ${PROFILE_DIR}` : ''})`);
    service = await startServiceProcess({ ownerUrl, port, role: 'all', profileDir: PROFILE_DIR });
    let peakRss = 0;
    sampler = setInterval(() => (peakRss = Math.max(peakRss, residentMb(service?.pid) || 0)), 200);
    http = new HttpPool(`http://127.0.0.1:${port}`, { connections: HTTP_CONNECTIONS });
    const call = tenantPoster(http, tenant.api_key);

    await call('/api/v1/admin/rewards', { id: 'flash-coupon', name: '50% off', type: 'coupon', code_source: 'pool', metadata: { discount_percent: 50 } });
    await call('/api/v1/admin/rewards/flash-coupon/codes', { codes: Array.from({ length: CODES }, (_, i) => `FLASH-${runId}-${i}`) });
    const engagement = await call('/api/v1/admin/engagements', {
      name: 'Flash wheel',
      site_slug: 'flash',
      activities: [
        {
          id: 'wheel',
          type: 'spin_wheel',
          max_attempts: 1,
          segments: [
            { label: '50% off', prize_type: 'reward', reward_id: 'flash-coupon', weight: 1 },
            { label: '10 points', prize_type: 'points', prize_value: 10, weight: 5 },
            { label: 'Try again', prize_type: 'none', weight: 4 },
          ],
          on_completion: [{ type: 'award_points', amount: 1, reason: 'spun', when: 'always' }],
        },
      ],
    });
    await call(`/api/v1/admin/engagements/${engagement.id}/publish`);

    const total = Math.round(WARMUP_RATE * WARMUP_SECONDS + RATES.reduce((sum, rate) => sum + rate * SECONDS, 0));
    progress(`opening ${total} sessions, one per participant`);
    const sessions: string[] = new Array(total);
    let nextSession = 0;
    await Promise.all(
      Array.from({ length: SETUP_CONCURRENCY }, async () => {
        for (let i = nextSession++; i < total; i = nextSession++) {
          const session = await call('/api/v1/sessions', { participant_id: `crowd-${i}`, engagement_id: engagement.id, ttl_seconds: 3600 });
          sessions[i] = session.session_id as string;
        }
      }),
    );
    // The crowd's participants exist now (a session creates its participant): statistics as autovacuum would
    // gather them on a live database, so that plans are not made for the empty tables of a fresh one.
    await db.system.query('ANALYZE');
    let used = 0;
    // Each spin is the next participant's first attempt, with its session, never the tenant's key.
    const spin = () => completeWithActions(http!, 'wheel', { session_id: sessions[used++], engagement_id: engagement.id, activity_type: 'spin_wheel' });
    const healthz = healthzSender(http);

    progress(`warming up (${WARMUP_RATE}/s for ${WARMUP_SECONDS} s)`);
    const warmup = await offerOpenLoop(WARMUP_RATE, WARMUP_SECONDS, spin);
    if (warmup.failures > 0) throw new Error(`warm-up: ${warmup.failures} spins failed, the first: ${warmup.firstFailure}`);
    let answered = warmup.latencies.length;

    const rows: OpenLoopRow[] = [];
    const rss: Array<{ rate: number; mb: number }> = [];
    const cpu: Array<{ rate: number; machine: number; service: number }> = [];
    for (const rate of RATES) {
      progress(`${rate}/s for ${SECONDS} s: baseline, then spins`);
      rows.push({ rate, scenario: 'baseline: GET /healthz', result: await offerOpenLoop(rate, SECONDS, healthz) });
      await statements.reset();
      peakRss = 0;
      const waits = new Map<string, number>();
      const waitSampler = WAITS
        ? setInterval(() => {
            void db.system
              .query<{ wait: string; n: number }>(
                `SELECT coalesce(wait_event_type || ':' || wait_event, 'on CPU') || ' | ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS wait, count(*)::int AS n
                 FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid() GROUP BY 1`,
              )
              .then(({ rows }) => rows.forEach((row) => waits.set(row.wait, (waits.get(row.wait) ?? 0) + row.n)), () => undefined);
          }, 50)
        : null;
      const cpuBefore = cpuMs(service.pid);
      const result = await offerOpenLoop(rate, SECONDS, spin);
      const cpuAfter = cpuMs(service.pid);
      const spins = Math.max(1, result.latencies.length);
      cpu.push({ rate, machine: (cpuAfter.machine - cpuBefore.machine) / spins, service: (cpuAfter.process - cpuBefore.process) / spins });
      if (waitSampler) {
        clearInterval(waitSampler);
        const sorted = [...waits].sort((a, b) => b[1] - a[1]).slice(0, 15);
        process.stdout.write(`\n### Active backends at ${rate}/s, sampled every 50 ms (wait event | statement)\n\n${sorted.map(([wait, n]) => `- ${n} × ${wait}`).join('\n')}\n`);
      }
      rss.push({ rate, mb: peakRss });
      rows.push({ rate, scenario: 'spin (first attempt of a new participant)', result });
      await statements.print(`spins at ${rate}/s`);
      answered += result.latencies.length;
    }

    const { rows: counted } = await db.system.query<{ attempts: number; participants: number; claims: number; codes: number; ledger: number; points_awards: number }>(
      `SELECT (SELECT count(*)::int FROM activity_attempts WHERE tenant_id = $1 AND status = 'completed') AS attempts,
              (SELECT count(DISTINCT participant_id)::int FROM activity_attempts WHERE tenant_id = $1 AND status = 'completed') AS participants,
              (SELECT count(*)::int FROM reward_claims WHERE tenant_id = $1) AS claims,
              (SELECT count(DISTINCT code)::int FROM reward_claims WHERE tenant_id = $1 AND code IS NOT NULL) AS codes,
              (SELECT count(*)::int FROM points_ledger WHERE tenant_id = $1) AS ledger,
              (SELECT count(*)::int FROM activity_attempts WHERE tenant_id = $1 AND status = 'completed' AND result ->> 'prize_type' = 'points') AS points_awards`,
      [tenant.tenant_id],
    );
    console.log(`\nOpen loop, ${SECONDS} s per rate and scenario, one new participant per spin, a coupon pool of ${CODES} codes, ${os.cpus().length} cores, load average ${loadAtStart.toFixed(1)} at the start\n`);
    console.log(OPEN_LOOP_HEADER);
    for (const row of rows) console.log(openLoopCells(row));
    console.log(
      `\nCPU per spin (the whole machine, the sender included; of it the service's Node process): ${cpu.map(({ rate, machine, service }) => `${rate}/s ${machine.toFixed(2)} ms, ${service.toFixed(2)} ms`).join('; ')}.`,
    );
    console.log(`Service peak resident memory per rate: ${rss.map(({ rate, mb }) => `${rate}/s ${mb.toFixed(0)} MB`).join(', ')}.`);
    const { attempts, participants, claims, codes, ledger, points_awards } = counted[0];
    console.log(`Database after the run: ${attempts} completed attempts of ${participants} participants, ${claims} coupons claimed with ${codes} distinct codes, ${ledger} ledger entries; spins answered 2xx (warm-up included): ${answered}.`);
    const target = rows.find((row) => row.rate === TARGET_RATE && row.scenario.startsWith('spin'));
    if (target) {
      const p99 = percentile(target.result.latencies, 99);
      console.log(`Spin p99 at ${TARGET_RATE}/s: ${p99.toFixed(1)} ms against the target of ${P99_TARGET_MS} ms: ${p99 < P99_TARGET_MS && target.result.failures === 0 ? 'met' : 'NOT met'}.`);
    }
    const wrong: string[] = [];
    if (attempts !== answered) wrong.push(`${attempts} completed attempts for ${answered} spins answered 2xx`);
    if (participants !== attempts) wrong.push(`${attempts - participants} participants completed twice`);
    if (claims > CODES) wrong.push(`${claims} coupons claimed from a pool of ${CODES}`);
    if (codes !== claims) wrong.push(`${claims} claims hold ${codes} distinct codes`);
    if (ledger !== attempts + points_awards) wrong.push(`${ledger} ledger entries for ${attempts} completions and ${points_awards} point prizes`);
    if (wrong.length) throw new Error(`the database does not match the answers: ${wrong.join('; ')}`);
  } finally {
    if (sampler) clearInterval(sampler);
    await http?.close();
    if (service) await stopServiceProcess(service);
    await db.close();
    await database.stop();
  }
}

runBench(main);
