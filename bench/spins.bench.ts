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
 * BENCH_SPINS_TIMELINE=1 prints p50/p99 per second of each run.
 *
 * The service's first crowd: right after the warm-up (WARMUP_RATE for
 * WARMUP_SECONDS), before the rates, a crowd at TARGET_RATE for BENCH_SECONDS
 * meets a service that has served only the warm-up's spins. V8 has not yet
 * compiled the spin's code for a crowd: its optimizing compiler took about a
 * second of CPU in the crowd's first two seconds, against 0.1 s a second
 * later (docs/performance.md, "Spins: the service's first crowd"). The rates
 * that follow meet a service whose code is compiled, as a service that has
 * been running a while is. Both are printed and judged against the goal, with
 * their own statement tables; BENCH_SPINS_FIRST_CROWD=0 leaves the first
 * crowd out.
 *
 * The warm-up sends both kinds of request the run measures, the spins and the
 * baseline's `GET /healthz`, at WARMUP_RATE each, as a running service has
 * served both (a load balancer probes it all along). Until 5 Dec it sent
 * spins only: the code the spins share with `/healthz` (Node's HTTP server,
 * Fastify's reply, the platform's hooks) was then optimised for the spins'
 * requests alone, the baseline's ten seconds of `/healthz` that come before
 * each rate's spins deoptimised it (48 deoptimisations in one second, V8's
 * log, "wrong map"), and the crowd after them paid for compiling it again:
 * p99 76-148 ms in five runs, against 35-82 ms in six of eight (108.5 and
 * 124.5 in the others) with both in the warm-up (docs/performance.md,
 * "Spins: the warm-up serves both requests"; support.ts's `warmUp`).
 *
 * The limit, measured in the same run: "the spin's writes as one message"
 * offers the least database work a spin needs at the same rate, from this
 * process over as many connections as the service's pool: the service's own
 * statements (the attempt taken, the prize's grant, the completion's grant,
 * the attempt and fact recorded, activity.completed) with their events and
 * what the outbox's followers write, in ONE extended-protocol message and
 * transaction (`db.tenantInOneTrip`), nothing read first (the wheel and the
 * draw from memory, no session look-up, no HTTP). Its prize is drawn as the
 * service draws once the coupons are gone (10 points 5 times in 9, nothing
 * 4 times in 9). BENCH_SPINS_LIMIT=0 leaves it out. BENCH_SPINS_GROUP=<n> adds
 * the limit with group commit: the spins that arrive while
 * BENCH_SPINS_GROUP_IN_FLIGHT (default 2) messages are in the database go
 * together, up to n, in one message and transaction (their grants one
 * statement per round, their events one; BENCH_SPINS_GROUP_SETS=0 keeps each
 * spin's own statements; BENCH_SPINS_GROUP_TRIPS=1 sends them one spin after
 * another, each in a savepoint and three round trips, in one transaction).
 * The spins and the baseline go through a raw-socket sender (raw-http.ts), which
 * takes less of the shared machine than an HTTP client library (this process
 * at 0.11–0.13 against 0.18 ms of CPU per spin, docs/performance.md);
 * BENCH_SPINS_SENDER=undici sends them
 * through undici's pool, as until 4 Dec. BENCH_SPINS_SERVICE_ROOT=<dir>
 * runs the service of another checkout (an older commit in a worktree).
 * Loopback only; bounded in time; prints a markdown table.
 */
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Pool as HttpPool } from 'undici';
import type pg from 'pg';
import { freePort, offerOpenLoop, residentMb, openBenchDatabase, openStatementsTable, percentile, STATEMENTS_SETTINGS, runBench, startServiceProcess, stopServiceProcess, warmUp, OPEN_LOOP_HEADER, openLoopCells, perSecond, cpuMs, cpuMsOfProcesses, tenantPoster, healthzSender, completeWithActions, type OpenLoopRow } from './support.js';
import { RawHttpSender, type RawAnswer } from './raw-http.js';
import { migrate } from '../src/platform/migrate.js';
import { Database } from '../src/platform/db.js';
import { createTenant } from '../src/modules/access/index.js';
import { loadModules } from '../src/platform/module.js';
import { prefixedId } from '../src/platform/ids.js';
import { emitStatement } from '../src/platform/outbox.js';
import { runStatements, type Statement, type Tx } from '../src/platform/db.js';
import { grantValues } from '../src/modules/points/ledger.js';
import { grantEventsWritten, grantStatement, type GrantValues } from '../src/modules/points/ledger-store.js';
import type { OutboxEvent } from '../src/platform/outbox.js';
import { recordCompletionStatement, takeAttemptsStatement, attemptTaken } from '../src/modules/activities/store.js';

