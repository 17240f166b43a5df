import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../../../test/helper.js';
import { key } from './testing.js';

/**
 * The accept path's group commit (writer.ts) through HTTP: requests arriving
 * while a tenant's write is in flight are stored together, in one statement
 * and one commit, and each is answered only after that commit.
 */
test('group commit of single-event accepts', async (t) => {
  // The per-second ingest burst limit raised out of the way: the test is about the write, not the limiter.
  const svc = await startTestService(t, { config: { RATE_LIMIT_INGEST_BURST_PER_SECOND: '100000' } });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  const accept = (body: Record<string, unknown>, apiKey = tenant.apiKey) => svc.request('POST', '/api/v1/ingest/events', { key: apiKey, body });
  const byKeys = (keys: string[]) =>
    svc.sql<{ tenant_id: string; idempotency_key: string; event_id: string; received_at: Date }>(
      'SELECT tenant_id, idempotency_key, event_id, received_at FROM ingested_events WHERE idempotency_key = ANY($1::text[])',
      [keys],
    );

  await t.test('400 parallel accepts of two tenants: each answered 202 once stored, stored once in its own tenant, writes shared', async () => {
    const sent = Array.from({ length: 400 }, (_, i) => ({ tenant: i % 2 === 0 ? tenant : other, key: key('gc'), participant: `p-${i % 13}` }));
    const responses = await Promise.all(sent.map((s) => accept({ event_name: 'gc_tap', participant_id: s.participant, idempotency_key: s.key }, s.tenant.apiKey)));
    assert.deepEqual(new Set(responses.map((r) => r.status)), new Set([202]));
    assert.ok(responses.every((r) => r.body.duplicate === false && r.headers.get('idempotent-replayed') === null));
    const rows = await byKeys(sent.map((s) => s.key));
    assert.equal(rows.length, 400, 'each stored exactly once');
    const rowByKey = new Map(rows.map((r) => [r.idempotency_key, r]));
    sent.forEach((s, i) => {
      const row = rowByKey.get(s.key)!;
      assert.equal(row.tenant_id, s.tenant.tenantId, 'stored in the tenant that sent it');
      assert.equal(row.event_id, responses[i].body.message_id, 'the answer names the stored event');
    });
    // One write stamps its events with one received_at: fewer instants than events means writes were shared.
    const writes = new Set(rows.map((r) => `${r.tenant_id} ${r.received_at.toISOString()}`)).size;
    assert.ok(writes < 400, `400 events in ${writes} writes`);
    // The quota and name counters of the shared writes count every event once, per tenant.
    for (const { tenantId } of [tenant, other]) {
      const [usage] = await svc.sql<{ events: string }>('SELECT events FROM ingestion_usage WHERE tenant_id = $1', [tenantId]);
      assert.equal(Number(usage.events), 200);
      const [named] = await svc.sql<{ events: string }>("SELECT events FROM event_names_seen WHERE tenant_id = $1 AND event_name = 'gc_tap'", [tenantId]);
      assert.equal(Number(named.events), 200);
    }
  });

  await t.test('50 parallel requests with one key: one fresh 202, the others replays of it; one event stored', async () => {
    const k = key('gc-dup');
    const body = { event_name: 'gc_dup', participant_id: 'p-dup', properties: { n: 1 }, idempotency_key: k };
    const responses = await Promise.all(Array.from({ length: 50 }, () => accept(body)));
    assert.deepEqual(new Set(responses.map((r) => r.status)), new Set([202]));
    const fresh = responses.filter((r) => r.headers.get('idempotent-replayed') === null);
    const replays = responses.filter((r) => r.headers.get('idempotent-replayed') === 'true');
    assert.equal(fresh.length, 1);
    assert.equal(fresh[0].body.duplicate, false);
    assert.equal(replays.length, 49);
    assert.ok(replays.every((r) => r.body.duplicate === true && r.body.message_id === fresh[0].body.message_id));
    const rows = await byKeys([k]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].event_id, fresh[0].body.message_id);
    // The same key with another body, in parallel with its own replays, is refused and changes nothing.
    const mixed = await Promise.all([accept(body), accept({ ...body, properties: { n: 2 } }), accept(body)]);
    assert.deepEqual(mixed.map((r) => r.status), [202, 422, 202]);
    assert.equal(mixed[1].body.code, 'IDEMPOTENCY_KEY_REUSED');
    assert.equal((await byKeys([k])).length, 1);
  });

  await t.test('a write the database refuses: the refused request fails alone, the others sharing its write are stored and answered 202', async () => {
    // A row the database refuses (any statement error would do): a trigger that rejects one participant.
    await svc.sql(`CREATE FUNCTION gc_test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.participant_id = 'gc-poison' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await svc.sql('CREATE TRIGGER gc_test_refuse BEFORE INSERT ON ingested_events FOR EACH ROW EXECUTE FUNCTION gc_test_refuse()');
    try {
      const sent = Array.from({ length: 60 }, (_, i) => ({ key: key('gc-fail'), participant: i === 30 ? 'gc-poison' : `p-${i}` }));
      const responses = await Promise.all(sent.map((s) => accept({ event_name: 'gc_fail', participant_id: s.participant, idempotency_key: s.key })));
      assert.equal(responses[30].status, 500);
      const others = responses.filter((_, i) => i !== 30);
      assert.deepEqual(new Set(others.map((r) => r.status)), new Set([202]));
      const rows = await byKeys(sent.map((s) => s.key));
      assert.equal(rows.length, 59, 'every acknowledged event stored, the refused one not');
      assert.ok(!rows.some((r) => r.idempotency_key === sent[30].key));
      // The refused request's key was not kept: sent again once the database accepts it, it is a new event.
      await svc.sql('DROP TRIGGER gc_test_refuse ON ingested_events');
      const again = await accept({ event_name: 'gc_fail', participant_id: 'gc-poison', idempotency_key: sent[30].key });
      assert.equal(again.status, 202);
      assert.equal(again.body.duplicate, false);
      const [usage] = await svc.sql<{ events: string }>("SELECT events FROM event_names_seen WHERE tenant_id = $1 AND event_name = 'gc_fail'", [tenant.tenantId]);
      assert.equal(Number(usage.events), 60, 'counted once each, the rolled-back write not at all');
    } finally {
      await svc.sql('DROP TRIGGER IF EXISTS gc_test_refuse ON ingested_events');
      await svc.sql('DROP FUNCTION IF EXISTS gc_test_refuse()');
    }
  });
});
