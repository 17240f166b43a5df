import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { key, sendSync, waitProcessed } from './testing.js';

test('ingestion: the event store, the three routes and background processing', async (t) => {
  const svc = await startTestService(t, { jobs: true });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const post = (path: string, body: unknown, headers: Record<string, string> = {}, apiKey = tenant.apiKey) =>
    svc.request('POST', `/api/v1${path}`, { key: apiKey, body, headers });

  await t.test('one event is accepted with a message_id once stored, then processed in the background', async () => {
    const k = key();
    const response = await post('/ingest/events', { event_name: 'page_view', participant_id: 'p-1', properties: { page: '/home' }, timestamp: '2026-01-05T10:00:00Z', idempotency_key: k });
    assert.equal(response.status, 202);
    assert.equal(response.body.accepted, true);
    assert.equal(response.body.duplicate, false);
    assert.match(response.body.message_id, /^ev_[0-9a-f]{32}$/);
    const [row] = await svc.sql('SELECT * FROM ingested_events WHERE event_id = $1', [response.body.message_id]);
    assert.equal(row.tenant_id, tenant.tenantId);
    assert.equal(row.event_name, 'page_view');
    assert.deepEqual(row.properties, { page: '/home' });
    assert.equal(row.occurred_at.toISOString(), '2026-01-05T10:00:00.000Z');
    await waitProcessed(svc, [response.body.message_id]);
    const [done] = await svc.sql('SELECT status, attempts, processed_at FROM ingested_events WHERE event_id = $1', [response.body.message_id]);
    assert.equal(done.status, 'processed');
    assert.equal(done.attempts, 1);
  });

  await t.test('a repeated idempotency key returns the first event with duplicate: true and stores nothing', async () => {
    const k = key();
    const body = { event_name: 'purchase', participant_id: 'p-2', properties: { amount: 10 }, idempotency_key: k };
    const first = await post('/ingest/events', body);
    const again = await post('/ingest/events', body);
    assert.equal(first.status, 202);
    assert.equal(again.status, 202, 'a replay answers the first status');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(first.headers.get('idempotent-replayed'), null);
    assert.equal(again.body.duplicate, true);
    assert.equal(again.body.message_id, first.body.message_id);
    const rows = await svc.sql('SELECT 1 FROM ingested_events WHERE tenant_id = $1 AND idempotency_key = $2', [tenant.tenantId, k]);
    assert.equal(rows.length, 1);
    const reused = await post('/ingest/events', { ...body, properties: { amount: 11 } });
    assert.equal(reused.status, 422);
    assert.equal(reused.body.code, 'IDEMPOTENCY_KEY_REUSED');
  });

  await t.test('the key may come in the Idempotency-Key header; a differing body key is refused', async () => {
    const k = key();
    const viaHeader = await post('/ingest/events', { event_name: 'x', participant_id: 'p-3' }, { 'idempotency-key': k });
    assert.equal(viaHeader.status, 202);
    const repeat = await post('/ingest/events', { event_name: 'x', participant_id: 'p-3', idempotency_key: k });
    assert.equal(repeat.body.duplicate, true);
    const mismatch = await post('/ingest/events', { event_name: 'x', participant_id: 'p-3', idempotency_key: 'a' }, { 'idempotency-key': 'b' });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.code, 'IDEMPOTENCY_KEY_MISMATCH');
  });

  await t.test('the same key in another tenant is another event', async () => {
    const k = key();
    const mine = await post('/ingest/events', { event_name: 'x', participant_id: 'p-4', idempotency_key: k });
    const theirs = await post('/ingest/events', { event_name: 'x', participant_id: 'p-4', idempotency_key: k }, {}, other.apiKey);
    assert.equal(mine.status, 202);
    assert.equal(theirs.status, 202);
    assert.notEqual(mine.body.message_id, theirs.body.message_id);
  });

  await t.test('bad input gets 400 with a detail and stores nothing', async () => {
    const before = (await svc.sql('SELECT count(*)::int AS n FROM ingested_events'))[0].n;
    const cases: Array<[unknown, RegExp]> = [
      [{ participant_id: 'p', idempotency_key: key() }, /event_name/],
      [{ event_name: 'x', idempotency_key: key() }, /participant_id/],
      [{ event_name: 'x', participant_id: 'p' }, /idempotency key is required/],
      [{ event_name: 'x', participant_id: 'p', idempotency_key: key(), timestamp: 'yesterday' }, /date-time/],
      [{ event_name: 'x', participant_id: 'p', idempotency_key: key(), timestamp: '2026-01-05 10:00' }, /date-time/],
      [{ event_name: 'x', participant_id: 'p', idempotency_key: key(), properties: { blob: 'a'.repeat(17_000) } }, /16384/],
      [{ event_name: 'x', participant_id: 'p', idempotency_key: key(), properties: 'text' }, /properties/],
      [{ event_name: 'x', participant_id: 'p', idempotency_key: key(), tenant_id: other.tenantId }, /tenant_id/],
      [{ event_name: 'bad name!', participant_id: 'p', idempotency_key: key() }, /event_name/],
      [{ event_name: 'x', participant_id: 'p', idempotency_key: key(), timestamp: '2999-01-01T00:00:00Z' }, /future/],
      [{ event_name: 'x', participant_id: 'p', idempotency_key: key(), properties: { a: 'nul\u0000' } }, /NUL/],
    ];
    for (const [body, detail] of cases) {
      const response = await post('/ingest/events', body);
      assert.equal(response.status, 400, JSON.stringify(body).slice(0, 80));
      assert.match(response.body.detail, detail);
    }
    const after = (await svc.sql('SELECT count(*)::int AS n FROM ingested_events'))[0].n;
    assert.equal(after, before);
  });

  await t.test('a batch of 100 is accepted with one result per event; 500 is the maximum', async () => {
    const events = Array.from({ length: 100 }, (_, i) => ({ event_name: 'batch_evt', participant_id: `bp-${i % 7}`, properties: { i }, idempotency_key: key('b') }));
    const response = await post('/ingest/events/batch', { events });
    assert.equal(response.status, 200);
    assert.equal(response.body.accepted, 100);
    assert.equal(response.body.results.length, 100);
    assert.ok(response.body.results.every((r: { status: string; index: number }, i: number) => r.status === 'accepted' && r.index === i));
    await waitProcessed(svc, response.body.results.map((r: { message_id: string }) => r.message_id));

    const big = Array.from({ length: 500 }, (_, i) => ({ event_name: 'big', participant_id: `bb-${i}`, idempotency_key: key('big') }));
    const ok = await post('/events/batch', { events: big });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.accepted, 500);
    const tooBig = await post('/ingest/events/batch', { events: [...big, big[0]] });
    assert.equal(tooBig.status, 400);
    assert.match(tooBig.body.detail, /500/);
    assert.equal((await post('/ingest/events/batch', { events: [] })).status, 400);
  });

  await t.test('one bad event does not sink its batch: per-event accepted, duplicate and rejected', async () => {
    const dupKey = key('dup');
    const events = [
      { event_name: 'mixed', participant_id: 'mp', idempotency_key: dupKey },
      { event_name: 'mixed', participant_id: 'mp', timestamp: 'not a time', idempotency_key: key() },
      { event_name: 'mixed', participant_id: 'mp', idempotency_key: dupKey },
      { event_name: 'mixed', participant_id: 'mp' },
      'not an object',
      { event_name: 'mixed', participant_id: 'mp', idempotency_key: dupKey, properties: { other: true } },
      { event_name: 'mixed', participant_id: 'mp', idempotency_key: key(), surprise: 1 },
    ];
    const response = await post('/events/batch', { events });
    assert.equal(response.status, 200);
    const statuses = response.body.results.map((r: { status: string }) => r.status);
    assert.deepEqual(statuses, ['accepted', 'rejected', 'duplicate', 'rejected', 'rejected', 'rejected', 'rejected']);
    assert.equal(response.body.results[2].message_id, response.body.results[0].message_id);
    assert.match(response.body.results[1].detail, /date-time/);
    assert.equal(response.body.results[3].code, 'IDEMPOTENCY_KEY_REQUIRED');
    assert.equal(response.body.results[5].code, 'IDEMPOTENCY_KEY_REUSED');
    assert.match(response.body.results[6].detail, /surprise/);
    assert.deepEqual([response.body.accepted, response.body.duplicates, response.body.rejected], [1, 1, 5]);
  });

  await t.test('the sync route processes in the request and returns event_id and fact_id', async () => {
    const response = await sendSync(svc, tenant, { event_name: 'sync_evt', participant_id: 'sp-1', properties: { v: 1 } });
    assert.equal(response.status, 200);
    assert.match(response.body.event_id, /^ev_/);
    assert.match(response.body.fact_id, /^fct_/);
    assert.equal(response.body.status, 'processed');
    const [row] = await svc.sql('SELECT status, fact_id FROM ingested_events WHERE event_id = $1', [response.body.event_id]);
    assert.equal(row.status, 'processed');
    assert.equal(row.fact_id, response.body.fact_id);
  });

  await t.test('a repeated sync key returns the first event_id and fact_id and processes nothing again', async () => {
    const k = key();
    const body = { event_name: 'sync_evt', participant_id: 'sp-2', properties: { v: 2 } };
    const first = await post('/ingest/events/sync', body, { 'idempotency-key': k });
    const again = await post('/ingest/events/sync', { ...body, idempotency_key: k });
    assert.equal(first.status, 200);
    assert.equal(again.status, 200);
    assert.equal(again.body.duplicate, true);
    assert.deepEqual([again.body.event_id, again.body.fact_id], [first.body.event_id, first.body.fact_id]);
    const [row] = await svc.sql('SELECT attempts FROM ingested_events WHERE event_id = $1', [first.body.event_id]);
    assert.equal(row.attempts, 1);
    // An event accepted asynchronously and repeated on the sync route is processed once, by whichever comes first.
    const k2 = key();
    const queued = await post('/ingest/events', { event_name: 'sync_evt', participant_id: 'sp-3', idempotency_key: k2 });
    const synced = await post('/ingest/events/sync', { event_name: 'sync_evt', participant_id: 'sp-3', idempotency_key: k2 });
    assert.equal(synced.status, 200);
    assert.equal(synced.body.event_id, queued.body.message_id);
    await waitProcessed(svc, [queued.body.message_id]);
    const [once] = await svc.sql('SELECT attempts, status FROM ingested_events WHERE event_id = $1', [queued.body.message_id]);
    assert.deepEqual(once, { attempts: 1, status: 'processed' });
  });

  await t.test('ingestion needs a key with ingest or admin scope', async () => {
    const jwt = await svc.login(tenant);
    const created = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'reader', scopes: ['read:pii'] } });
    const refused = await post('/ingest/events', { event_name: 'x', participant_id: 'p', idempotency_key: key() }, {}, created.body.key);
    assert.equal(refused.status, 403);
    const ingestKey = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'ingest', scopes: ['ingest'] } });
    const accepted = await post('/ingest/events', { event_name: 'x', participant_id: 'p', idempotency_key: key() }, {}, ingestKey.body.key);
    assert.equal(accepted.status, 202);
    const search = await svc.request('GET', '/api/v1/events/search', { key: ingestKey.body.key });
    assert.equal(search.status, 403);
    assert.equal((await post('/ingest/events', { event_name: 'x', participant_id: 'p', idempotency_key: key() }, {}, 'lk_live_00000000000000000000000000000000')).status, 401);
  });

  await t.test('admins search the event store by participant, name and time range with cursor pagination', async () => {
    const events = Array.from({ length: 5 }, (_, i) => ({
      event_name: 'searchable',
      participant_id: 'search-p',
      properties: { i, email: 'someone@example.com' },
      timestamp: `2026-02-0${i + 1}T12:00:00Z`,
      idempotency_key: key('s'),
    }));
    await post('/ingest/events/batch', { events });
    await post('/ingest/events', { event_name: 'searchable', participant_id: 'other-p', timestamp: '2026-02-03T12:00:00Z', idempotency_key: key() });
    const first = await svc.request('GET', '/api/v1/events/search?participant_id=search-p&event_name=searchable&limit=2', { key: tenant.apiKey });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.events.map((e: { properties: { i: number } }) => e.properties.i), [4, 3]);
    const second = await svc.request('GET', `/api/v1/events/search?participant_id=search-p&event_name=searchable&limit=2&cursor=${first.body.next_cursor}`, { key: tenant.apiKey });
    assert.deepEqual(second.body.events.map((e: { properties: { i: number } }) => e.properties.i), [2, 1]);
    const ranged = await svc.request('GET', '/api/v1/events/search?event_name=searchable&from=2026-02-02T00:00:00Z&to=2026-02-04T00:00:00Z', { key: tenant.apiKey });
    assert.equal(ranged.body.events.length, 3);
    assert.equal(ranged.body.next_cursor, null);
    // The first key holds read:pii; a key without it sees personal fields masked.
    assert.equal(first.body.events[0].properties.email, 'someone@example.com');
    const jwt = await svc.login(tenant);
    const adminOnly = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'admin', scopes: ['admin'] } });
    const masked = await svc.request('GET', '/api/v1/events/search?participant_id=search-p&limit=1', { key: adminOnly.body.key });
    assert.equal(masked.body.events[0].properties.email, 's***@example.com');
    // The masks are the profile's (spec, masking table): every standard personal field, others untouched.
    const personal = { full_name: 'ada king lovelace', mobile_number: '+44 20 7946 0018', date_of_birth: '1990-05-17', gender: 'female', first_name: 'Ada', city: 'London', n: 1 };
    assert.equal((await post('/ingest/events', { event_name: 'masked', participant_id: 'mask-p', properties: personal, idempotency_key: key() })).status, 202);
    const maskedAll = await svc.request('GET', '/api/v1/events/search?participant_id=mask-p', { key: adminOnly.body.key });
    assert.deepEqual(maskedAll.body.events[0].properties, {
      full_name: 'A.K.L.',
      mobile_number: '***0018',
      date_of_birth: '1990',
      gender: '***',
      first_name: 'Ad***',
      city: 'London',
      n: 1,
    });
    const theirs = await svc.request('GET', '/api/v1/events/search?participant_id=search-p', { key: other.apiKey });
    assert.equal(theirs.status, 200);
    assert.equal(theirs.body.events.length, 0);
    const one = await svc.request('GET', `/api/v1/admin/events/${first.body.events[0].event_id}`, { key: other.apiKey });
    assert.equal(one.status, 404);
    const bad = await svc.request('GET', '/api/v1/events/search?from=2026-02-05T00:00:00Z&to=2026-02-01T00:00:00Z', { key: tenant.apiKey });
    assert.equal(bad.status, 400);
  });
});