const RATES = (process.env.BENCH_SPINS_RATES ?? '300,600,1000').split(',').map((rate) => Number(rate.trim()));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
if (RATES.some((rate) => !(rate > 0 && Number.isFinite(rate))) || !(SECONDS > 0)) throw new Error('BENCH_SPINS_RATES must list positive rates and BENCH_SECONDS be positive');
const PROFILE_DIR = process.env.BENCH_SPINS_PROFILE ? path.resolve(process.env.BENCH_SPINS_PROFILE) : null;
const STATEMENTS = process.env.BENCH_SPINS_STATEMENTS === '1';
const STATEMENTS_TOP = 25;
const LIMIT = process.env.BENCH_SPINS_LIMIT !== '0';
/** BENCH_SPINS_SERVICE_ROOT=<checkout>: the service of another checkout (its `npm ci` done, the same migrations), to compare two commits in alternating runs. */
const SERVICE_ROOT = process.env.BENCH_SPINS_SERVICE_ROOT ? path.resolve(process.env.BENCH_SPINS_SERVICE_ROOT) : undefined;
/** The service's database pool (DB_POOL_SIZE's default): the limit's message is offered over as many connections. */
const SERVICE_POOL = 20;
const WAITS = process.env.BENCH_SPINS_WAITS === '1';
/**
 * BENCH_SPINS_GROUP=<n>: the limit once more with group commit: the spins waiting while GROUP_IN_FLIGHT messages
 * are in the database go together, up to n, in one message and transaction (their grants one statement per round,
 * their events one statement): what a spin costs when a crowd's spins share a commit. 0 (the default) leaves it out.
 */
const GROUP = Number(process.env.BENCH_SPINS_GROUP ?? 0);
const GROUP_IN_FLIGHT = Number(process.env.BENCH_SPINS_GROUP_IN_FLIGHT ?? 2);
/** BENCH_SPINS_GROUP_SETS=0: each spin of a group keeps its own statements (the commit shared, nothing set-based). */
const GROUP_SETS = process.env.BENCH_SPINS_GROUP_SETS !== '0';
/**
 * BENCH_SPINS_GROUP_TRIPS=1: a group's spins one after another in its transaction, each in a savepoint and in
 * three round trips as the service sends them (the take; the grants; the record, the event and the release):
 * the commit shared, the round trips not.
 */
const GROUP_TRIPS = process.env.BENCH_SPINS_GROUP_TRIPS === '1';
const TIMELINE = process.env.BENCH_SPINS_TIMELINE === '1';
const FIRST_CROWD = process.env.BENCH_SPINS_FIRST_CROWD !== '0';
const SPIN_SCENARIO = 'spin (first attempt of a new participant)';
const FIRST_CROWD_SCENARIO = "spin, the service's first crowd (after the warm-up only)";
const CODES = 50;
const P99_TARGET_MS = 100;
const TARGET_RATE = 1000;
const HTTP_CONNECTIONS = 512;
/** BENCH_SPINS_SENDER=undici: the spins and the baseline through undici's pool rather than raw sockets. */
const UNDICI_SENDER = process.env.BENCH_SPINS_SENDER === 'undici';
const WARMUP_RATE = 100;
const WARMUP_SECONDS = 3;
/**
 * The server's checkpoints so far (timed and requested; `pg_stat_checkpointer`
 * from PostgreSQL 17, `pg_stat_bgwriter` before) and its write-ahead log
 * position in bytes: a checkpoint begun during a crowd makes every page's
 * first change after it write the whole page into the log.
 */
async function walState(pool: pg.Pool): Promise<{ checkpoints: number; walBytes: number }> {
  const { rows: [{ version }] } = await pool.query<{ version: number }>("SELECT current_setting('server_version_num')::int AS version");
  const counts = version >= 170000 ? 'SELECT num_timed + num_requested AS n FROM pg_stat_checkpointer' : 'SELECT checkpoints_timed + checkpoints_req AS n FROM pg_stat_bgwriter';
  const { rows: [row] } = await pool.query<{ checkpoints: string; wal_bytes: string }>(
    `SELECT (${counts})::text AS checkpoints, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS wal_bytes`,
  );
  return { checkpoints: Number(row.checkpoints), walBytes: Number(row.wal_bytes) };
}

