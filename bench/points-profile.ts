/**
 * Profile of the direct grant transaction: `npx tsx bench/points-profile.ts`
 *
 * Starts its own embedded PostgreSQL (durable settings) and the service's
 * database layer, then measures, with 64 concurrent workers for
 * PROFILE_SECONDS each, variants of the grant transaction that add one part at
 * a time, and the serial cost of each statement (one connection). It answers
 * "which statement costs what, and what serialises the commits".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config.js';
import { startEmbeddedPostgres, deriveAppPassword, withCredentials } from '../src/platform/database-server.js';
import { APP_ROLE } from '../src/platform/migrate.js';
import { startService } from '../src/service.js';
import { createLogger } from '../src/platform/logger.js';
import { createTenant } from '../src/modules/access/index.js';
import { grantDirect } from '../src/modules/points/service.js';
import type { Tx } from '../src/platform/db.js';
import { percentile, runBench } from './support.js';

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 64);
/** The service's pool size (DB_POOL_SIZE); the workers queue for it when it is smaller than CONNECTIONS. */
const POOL_SIZE = Number(process.env.PROFILE_POOL_SIZE ?? CONNECTIONS);
/** Run only the variants whose name contains this text. */
const ONLY = process.env.PROFILE_ONLY ?? '';

async function load(run: () => Promise<unknown>) {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          await run();
        } catch (error) {
          if (errors++ === 0) process.stderr.write(`${String(error)}\n`);
        }
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const rate = latencies.length / ((performance.now() - started) / 1000);
  return `${rate.toFixed(0)}/s p50 ${percentile(latencies, 50).toFixed(1)} ms p99 ${percentile(latencies, 99).toFixed(1)} ms${errors ? ` (${errors} errors)` : ''}`;
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'points-profile-'));
  const server = await startEmbeddedPostgres({ dataDir, port: 54_000 + (process.pid % 3000) });
  const ownerUrl = server.ownerUrl;
  const appUrl = withCredentials(ownerUrl, APP_ROLE, deriveAppPassword(ownerUrl, null));
  const config = loadConfig({
    APP_ENV: 'development',
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: ownerUrl,
    SERVICE_ROLE: 'api',
    DB_POOL_SIZE: String(POOL_SIZE),
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret',
  });
  const service = await startService({ config, log: createLogger('silent'), server: { ownerUrl, appUrl, stop: async () => undefined } });
  const db = service.db;
  try {
    const tenant = await createTenant(db, { name: 'Profile', slug: `profile-${process.pid}`, plan: 'enterprise', adminEmail: `p-${process.pid}@example.com` });
    const tenantId = tenant.tenant_id;
    let seq = 0;
    const participant = () => `p-${Math.floor(Math.random() * 10_000)}`;
    const grantSql = (tx: Tx, p: string) =>
      tx.query(
        `WITH balance AS (
           INSERT INTO points_balances AS b (tenant_id, participant_id, available, lifetime, last_earned_at, updated_at)
           VALUES ($1, $2, 5, 5, now(), now())
           ON CONFLICT (tenant_id, participant_id) DO UPDATE SET available = b.available + 5, lifetime = b.lifetime + 5, updated_at = now()
           RETURNING new.available, new.lifetime
         ), lot AS (
           INSERT INTO points_lots (tenant_id, participant_id, amount, remaining, ledger_entry_id, created_at, expires_at)
           VALUES ($1, $2, 5, 5, $3, now(), now() + interval '365 days')
         )
         INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, source_kind, available_after, lifetime_after, created_at)
         SELECT $1, $2, $3, 'award', 5, 'profile', 'grant', available, lifetime, now() FROM balance`,
        [tenantId, p, `ple_prof_${process.pid}_${++seq}`],
      );
    // Participants exist up front, so the variants without the grant CTE's participant insert still satisfy the foreign keys.
    await db.tenant(tenantId, (tx) => tx.query(`INSERT INTO participants (tenant_id, participant_id) SELECT $1, 'p-' || g FROM generate_series(0, 9999) g ON CONFLICT DO NOTHING`, [tenantId]));
    const outboxInsert = (tx: Tx) =>
      tx.query(
        `INSERT INTO outbox_events (tenant_id, id, event, participant_id, data, created_at) VALUES ($1, $2, 'points.awarded.v1', 'p', '{"a":1}', now())`,
        [tenantId, `evt_prof_${process.pid}_${++seq}`],
      );

    const variants: Array<[string, () => Promise<unknown>]> = [
      ['BEGIN/COMMIT only', () => db.tenant(tenantId, async () => undefined)],
      ['grant CTE (balance, lot, ledger)', () => db.tenant(tenantId, (tx) => grantSql(tx, participant()))],
      ['grant CTE + outbox row', () => db.tenant(tenantId, async (tx) => { await grantSql(tx, participant()); await outboxInsert(tx); })],
      ['grant CTE + outbox row + pg_notify', () => db.tenant(tenantId, async (tx) => { await grantSql(tx, participant()); await outboxInsert(tx); await tx.query(`SELECT pg_notify('profile', '')`); })],
      ['grant CTE + outbox row + graphile add_job', () => db.tenant(tenantId, async (tx) => { await grantSql(tx, participant()); await outboxInsert(tx); await tx.query(`SELECT graphile_worker.add_job('profile.task', '{}'::json)`); })],
      ['grantDirect (the service path)', () => grantDirect(db, tenantId, { participant_id: participant(), amount: 5, reason: 'profile', idempotency_key: `k-${++seq}` })],
    ];
    process.stdout.write(`\nGrant transaction profile (${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}, ${CONNECTIONS} workers, pool ${POOL_SIZE}, ${SECONDS} s each)\n\n| variant | rate, latency |\n|---|---|\n`);
    for (const [name, run] of variants.filter(([name]) => name.includes(ONLY))) process.stdout.write(`| ${name} | ${await load(run)} |\n`);
    process.stdout.write(`\nload average at the end: ${os.loadavg()[0].toFixed(1)}\n`);
  } finally {
    await service.stop();
    await server.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runBench(main);
