/**
 * Flash-crowd leaderboard benchmark (issue 37): `npm run bench -- flash-leaderboard`
 *
 * A contest's last hour: everyone refreshing the public leaderboard while
 * scores keep changing. Starts its own embedded PostgreSQL (or uses
 * BENCH_DATABASE_URL) and the service as `npm start` runs it (compiled, one
 * process, SERVICE_ROLE=all: the API and the job runner that refreshes the
 * ranking). One tenant, BENCH_FLASH_PARTICIPANTS (default 1,000,000)
 * participants with lifetime points (the seeding of bench/leaderboards), one
 * published engagement and one lifetime_points board scoped to it, refreshed
 * every BENCH_FLASH_REFRESH_SECONDS (default 30).
 *
 * During the reads, scoring goes on: BENCH_FLASH_SCORING_RATE (default 20/s)
 * direct grants of points to new participants (`POST /gamify/points/grant`),
 * whose balances the next refresh ranks.
 *
 * For each offered rate (BENCH_FLASH_RATES, default 1000,2500,5000 reads/s),
 * open loop for BENCH_FLASH_SECONDS (default 10) each, in this order:
 * - baseline: `GET /healthz` (the HTTP floor: no database);
 * - top page: `GET /public/leaderboards/{code}?engagement_id=…&limit=100`
 *   with no credential (the crowd's anonymous read), accepting what a browser
 *   accepts (`Accept-Encoding: gzip, deflate, br`; BENCH_FLASH_ACCEPT_ENCODING);
 * - around: `…&limit=10&around=5&session_id=…` (a participant's own view;
 *   BENCH_FLASH_SESSIONS (default 200) sessions spread over the ranking, in
 *   turn: with 200 each key is read about 25 times a second at 5,000/s and
 *   answered from memory; with thousands, most reads are a participant's
 *   first in a second, as in a crowd of many participants).
 * BENCH_FLASH_READS (default healthz,top,around) runs some of them only, in that order.
 *
 * The requests are sent from a child process (BENCH_FLASH_SENDER=child, the
 * default), one per phase, which first sends one uncounted second of the same
 * requests (BENCH_FLASH_SENDER_WARMUP_SECONDS), so that the sender's event loop is neither the one
 * that schedules the grants nor slowed by them; `inline` sends from the
 * benchmark's main thread. Its HTTP client (BENCH_FLASH_CLIENT) is `raw` by
 * default, requests written to 128 keep-alive sockets and answers read by
 * their length (bench/raw-http.ts), or `undici`, as before 4 Dec: the sender
 * shares the two cores with the service. The sender lag column is the
 * largest delay between a request's scheduled departure and its actual one:
 * when it is large, the figure is the sender's, not the service's.
 *
 * Prints p50/p95/p99 per rate and read (and again without each phase's first
 * second, which meets cold caches), the CPU per request sent in each phase
 * (the machine's, the service's Node, PostgreSQL's: the top page against the
 * `/healthz` floor), from inside the service (bench/service-probe.mjs) each
 * read's own time there and how late its event loop ran (a tail the service's
 * own time does not hold is the wait before it read the request: a core or
 * the loop busy), the service's peak RSS (VmHWM), and
 * checks that every grant answered 200 left exactly one ledger entry (exits
 * non-zero otherwise). BENCH_FLASH_PROFILE=<dir> runs the service with
 * --cpu-prof (read with `node scripts/cpu-profile-summary.mjs <file>`);
 * BENCH_FLASH_STATEMENTS=1 prints the statement table per read and rate; BENCH_FLASH_TIMELINE=1 each
 * phase's p50/p99 per second.
 * The rebuilds' backends run at nice BENCH_FLASH_BACKGROUND_NICE (DB_BACKGROUND_NICE; by default what
 * `npm start` gives them on its embedded server, 0 against BENCH_DATABASE_URL).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { fork, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { Pool as HttpPool } from 'undici';
import { EMBEDDED_BACKGROUND_NICE } from '../src/platform/background-priority.js';
import { probeCount, probePercentile, readServiceProbe, readServiceProbeSeconds, startCpuTimeline } from './observe.js';
import { cpuMs, cpuMsOfProcesses, freePort, offerOpenLoop, resetPeakResident, residentMb, openBenchDatabase, openStatementsTable, percentile, perSecond, runBench, startServiceProcess, stopServiceProcess, STATEMENTS_SETTINGS, tenantPoster, type OpenLoopResult } from './support.js';
import { seedLifetimePoints } from './leaderboard-seed.js';
import { RawHttpSender } from './raw-http.js';
import { migrate } from '../src/platform/migrate.js';
import { Database } from '../src/platform/db.js';
import { createTenant } from '../src/modules/access/index.js';

const RATES = (process.env.BENCH_FLASH_RATES ?? '1000,2500,5000').split(',').map((rate) => Number(rate.trim()));
const SECONDS = Number(process.env.BENCH_FLASH_SECONDS ?? 10);
const PARTICIPANTS = Number(process.env.BENCH_FLASH_PARTICIPANTS ?? 1_000_000);
const REFRESH_SECONDS = Number(process.env.BENCH_FLASH_REFRESH_SECONDS ?? 30);
const SCORING_RATE = Number(process.env.BENCH_FLASH_SCORING_RATE ?? 20);
const SENDER = process.env.BENCH_FLASH_SENDER === 'inline' ? 'inline' : 'child';
const CLIENT = process.env.BENCH_FLASH_CLIENT ?? 'raw';
if (CLIENT !== 'raw' && CLIENT !== 'undici') throw new Error('BENCH_FLASH_CLIENT must be raw or undici');
const SENDER_CHILD_ENV = 'BENCH_FLASH_SENDER_CHILD';
const PROFILE_DIR = process.env.BENCH_FLASH_PROFILE ? path.resolve(process.env.BENCH_FLASH_PROFILE) : null;
const STATEMENTS = process.env.BENCH_FLASH_STATEMENTS === '1';
const TIMELINE = process.env.BENCH_FLASH_TIMELINE === '1';
const BACKGROUND_NICE = process.env.BENCH_FLASH_BACKGROUND_NICE ?? (process.env.BENCH_DATABASE_URL ? '0' : String(EMBEDDED_BACKGROUND_NICE));
const STATEMENTS_TOP = 8;
const SESSIONS = Number(process.env.BENCH_FLASH_SESSIONS ?? 200);
if (!(Number.isInteger(SESSIONS) && SESSIONS > 0)) throw new Error('BENCH_FLASH_SESSIONS must be a positive integer');
const HTTP_CONNECTIONS = 128;
const WARMUP_RATE = 200;
const WARMUP_SECONDS = 3;
/**
 * Each measured phase's sender first sends one second of the same requests, not counted
 * (BENCH_FLASH_SENDER_WARMUP_SECONDS, 0 to count everything): before 27 Nov its first second (a new
 * process, 128 new connections) set the p99 of every read, `/healthz` included (33 ms whole, 3.5 ms after it).
 */
