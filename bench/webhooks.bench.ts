/**
 * Webhook delivery benchmark: `npx tsx bench/webhooks.bench.ts`
 *
 * Starts its own embedded PostgreSQL (or uses BENCH_DATABASE_URL, an owner
 * URL of an empty database), a local HTTPS receiver with a throwaway
 * self-signed certificate, and the service's job runner in this process.
 * Measures, in one run:
 *
 * - baseline: signed POSTs straight through safe-http to the same receiver,
 *   as many at once as deliveries may send to one receiver (32), with no database or queue;
 * - one destination: events committed in a burst, deliveries/s, and
 *   commit → receipt latency (p50/p99) both for the burst and for events
 *   committed at a paced rate;
 * - one destination, a backlog: the same number of events committed in one
 *   transaction, deliveries/s from its commit to the last receipt (the burst
 *   is bounded by its committer, which shares this process's core);
 * - fan-out to 20 destinations: deliveries/s and latency;
 * - the receiver answering 500: attempts/s through retry scheduling until
 *   every delivery is EXHAUSTED;
 * - open loop (issue 37): at each rate of BENCH_WEBHOOKS_RATES (default
 *   300,600,1000 per second) for BENCH_SECONDS (default 10), first bare signed
 *   POSTs offered at that rate (p50/p95/p99 of each POST), then events
 *   committed one per transaction at that rate to one destination (commit →
 *   receipt p50/p95/p99). Every event must arrive exactly once (the receiver
 *   answers 200 at once): the bench exits non-zero on a lost or repeated one.
 *
 * BENCH_WEBHOOKS_STATEMENTS=1 starts the database with pg_stat_statements and
 * prints the statement table of the one-destination burst and of the highest
 * open-loop rate. BENCH_WEBHOOKS_PROFILE=<dir> writes CPU profiles (this
 * process delivers: the job runner runs here) of the baseline burst, the
 * one-destination burst and the backlog into <dir>; read them with
 * `node scripts/cpu-profile-summary.mjs <file>`. The process's peak RSS is
 * printed at the end.
 *
 * Loopback only; bounded in time; prints a markdown table and exits.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import https from 'node:https';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { STATEMENTS_SETTINGS, offerOpenLoop, openBenchDatabase, openStatementsTable, percentile, runBench } from './support.js';
import { startService } from '../src/service.js';
import { createLogger } from '../src/platform/logger.js';
import { emit, type OutboxEvent } from '../src/platform/outbox.js';
import { safePost } from '../src/platform/safe-http.js';
import { createTenant } from '../src/modules/access/index.js';
import { createDestination } from '../src/modules/webhooks/service.js';
import { signatureHeader } from '../src/modules/webhooks/delivery.js';
import { IN_FLIGHT_PER_RECEIVER_MAX } from '../src/modules/webhooks/receiver-slots.js';

const BURST_EVENTS = Number(process.env.BENCH_EVENTS ?? 2000);
const EVENTS_PER_TRANSACTION = 20;
/**
 * Transactions committing a burst at once (BENCH_BURST_COMMITTERS, default 1, as
 * before issue 37). Once deliveries keep up with one committer the burst's rate
 * is partly the emitter's; more committers commit faster but share this
 * process's core with the deliveries.
 */
const BURST_COMMITTERS = Number(process.env.BENCH_BURST_COMMITTERS ?? 1);
const FANOUT_DESTINATIONS = 20;
const FANOUT_EVENTS = Math.round(BURST_EVENTS / 10);
const PACED_EVENTS = 200;
const PACED_INTERVAL_MS = 20;
const FAILING_EVENTS = 500;
const FAILING_RETRY_COUNT = 1;
const JOB_CONCURRENCY = 8;
const SCENARIO_TIMEOUT_MS = 120_000;
const OPEN_LOOP_RATES = (process.env.BENCH_WEBHOOKS_RATES ?? '300,600,1000').split(',').map(Number).filter((rate) => rate > 0);
const OPEN_LOOP_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const STATEMENTS_ON = process.env.BENCH_WEBHOOKS_STATEMENTS === '1';
const PROFILE_DIR = process.env.BENCH_WEBHOOKS_PROFILE ?? null;
const STATEMENTS_TOP = 15;

