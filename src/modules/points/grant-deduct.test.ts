import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { pointsRequest, startTestService, waitFor, type TestService } from '../../../test/helper.js';
import { fingerprint } from '../../platform/idempotency.js';
import { clock } from '../../platform/clock.js';
import { assertPointsInvariants, seedParticipantWithPoints } from './testing.js';
import { grantInTx } from './service.js';

const HIGH_LIMITS = { RATE_LIMIT_KEY_PER_MINUTE: '1000000' };

async function ledgerRows(svc: TestService, tenantId: string, participantId?: string): Promise<number> {
  const rows = await svc.sql('SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1 AND ($2::text IS NULL OR participant_id = $2)', [
    tenantId,
    participantId ?? null,
  ]);
  return rows[0].n;
}

test('points: direct grant and deduct', async (t) => {
  const svc = await startTestService(t, { config: HIGH_LIMITS });
  const tenant = await svc.createTenant();
  const other = await svc.createTenant();
  t.after(() => clock.reset());

  await t.test('a grant to a new participant creates it and answers available, lifetime, delta, duplicate', async () => {
    const response = await pointsRequest(svc, tenant, 'grant', { participant_id: 'alice', amount: 100, reason: 'welcome', memo: 'launch', idempotency_key: 'g-1' });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.available, 100);
    assert.equal(response.body.lifetime, 100);
    assert.equal(response.body.delta, 100);
    assert.equal(response.body.duplicate, false);
    const participants = await svc.sql('SELECT 1 FROM participants WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, 'alice']);
    assert.equal(participants.length, 1);
    const events = await svc.sql("SELECT data FROM outbox_events WHERE tenant_id = $1 AND event = 'points.awarded.v1'", [tenant.tenantId]);
    assert.equal(events.length, 1);
    assert.equal(events[0].data.amount, 100);
    assert.equal(events[0].data.available, 100);
    assert.equal(events[0].data.ledger_entry_id, response.body.ledger_entry_id);
    assert.equal(events[0].data.source_kind, 'grant');
    assert.equal(events[0].data.multiplier, null);
    const lots = await svc.sql('SELECT amount, remaining, expires_at, created_at FROM points_lots WHERE tenant_id = $1', [tenant.tenantId]);
    assert.equal(lots.length, 1);
    assert.equal(lots[0].remaining, 100);
    const ttlDays = (lots[0].expires_at.getTime() - lots[0].created_at.getTime()) / 86_400_000;
    assert.equal(ttlDays, 365);
  });

  await t.test('a repeated key returns duplicate: true with the original result and applies nothing', async () => {
    await pointsRequest(svc, tenant, 'grant', { participant_id: 'alice', amount: 5, reason: 'more', idempotency_key: 'g-2' });
    const before = await ledgerRows(svc, tenant.tenantId, 'alice');
    const repeat = await pointsRequest(svc, tenant, 'grant', { participant_id: 'alice', amount: 100, reason: 'welcome', memo: 'launch', idempotency_key: 'g-1' });
    assert.equal(repeat.status, 200);
    assert.equal(repeat.headers.get('idempotent-replayed'), 'true', 'a replay says so in the header too');
    assert.equal(repeat.body.livemode, true, 'a replay says which mode answered, as the first answer did');
    assert.equal(repeat.body.duplicate, true);
    assert.equal(repeat.body.available, 100, 'the original result, not the current balance');
    assert.equal(repeat.body.delta, 100);
    assert.equal(await ledgerRows(svc, tenant.tenantId, 'alice'), before);
    const balance = await svc.sql('SELECT available FROM points_balances WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, 'alice']);
    assert.equal(balance[0].available, 105);
  });

  await t.test('the same key with a different body gets 422 and applies nothing', async () => {
    const before = await ledgerRows(svc, tenant.tenantId);
    const reused = await pointsRequest(svc, tenant, 'grant', { participant_id: 'alice', amount: 101, reason: 'welcome', memo: 'launch', idempotency_key: 'g-1' });
    assert.equal(reused.status, 422);
    assert.equal(reused.body.code, 'IDEMPOTENCY_KEY_REUSED');
    const asDeduct = await pointsRequest(svc, tenant, 'deduct', { participant_id: 'alice', amount: 100, reason: 'welcome', memo: 'launch', idempotency_key: 'g-1' });
    assert.equal(asDeduct.status, 422, 'grant and deduct share the key space');
    assert.equal(await ledgerRows(svc, tenant.tenantId), before);
  });

  await t.test('keys are scoped per tenant', async () => {
    const response = await pointsRequest(svc, other, 'grant', { participant_id: 'alice', amount: 7, reason: 'welcome', idempotency_key: 'g-1' });
    assert.equal(response.status, 200);
    assert.equal(response.body.duplicate, false);
    assert.equal(response.body.available, 7);
  });

  await t.test('after 24 hours a key is new again', async () => {
    clock.advance(24 * 3600 * 1000 + 1000);
    const again = await pointsRequest(svc, tenant, 'grant', { participant_id: 'alice', amount: 100, reason: 'welcome', memo: 'launch', idempotency_key: 'g-1' });
    assert.equal(again.status, 200);
    assert.equal(again.body.duplicate, false);
    assert.equal(again.body.available, 205);
    assert.equal(again.body.lifetime, 205);
  });

  await t.test('the same key sent concurrently applies once; the second waits and gets duplicate: true', async () => {
    const body = { participant_id: 'carol', amount: 10, reason: 'race', idempotency_key: 'race-1' };
    const responses = await Promise.all([pointsRequest(svc, tenant, 'grant', body), pointsRequest(svc, tenant, 'grant', body), pointsRequest(svc, tenant, 'grant', body)]);
    assert.deepEqual(responses.map((r) => r.status), [200, 200, 200]);
    assert.equal(responses.filter((r) => r.body.duplicate === false).length, 1);
    assert.ok(responses.every((r) => r.body.available === 10));
    assert.equal(await ledgerRows(svc, tenant.tenantId, 'carol'), 1);
  });

  await t.test('a repeat whose claim waited for a first use that committed meanwhile answers that use (a later snapshot reads it)', async () => {
    const body = { participant_id: 'dave', amount: 4, reason: 'held', idempotency_key: 'held-1' };
    const first = { available: 99, lifetime: 99, delta: 4, duplicate: false, ledger_entry_id: 'ple_held' };
    // The first use, still running: its key row is written but not committed.
    const holder = new pg.Client({ connectionString: svc.ownerUrl });
    await holder.connect();
    t.after(() => holder.end());
    await holder.query('BEGIN');
    await holder.query(
      "INSERT INTO idempotency_keys (tenant_id, scope, key, fingerprint, response, created_at, expires_at) VALUES ($1, 'points.direct', $2, $3, $4, $5, $5::timestamptz + interval '1 day')",
      [tenant.tenantId, body.idempotency_key, fingerprint(['grant', body.participant_id, body.amount, body.reason, null, null]), first, clock.now()],
    );
    const repeat = pointsRequest(svc, tenant, 'grant', body);
    await waitFor('the repeat to wait on the key', async () => {
      const rows = await svc.sql("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%idempotency_keys%'");
      return rows.length > 0;
    });
    await holder.query('COMMIT');
    const response = await repeat;
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body, { ...first, duplicate: true, livemode: true });
    assert.equal(await ledgerRows(svc, tenant.tenantId, 'dave'), 0, 'the repeat changed nothing');
  });

  await t.test('a deduct answers a negative delta and consumes the balance; lifetime stays', async () => {
    const response = await pointsRequest(svc, tenant, 'deduct', { participant_id: 'alice', amount: 30, reason: 'coffee', idempotency_key: 'd-1' });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.delta, -30);
    assert.equal(response.body.available, 175);
    assert.equal(response.body.lifetime, 205);
    const repeat = await pointsRequest(svc, tenant, 'deduct', { participant_id: 'alice', amount: 30, reason: 'coffee', idempotency_key: 'd-1' });
    assert.equal(repeat.body.duplicate, true);
    assert.equal(repeat.body.available, 175);
    const events = await svc.sql("SELECT data FROM outbox_events WHERE tenant_id = $1 AND event = 'points.deducted.v1'", [tenant.tenantId]);
    assert.equal(events.length, 1);
    assert.equal(events[0].data.amount, 30);
    assert.equal(events[0].data.available, 175);
  });

  await t.test('a deduct above the balance gets 422 insufficient_points with available and required; nothing leaves', async () => {
    const before = await ledgerRows(svc, tenant.tenantId);
    const response = await pointsRequest(svc, tenant, 'deduct', { participant_id: 'alice', amount: 176, reason: 'tv', idempotency_key: 'd-2' });
    assert.equal(response.status, 422);
    assert.equal(response.body.error, 'insufficient_points');
    assert.equal(response.body.available, 175);
    assert.equal(response.body.required, 176);
    assert.equal(response.body.code, 'INSUFFICIENT_POINTS');
    assert.equal(response.body.error_version, 1);
    assert.equal(typeof response.body.detail, 'string');
    assert.equal(await ledgerRows(svc, tenant.tenantId), before);
    const [key] = await svc.sql("SELECT count(*)::int AS n FROM idempotency_keys WHERE tenant_id = $1 AND key = 'd-2'", [tenant.tenantId]);
    assert.equal(key.n, 0, 'the refused deduct did not burn its key');
  });

  await t.test('a deduct for an unknown participant gets 422 with available 0', async () => {
    const response = await pointsRequest(svc, tenant, 'deduct', { participant_id: 'nobody', amount: 1, reason: 'x', idempotency_key: 'd-3' });
    assert.equal(response.status, 422);
    assert.equal(response.body.error, 'insufficient_points');
    assert.equal(response.body.available, 0);
    assert.equal(response.body.required, 1);
  });

  await t.test('a participant of another tenant is invisible', async () => {
    const response = await pointsRequest(svc, other, 'deduct', { participant_id: 'carol', amount: 1, reason: 'x', idempotency_key: 'd-4' });
    assert.equal(response.status, 422);
    assert.equal(response.body.available, 0);
  });

  await t.test('bad input gets 4xx with a detail and writes no ledger row', async () => {
    const before = await ledgerRows(svc, tenant.tenantId);
    const base = { participant_id: 'dave', amount: 10, reason: 'ok', idempotency_key: 'bad-1' };
    const cases: Array<Record<string, unknown>> = [
      { ...base, amount: 0 },
      { ...base, amount: -5 },
      { ...base, amount: 1.5 },
      { ...base, amount: '10' },
      { ...base, amount: 2 ** 53 + 2 },
      { ...base, amount: null },
      { ...base, reason: '' },
      { ...base, reason: 'x'.repeat(501) },
      { ...base, idempotency_key: '' },
      { participant_id: 'dave', amount: 10, reason: 'ok' },
      { ...base, participant_id: '' },
      { ...base, tenant_id: other.tenantId },
      { ...base, available: 5 },
    ];
    for (const body of cases) {
      for (const operation of ['grant', 'deduct'] as const) {
        const response = await pointsRequest(svc, tenant, operation, body);
        assert.ok(response.status >= 400 && response.status < 500, `${JSON.stringify(body)} -> ${response.status}`);
        assert.equal(typeof response.body.detail, 'string');
      }
    }
    const huge = await pointsRequest(svc, tenant, 'grant', { ...base, reason: 'x'.repeat(1024 * 1024) });
    assert.equal(huge.status, 413);
    const missingKey = await pointsRequest(svc, tenant, 'grant', { participant_id: 'dave', amount: 10, reason: 'ok' });
    assert.match(missingKey.body.detail, /idempotency_key/);
    assert.equal(await ledgerRows(svc, tenant.tenantId), before);
  });

  await t.test('a direct grant writes points.awarded.v1 and tier.changed.v1, a direct deduct points.deducted.v1, each with its pending outbox marker', async () => {
    await svc.request('POST', '/api/v1/admin/points/tiers', { key: tenant.apiKey, body: { code: 'bronze', name: 'Bronze', min_lifetime_points: 40 } });
    const direct = await pointsRequest(svc, tenant, 'grant', { participant_id: 'erin', amount: 50, reason: 'parity', idempotency_key: 'parity-g' });
    assert.equal(direct.status, 200, direct.text);
    const awarded = await svc.sql(
      "SELECT participant_id, data FROM outbox_events WHERE tenant_id = $1 AND event = 'points.awarded.v1' AND participant_id = 'erin'",
      [tenant.tenantId],
    );
    const [lot] = await svc.sql("SELECT expires_at FROM points_lots WHERE tenant_id = $1 AND participant_id = 'erin'", [tenant.tenantId]);
    assert.deepEqual(awarded[0].data, {
      participant_id: 'erin',
      amount: 50,
      available: 50,
      lifetime: 50,
      reason: 'parity',
      ledger_entry_id: direct.body.ledger_entry_id,
      source_kind: 'grant',
      source_id: 'parity-g',
      multiplier: null,
      type: 'award',
      activity_id: null,
      expires_at: lot.expires_at.toISOString(),
    });
    const tiers = await svc.sql(
      "SELECT participant_id, data FROM outbox_events WHERE tenant_id = $1 AND event = 'tier.changed.v1' AND participant_id = 'erin'",
      [tenant.tenantId],
    );
    assert.deepEqual(tiers.map((r) => r.data), [
      { participant_id: 'erin', previous_tier: null, tier: 'bronze', lifetime: 50 },
    ]);
    const spent = await pointsRequest(svc, tenant, 'deduct', { participant_id: 'erin', amount: 20, reason: 'parity', idempotency_key: 'parity-d' });
    const [deducted] = await svc.sql("SELECT data FROM outbox_events WHERE tenant_id = $1 AND event = 'points.deducted.v1' AND participant_id = 'erin'", [tenant.tenantId]);
    assert.deepEqual(deducted.data, { participant_id: 'erin', amount: 20, available: 30, lifetime: 50, reason: 'parity', ledger_entry_id: spent.body.ledger_entry_id, type: 'redemption' });
    // Without the job runner nothing takes the markers: every event of the tenant still has one.
    const [unmarked] = await svc.sql(
      'SELECT count(*)::int AS n FROM outbox_events e WHERE e.tenant_id = $1 AND NOT EXISTS (SELECT 1 FROM outbox_pending p WHERE p.tenant_id = e.tenant_id AND p.event_id = e.id)',
      [tenant.tenantId],
    );
    assert.equal(unmarked.n, 0);
    await svc.request('DELETE', '/api/v1/admin/points/tiers/bronze', { key: tenant.apiKey });
  });

  await t.test('a grant that would take lifetime points above 2^53 - 1 gets 422 POINTS_BALANCE_LIMIT, writes nothing and keeps its key', async () => {
    const near = Number.MAX_SAFE_INTEGER - 7;
    await seedParticipantWithPoints(svc, tenant.tenantId, 'whale', near);
    const before = await ledgerRows(svc, tenant.tenantId, 'whale');
    const refused = await pointsRequest(svc, tenant, 'grant', { participant_id: 'whale', amount: 8, reason: 'too much', idempotency_key: 'whale-1' });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(refused.body.code, 'POINTS_BALANCE_LIMIT');
    assert.equal(await ledgerRows(svc, tenant.tenantId, 'whale'), before);
    const composed = await svc.service.db
      .tenant(tenant.tenantId, (tx) => grantInTx(tx, tenant.tenantId, { participantId: 'whale', amount: 8, reason: 'too much' }))
      .then(() => null, (error: { code?: string }) => error.code);
    assert.equal(composed, 'POINTS_BALANCE_LIMIT', 'grantInTx refuses the same way');
    const [key] = await svc.sql("SELECT count(*)::int AS n FROM idempotency_keys WHERE tenant_id = $1 AND key = 'whale-1'", [tenant.tenantId]);
    assert.equal(key.n, 0, 'the refused grant did not burn its key');
    const fits = await pointsRequest(svc, tenant, 'grant', { participant_id: 'whale', amount: 7, reason: 'too much', idempotency_key: 'whale-1' });
    assert.equal(fits.status, 200, fits.text);
    assert.equal(fits.body.lifetime, Number.MAX_SAFE_INTEGER);
  });

  await t.test('a credential without an admin scope gets 403 and a missing one 401', async () => {
    const jwt = await svc.login(tenant);
    const created = await svc.request('POST', '/api/v1/events/api-keys', { bearer: jwt, body: { name: 'ingest only', scopes: ['ingest'] } });
    assert.equal(created.status, 201, created.text);
    const forbidden = await svc.request('POST', '/api/v1/gamify/points/grant', {
      key: created.body.key,
      body: { participant_id: 'x', amount: 1, reason: 'r', idempotency_key: 'scope-1' },
    });
    assert.equal(forbidden.status, 403);
    const anonymous = await svc.request('POST', '/api/v1/gamify/points/grant', { body: { participant_id: 'x', amount: 1, reason: 'r', idempotency_key: 'scope-2' } });
    assert.equal(anonymous.status, 401);
  });

  await assertPointsInvariants(svc);
});