const SENDER_WARMUP_SECONDS = Number(process.env.BENCH_FLASH_SENDER_WARMUP_SECONDS ?? 1);
/** What the crowd's requests accept (BENCH_FLASH_ACCEPT_ENCODING; empty for nothing): a browser's, by default. Answers are read, not decoded. */
const ACCEPT_ENCODING = process.env.BENCH_FLASH_ACCEPT_ENCODING ?? 'gzip, deflate, br';

const KINDS = ['healthz', 'top', 'around'] as const;
type Kind = (typeof KINDS)[number];
const READS = (process.env.BENCH_FLASH_READS ?? KINDS.join(',')).split(',').map((kind) => kind.trim());
const unknownRead = READS.find((kind) => !(KINDS as readonly string[]).includes(kind));
if (unknownRead !== undefined || READS.length === 0) throw new Error(`BENCH_FLASH_READS: ${unknownRead ?? '(none)'} is not one of ${KINDS.join(', ')}`);
const MEASURED = KINDS.filter((kind) => READS.includes(kind));
const BOARD_PATH = '/api/v1/public/leaderboards/flash';
/** The method and path a read of this kind shows in the service's probe (bench/service-probe.mjs). */
const probedRoute = (kind: Kind) => (kind === 'healthz' ? 'GET /healthz' : `GET ${BOARD_PATH}`);
interface SenderJob {
  port: number;
  kind: Kind;
  rate: number;
  seconds: number;
  engagementId: string;
  sessions: string[];
  /** Seconds of the same requests sent first and not counted (0 for the service's warm-up phases). */
  senderWarmupSeconds: number;
}