/** Sessions opened at once while setting up. */
const SETUP_CONCURRENCY = 32;

const runId = randomBytes(4).toString('hex');

function progress(message: string): void {
  process.stderr.write(`[spins] ${new Date().toISOString()} ${message}\n`);
}

/** CPU milliseconds: the machine's, the service's Node process's, PostgreSQL's processes' and this process's. */
interface CpuSplit {
  machine: number;
  service: number;
  postgres: number;
  bench: number;
}

function cpuSplit(servicePid: number | undefined): CpuSplit {
  const { machine, process: service } = cpuMs(servicePid);
  const own = process.cpuUsage();
  return { machine, service, postgres: cpuMsOfProcesses('postgres'), bench: (own.user + own.system) / 1000 };
}

function perSpin(before: CpuSplit, after: CpuSplit, spins: number): CpuSplit {
  const per = (key: keyof CpuSplit) => (after[key] - before[key]) / Math.max(1, spins);
  return { machine: per('machine'), service: per('service'), postgres: per('postgres'), bench: per('bench') };
}

/**
 * The least database work of one spin (the limit above): the writes the
 * service makes for a first attempt, with its statements, as one message.
 */
interface SpinParts {
  participantId: string;
  /** The spin's take alone; a group's takes go as one statement (`groupTakes`). */
  take: Statement;
  taking: { participantId: string; attemptId: string; at: Date };
  grants: GrantValues[];
  record: Statement;
  event: OutboxEvent;
}

/**
 * The least database work of one spin (the limit above): the writes the
 * service makes for a first attempt, with its statements.
 */
function spinParts(tenantId: string, engagementId: string, participantId: string): SpinParts {
  const now = new Date();
  const key = { engagementId, activityId: 'wheel', participantId };
  const attemptId = prefixedId('att', 12);
  const won = Math.random() < 5 / 9;
  const result = won ? { segment_index: 1, prize_label: '10 points', prize_type: 'points' } : { segment_index: 2, prize_label: 'Try again', prize_type: 'none' };
  const source = { kind: 'activity' as const, id: attemptId };
  const grants = [
    ...(won ? [grantValues(tenantId, { participantId, amount: 10, reason: 'spin_wheel_prize', source, activityId: 'wheel', engagementId }, now)] : []),
    grantValues(tenantId, { participantId, amount: 1, reason: 'spun', source, activityId: 'wheel', engagementId }, now),
  ];
  const factId = prefixedId('fct', 12);
  const response = {
    success: true,
    actions_executed: grants.map((grant) => ({ type: 'award_points', source: grant.amount === 10 ? 'prize' : 'on_completion', points_awarded: grant.amount, new_balance: 11 })),
    fact_id: factId,
    attempt_id: attemptId,
    activity_type: 'spin_wheel',
    result,
    duplicate: false,
  };
  const fact = {
    id: factId,
    name: 'activity_completed',
    source: 'activity' as const,
    participantId,
    engagementId,
    activityId: 'wheel',
    properties: { activity_id: 'wheel', activity_type: 'spin_wheel', attempt_id: attemptId, ...result },
    evaluateChallenges: true,
    occurredAt: now,
  };
  const legacy = { participant_id: participantId, activity_id: 'wheel', fact_id: factId, activity_type: 'spin_wheel' };
  return {
    participantId,
    take: groupTakes(tenantId, engagementId, [{ participantId, attemptId, at: now }]),
    taking: { participantId, attemptId, at: now },
    grants,
    record: recordCompletionStatement(tenantId, [{ key, attemptId, activityType: 'spin_wheel', result, response, openedAt: now, at: now, wasOpen: false, fact }]),
    event: { event: 'activity.completed', participantId, engagementId, data: legacy, occurredAt: now },
  };
}

/** The takes of spins of the wheel, as the service sends a batch's: one statement. */
function groupTakes(tenantId: string, engagementId: string, takes: SpinParts['taking'][]): Statement {
  return takeAttemptsStatement(tenantId, { engagementId, activityId: 'wheel' }, { maxAttempts: 1, cooldownSeconds: 0, completing: true }, takes);
}

