import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { parseCrontab } from 'graphile-worker';
import { startTestService, type TestService } from './helper.js';
import { collectJobs } from '../src/service.js';
import { RETENTION_BATCH_ROWS, RETENTION_TASK } from '../src/platform/retention.js';
import { DISPATCH_TASK } from '../src/platform/outbox.js';
import { clock } from '../src/platform/clock.js';
import { loadConfig } from '../src/config.js';

const DAY_MS = 24 * 60 * 60 * 1000;

async function runRetention(svc: TestService): Promise<void> {
  const { handlers } = await collectJobs();
  await handlers[RETENTION_TASK]({}, { db: svc.service.db, config: svc.config, log: svc.service.log });
}

async function ids(svc: TestService, text: string, values: unknown[]): Promise<string[]> {
  return (await svc.sql<{ id: string }>(text, values)).map((row) => row.id).sort();
}

test('retention: every five minutes, one job deletes what has served its purpose and keeps the rest', async (t) => {
  // The outbox rows below are written straight into the table with empty payloads: no event contract check.
  const svc = await startTestService(t, { config: { OUTBOX_RETENTION_DAYS: '30', WEBHOOK_LOG_RETENTION_DAYS: '30', SESSION_RETENTION_DAYS: '7' }, eventContract: false });
  const tenant = await svc.createTenant();
  const now = clock.now();
  const daysAgo = (days: number) => new Date(now.getTime() - days * DAY_MS);

  const { crontab } = await collectJobs();
  assert.ok(crontab.split('\n').includes(`*/5 * * * * ${RETENTION_TASK} ?max=1`));
  assert.ok(parseCrontab(crontab).some((item) => item.task === RETENTION_TASK));

  await t.test('idempotency keys and event idempotency keys go once expired', async () => {
    for (const [key, expires] of [['expired', daysAgo(1)], ['live', new Date(now.getTime() + DAY_MS)]] as const) {
      await svc.sql(
        `INSERT INTO idempotency_keys (tenant_id, scope, key, fingerprint, response, created_at, expires_at) VALUES ($1, 'points.grant', $2, 'f', '{}', $3, $4)`,
        [tenant.tenantId, key, daysAgo(2), expires],
      );
      await svc.sql(`INSERT INTO event_idempotency_keys (tenant_id, key, event_id, fingerprint, created_at, expires_at) VALUES ($1, $2, 'evt', 'f', $3, $4)`, [
        tenant.tenantId,
        key,
        daysAgo(2),
        expires,
      ]);
    }
    await runRetention(svc);
    assert.deepEqual((await svc.sql('SELECT key FROM idempotency_keys WHERE tenant_id = $1', [tenant.tenantId])).map((r) => r.key), ['live']);
    assert.deepEqual((await svc.sql('SELECT key FROM event_idempotency_keys WHERE tenant_id = $1', [tenant.tenantId])).map((r) => r.key), ['live']);
  });

  await t.test('sessions go SESSION_RETENTION_DAYS after they expired', async () => {
    const engagementId = await svc.createEngagement(tenant);
    await svc.createSession(tenant, { participantId: 'p-old-session', engagementId });
    await svc.createSession(tenant, { participantId: 'p-recent-session', engagementId });
    await svc.sql(`UPDATE sessions SET expires_at = $2 WHERE tenant_id = $1 AND participant_id = 'p-old-session'`, [tenant.tenantId, daysAgo(8)]);
    await svc.sql(`UPDATE sessions SET expires_at = $2 WHERE tenant_id = $1 AND participant_id = 'p-recent-session'`, [tenant.tenantId, daysAgo(6)]);
    await runRetention(svc);
    const left = await svc.sql(`SELECT participant_id FROM sessions WHERE tenant_id = $1 AND participant_id LIKE 'p-%-session'`, [tenant.tenantId]);
    assert.deepEqual(left.map((r) => r.participant_id), ['p-recent-session']);
  });

  await t.test('outbox events go after OUTBOX_RETENTION_DAYS, unless the dispatcher has not handed them on yet', async () => {
    const insert = (id: string, at: Date) =>
      svc.sql(`INSERT INTO outbox_events (tenant_id, id, event, participant_id, data, created_at) VALUES ($1, $2, 'points.awarded.v1', 'p-1', '{}', $3)`, [tenant.tenantId, id, at]);
    await insert('evt_old_dispatched', daysAgo(31));
    await insert('evt_old_pending', daysAgo(31));
    await insert('evt_old_in_job', daysAgo(31));
    await insert('evt_recent', daysAgo(29));
    await svc.sql(`INSERT INTO outbox_pending (tenant_id, event_id) VALUES ($1, 'evt_old_pending')`, [tenant.tenantId]);
    await svc.sql(`SELECT graphile_worker.add_job($1, json_build_object('tenant_id', $2::uuid, 'event_ids', ARRAY['evt_x', 'evt_old_in_job']), run_at => now() + interval '1 day')`, [
      DISPATCH_TASK,
      tenant.tenantId,
    ]);
    await runRetention(svc);
    assert.deepEqual(await ids(svc, `SELECT id FROM outbox_events WHERE tenant_id = $1 AND id LIKE 'evt_%'`, [tenant.tenantId]), [
      'evt_old_in_job',
      'evt_old_pending',
      'evt_recent',
    ]);
    // Once the dispatcher is done with them they go too.
    await svc.sql(`DELETE FROM outbox_pending WHERE tenant_id = $1`, [tenant.tenantId]);
    await svc.sql(`DELETE FROM graphile_worker._private_jobs WHERE task_id = (SELECT id FROM graphile_worker._private_tasks WHERE identifier = $1)`, [DISPATCH_TASK]);
    await runRetention(svc);
    assert.deepEqual(await ids(svc, `SELECT id FROM outbox_events WHERE tenant_id = $1 AND id LIKE 'evt_%'`, [tenant.tenantId]), ['evt_recent']);
  });

  await t.test('finished webhook deliveries (with their attempts) and replay jobs go after WEBHOOK_LOG_RETENTION_DAYS; unfinished ones stay', async () => {
    const created = await svc.request('POST', '/api/v1/gamify/webhooks', {
      key: tenant.apiKey,
      body: { name: 'crm', url: 'https://93.184.216.34/hooks', events: ['points.awarded.v1'] },
    });
    assert.equal(created.status, 201);
    const destination = created.body.id as string;
    const delivery = (id: string, status: string, completedAt: Date | null) =>
      svc.sql(
        `INSERT INTO webhook_deliveries (tenant_id, id, destination_id, event_id, event, occurred_at, status, attempts, max_attempts, created_at, updated_at, completed_at)
         VALUES ($1, $2, $3, $2 || '_evt', 'points.awarded.v1', $4, $5, 1, 4, $4, $4, $6)`,
        [tenant.tenantId, id, destination, daysAgo(40), status, completedAt],
      );
    await delivery('dlv_old_succeeded', 'SUCCEEDED', daysAgo(31));
    await delivery('dlv_old_exhausted', 'EXHAUSTED', daysAgo(31));
    await delivery('dlv_old_retrying', 'RETRYING', null);
    await delivery('dlv_recent_succeeded', 'SUCCEEDED', daysAgo(29));
    await svc.sql(
      `INSERT INTO webhook_delivery_attempts (tenant_id, delivery_id, attempt, outcome, started_at, duration_ms, response_status)
       SELECT $1, id, 1, 'succeeded', $2, 12, 200 FROM webhook_deliveries WHERE tenant_id = $1`,
      [tenant.tenantId, daysAgo(31)],
    );
    for (const [id, status, completedAt] of [['rpl_old', 'completed', daysAgo(31)], ['rpl_running', 'running', null], ['rpl_recent', 'failed', daysAgo(1)]] as const) {
      await svc.sql(`INSERT INTO webhook_replay_jobs (tenant_id, id, destination_id, status, filter, created_at, completed_at) VALUES ($1, $2, $3, $4, '{}', $5, $6)`, [
        tenant.tenantId,
        id,
        destination,
        status,
        daysAgo(40),
        completedAt,
      ]);
    }
    await runRetention(svc);
    const kept = ['dlv_old_retrying', 'dlv_recent_succeeded'];
    assert.deepEqual(await ids(svc, 'SELECT id FROM webhook_deliveries WHERE tenant_id = $1', [tenant.tenantId]), kept);
    assert.deepEqual(await ids(svc, 'SELECT delivery_id AS id FROM webhook_delivery_attempts WHERE tenant_id = $1', [tenant.tenantId]), kept);
    assert.deepEqual(await ids(svc, 'SELECT id FROM webhook_replay_jobs WHERE tenant_id = $1', [tenant.tenantId]), ['rpl_recent', 'rpl_running']);
    // The log a tenant reads shows what is kept.
    const logs = await svc.request('GET', `/api/v1/gamify/webhooks/${destination}/logs`, { key: tenant.apiKey });
    assert.equal(logs.status, 200);
    assert.deepEqual(logs.body.deliveries.map((d: { log_id: string }) => d.log_id).sort(), kept);
  });

  await t.test('a backlog larger than one batch is worked off in one run, batch by batch', async () => {
    const rows = RETENTION_BATCH_ROWS * 2 + 17;
    await svc.sql(
      `INSERT INTO outbox_events (tenant_id, id, event, data, created_at)
       SELECT $1, 'evt_bulk_' || n, 'points.awarded.v1', '{}', $2 FROM generate_series(1, $3) n`,
      [tenant.tenantId, daysAgo(60), rows],
    );
    await runRetention(svc);
    assert.equal((await svc.sql(`SELECT count(*)::int AS n FROM outbox_events WHERE tenant_id = $1 AND id LIKE 'evt_bulk_%'`, [tenant.tenantId]))[0].n, 0);
  });

  await t.test('a run that finds another run under way does nothing', async () => {
    await svc.sql(`INSERT INTO idempotency_keys (tenant_id, scope, key, fingerprint, created_at, expires_at) VALUES ($1, 'points.grant', 'held', 'f', $2, $2)`, [
      tenant.tenantId,
      daysAgo(3),
    ]);
    const other = new pg.Client({ connectionString: svc.ownerUrl });
    await other.connect();
    try {
      await other.query('SELECT pg_advisory_lock(7130501)');
      await runRetention(svc);
      assert.equal((await svc.sql(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = 'held'`))[0].n, 1);
      await other.query('SELECT pg_advisory_unlock(7130501)');
      await runRetention(svc);
      assert.equal((await svc.sql(`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = 'held'`))[0].n, 0);
    } finally {
      await other.end();
    }
  });
});

test('retention: windows are settings with floors', () => {
  const defaults = loadConfig({});
  assert.deepEqual([defaults.outboxRetentionDays, defaults.webhookLogRetentionDays, defaults.sessionRetentionDays], [30, 30, 7]);
  assert.equal(loadConfig({ OUTBOX_RETENTION_DAYS: '90' }).outboxRetentionDays, 90);
  assert.throws(() => loadConfig({ OUTBOX_RETENTION_DAYS: '0' }), /OUTBOX_RETENTION_DAYS/);
  assert.throws(() => loadConfig({ WEBHOOK_LOG_RETENTION_DAYS: 'x' }), /WEBHOOK_LOG_RETENTION_DAYS/);
});