/** One GET of a phase: its status and how many bytes its body had (the body itself only when not 2xx). */
type Getter = (path: string, headers: Record<string, string>) => Promise<{ status: number; bytes: number; body: () => Promise<string> }>;

/**
 * The phase's HTTP client (BENCH_FLASH_CLIENT): `raw` (the default) writes each request to a keep-alive socket and
 * reads the answer's status and length (bench/raw-http.ts); `undici` goes through undici's Pool, as before 4 Dec. The
 * sender shares the two cores with the service: undici cost it about 0.06–0.08 ms of CPU per read, and its
 * collector paused for 20–170 ms a second at 5,000 reads/s.
 */
function openClient(port: number): { get: Getter; close: () => Promise<void> } {
  if (CLIENT === 'undici') {
    const http = new HttpPool(`http://127.0.0.1:${port}`, { connections: HTTP_CONNECTIONS });
    return {
      get: async (path, headers) => {
        const response = await http.request({ method: 'GET', path, headers });
        if (response.statusCode !== 200) return { status: response.statusCode, bytes: 0, body: () => response.body.text() };
        // Read as bytes, not decoded: decoding 5,000 top pages a second into strings made the sender's collector pause more.
        let bytes = 0;
        for await (const chunk of response.body) bytes += (chunk as Buffer).length;
        return { status: 200, bytes, body: async () => '' };
      },
      close: () => http.close(),
    };
  }
  const raw = new RawHttpSender(port, HTTP_CONNECTIONS);
  return {
    get: async (path, headers) => {
      const answer = await raw.get(path, headers);
      return { status: answer.status, bytes: answer.bytes, body: async () => answer.body?.toString() ?? '' };
    },
    close: async () => raw.close(),
  };
}

/** The requests of one phase, open loop, through a pool of keep-alive connections. */
async function sendPhase(job: SenderJob): Promise<OpenLoopResult> {
  const client = openClient(job.port);
  const board = `${BOARD_PATH}?engagement_id=${job.engagementId}`;
  const pathOf = (i: number) =>
    job.kind === 'healthz' ? '/healthz' : job.kind === 'top' ? `${board}&limit=100` : `${board}&limit=10&around=5&session_id=${job.sessions[i % job.sessions.length]}`;
  const headers: Record<string, string> = ACCEPT_ENCODING ? { 'accept-encoding': ACCEPT_ENCODING } : {};
  const send = async (i: number) => {
    const answer = await client.get(pathOf(i), headers);
    if (answer.status !== 200) throw new Error(`${pathOf(i)} answered ${answer.status}: ${(await answer.body()).slice(0, 200)}`);
    if (answer.bytes === 0) throw new Error(`${pathOf(i)} answered 200 with no body`);
  };
  try {
    // The sender's own start (a new process, its connections opened, its code compiled) is not the service's: one
    // second of the same requests at the same rate first, not counted.
    if (job.senderWarmupSeconds > 0) await offerOpenLoop(job.rate, job.senderWarmupSeconds, send);
    return await offerOpenLoop(job.rate, job.seconds, send);
  } finally {
    await client.close();
  }
}

/** One phase from a child process (its own event loop and core time), or inline. */
function runPhase(job: SenderJob): Promise<OpenLoopResult> {
  if (SENDER === 'inline') return sendPhase(job);
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, [SENDER_CHILD_ENV]: '1' } });
    child.once('message', (result) => resolve(result as OpenLoopResult));
    child.once('error', reject);
    child.once('exit', (code) => code !== 0 && reject(new Error(`the sender exited with ${code}`)));
    child.send(job);
  });
}

const progress = (message: string) => process.stderr.write(`[flash-leaderboard] ${message}\n`);