/** One spin's writes as one message: the take, each grant, the record and the event. */
function spinWrites(tenantId: string, spin: SpinParts): Statement[] {
  return [spin.take, ...spin.grants.map((grant) => grantStatement(tenantId, [grant], grantEventsWritten(1, null))), spin.record, emitStatement(tenantId, [spin.event], spin.event.occurredAt)];
}

/**
 * Several spins' writes as one message (group commit): the takes, the grants
 * in rounds of distinct participants (a spin's prize in the first, its
 * completion's points in the second), the records, and every event in one
 * statement. Answers each spin's take, in order.
 */
function groupWrites(tenantId: string, engagementId: string, spins: SpinParts[]): { statements: Statement[]; taken: (answers: unknown[][]) => boolean[] } {
  if (!GROUP_SETS) {
    return {
      statements: [...spins.map((spin) => spin.take), ...spins.flatMap((spin) => spinWrites(tenantId, spin).slice(1))],
      taken: (answers) => spins.map((spin, i) => attemptTaken(answers[i], spin.participantId)),
    };
  }
  const grants = [0, 1].map((round) => spins.flatMap((spin) => (spin.grants.length > round ? [spin.grants[round]] : []))).filter((round) => round.length > 0);
  return {
    taken: (answers) => spins.map((spin) => attemptTaken(answers[0], spin.participantId)),
    statements: [
      groupTakes(tenantId, engagementId, spins.map((spin) => spin.taking)),
      ...grants.map((round) => grantStatement(tenantId, round, grantEventsWritten(round.length, null))),
      ...spins.map((spin) => spin.record),
      emitStatement(tenantId, spins.map((spin) => spin.event)),
    ],
  };
}

/** The spins one after another in `tx`, each in a savepoint and three round trips (BENCH_SPINS_GROUP_TRIPS); answers each take. */
async function spinsInTrips(tx: Tx, tenantId: string, spins: SpinParts[]): Promise<unknown[][]> {
  const takes: unknown[][] = [];
  for (const spin of spins) {
    const [, taken] = await runStatements(tx, [{ text: 'SAVEPOINT spin', values: [] }, spin.take]);
    takes.push(taken);
    await runStatements(tx, spin.grants.map((grant) => grantStatement(tenantId, [grant], grantEventsWritten(1, null))));
    await runStatements(tx, [spin.record, emitStatement(tenantId, [spin.event], spin.event.occurredAt), { text: 'RELEASE SAVEPOINT spin', values: [] }]);
  }
  return takes;
}

