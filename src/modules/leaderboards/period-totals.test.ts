import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { grantPoints, startTestService, type TestService, type TestTenant } from '../../../test/helper.js';

/** The tenant's period totals, and what the ledger sums for them (the tenant's time zone is UTC here). */
async function totalsAndLedger(svc: TestService, tenant: TestTenant) {
  const totals = await svc.sql(
    `SELECT period, period_start::text, participant_id, score::int FROM leaderboard_period_points WHERE tenant_id = $1 AND score > 0
     ORDER BY 1, 2, 3`,
    [tenant.tenantId],
  );
  const ledger = await svc.sql(
    `SELECT k.period, date_trunc(CASE k.period WHEN 'weekly' THEN 'week' ELSE 'month' END, e.created_at AT TIME ZONE 'UTC')::date::text AS period_start,
            e.participant_id, sum(e.delta)::int AS score
     FROM points_ledger e CROSS JOIN (VALUES ('weekly'), ('monthly')) AS k (period)
     WHERE e.tenant_id = $1 AND e.delta > 0 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
    [tenant.tenantId],
  );
  return { totals, ledger };
}

const board = (svc: TestService, tenant: TestTenant, code: string, period: 'weekly' | 'monthly') =>
  svc.request('POST', '/api/v1/admin/leaderboards', { key: tenant.apiKey, body: { leaderboard_code: code, name: code, metric: 'period_points', period } });

test('period totals: kept only once the tenant has a period board, filled from the ledger by the first one, exact under concurrent grants and with a grant in flight', async (t) => {
  const svc = await startTestService(t);

  await t.test('no period board: awards write no totals; the first board fills them from the ledger, later awards add to them', async () => {
    const tenant = await svc.createTenant();
    for (const [participant, amount] of [['ann', 30], ['bob', 50], ['ann', 40]] as const) assert.equal((await grantPoints(svc, tenant, participant, amount)).status, 200);
    assert.equal((await svc.request('POST', '/api/v1/admin/leaderboards', { key: tenant.apiKey, body: { leaderboard_code: 'life', name: 'Life', metric: 'lifetime_points' } })).status, 201);
    assert.deepEqual((await totalsAndLedger(svc, tenant)).totals, [], 'a lifetime board needs no period totals');

    const weekly = await board(svc, tenant, 'week', 'weekly');
    assert.equal(weekly.status, 201, weekly.text);
    const filled = await totalsAndLedger(svc, tenant);
    assert.equal(filled.ledger.length, 4);
    assert.deepEqual(filled.totals, filled.ledger);
    // The board's first ranking, built when it was created, ranks the awards made before it.
    const ranked = await svc.request('GET', '/api/v1/admin/leaderboards/week/standings', { key: tenant.apiKey });
    assert.equal(ranked.status, 200, ranked.text);
    assert.deepEqual(ranked.body.entries.map((e: { participant_id: string; score: number }) => [e.participant_id, e.score]), [['ann', 70], ['bob', 50]]);

    assert.equal((await grantPoints(svc, tenant, 'bob', 25)).status, 200);
    const after = await totalsAndLedger(svc, tenant);
    assert.deepEqual(after.totals, after.ledger);
    assert.ok(after.totals.some((row) => row.participant_id === 'bob' && row.score === 75));
    // A second period board finds the totals ready.
    assert.equal((await board(svc, tenant, 'month', 'monthly')).status, 201);
    const [mark] = await svc.sql('SELECT ready_at FROM leaderboard_period_tenants WHERE tenant_id = $1', [tenant.tenantId]);
    assert.ok(mark.ready_at);
  });

  await t.test('300 grants in parallel while the first period board is created: every total equals the ledger', async () => {
    const tenant = await svc.createTenant();
    const grants = Array.from({ length: 300 }, (_, i) => async () => {
      await sleep(i % 60);
      const answer = await grantPoints(svc, tenant, `p${i % 20}`, 1 + (i % 7));
      assert.equal(answer.status, 200, answer.text);
    });
    const created = (async () => {
      await sleep(25);
      return board(svc, tenant, 'week', 'weekly');
    })();
    await Promise.all(grants.map((grant) => grant()));
    assert.equal((await created).status, 201);
    const { totals, ledger } = await totalsAndLedger(svc, tenant);
    assert.equal(ledger.length, 40);
    assert.deepEqual(totals, ledger);
  });

  await t.test('a transaction running when the totals are switched on: the first board waits for it, then counts what it wrote', async () => {
    const tenant = await svc.createTenant();
    assert.equal((await grantPoints(svc, tenant, 'ann', 10)).status, 200);
    // A grant's transaction that began before the mark and never sees it: its entry commits after the board asked for the totals.
    const late = new pg.Client({ connectionString: svc.ownerUrl });
    await late.connect();
    try {
      await late.query('BEGIN');
      await late.query(
        `INSERT INTO points_ledger (tenant_id, participant_id, id, type, delta, reason, source_kind, available_after, lifetime_after, created_at)
         VALUES ($1, 'ann', 'ple_in_flight', 'award', 5, 'in flight', 'grant', 15, 15, now())`,
        [tenant.tenantId],
      );
      let answered = false;
      const created = board(svc, tenant, 'week', 'weekly').then((answer) => {
        answered = true;
        return answer;
      });
      await sleep(500);
      assert.equal(answered, false, 'the board waits for the transaction in flight');
      await late.query('COMMIT');
      assert.equal((await created).status, 201);
    } finally {
      await late.end();
    }
    const { totals, ledger } = await totalsAndLedger(svc, tenant);
    assert.deepEqual(totals, ledger);
    assert.ok(totals.some((row) => row.participant_id === 'ann' && row.period === 'weekly' && row.score === 15));
  });
});