async function main(): Promise<void> {
  const database = await openBenchDatabase('flash-leaderboard', { fast: true, settings: STATEMENTS ? STATEMENTS_SETTINGS : undefined });
  const { ownerUrl, appPassword, appUrl } = database;
  await migrate(ownerUrl, appPassword);
  const db = new Database(appUrl, ownerUrl, 2);
  const owner = new pg.Pool({ connectionString: ownerUrl, max: 2 });
  owner.on('error', () => undefined);
  let service: ChildProcess | null = null;
  let http: HttpPool | null = null;
  let scoring: NodeJS.Timeout | null = null;
  const loadAtStart = os.loadavg()[0];
  const probeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'flash-leaderboard-probe-'));
  const probeFile = path.join(probeDir, 'seconds.jsonl');
  try {
    const statements = await openStatementsTable(db.system, STATEMENTS, STATEMENTS_TOP);
    const tenant = await createTenant(db, { name: 'Bench', slug: `bench-${process.pid}`, plan: 'enterprise', requestsPerMinute: 100_000_000 });
    progress(`seeding ${PARTICIPANTS} participants`);
    await seedLifetimePoints(owner, tenant.tenant_id, PARTICIPANTS);
    const port = await freePort();
    progress(`starting the service (SERVICE_ROLE=all, DB_BACKGROUND_NICE=${BACKGROUND_NICE}${PROFILE_DIR ? `, CPU profile into ${PROFILE_DIR}` : ''})`);
    service = await startServiceProcess({ ownerUrl, port, role: 'all', profileDir: PROFILE_DIR, probeFile, env: { DB_BACKGROUND_NICE: BACKGROUND_NICE } });
    http = new HttpPool(`http://127.0.0.1:${port}`, { connections: 16, headersTimeout: 600_000, bodyTimeout: 600_000 });
    const call = tenantPoster(http, tenant.api_key);
    const engagement = await call('/api/v1/admin/engagements', { name: 'Bench', site_slug: 'bench' });
    await call(`/api/v1/admin/engagements/${engagement.id}/publish`);
    const engagementId = engagement.id as string;
    progress('creating the board (its first ranking is built at once)');
    await call('/api/v1/admin/leaderboards', { leaderboard_code: 'flash', name: 'Flash', metric: 'lifetime_points', engagement_id: engagementId, refresh_seconds: REFRESH_SECONDS });
    await owner.query('VACUUM ANALYZE leaderboard_rank_pages, leaderboard_rank_lookup');
    const sessions: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const session = await call('/api/v1/sessions', { participant_id: `p${1 + Math.floor((i * PARTICIPANTS) / SESSIONS)}`, engagement_id: engagementId, ttl_seconds: 3600 });
      sessions.push(session.session_id as string);
    }

    // Scoring in the background: grants to new participants, at a steady rate, checked at the end.
    const runId = randomUUID().slice(0, 8);
    let granted = 0;
    let grantFailures = 0;
    let grantsSent = 0;
    let firstGrantFailure: string | null = null;
    scoring = setInterval(() => {
      const i = grantsSent++;
      call('/api/v1/gamify/points/grant', { participant_id: `live-${runId}-${i}`, amount: 1 + Math.floor(Math.random() * 10_000), reason: 'bench_live', idempotency_key: `live-${runId}-${i}` }).then(
        () => void (granted += 1),
        (error: unknown) => {
          grantFailures += 1;
          firstGrantFailure ??= error instanceof Error ? error.message : String(error);
        },
      );
    }, 1000 / SCORING_RATE);

    const rssBeforeReadsMb = residentMb(service.pid, 'VmRSS');
    const job = (kind: Kind, rate: number, seconds: number, senderWarmupSeconds = 0): SenderJob => ({ port, kind, rate, seconds, engagementId, sessions, senderWarmupSeconds });
    progress(`warming up (${WARMUP_RATE}/s for ${WARMUP_SECONDS} s of each read)`);
    for (const kind of MEASURED) {
      const warm = await runPhase(job(kind, WARMUP_RATE, WARMUP_SECONDS));
      if (warm.failures > 0) throw new Error(`warm-up ${kind}: ${warm.failures} failed, the first: ${warm.firstFailure}`);
    }
    const rows: Array<{ rate: number; kind: Kind; scenario: string; result: OpenLoopResult; cpu: string; peakMb: number | null; from: number; to: number }> = [];
    const creationPeakMb = residentMb(service.pid, 'VmHWM');
    const scenarios: Record<Kind, string> = { healthz: 'baseline: GET /healthz', top: 'top page (limit 100, anonymous)', around: `around (limit 10, around 5, ${SESSIONS} sessions in turn)` };
    // When each phase ran and when the board was rebuilt (a snapshot keeps its last rebuild's start and duration,
    // read after every phase), to tell which phases a rebuild overlapped.
    const phases: Array<{ name: string; from: number; to: number }> = [];
    const rebuilds = new Map<number, number>();
    const noteRebuild = async () => {
      const { rows: snap } = await owner.query<{ at: Date; ms: number }>('SELECT refreshed_at AS at, refresh_ms AS ms FROM leaderboard_snapshots WHERE tenant_id = $1', [tenant.tenant_id]);
      for (const { at, ms } of snap) rebuilds.set(at.getTime(), ms);
    };
    // Who used the machine each second (with BENCH_FLASH_TIMELINE=1): the service, the sender, and PostgreSQL's
    // processes by what they are, the rebuild's connections apart.
    const backends = new Map<number, string>();
    const serviceProcess = service;
    const machine = TIMELINE
      ? startCpuTimeline(
          (pid, comm) => {
            if (pid === serviceProcess.pid) return 'service';
            if (pid === process.pid) return 'bench';
            if (comm === 'node') return 'sender';
            if (comm === 'postgres') return backends.get(pid) ?? 'helpers';
            return 'other';
          },
          async () => {
            const { rows: activity } = await owner.query<{ pid: number; backend_type: string; application_name: string }>('SELECT pid, backend_type, application_name FROM pg_stat_activity');
            backends.clear();
            for (const { pid, backend_type: type, application_name: name } of activity) {
              backends.set(pid, type === 'autovacuum worker' ? 'autovacuum' : type !== 'client backend' ? 'helpers' : name === 'loyalty-background' ? 'rebuild connection' : 'backends');
            }
          },
        )
      : null;
    for (const rate of RATES) {
      for (const kind of MEASURED) {
        progress(`${rate}/s for ${SECONDS} s: ${kind}`);
        await statements.reset();
        const from = Date.now();
        const phasePeak = resetPeakResident(service.pid);
        const cpuBefore = { ...cpuMs(service.pid), postgres: cpuMsOfProcesses('postgres') };
        const result = await runPhase(job(kind, rate, SECONDS, SENDER_WARMUP_SECONDS));
        const cpuAfter = { ...cpuMs(service.pid), postgres: cpuMsOfProcesses('postgres') };
        // Per request sent, the sender's uncounted second included; PostgreSQL's share holds the grants and any rebuild too.
        const sent = result.latencies.length + result.failures + rate * SENDER_WARMUP_SECONDS;
        const per = (field: 'machine' | 'process' | 'postgres') => ((cpuAfter[field] - cpuBefore[field]) / sent).toFixed(3);
        const cpu = `${per('machine')} / ${per('process')} / ${per('postgres')}`;
        const to = Date.now();
        rows.push({ rate, kind, scenario: scenarios[kind], result, cpu, peakMb: phasePeak ? residentMb(service.pid, 'VmHWM') : null, from, to });
        phases.push({ name: `${kind} at ${rate}/s`, from, to });
        await noteRebuild();
        if (kind !== 'healthz') await statements.print(`${kind} at ${rate}/s`);
      }
    }
    clearInterval(scoring);
    scoring = null;
    const machineSeconds = machine?.stop() ?? [];
    // VmHWM was reset before each phase: the run's peak is the largest of the phases' and the creation's.
    const peakMb = Math.max(creationPeakMb, residentMb(service.pid, 'VmHWM'), ...rows.map((row) => row.peakMb ?? 0));
    // Let the grants in flight finish, then check them against the ledger.
    const settleDeadline = Date.now() + 30_000;
    while (granted + grantFailures < grantsSent && Date.now() < settleDeadline) await new Promise((resolve) => setTimeout(resolve, 100));
    const { rows: ledger } = await owner.query<{ n: number }>(`SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1 AND participant_id LIKE $2`, [tenant.tenant_id, `live-${runId}-%`]);
    const { rows: totals } = await owner.query<{ n: number }>(`SELECT count(*)::int AS n FROM points_balances WHERE tenant_id = $1 AND participant_id LIKE $2 AND lifetime > 0`, [tenant.tenant_id, `live-${runId}-%`]);

    console.log(
      `\nOpen loop, ${SECONDS} s per rate and read, ${PARTICIPANTS.toLocaleString('en')} participants, board refreshed every ${REFRESH_SECONDS} s, ` +
        `${SCORING_RATE} grants/s in the background, sender: ${SENDER === 'child' ? 'a child process of its own' : 'the benchmark main thread'}, ` +
        `${os.cpus().length} cores, load average ${loadAtStart.toFixed(1)} at the start, ${os.loadavg()[0].toFixed(1)} at the end\n`,
    );
    console.log('| offered | read | 2xx | p50 ms | p95 ms | p99 ms | failed | sender lag max ms | CPU ms per request: machine / service / PostgreSQL | service peak RSS |');
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    for (const { rate, scenario, result, cpu, peakMb } of rows) {
      const ms = (p: number) => percentile(result.latencies, p).toFixed(1);
      const peak = peakMb === null ? '—' : `${peakMb.toFixed(0)} MB`;
      console.log(`| ${rate}/s | ${scenario} | ${result.latencies.length} | ${ms(50)} | ${ms(95)} | ${ms(99)} | ${result.failures} | ${result.sendLagMaxMs.toFixed(0)} | ${cpu} | ${peak} |`);
    }
    // The first counted second meets the service's cold caches (sessions and answers last read 20 s before): the same
    // percentiles without it tell the crowd's start from its steady state.
    console.log('\nThe same, of the requests sent after the first counted second of each phase:\n');
    console.log('| offered | read | requests | p50 ms | p95 ms | p99 ms |');
    console.log('|---|---|---|---|---|---|');
    for (const { rate, scenario, result } of rows) {
      const later = result.latencies.filter((_, i) => result.departures[i] >= 1000);
      const ms = (p: number) => percentile(later, p).toFixed(1);
      console.log(`| ${rate}/s | ${scenario} | ${later.length} | ${ms(50)} | ${ms(95)} | ${ms(99)} |`);
    }
    // The client's figures hold the time a read waited before the service read it; the probe inside the service tells
    // the two apart. A phase's seconds include its sender's start and uncounted second.
    console.log(
      '\nFrom inside the service (bench/service-probe.mjs): its own time per read, from the request parsed to its last byte written; and how ' +
        'late its event loop ran (a read that has arrived waits about that long before the service reads it). Upper bounds of 2% buckets. ' +
        "Then, per second, the event loop's thread on a core and ready but waiting for one (the kernel's schedstat), and V8's collections' pauses.\n",
    );
    console.log('| offered | read | reads seen | service time p50 / p99 / max ms | event-loop delay p50 / p99 / max ms | thread ran / waited ms per s | GC pauses ms per s, longest ms |');
    console.log('|---|---|---|---|---|---|---|');
    for (const { rate, kind, scenario, from, to } of rows) {
      const probe = readServiceProbe(probeFile, from, to);
      const reads = probe.routes.get(probedRoute(kind));
      const ms = (buckets: Map<number, number> | undefined) => [50, 99, 100].map((p) => probePercentile(buckets, p).toFixed(2)).join(' / ');
      const seconds = Math.max(1, (to - from) / 1000);
      const thread = probe.thread ? `${(probe.thread.ranMs / seconds).toFixed(0)} / ${(probe.thread.waitedMs / seconds).toFixed(0)}` : '—';
      console.log(`| ${rate}/s | ${scenario} | ${probeCount(reads)} | ${ms(reads)} | ${ms(probe.loop)} | ${thread} | ${(probe.gc.pauseMs / seconds).toFixed(1)}, ${probe.gc.maxMs.toFixed(1)} |`);
    }
    if (TIMELINE) {
      // Per second of each phase (by scheduled departure): how many were sent, and their p50 / p99, to see a rebuild's stall.
      for (const { rate, scenario, result } of rows) console.log(`\nPer second, p50/p99 ms, ${scenario} at ${rate}/s: ${perSecond(result)}`);
      // The same seconds inside the service: how many reads it finished, how late its event loop ran, and its thread's
      // ms on a core, waiting for one, and in GC pauses. A second in which it finished fewer than offered while its loop
      // was on time is a wait elsewhere (the sender, a socket); a late loop with a long wait is the CPU taken by others.
      for (const { rate, kind, scenario, result, from, to } of rows) {
        const seconds = readServiceProbeSeconds(probeFile, from, to)
          .map((second) => ({ index: Math.round((second.at - 1000 - result.startedAt) / 1000), second }))
          .filter(({ index }) => index >= 0 && index < SECONDS)
          .map(({ index, second }) => {
            const thread = second.thread ? `${second.thread.ranMs.toFixed(0)}/${second.thread.waitedMs.toFixed(0)}` : '—/—';
            return `${index}: ${probeCount(second.routes.get(probedRoute(kind)))}/${probePercentile(second.loop, 99).toFixed(0)}/${thread}/${second.gc.pauseMs.toFixed(0)}`;
          });
        console.log(`\nPer second inside the service, reads finished / event-loop delay p99 ms / thread ran / waited ms / GC pauses ms, ${scenario} at ${rate}/s: ${seconds.join(' · ')}`);
      }
      // The same seconds in the sender: an answer waits for the sender's loop before its latency is taken.
      for (const { rate, scenario, result } of rows) {
        const seconds = result.senderSeconds.map((second, i) => `${i}: ${second.loopP99Ms.toFixed(0)}/${second.loopMaxMs.toFixed(0)}/${second.gcMs.toFixed(0)}`);
        console.log(`\nPer second in the sender, event-loop delay p99 / max ms / GC pauses ms, ${scenario} at ${rate}/s: ${seconds.join(' · ')}`);
      }
      // The same seconds on the machine: ms of CPU per process kind (two cores: 2,000 ms a second).
      const labels = ['service', 'sender', 'bench', 'backends', 'rebuild connection', 'autovacuum', 'helpers', 'other'];
      for (const { rate, scenario, result } of rows) {
        const seconds = machineSeconds
          .map((second) => ({ index: Math.round((second.at - 1000 - result.startedAt) / 1000), second }))
          .filter(({ index }) => index >= 0 && index < SECONDS)
          .map(({ index, second }) => `${index}: ${labels.map((label) => (second.ms.get(label) ?? 0).toFixed(0)).join('/')} (${second.speedMs.toFixed(2)})`);
        console.log(`\nPer second on the machine, ms of CPU of ${labels.join(' / ')}, and (in brackets) the ms a fixed loop took then (the least of three: the machine's speed), ${scenario} at ${rate}/s: ${seconds.join(' · ')}`);
      }
    }
    const origin = phases[0].from;
    const at = (ms: number) => `${((ms - origin) / 1000).toFixed(1)} s`;
    console.log(`\nPhases (the sender's start and its uncounted second included): ${phases.map((p) => `${p.name} ${at(p.from)}–${at(p.to)}`).join('; ')}.`);
    const overlapping = [...rebuilds].filter(([start, ms]) => start + ms >= origin).map(([start, ms]) => `${at(start)}–${at(start + ms)}`);
    console.log(`Rebuilds of the ranking seen during them (start–end of the INSERT): ${overlapping.join('; ') || 'none'}.`);
    const { rows: background } = await owner.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name = 'loyalty-background'`);
    // A server elsewhere (BENCH_DATABASE_URL) reports pids of its own machine: nothing to read here.
    const nices = process.env.BENCH_DATABASE_URL ? [] : background.map(({ pid }) => String(os.getPriority(pid)));
    console.log(`The rebuilds' connections (loyalty-background): ${background.length}, their backends at nice ${nices.join(', ') || '—'}.`);
    const firstFailure = rows.find((row) => row.result.firstFailure)?.result.firstFailure;
    if (firstFailure) console.log(`\nFirst failed read: ${firstFailure}`);
    console.log(
      `\nService RSS: peak ${creationPeakMb.toFixed(0)} MB by the end of the board's creation and the warm-up, ${rssBeforeReadsMb.toFixed(0)} MB before the reads; ` +
        `peak over the run ${peakMb.toFixed(0)} MB (target < 300 MB; each phase's own peak in the table, where /proc lets the peak be reset).`,
    );
    console.log(`Grants: ${grantsSent} sent, ${granted} answered 200, ${grantFailures} failed; ${ledger[0].n} ledger entries, ${totals[0].n} balances with lifetime points.`);
    if (firstGrantFailure) console.log(`First failed grant: ${firstGrantFailure}`);
    if (grantFailures > 0 || ledger[0].n !== granted || totals[0].n !== granted) throw new Error(`${granted} grants answered 200 but the database holds ${ledger[0].n} ledger entries and ${totals[0].n} totals`);
  } finally {
    if (scoring) clearInterval(scoring);
    await http?.close().catch(() => undefined);
    if (service) await stopServiceProcess(service);
    await owner.end();
    await db.close();
    await database.stop();
    fs.rmSync(probeDir, { recursive: true, force: true });
  }
}

if (process.env[SENDER_CHILD_ENV] === '1') {
  process.once('message', (job) => {
    void sendPhase(job as SenderJob).then((result) => process.send!(result, () => process.exit(0)));
  });
} else {
  runBench(main);
}
