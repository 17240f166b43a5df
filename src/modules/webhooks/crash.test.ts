import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { Database } from '../../platform/db.js';
import { withCredentials } from '../../platform/database-server.js';
import { testCluster } from '../../../test/helper.js';
import { APP_ROLE } from '../../platform/migrate.js';
import { emit } from '../../platform/outbox.js';
import { createLogger } from '../../platform/logger.js';
import { loadConfig } from '../../config.js';
import { createTenant } from '../access/index.js';
import { createDestination } from './service.js';
import { startReceiver, waitFor } from './test-support.js';

/**
 * At-least-once delivery across a crash. The service runs as a child process
 * (`tsx src/main.ts`, worker role, against this test's own database); a
 * burst of events is emitted, the child is killed with SIGKILL while
 * deliveries are in flight, more events are committed while it is dead, and
 * a new child is started. Every committed event must reach the receiver at
 * least once; no event of a rolled-back change may reach it.
 */
const root = path.resolve(import.meta.dirname, '../../..');
const COMMITTED_TRANSACTIONS = 30;
const EVENTS_PER_TRANSACTION = 5;
const ROLLED_BACK_TRANSACTIONS = 5;

async function createDatabase(t: { after(fn: () => Promise<void>): void }): Promise<{ ownerUrl: string; appUrl: string; appPassword: string }> {
  const cluster = testCluster();
  const name = `test_crash_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: cluster.databaseUrl('postgres') });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${cluster.template}`);
  await admin.end();
  t.after(async () => {
    const cleanup = new pg.Client({ connectionString: cluster.databaseUrl('postgres') });
    await cleanup.connect();
    await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await cleanup.end();
  });
  const ownerUrl = cluster.databaseUrl(name);
  return { ownerUrl, appUrl: withCredentials(ownerUrl, APP_ROLE, cluster.appPassword), appPassword: cluster.appPassword };
}

function startWorker(ownerUrl: string, appPassword: string): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      APP_ENV: 'test',
      SERVICE_ROLE: 'worker',
      DATABASE_URL: ownerUrl,
      DB_APP_PASSWORD: appPassword,
      TIME_SCALE: '0.001',
      WORKER_STALE_AFTER_SECONDS: '5',
      JOB_CONCURRENCY: '4',
      ALLOW_LOOPBACK_WEBHOOKS: 'true',
      ALLOW_HTTP_WEBHOOKS: 'true',
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

test('crash: SIGKILL mid-delivery loses no committed event and delivers no rolled-back one', { timeout: 180_000 }, async (t) => {
  const database = await createDatabase(t);
  const db = new Database(database.appUrl, database.ownerUrl, 5);
  t.after(() => db.close());
  const config = loadConfig({ APP_ENV: 'test', ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true' });
  const context = { db, config, log: createLogger('silent') };

  // A receiver slow enough that the kill lands while deliveries are in flight.
  const receiver = await startReceiver((_r, res) => setTimeout(() => res.end('ok'), 40));
  t.after(() => receiver.close());
  const tenant = await createTenant(db, { name: 'Crash', slug: `crash-${randomBytes(3).toString('hex')}`, plan: 'enterprise' });
  await createDestination(context, tenant.tenant_id, { name: 'crash receiver', url: `${receiver.url}/crash`, events: ['points.awarded.v1'], timeout_seconds: 3 });

  const committed: string[] = [];
  const emitBurst = async (transactions: number, label: string) => {
    for (let i = 0; i < transactions; i++) {
      const events = Array.from({ length: EVENTS_PER_TRANSACTION }, (_, j) => ({
        event: 'points.awarded.v1',
        participantId: `${label}-${i}-${j}`,
        data: { participant_id: `${label}-${i}-${j}`, amount: 1, available: 1, lifetime: 1, reason: 'crash', ledger_entry_id: 'led', source_kind: 'grant', multiplier: null },
      }));
      committed.push(...(await db.tenant(tenant.tenant_id, (tx) => emit(tx, tenant.tenant_id, events))));
    }
  };
  const emitRolledBack = async () => {
    for (let i = 0; i < ROLLED_BACK_TRANSACTIONS; i++) {
      await assert.rejects(
        db.tenant(tenant.tenant_id, async (tx) => {
          await emit(tx, tenant.tenant_id, { event: 'points.awarded.v1', participantId: `rolled-back-${i}`, data: { participant_id: `rolled-back-${i}` } });
          throw new Error('the change fails');
        }),
      );
    }
  };

  let child = startWorker(database.ownerUrl, database.appPassword);
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  await emitBurst(COMMITTED_TRANSACTIONS, 'before');
  await emitRolledBack();
  const total = COMMITTED_TRANSACTIONS * EVENTS_PER_TRANSACTION;
  await waitFor('deliveries under way', () => receiver.received.length >= total / 4, 60_000, 10);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  const atKill = receiver.received.length;
  const count = async (sql: string) => db.tenant(tenant.tenant_id, async (tx) => (await tx.query(sql)).rows[0].n as number);
  const unfinished = await count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'SUCCEEDED'`);
  const inFlight = await count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'DELIVERING'`);
  t.diagnostic(`killed after ${atKill} of ${total} receipts; ${unfinished} deliveries unfinished (${inFlight} in flight), the rest not yet created`);
  assert.ok(atKill < total, 'the kill landed mid-burst');

  // Committed while no worker runs: the outbox keeps them.
  await emitBurst(4, 'while-dead');
  child = startWorker(database.ownerUrl, database.appPassword);
  const started = Date.now();
  await waitFor(
    'every committed event at the receiver',
    () => {
      const seen = new Set(receiver.received.map((r) => r.body?.id));
      return committed.every((id) => seen.has(id));
    },
    120_000,
    200,
  );
  t.diagnostic(`all ${committed.length} committed events received ${Date.now() - started} ms after the restart; ${receiver.received.length} receipts in all (duplicates are allowed)`);
  assert.ok(!receiver.received.some((r) => String(r.body?.participant_id).startsWith('rolled-back')), 'no rolled-back event was delivered');
  const states = await db.tenant(tenant.tenant_id, async (tx) => (await tx.query(`SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`)).rows);
  await waitFor('every delivery recorded as SUCCEEDED', async () => {
    const rows = await db.tenant(tenant.tenant_id, async (tx) => (await tx.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'SUCCEEDED'`)).rows);
    return rows[0].n === committed.length;
  }, 30_000);
  t.diagnostic(`delivery states just after the last receipt: ${JSON.stringify(states)}`);
  // Each attempt the kill cut short was taken over once its deadline passed, and logged.
  const interrupted = await count(`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE outcome = 'interrupted'`);
  assert.equal(interrupted, inFlight);
  t.diagnostic(`${interrupted} interrupted attempts repeated; ${receiver.received.length} receipts for ${committed.length} events`);
  const exitedAgain = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exitedAgain;
});