/** A CPU profile of this process (the one that delivers) around `phase`, written to PROFILE_DIR when set. */
async function profiled<T>(name: string, phase: () => Promise<T>): Promise<T> {
  if (!PROFILE_DIR) return phase();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await phase();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    fs.mkdirSync(PROFILE_DIR, { recursive: true });
    const file = path.join(PROFILE_DIR, `webhooks-${name}.cpuprofile`);
    fs.writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
    process.stdout.write(`CPU profile of ${name}: ${file}\n`);
  }
}

/** The receiver's certificate must be trusted by this process, which Node reads only at start: re-run with it. */
function ensureTrustedCertificate(): { key: string; cert: string } {
  const certFile = process.env.BENCH_TLS_CERT;
  if (certFile && process.env.NODE_EXTRA_CA_CERTS === certFile) {
    return { key: fs.readFileSync(process.env.BENCH_TLS_KEY!, 'utf8'), cert: fs.readFileSync(certFile, 'utf8') };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhooks-bench-tls-'));
  const keyFile = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', cert,
  ], { stdio: 'ignore' });
  const child = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, NODE_EXTRA_CA_CERTS: cert, BENCH_TLS_CERT: cert, BENCH_TLS_KEY: keyFile },
  });
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(child.status ?? 1);
}

interface Receipt {
  id: string;
  path: string;
  at: number;
}

