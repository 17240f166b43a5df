import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createLogger } from '../src/platform/logger.js';
import { startMetricsServer } from '../src/platform/metrics.js';
import { startReceiver } from '../src/modules/webhooks/testing.js';
import { startTestService, type TestService } from './helper.js';

/**
 * What an operator watches: `/metrics` carries the domain series (events,
 * ledger, jobs, webhooks, rate limits, queue depth, outbox lag, liability,
 * pools), each moved by exactly what the test did; every job leaves one info
 * line naming its task, tenant, duration and outcome, and nothing personal.
 */
type Samples = Map<string, number>;

/** `name{labels} value` lines of the exposition format, keyed by `name{labels}`. */
function parse(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const cut = line.lastIndexOf(' ');
    samples.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return samples;
}

async function scrape(svc: TestService): Promise<Samples> {
  const response = await fetch(`${svc.baseUrl}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /text\/plain/);
  return parse(await response.text());
}

const value = (samples: Samples, series: string) => samples.get(series) ?? 0;

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface LogLine {
  level: number;
  msg: string;
  task?: string;
  jobId?: string;
  tenantId?: string;
  durationMs?: number;
  outcome?: string;
}

test('/metrics moves with what happened, and every job logs its task, tenant, duration and outcome', async (t) => {
  const written: string[] = [];
  const svc = await startTestService(t, {
    jobs: true,
    config: { LOG_LEVEL: 'info', ALLOW_LOOPBACK_WEBHOOKS: 'true', ALLOW_HTTP_WEBHOOKS: 'true', RATE_LIMIT_LISTING_PER_MINUTE: '2' },
    logDestination: { write: (line) => void written.push(line) },
  });
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const tenant = await svc.createTenant();
  const call = async (method: string, path: string, body?: unknown, expected = 200) => {
    const response = await svc.request(method, path, { key: tenant.apiKey, ...(body === undefined ? {} : { body }) });
    assert.equal(response.status, expected, `${method} ${path}: ${response.text}`);
    return response.body;
  };
  const email = 'metrics.person@example.com';
  await call('PATCH', '/api/v1/gamify/admin/participants/p-metrics/profile', { email });
  await call('POST', '/api/v1/admin/rules', { name: 'Ten per order', trigger: 'event', event_name: 'order', effects: [{ type: 'award_points', points: 10 }], status: 'active' }, 201);
  await call('POST', '/api/v1/gamify/webhooks', { name: 'Local', url: `${receiver.url}/hooks`, events: ['points.awarded.v1'] }, 201);

  const before = await scrape(svc);
  for (const key of ['m-1', 'm-2', 'm-3']) await call('POST', '/api/v1/ingest/events', { event_name: 'order', participant_id: 'p-metrics', properties: {}, idempotency_key: key }, 202);
  await call('POST', '/api/v1/ingest/events', { event_name: 'order', participant_id: 'p-metrics', properties: {}, idempotency_key: 'm-1' }, 202);
  await call('POST', '/api/v1/ingest/events', { event_name: 'order', participant_id: 'p-metrics', properties: 'not an object', idempotency_key: 'm-bad' }, 400);
  const batch = await call('POST', '/api/v1/ingest/events/batch', { events: [{ event_name: 'order', participant_id: 'p-metrics', properties: {}, idempotency_key: 'm-4' }, { event_name: 'order', properties: {}, idempotency_key: 'm-5' }] });
  assert.equal(batch.accepted, 1);
  assert.equal(batch.rejected, 1);
  await call('POST', '/api/v1/gamify/points/grant', { participant_id: 'p-metrics', amount: 7, reason: 'goodwill', idempotency_key: 'g-1' });
  await call('POST', '/api/v1/gamify/points/deduct', { participant_id: 'p-metrics', amount: 4, reason: 'redeemed', idempotency_key: 'd-1' });
  for (let i = 0; i < 2; i++) await call('GET', '/api/v1/gamify/admin/participants?limit=1');
  await call('GET', '/api/v1/gamify/admin/participants?limit=1', undefined, 429);

  // Four events award 10 points each and the grant 7: five points.awarded deliveries.
  await eventually(async () => receiver.received.length >= 5, `five webhook deliveries (${receiver.received.length}; ${written.filter((l) => /"level":[45]/.test(l)).slice(0, 3).join('')})`);
  await eventually(async () => value(await scrape(svc), 'loyalty_webhook_attempts_total{outcome="succeeded"}') - value(before, 'loyalty_webhook_attempts_total{outcome="succeeded"}') >= 5, 'the attempts counted');
  // A job is counted when the queue reports it done, a moment after its attempts were recorded;
  // a delivery job carries the deliveries of one dispatch to one destination (up to 20), so the five
  // deliveries took between one and five jobs.
  await eventually(async () => value(await scrape(svc), 'loyalty_jobs_total{task="webhooks.deliver",outcome="succeeded"}') - value(before, 'loyalty_jobs_total{task="webhooks.deliver",outcome="succeeded"}') >= 1, 'the delivery jobs counted');
  await eventually(async () => written.some((line) => line.includes('"job done"') && line.includes('"task":"webhooks.deliver"')), 'the delivery job logged');
  const after = await scrape(svc);
  const delta = (series: string) => value(after, series) - value(before, series);

  assert.equal(delta('loyalty_events_accepted_total{outcome="accepted"}'), 4);
  assert.equal(delta('loyalty_events_accepted_total{outcome="duplicate"}'), 1);
  const rejected = [...new Set([...before.keys(), ...after.keys()])].filter((series) => series.startsWith('loyalty_events_rejected_total{'));
  assert.equal(rejected.reduce((sum, series) => sum + delta(series), 0), 2, rejected.join());
  assert.equal(delta('loyalty_events_rejected_total{code="VALIDATION_INVALID_REQUEST"}'), 2, 'by their code: the refused single event and the batch item without a participant');
  assert.equal(delta('loyalty_ledger_writes_total{kind="grant"}'), 5);
  assert.equal(delta('loyalty_ledger_points_total{kind="grant"}'), 47);
  assert.equal(delta('loyalty_ledger_writes_total{kind="deduct"}'), 1);
  assert.equal(delta('loyalty_ledger_points_total{kind="deduct"}'), 4);
  assert.equal(delta('loyalty_rate_limit_refusals_total{scope="listing"}'), 1);
  assert.ok(delta('loyalty_webhook_attempts_total{outcome="succeeded"}') >= 5);
  assert.ok(delta('loyalty_webhook_attempt_duration_seconds_count') >= 5);
  const deliveryJobs = delta('loyalty_jobs_total{task="webhooks.deliver",outcome="succeeded"}');
  assert.ok(deliveryJobs >= 1 && deliveryJobs <= 5, [...after.keys()].filter((k) => k.startsWith('loyalty_jobs_total')).join());
  // Gauges read from the database: the liability is the participant's balance (47 − 4), nothing waits.
  // Test tenants are on the enterprise plan; the participant's balance is 47 − 4.
  assert.equal(value(after, 'loyalty_points_liability{plan="enterprise"}'), 43);
  assert.ok(after.has('loyalty_outbox_lag_seconds'));
  assert.ok(after.has('loyalty_webhook_deliveries_waiting'));
  assert.ok(after.has('loyalty_db_pool_connections{pool="app",state="waiting"}'));
  assert.ok([...after.keys()].some((k) => k.startsWith('http_request_duration_seconds_count')), 'the request series stay');

  const lines = written.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as LogLine);
  const jobs = lines.filter((line) => line.msg === 'job done');
  assert.ok(jobs.length >= 2, `job lines: ${jobs.length}`);
  const delivery = jobs.find((line) => line.task === 'webhooks.deliver');
  assert.ok(delivery, 'a delivery job is logged');
  assert.equal(delivery.level, 30, 'at info');
  assert.equal(delivery.tenantId, tenant.tenantId);
  assert.equal(delivery.outcome, 'succeeded');
  assert.equal(typeof delivery.durationMs, 'number');
  assert.match(String(delivery.jobId), /^\d+$/);
  assert.ok(!written.join('').includes(email), 'nothing personal in the log');

  // The alert rules and the dashboard in deploy/ name only series the service exports.
  const exported = new Set([...(await (await fetch(`${svc.baseUrl}/metrics`)).text()).matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
  for (const file of ['deploy/prometheus/alerts.yaml', 'deploy/grafana/loyalty-dashboard.json']) {
    const text = fs.readFileSync(path.resolve(import.meta.dirname, '..', file), 'utf8');
    const named = new Set([...text.matchAll(/\b((?:loyalty|http_request|process)_[a-z_]+)/g)].map((m) => m[1].replace(/_(bucket|count|sum)$/, '')));
    assert.ok(named.size >= 5, `${file} names series`);
    for (const series of named) assert.ok(exported.has(series), `${file} names ${series}, which /metrics does not export`);
  }
});

test('a worker process serves its series on METRICS_PORT', async (t) => {
  const server = await startMetricsServer('127.0.0.1', 0, createLogger('silent'));
  t.after(() => server.close());
  const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
  assert.equal(response.status, 200);
  const text = await response.text();
  for (const series of ['loyalty_jobs_total', 'loyalty_job_queue_depth', 'loyalty_webhook_attempts_total', 'loyalty_ledger_writes_total', 'process_cpu_seconds_total']) {
    assert.match(text, new RegExp(`^# TYPE ${series} `, 'm'), series);
  }
  assert.equal((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status, 200);
  assert.equal((await fetch(`http://127.0.0.1:${server.port}/other`)).status, 404);
});
