import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { key } from './testing.js';

test('daily ingestion quota: exact under concurrency, duplicates free, refusals store nothing, usage reported', async (t) => {
  const svc = await startTestService(t);
  const QUOTA = 50;
  const tenant = await svc.createTenant({ eventIngestionPerDay: QUOTA });
  const other = await svc.createTenant({ eventIngestionPerDay: QUOTA });
  const post = (path: string, body: unknown, apiKey = tenant.apiKey) => svc.request('POST', `/api/v1${path}`, { key: apiKey, body });
  const stored = async (tenantId: string) => (await svc.sql<{ n: number }>('SELECT count(*)::int AS n FROM ingested_events WHERE tenant_id = $1', [tenantId]))[0].n;

  await t.test('the plan figures: 10,000 / 100,000 / 1,000,000 per day, enterprise custom', async () => {
    for (const [plan, quota] of [['starter', 10_000], ['growth', 100_000], ['scale', 1_000_000], ['enterprise', null]] as const) {
      const fresh = await svc.createTenant({ plan });
      const usage = await svc.request('GET', '/api/v1/tenant/usage', { key: fresh.apiKey });
      assert.equal(usage.status, 200);
      assert.equal(usage.body.events_today.quota, quota);
      assert.equal((await svc.request('GET', '/api/v1/tenant', { key: fresh.apiKey })).body.quotas.event_ingestion_per_day, quota);
    }
    assert.equal((await svc.request('GET', '/api/v1/tenant', { key: tenant.apiKey })).body.quotas.event_ingestion_per_day, QUOTA);
  });

  await t.test('300 concurrent single events: exactly the quota is accepted, the rest get 429 with Retry-After', async () => {
    const responses = await Promise.all(
      Array.from({ length: 300 }, (_, i) => post('/ingest/events', { event_name: 'tap', participant_id: `p-${i % 7}`, idempotency_key: key('q') })),
    );
    const accepted = responses.filter((r) => r.status === 202);
    const refused = responses.filter((r) => r.status === 429);
    assert.equal(accepted.length, QUOTA);
    assert.equal(refused.length, 300 - QUOTA);
    const [sample] = refused;
    assert.equal(sample.body.code, 'INGESTION_QUOTA_EXCEEDED');
    assert.equal(sample.body.error_version, 1);
    assert.match(sample.body.detail, /50 events per day \(UTC\)/);
    const retryAfter = Number(sample.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 86_400, `Retry-After ${retryAfter}`);
    assert.equal(await stored(tenant.tenantId), QUOTA);
  });

  await t.test('at the quota: a repeated key is still answered as a duplicate, new events and batches are refused whole', async () => {
    const k = key('dup');
    const fresh = await svc.createTenant({ eventIngestionPerDay: 3 });
    const postFresh = (path: string, body: unknown) => post(path, body, fresh.apiKey);
    assert.equal((await postFresh('/ingest/events', { event_name: 'a', participant_id: 'p', idempotency_key: k })).status, 202);
    const batch = await postFresh('/ingest/events/batch', {
      events: [1, 2, 3].map((i) => ({ event_name: 'b', participant_id: 'p', idempotency_key: key(`b${i}`) })),
    });
    assert.equal(batch.status, 429, 'three more would make four');
    assert.equal(batch.body.code, 'INGESTION_QUOTA_EXCEEDED');
    assert.equal(await stored(fresh.tenantId), 1);
    const fits = await postFresh('/ingest/events/batch', { events: [1, 2].map((i) => ({ event_name: 'b', participant_id: 'p', idempotency_key: key(`c${i}`) })) });
    assert.equal(fits.status, 200);
    assert.equal(fits.body.accepted, 2);
    const again = await postFresh('/ingest/events', { event_name: 'a', participant_id: 'p', idempotency_key: k });
    assert.equal(again.status, 202);
    assert.equal(again.body.duplicate, true);
    const sync = await postFresh('/ingest/events/sync', { event_name: 'a', participant_id: 'p', idempotency_key: key('s') });
    assert.equal(sync.status, 429);
    assert.equal(await stored(fresh.tenantId), 3, 'a refused synchronous event is not kept as a failed one');
    const usage = (await svc.request('GET', '/api/v1/tenant/usage', { key: fresh.apiKey })).body;
    assert.deepEqual({ used: usage.events_today.used, quota: usage.events_today.quota, exceeded: usage.events_today.exceeded }, { used: 3, quota: 3, exceeded: true });
    assert.match(usage.events_today.resets_at, /T00:00:00\.000Z$/);
  });

  await t.test('tenants count apart; usage shows participants, keys and engagements', async () => {
    assert.equal((await post('/ingest/events', { event_name: 'tap', participant_id: 'x', idempotency_key: key('o') }, other.apiKey)).status, 202);
    const usage = await svc.request('GET', '/api/v1/tenant/usage', { key: other.apiKey });
    assert.equal(usage.body.events_today.used, 1);
    assert.equal(usage.body.participants_this_month.quota, null);
    assert.equal(usage.body.api_keys.used, 1);
    assert.equal(usage.body.concurrent_engagements.used, 0);
    assert.match(usage.body.day, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(usage.body.month, usage.body.day.slice(0, 7));
    const starter = await svc.createTenant({ plan: 'starter' });
    await svc.request('POST', '/api/v1/gamify/points/grant', { key: starter.apiKey, body: { participant_id: 'new-one', amount: 5, reason: 'hello', idempotency_key: key('g') } });
    const starterUsage = (await svc.request('GET', '/api/v1/tenant/usage', { key: starter.apiKey })).body;
    assert.deepEqual(starterUsage.participants_this_month, { used: 1, quota: 5_000, exceeded: false });
    assert.deepEqual(starterUsage.api_keys, { used: 1, quota: 2, exceeded: false });
  });

  await t.test('the usage route needs an admin credential', async () => {
    assert.equal((await svc.request('GET', '/api/v1/tenant/usage')).status, 401);
    const session = await svc.createSession(tenant);
    assert.equal((await svc.request('GET', `/api/v1/tenant/usage?session_id=${session.sessionId}&engagement_id=${session.engagementId}`)).status, 403);
  });
});

test('the quota counter does not make synchronous events of one tenant wait for each other\'s processing', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant({ eventIngestionPerDay: 100 });
  const sync = (participantId: string, properties: Record<string, unknown> = {}) =>
    svc.request('POST', '/api/v1/ingest/events/sync', { key: tenant.apiKey, body: { event_name: 'tap', participant_id: participantId, properties, idempotency_key: key('w') } });
  assert.equal((await sync('held')).status, 200);
  const waitingOnLock = async () => (await svc.sql<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'"))[0].n;
  // Another transaction holds the participant row, so processing an event that writes to the profile of `held` waits on it.
  const holder = await svc.service.db.system.connect();
  let blocked: ReturnType<typeof sync> | null = null;
  let other: Awaited<ReturnType<typeof sync>> | null = null;
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM participants WHERE tenant_id = $1 AND participant_id = $2 FOR UPDATE', [tenant.tenantId, 'held']);
    blocked = sync('held', { city: 'London' });
    const deadline = Date.now() + 15_000;
    while ((await waitingOnLock()) === 0) {
      assert.ok(Date.now() < deadline, 'the first event never reached the held participant row');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    other = await Promise.race([sync('free'), new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000))]);
  } finally {
    await holder.query('COMMIT').catch(() => undefined);
    // Released before the service stops: its pool waits for every client it handed out.
    holder.release();
  }
  assert.ok(other !== null, 'an event of another participant waited for the held one');
  assert.equal(other.status, 200);
  assert.equal((await blocked!).status, 200);
  const usage = (await svc.request('GET', '/api/v1/tenant/usage', { key: tenant.apiKey })).body;
  assert.equal(usage.events_today.used, 3);
});