async function waitUntil(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + SCENARIO_TIMEOUT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function main(): Promise<void> {
  const tls = ensureTrustedCertificate();
  const log = createLogger('warn');

  const database = await openBenchDatabase('webhooks', { settings: STATEMENTS_ON ? STATEMENTS_SETTINGS : undefined });
  const { ownerUrl, appPassword, appUrl } = database;
  const config = loadConfig({
    APP_ENV: 'development',
    DATABASE_URL: ownerUrl,
    DB_APP_PASSWORD: appPassword,
    SERVICE_ROLE: 'worker',
    ALLOW_LOOPBACK_WEBHOOKS: 'true',
    TIME_SCALE: '0.0001',
    JOB_CONCURRENCY: String(JOB_CONCURRENCY),
    LOG_LEVEL: 'warn',
  });
  const service = await startService({ config, log, server: { ownerUrl, appUrl, stop: async () => undefined }, listen: false });
  const { db } = service;
  const context = { db, config, log };
  const owner = new pg.Pool({ connectionString: ownerUrl, max: 1 });
  // pg-pool's end() resolves once its idle connection is told to close, not when it has closed; the database's
  // fast shutdown right after may reach that connection first (57P01), which is expected at the end of the run.
  owner.on('error', (error: Error & { code?: string }) => {
    if (error.code !== '57P01') throw error;
  });
  const statements = await openStatementsTable(owner, STATEMENTS_ON, STATEMENTS_TOP);

  const receipts: Receipt[] = [];
  /** Open loop: who waits for an event's receipt, by event id. */
  const awaited = new Map<string, () => void>();
  const receivedIds = new Set<string>();
  /** Receipts per label (the first path segment), counted as they arrive: waiting for a count must cost nothing per poll. */
  const receivedByLabel = new Map<string, number>();
  let failing = false;
  const receiver = https.createServer({ key: tls.key, cert: tls.cert, keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      try {
        const id = JSON.parse(Buffer.concat(chunks).toString('utf8')).id;
        receipts.push({ id, path: req.url ?? '/', at });
        receivedIds.add(id);
        const label = (req.url ?? '/').split('/')[1];
        receivedByLabel.set(label, (receivedByLabel.get(label) ?? 0) + 1);
        awaited.get(id)?.();
      } catch {
        // Not an envelope.
      }
      res.statusCode = failing ? 500 : 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const tenant = await createTenant(db, { name: 'Bench', slug: `bench-${randomBytes(3).toString('hex')}`, plan: 'enterprise' });
  const tenantId = tenant.tenant_id;
  const event = (i: number, label: string): OutboxEvent => ({
    event: 'points.awarded.v1',
    participantId: `${label}-${i}`,
    data: { participant_id: `${label}-${i}`, amount: 10, available: 10, lifetime: 10, reason: 'bench', ledger_entry_id: `led_${i}`, source_kind: 'grant', multiplier: null },
  });
  const commitTimes = new Map<string, number>();
  async function commit(events: OutboxEvent[]): Promise<string[]> {
    const ids = await db.tenant(tenantId, (tx) => emit(tx, tenantId, events));
    const at = Date.now();
    for (const id of ids) commitTimes.set(id, at);
    return ids;
  }
  /** Every delivery made for `label` (an event at a destination's path) arrived exactly once (the receiver answered 200 at once); throws otherwise. */
  function checkExactlyOnce(label: string, expected: number): void {
    const seen = new Map<string, number>();
    for (const r of receipts) if (r.path.startsWith(`/${label}/`)) seen.set(`${r.path} ${r.id}`, (seen.get(`${r.path} ${r.id}`) ?? 0) + 1);
    const repeated = [...seen.values()].filter((n) => n > 1).length;
    if (seen.size !== expected || repeated > 0) throw new Error(`${label}: ${expected} deliveries expected, ${seen.size} distinct events arrived, ${repeated} more than once`);
  }
  async function destinations(count: number, label: string, retryCount = 3): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = await createDestination(context, tenantId, { name: `${label}-${i}`, url: `${receiverUrl}/${label}/${i}`, events: ['points.awarded.v1'], retry_count: retryCount });
      ids.push(created.id);
    }
    return ids;
  }
  async function deactivate(ids: string[]): Promise<void> {
    await db.tenant(tenantId, (tx) => tx.query('UPDATE webhook_destinations SET active = false WHERE tenant_id = $1 AND id = ANY($2)', [tenantId, ids]));
  }
  function latencies(label: string): number[] {
    return receipts.filter((r) => r.path.startsWith(`/${label}/`) && commitTimes.has(r.id)).map((r) => r.at - commitTimes.get(r.id)!);
  }
  /** A burst's events committed (by BURST_COMMITTERS transactions at once), then waited for at the receiver; `committedSeconds` is when the last commit returned, a bound on the burst's rate set by the emitter. */
  async function burst(label: string, count: number, expectedDeliveries: number): Promise<{ seconds: number; perSecond: number; committedSeconds: number }> {
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: BURST_COMMITTERS }, async () => {
        for (let i = next; i < count; i = next) {
          next += EVENTS_PER_TRANSACTION;
          await commit(Array.from({ length: Math.min(EVENTS_PER_TRANSACTION, count - i) }, (_, j) => event(i + j, label)));
        }
      }),
    );
    const committedSeconds = (Date.now() - started) / 1000;
    await waitUntil(`${label} deliveries`, () => (receivedByLabel.get(label) ?? 0) >= expectedDeliveries);
    const seconds = (Date.now() - started) / 1000;
    return { seconds, perSecond: expectedDeliveries / seconds, committedSeconds };
  }

  const rows: string[][] = [];
  const ms = (value: number) => `${Math.round(value)} ms`;
  let baselinePerSecond = NaN;

  // Baseline: the same signed HTTPS POSTs without the queue and the database.
  {
    const body = JSON.stringify({ id: 'evt_baseline', event: 'points.awarded.v1', data: {} });
    let sent = 0;
    const started = Date.now();
    await profiled('baseline', () => Promise.all(
      Array.from({ length: IN_FLIGHT_PER_RECEIVER_MAX }, async () => {
        while (sent < BURST_EVENTS) {
          sent += 1;
          const t = Math.floor(Date.now() / 1000);
          const result = await safePost(`${receiverUrl}/baseline/0`, { 'content-type': 'application/json', 'x-service-signature': signatureHeader('whsec_bench', t, body) }, body, 10_000, { allowLoopback: true, allowHttp: false });
          if (result.status !== 200) throw new Error(`baseline POST failed: ${result.error}`);
        }
      }),
    ));
    const seconds = (Date.now() - started) / 1000;
    baselinePerSecond = BURST_EVENTS / seconds;
    rows.push([`baseline: signed HTTPS POSTs, ${IN_FLIGHT_PER_RECEIVER_MAX} at once (the deliveries' bound per receiver), no queue, no database`, String(BURST_EVENTS), `${Math.round(baselinePerSecond)}/s`, '–', '–']);
  }

  // One destination.
  {
    const ids = await destinations(1, 'one');
    await statements.reset();
    const result = await profiled('one-destination', () => burst('one', BURST_EVENTS, BURST_EVENTS));
    await statements.print(`1 destination, burst of ${BURST_EVENTS} events`);
    checkExactlyOnce('one', BURST_EVENTS);
    const burstLatency = latencies('one');
    rows.push([`1 destination, burst of ${BURST_EVENTS} events (${EVENTS_PER_TRANSACTION} per commit, ${BURST_COMMITTERS} committers)`, String(BURST_EVENTS), `${Math.round(result.perSecond)}/s (${Math.round((100 * result.perSecond) / baselinePerSecond)}% of the baseline; all committed after ${ms(result.committedSeconds * 1000)} of ${ms(result.seconds * 1000)})`, ms(percentile(burstLatency, 50)), ms(percentile(burstLatency, 99))]);
    await deactivate(ids);
    const paced = await destinations(1, 'paced');
    for (let i = 0; i < PACED_EVENTS; i++) {
      await commit([event(i, 'paced')]);
      await new Promise((resolve) => setTimeout(resolve, PACED_INTERVAL_MS));
    }
    await waitUntil('paced deliveries', () => (receivedByLabel.get('paced') ?? 0) >= PACED_EVENTS);
    const pacedLatency = latencies('paced');
    rows.push([`1 destination, ${PACED_EVENTS} events paced one per ${PACED_INTERVAL_MS} ms`, String(PACED_EVENTS), '–', ms(percentile(pacedLatency, 50)), ms(percentile(pacedLatency, 99))]);
    await deactivate(paced);
  }

  // One destination, a backlog: the whole burst committed in one transaction, timed from its commit, so the
  // emitter's transactions do not share this process's core with the deliveries (the burst above is bounded by
  // its committer: see its "all committed after").
  {
    const ids = await destinations(1, 'backlog');
    await statements.reset();
    const committed = await commit(Array.from({ length: BURST_EVENTS }, (_, i) => event(i, 'backlog')));
    const started = Date.now();
    await profiled('backlog', () => waitUntil('backlog deliveries', () => (receivedByLabel.get('backlog') ?? 0) >= committed.length));
    await statements.print(`1 destination, backlog of ${BURST_EVENTS} events`);
    const perSecond = committed.length / ((Date.now() - started) / 1000);
    checkExactlyOnce('backlog', BURST_EVENTS);
    const backlogLatency = latencies('backlog');
    rows.push([`1 destination, backlog of ${BURST_EVENTS} events committed in one transaction (timed from its commit)`, String(BURST_EVENTS), `${Math.round(perSecond)}/s (${Math.round((100 * perSecond) / baselinePerSecond)}% of the baseline)`, ms(percentile(backlogLatency, 50)), ms(percentile(backlogLatency, 99))]);
    await deactivate(ids);
  }

  // Fan-out to 20 destinations.
  {
    const ids = await destinations(FANOUT_DESTINATIONS, 'fan');
    const expected = FANOUT_EVENTS * FANOUT_DESTINATIONS;
    const result = await burst('fan', FANOUT_EVENTS, expected);
    const fanLatency = latencies('fan');
    checkExactlyOnce('fan', expected);
    rows.push([`fan-out to ${FANOUT_DESTINATIONS} destinations, burst of ${FANOUT_EVENTS} events`, String(expected), `${Math.round(result.perSecond)}/s`, ms(percentile(fanLatency, 50)), ms(percentile(fanLatency, 99))]);
    await deactivate(ids);
  }

  // The receiver answers 500: every delivery retried, then EXHAUSTED.
  {
    failing = true;
    const [id] = await destinations(1, 'fail', FAILING_RETRY_COUNT);
    const attempts = FAILING_EVENTS * (FAILING_RETRY_COUNT + 1);
    const started = Date.now();
    for (let i = 0; i < FAILING_EVENTS; i += EVENTS_PER_TRANSACTION) {
      await commit(Array.from({ length: EVENTS_PER_TRANSACTION }, (_, j) => event(i + j, 'fail')));
    }
    await waitUntil('exhaustion', async () => {
      const { rows: counted } = await db.system.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE destination_id = $1 AND status = 'EXHAUSTED'`, [id]);
      return counted[0].n === FAILING_EVENTS;
    });
    const seconds = (Date.now() - started) / 1000;
    rows.push([`receiver answers 500: ${FAILING_EVENTS} events × ${FAILING_RETRY_COUNT + 1} attempts until EXHAUSTED`, String(attempts), `${Math.round(attempts / seconds)} attempts/s`, '–', '–']);
    failing = false;
    await deactivate([id]);
  }

  // Open loop: bare signed POSTs, then events committed one per transaction, at each rate.
  const openRows: string[][] = [];
  const p = (values: number[], q: number) => ms(percentile(values, q));
  for (const [r, rate] of OPEN_LOOP_RATES.entries()) {
    const body = JSON.stringify({ id: 'evt_baseline', event: 'points.awarded.v1', data: {} });
    const bare = await offerOpenLoop(rate, OPEN_LOOP_SECONDS, async () => {
      const result = await safePost(`${receiverUrl}/baseline-open/0`, { 'content-type': 'application/json', 'x-service-signature': signatureHeader('whsec_bench', Math.floor(Date.now() / 1000), body) }, body, 10_000, { allowLoopback: true, allowHttp: false });
      if (result.status !== 200) throw new Error(`baseline POST failed: ${result.error}`);
    });
    openRows.push([`${rate}/s`, 'bare signed POST', String(bare.latencies.length), String(bare.failures), p(bare.latencies, 50), p(bare.latencies, 95), p(bare.latencies, 99), ms(bare.sendLagMaxMs)]);
    const label = `open${r}`;
    const ids = await destinations(1, label);
    const last = r === OPEN_LOOP_RATES.length - 1;
    if (last) await statements.reset();
    const committed: number[] = [];
    const offered = await offerOpenLoop(rate, OPEN_LOOP_SECONDS, async (i) => {
      const [eventId] = await commit([event(i, label)]);
      committed.push(eventId.length);
      if (receivedIds.has(eventId)) return;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`event ${eventId} not delivered within ${SCENARIO_TIMEOUT_MS} ms`)), SCENARIO_TIMEOUT_MS);
        awaited.set(eventId, () => {
          clearTimeout(timer);
          awaited.delete(eventId);
          resolve();
        });
      });
    });
    if (last) await statements.print(`open loop, ${rate} events/s for ${OPEN_LOOP_SECONDS} s, one event per commit`);
    if (offered.failures > 0) throw new Error(`open loop at ${rate}/s: ${offered.failures} events failed (${offered.firstFailure})`);
    checkExactlyOnce(label, committed.length);
    const commitToReceipt = latencies(label);
    openRows.push([`${rate}/s`, 'events → 1 destination (commit → receipt)', String(commitToReceipt.length), String(offered.failures), p(commitToReceipt, 50), p(commitToReceipt, 95), p(commitToReceipt, 99), ms(offered.sendLagMaxMs)]);
    await deactivate(ids);
  }

  process.stdout.write(`\nWebhook delivery (${os.cpus().length} cores, job concurrency ${JOB_CONCURRENCY}, HTTPS receiver on loopback)\n\n`);
  process.stdout.write('| scenario | deliveries | throughput | commit→receipt p50 | p99 |\n|---|---|---|---|---|\n');
  for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`);
  if (openRows.length > 0) {
    process.stdout.write(`\nOpen loop, ${OPEN_LOOP_SECONDS} s per rate (a bare POST: departure → answer; an event: commit → receipt at the receiver)\n\n`);
    process.stdout.write('| rate | what | done | failed | p50 | p95 | p99 | sender lag max |\n|---|---|---|---|---|---|---|---|\n');
    for (const row of openRows) process.stdout.write(`| ${row.join(' | ')} |\n`);
  }
  process.stdout.write(`\nPeak RSS of this process (receiver, job runner, sender): ${Math.round(process.resourceUsage().maxRSS / 1024)} MB\n`);

  receiver.closeAllConnections();
  receiver.close();
  await service.stop();
  await owner.end();
  await database.stop();
}

runBench(main);