async function main(): Promise<void> {
  const database = await openBenchDatabase('spins', STATEMENTS ? { settings: STATEMENTS_SETTINGS } : {});
  const { ownerUrl, appPassword, appUrl } = database;
  await migrate(ownerUrl, appPassword);
  // The statements' texts include what the modules' outbox followers write, as in the service.
  await loadModules();
  const db = new Database(appUrl, ownerUrl, SERVICE_POOL);
  let service: ChildProcess | null = null;
  let http: HttpPool | null = null;
  let raw: RawHttpSender | null = null;
  let sampler: NodeJS.Timeout | null = null;
  const loadAtStart = os.loadavg()[0];
  try {
    const statements = await openStatementsTable(db.system, STATEMENTS, STATEMENTS_TOP);
    const tenant = await createTenant(db, { name: 'Bench', slug: `bench-${runId}`, plan: 'enterprise', requestsPerMinute: 100_000_000 });
    const port = await freePort();
    progress(`starting the service (SERVICE_ROLE=all${PROFILE_DIR ? `, CPU profile into ${PROFILE_DIR}` : ''})`);
    service = await startServiceProcess({ ownerUrl, port, role: 'all', profileDir: PROFILE_DIR, root: SERVICE_ROOT });
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

    const total = Math.round(WARMUP_RATE * WARMUP_SECONDS + (FIRST_CROWD ? TARGET_RATE * SECONDS : 0) + RATES.reduce((sum, rate) => sum + rate * SECONDS, 0));
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
    raw = new RawHttpSender(port, HTTP_CONNECTIONS);
    const spinBody = () => ({ session_id: sessions[used++], engagement_id: engagement.id, activity_type: 'spin_wheel' });
    const spin = UNDICI_SENDER ? () => completeWithActions(http!, 'wheel', spinBody()) : () => expectOk(raw!.post('/api/v1/activities/wheel/complete-with-actions', spinBody()), 'complete-with-actions');
    const healthz = UNDICI_SENDER ? healthzSender(http) : () => expectOk(raw!.get('/healthz'), '/healthz');
    // The limit's participants exist before their spins, as the crowd's do (their sessions created them).
    // The group's spins take theirs after the limit's.
    const limitTotal = (LIMIT ? Math.round(WARMUP_RATE * WARMUP_SECONDS + RATES.reduce((sum, rate) => sum + rate * SECONDS, 0)) : 0) + (GROUP > 0 ? Math.round(RATES.reduce((sum, rate) => sum + rate * SECONDS, 0)) : 0);
    await db.system.query(`INSERT INTO participants (tenant_id, participant_id) SELECT $1, 'limit-' || i FROM generate_series(0, $2::int - 1) AS i`, [tenant.tenant_id, limitTotal]);
    await db.system.query('ANALYZE');
    let limitUsed = 0;
    const limitSpin = async () => {
      const participantId = `limit-${limitUsed++}`;
      const [taken] = await db.tenantInOneTrip(tenant.tenant_id, spinWrites(tenant.tenant_id, spinParts(tenant.tenant_id, engagement.id as string, participantId)));
      if (!attemptTaken(taken, participantId)) throw new Error('the limit\'s attempt was refused');
    };
    let limitAnswered = 0;
    // The limit with group commit (BENCH_SPINS_GROUP): spins wait while GROUP_IN_FLIGHT messages are in the database.
    const waiting: Array<{ spin: SpinParts; done: (error?: unknown) => void }> = [];
    let groupsInFlight = 0;
    const groupSizes: number[] = [];
    const sendGroup = () => {
      if (groupsInFlight >= GROUP_IN_FLIGHT || waiting.length === 0) return;
      const group = waiting.splice(0, GROUP);
      groupsInFlight++;
      groupSizes.push(group.length);
      const { statements, taken } = groupWrites(tenant.tenant_id, engagement.id as string, group.map((entry) => entry.spin));
      const sent = GROUP_TRIPS ? db.tenant(tenant.tenant_id, (tx) => spinsInTrips(tx, tenant.tenant_id, group.map((entry) => entry.spin))) : db.tenantInOneTrip(tenant.tenant_id, statements);
      sent.then(
        (answers) => {
          // In trips (BENCH_SPINS_GROUP_TRIPS) each spin's take is answered on its own.
          const took = GROUP_TRIPS ? group.map((entry, i) => attemptTaken(answers[i], entry.spin.participantId)) : taken(answers);
          group.forEach((entry, i) => entry.done(took[i] ? undefined : new Error("the group's attempt was refused")));
        },
        (error) => group.forEach((entry) => entry.done(error)),
      ).finally(() => {
        groupsInFlight--;
        sendGroup();
      });
    };
    const groupSpin = () =>
      new Promise<void>((resolve, reject) => {
        waiting.push({ spin: spinParts(tenant.tenant_id, engagement.id as string, `limit-${limitUsed++}`), done: (error) => (error ? reject(error) : resolve()) });
        sendGroup();
      });
    const groupCpu: Array<{ rate: number; size: number } & CpuSplit> = [];

    progress(`warming up (${WARMUP_RATE} spins and ${WARMUP_RATE} GET /healthz a second for ${WARMUP_SECONDS} s)`);
    let answered = (await warmUp(WARMUP_RATE, WARMUP_SECONDS, { spins: spin, 'GET /healthz': healthz })).spins;
    if (LIMIT) {
      const limitWarmup = await offerOpenLoop(WARMUP_RATE, WARMUP_SECONDS, limitSpin);
      if (limitWarmup.failures > 0) throw new Error(`the limit's warm-up: ${limitWarmup.failures} failed, the first: ${limitWarmup.firstFailure}`);
      limitAnswered += limitWarmup.latencies.length;
    }

    const rows: OpenLoopRow[] = [];
    const rss: Array<{ rate: number; mb: number }> = [];
    const cpu: Array<{ rate: number } & CpuSplit> = [];
    const limitCpu: Array<{ rate: number } & CpuSplit> = [];
    /**
     * Offers the crowd's spins at `rate` and measures them: the row, the CPU per spin, the service's peak resident
     * memory, the statement table (`title`), the server's checkpoints and write-ahead log during it and, with WAITS,
     * what the database's active backends waited on.
     */
    const offerSpins = async (rate: number, scenario: string, title: string): Promise<CpuSplit & { mb: number }> => {
      await statements.reset();
      const walBefore = await walState(db.system);
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
      const cpuBefore = cpuSplit(service?.pid);
      const result = await offerOpenLoop(rate, SECONDS, spin);
      const split = perSpin(cpuBefore, cpuSplit(service?.pid), result.latencies.length);
      const mb = peakRss;
      if (waitSampler) {
        clearInterval(waitSampler);
        const sorted = [...waits].sort((a, b) => b[1] - a[1]).slice(0, 15);
        process.stdout.write(`\n### Active backends, ${title}, sampled every 50 ms (wait event | statement)\n\n${sorted.map(([wait, n]) => `- ${n} × ${wait}`).join('\n')}\n`);
      }
      rows.push({ rate, scenario, result });
      const walAfter = await walState(db.system);
      progress(
        `${title}: ${walAfter.checkpoints - walBefore.checkpoints} checkpoints begun, ` +
          `${((walAfter.walBytes - walBefore.walBytes) / 1024 / Math.max(1, result.latencies.length)).toFixed(1)} kB of write-ahead log per spin`,
      );
      await statements.print(title);
      answered += result.latencies.length;
      return { ...split, mb };
    };
    let firstCrowd: (CpuSplit & { mb: number }) | null = null;
    if (FIRST_CROWD) {
      progress(`the service's first crowd: ${TARGET_RATE}/s for ${SECONDS} s`);
      firstCrowd = await offerSpins(TARGET_RATE, FIRST_CROWD_SCENARIO, `the service's first crowd at ${TARGET_RATE}/s`);
    }
    for (const rate of RATES) {
      progress(`${rate}/s for ${SECONDS} s: baseline, then spins`);
      rows.push({ rate, scenario: 'baseline: GET /healthz', result: await offerOpenLoop(rate, SECONDS, healthz) });
      if (LIMIT) {
        const before = cpuSplit(service.pid);
        const result = await offerOpenLoop(rate, SECONDS, limitSpin);
        limitCpu.push({ rate, ...perSpin(before, cpuSplit(service.pid), result.latencies.length) });
        rows.push({ rate, scenario: "limit: the spin's writes as one message from Node", result });
        limitAnswered += result.latencies.length;
      }
      if (GROUP > 0) {
        const before = cpuSplit(service.pid);
        groupSizes.length = 0;
        const result = await offerOpenLoop(rate, SECONDS, groupSpin);
        const size = groupSizes.reduce((sum, n) => sum + n, 0) / Math.max(1, groupSizes.length);
        groupCpu.push({ rate, size, ...perSpin(before, cpuSplit(service.pid), result.latencies.length) });
        rows.push({ rate, scenario: `limit with group commit: up to ${GROUP} spins a message, ${GROUP_IN_FLIGHT} in flight`, result });
        limitAnswered += result.latencies.length;
      }
      const { mb, ...split } = await offerSpins(rate, SPIN_SCENARIO, `spins at ${rate}/s`);
      cpu.push({ rate, ...split });
      rss.push({ rate, mb });
    }

    const { rows: counted } = await db.system.query<{ attempts: number; participants: number; claims: number; codes: number; ledger: number; points_awards: number; limit_attempts: number }>(
      `SELECT (SELECT count(*)::int FROM activity_attempts WHERE tenant_id = $1 AND status = 'completed' AND participant_id LIKE 'crowd-%') AS attempts,
              (SELECT count(DISTINCT participant_id)::int FROM activity_attempts WHERE tenant_id = $1 AND status = 'completed' AND participant_id LIKE 'crowd-%') AS participants,
              (SELECT count(*)::int FROM reward_claims WHERE tenant_id = $1) AS claims,
              (SELECT count(DISTINCT code)::int FROM reward_claims WHERE tenant_id = $1 AND code IS NOT NULL) AS codes,
              (SELECT count(*)::int FROM points_ledger WHERE tenant_id = $1 AND participant_id LIKE 'crowd-%') AS ledger,
              (SELECT count(*)::int FROM activity_attempts WHERE tenant_id = $1 AND status = 'completed' AND participant_id LIKE 'crowd-%' AND result ->> 'prize_type' = 'points') AS points_awards,
              (SELECT count(*)::int FROM activity_attempts WHERE tenant_id = $1 AND status = 'completed' AND participant_id LIKE 'limit-%') AS limit_attempts`,
      [tenant.tenant_id],
    );
    console.log(`\nOpen loop, ${SECONDS} s per rate and scenario, one new participant per spin, a coupon pool of ${CODES} codes, ${os.cpus().length} cores, load average ${loadAtStart.toFixed(1)} at the start\n`);
    console.log(OPEN_LOOP_HEADER);
    for (const row of rows) console.log(openLoopCells(row));
    if (TIMELINE) for (const { rate, scenario, result } of rows) console.log(`\nPer second, p50/p99 ms, ${scenario} at ${rate}/s: ${perSecond(result)}`);
    const cells = (list: Array<{ rate: number } & CpuSplit>) =>
      list.map(({ rate, machine, service, postgres, bench }) => `${rate}/s ${machine.toFixed(2)} ms (${service.toFixed(2)}, ${postgres.toFixed(2)}, ${bench.toFixed(2)})`).join('; ');
    console.log(`\nCPU per spin, the whole machine (of it: the service's Node process, PostgreSQL's processes, this process: the sender and the limit's Node): ${cells(cpu)}.`);
    if (firstCrowd) console.log(`CPU per spin of the service's first crowd, the same way: ${cells([{ rate: TARGET_RATE, ...firstCrowd }])}.`);
    if (LIMIT) console.log(`CPU per spin of the limit, the same way: ${cells(limitCpu)}.`);
    if (GROUP > 0) console.log(`CPU per spin of the limit with group commit, the same way: ${cells(groupCpu)}; spins per message on average: ${groupCpu.map(({ rate, size }) => `${rate}/s ${size.toFixed(1)}`).join(', ')}.`);
    console.log(`Service peak resident memory per rate: ${rss.map(({ rate, mb }) => `${rate}/s ${mb.toFixed(0)} MB`).join(', ')}${firstCrowd ? `; in the service's first crowd ${firstCrowd.mb.toFixed(0)} MB` : ''}.`);
    const { attempts, participants, claims, codes, ledger, points_awards, limit_attempts } = counted[0];
    console.log(`Database after the run: ${attempts} completed attempts of ${participants} participants, ${claims} coupons claimed with ${codes} distinct codes, ${ledger} ledger entries; spins answered 2xx (warm-up included): ${answered}.`);
    for (const scenario of [SPIN_SCENARIO, FIRST_CROWD_SCENARIO]) {
      const target = rows.find((row) => row.rate === TARGET_RATE && row.scenario === scenario);
      if (!target) continue;
      const p99 = percentile(target.result.latencies, 99);
      console.log(`Spin p99 at ${TARGET_RATE}/s, ${scenario}: ${p99.toFixed(1)} ms against the target of ${P99_TARGET_MS} ms: ${p99 < P99_TARGET_MS && target.result.failures === 0 ? 'met' : 'NOT met'}.`);
    }
    const wrong: string[] = [];
    if (attempts !== answered) wrong.push(`${attempts} completed attempts for ${answered} spins answered 2xx`);
    if (participants !== attempts) wrong.push(`${attempts - participants} participants completed twice`);
    if (claims > CODES) wrong.push(`${claims} coupons claimed from a pool of ${CODES}`);
    if (codes !== claims) wrong.push(`${claims} claims hold ${codes} distinct codes`);
    if (ledger !== attempts + points_awards) wrong.push(`${ledger} ledger entries for ${attempts} completions and ${points_awards} point prizes`);
    if (limit_attempts !== limitAnswered) wrong.push(`${limit_attempts} completed attempts of the limit for ${limitAnswered} answered`);
    if (wrong.length) throw new Error(`the database does not match the answers: ${wrong.join('; ')}`);
  } finally {
    if (sampler) clearInterval(sampler);
    await http?.close();
    raw?.close();
    if (service) await stopServiceProcess(service);
    await db.close();
    await database.stop();
  }
}

/** Throws unless the raw sender's answer is a 200. */
async function expectOk(answer: Promise<RawAnswer>, what: string): Promise<void> {
  const { status, body } = await answer;
  if (status !== 200) throw new Error(`${what} answered ${status}: ${body?.toString('utf8').slice(0, 200) ?? ''}`);
}

runBench(main);