test('points: concurrency', async (t) => {
  const svc = await startTestService(t, { config: HIGH_LIMITS });
  const tenant = await svc.createTenant();

  await t.test('500 parallel deducts never drive available below zero and the successes equal the drop', async () => {
    const funded = await pointsRequest(svc, tenant, 'grant', { participant_id: 'hot', amount: 1000, reason: 'fund', idempotency_key: 'fund' });
    assert.equal(funded.status, 200);
    // Several lots, so deducts walk across lot boundaries.
    for (let i = 0; i < 2; i++) await pointsRequest(svc, tenant, 'grant', { participant_id: 'hot', amount: 250, reason: 'fund', idempotency_key: `fund-${i}` });
    const amounts = Array.from({ length: 500 }, (_, i) => 1 + (i % 7));
    const responses = await Promise.all(
      amounts.map((amount, i) => pointsRequest(svc, tenant, 'deduct', { participant_id: 'hot', amount, reason: 'spend', idempotency_key: `spend-${i}` })),
    );
    const succeeded = responses.map((r, i) => (r.status === 200 ? amounts[i] : 0)).reduce((a, b) => a + b, 0);
    assert.ok(responses.every((r) => r.status === 200 || (r.status === 422 && r.body.error === 'insufficient_points')), 'only 200 or 422');
    assert.ok(responses.some((r) => r.status === 422), 'the balance ran out');
    const [balance] = await svc.sql('SELECT available, lifetime FROM points_balances WHERE tenant_id = $1 AND participant_id = $2', [tenant.tenantId, 'hot']);
    assert.ok(balance.available >= 0);
    assert.equal(balance.available, 1500 - succeeded);
    assert.equal(balance.lifetime, 1500);
    assert.ok(balance.available < 7, 'deducts stop only when too little is left');
  });

  await t.test('500 parallel grants with 50 distinct keys apply exactly 50', async () => {
    const responses = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        pointsRequest(svc, tenant, 'grant', { participant_id: `p-${i % 5}`, amount: 3, reason: 'burst', idempotency_key: `burst-${i % 50}` }),
      ),
    );
    assert.ok(responses.every((r) => r.status === 200), responses.find((r) => r.status !== 200)?.text);
    assert.equal(responses.filter((r) => r.body.duplicate === false).length, 50);
    const [{ n }] = await svc.sql("SELECT count(*)::int AS n FROM points_ledger WHERE tenant_id = $1 AND reason = 'burst'", [tenant.tenantId]);
    assert.equal(n, 50);
    const [{ total }] = await svc.sql("SELECT sum(lifetime)::int AS total FROM points_balances WHERE tenant_id = $1 AND participant_id LIKE 'p-%'", [
      tenant.tenantId,
    ]);
    assert.equal(total, 150);
  });

  await t.test('under lifo, 300 parallel grants and deducts of one participant keep its open lots equal to its balance', async () => {
    await svc.request('PATCH', '/api/v1/admin/points/settings', { key: tenant.apiKey, body: { expiry_policy: 'lifo' } });
    for (let i = 0; i < 3; i++) await pointsRequest(svc, tenant, 'grant', { participant_id: 'lifo', amount: 40, reason: 'fund', idempotency_key: `lifo-fund-${i}` });
    const responses = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        i % 3 === 0
          ? pointsRequest(svc, tenant, 'grant', { participant_id: 'lifo', amount: 5, reason: 'mixed', idempotency_key: `lifo-g-${i}` })
          : pointsRequest(svc, tenant, 'deduct', { participant_id: 'lifo', amount: 1 + (i % 4), reason: 'mixed', idempotency_key: `lifo-d-${i}` }),
      ),
    );
    assert.ok(responses.every((r) => r.status === 200 || (r.status === 422 && r.body.error === 'insufficient_points')), 'only 200 or 422');
    const [{ available }] = await svc.sql("SELECT available FROM points_balances WHERE tenant_id = $1 AND participant_id = 'lifo'", [tenant.tenantId]);
    const [{ remaining }] = await svc.sql("SELECT coalesce(sum(remaining), 0)::int AS remaining FROM points_lots WHERE tenant_id = $1 AND participant_id = 'lifo'", [tenant.tenantId]);
    assert.equal(remaining, available);
    await svc.request('PATCH', '/api/v1/admin/points/settings', { key: tenant.apiKey, body: { expiry_policy: 'fifo' } });
  });

  await assertPointsInvariants(svc, tenant.tenantId);
});
