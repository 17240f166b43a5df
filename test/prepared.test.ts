import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, testCluster } from './helper.js';
import { withCredentials } from '../src/platform/database-server.js';
import { APP_ROLE } from '../src/platform/migrate.js';
import { Database, PREPARED_PER_CONNECTION_MAX } from '../src/platform/db.js';
import { loadConfig } from '../src/config.js';

test('prepared statements: parsed and planned once per connection, bounded, and prepared afresh when a migration changes a table under them', async (t) => {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const appUrl = withCredentials(svc.ownerUrl, APP_ROLE, testCluster().appPassword);
  // One connection, so that every transaction below runs on the same one.
  const db = new Database(appUrl, svc.ownerUrl, 1);
  t.after(() => db.close());
  const prepared = () =>
    db.tenant(tenant.tenantId, async (tx) => (await tx.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).rows.map((r) => r.statement));

  const read = 'SELECT * FROM badge_definitions WHERE tenant_id = $1';
  for (let i = 0; i < 3; i++) await db.tenant(tenant.tenantId, (tx) => tx.query(read, [tenant.tenantId]));
  assert.deepEqual((await prepared()).filter((s) => s === read), [read], 'one prepared statement, reused');

  // A migration adds a column to the table of a prepared `SELECT *`: the next transaction still succeeds.
  await svc.sql('ALTER TABLE badge_definitions ADD COLUMN prepared_test_extra integer');
  const { rows } = await db.tenant(tenant.tenantId, (tx) => tx.query(read, [tenant.tenantId]));
  assert.deepEqual(rows, []);
  const after = await db.tenant(tenant.tenantId, (tx) => tx.query(read, [tenant.tenantId]));
  assert.ok(after.fields.some((field) => field.name === 'prepared_test_extra'));

  // Distinct statements beyond the bound still run, unnamed.
  await db.tenant(tenant.tenantId, async (tx) => {
    for (let i = 0; i < PREPARED_PER_CONNECTION_MAX + 20; i++) {
      const { rows: echoed } = await tx.query<{ n: number }>(`SELECT $1::int + ${i} AS n`, [1]);
      assert.equal(echoed[0].n, 1 + i);
    }
  });
  assert.ok((await prepared()).length <= PREPARED_PER_CONNECTION_MAX);

  // Statements without parameters are never prepared; neither is anything when the option is off.
  const plain = new Database(appUrl, svc.ownerUrl, 1, { preparedStatements: false });
  t.after(() => plain.close());
  await plain.tenant(tenant.tenantId, (tx) => tx.query(read, [tenant.tenantId]));
  const none = await plain.tenant(tenant.tenantId, async (tx) => (await tx.query('SELECT count(*)::int AS n FROM pg_prepared_statements')).rows[0].n);
  assert.equal(none, 0);
});

test('prepared statements: DB_PREPARED_STATEMENTS turns them off; on by default', () => {
  assert.equal(loadConfig({}).dbPreparedStatements, true);
  assert.equal(loadConfig({ DB_PREPARED_STATEMENTS: 'false' }).dbPreparedStatements, false);
  assert.throws(() => loadConfig({ DB_PREPARED_STATEMENTS: 'maybe' }), /DB_PREPARED_STATEMENTS/);
});
