import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, testCluster } from './helper.js';
import { withCredentials } from '../src/platform/database-server.js';
import { APP_ROLE } from '../src/platform/migrate.js';
import pg from 'pg';
import { Database, planEachCall, PREPARED_PER_CONNECTION_MAX, runStatements } from '../src/platform/db.js';
import { escapeLiteral } from '../src/platform/sql-literals.js';
import { compactSql, sendExtended } from '../src/platform/db-extended.js';
import { loadConfig } from '../src/config.js';

/**
 * A test service, a tenant of it, and a Database on ONE connection of the
 * application role, so that every transaction of a test runs on the same one.
 */
async function oneConnection(t: TestContext) {
  const svc = await startTestService(t);
  const tenant = await svc.createTenant();
  const appUrl = withCredentials(svc.ownerUrl, APP_ROLE, testCluster().appPassword);
  const db = new Database(appUrl, svc.ownerUrl, 1);
  t.after(() => db.close());
  return { svc, tenant, appUrl, db };
}

test('prepared statements: parsed and planned once per connection, bounded, and prepared afresh when a migration changes a table under them', async (t) => {
  const { svc, tenant, appUrl, db } = await oneConnection(t);
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

test('inlined literals: escaped as node-postgres escapes them, and read back unchanged by the database', async (t) => {
  const samples = ['', 'plain', "it's", 'back\\slash', "both\\'quote", '{"a","b\\"c"}', "''\\\\", 'ünïcode ✓', `${'x'.repeat(500)}'`];
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 2000; i++) samples.push(Array.from({ length: 12 }, () => "ab'\\\" {},x"[Math.floor(random() * 11)]).join(''));
  for (const sample of samples) assert.equal(escapeLiteral(sample), pg.escapeLiteral(sample), JSON.stringify(sample));

  const { tenant, db } = await oneConnection(t);
  const tricky = samples.slice(0, 9);
  const [row] = await db.tenantRead<{ texts: string[] }>(tenant.tenantId, 'SELECT $1::text[] AS texts', [tricky]);
  assert.deepEqual(row.texts, tricky);
});

test('a statement parsed under a name is sent without comments and with white space collapsed outside literals, quoted names and dollar quotes', () => {
  assert.equal(
    compactSql("SELECT 'a  --b' ,  E'x\\'  y'\n, \"q  \"\"r\" , $t$ a  b $t$ , $1  , $$ c   d $$ -- tail\n /* x /* y */ z */ FROM\t t  -- end"),
    "SELECT 'a  --b' , E'x\\'  y' , \"q  \"\"r\" , $t$ a  b $t$ , $1 , $$ c   d $$ FROM t",
  );
  assert.equal(compactSql("SELECT 'it''s  here'"), "SELECT 'it''s  here'");
});

test('one-trip transactions: one extended-protocol message, each statement parsed once per connection, a failing statement rolls everything back, stale plans prepared afresh, unnamed when preparing is off', async (t) => {
  const { svc, tenant, appUrl, db } = await oneConnection(t);
  const write = { text: 'INSERT INTO participants (tenant_id, participant_id) VALUES ($1, $2) RETURNING participant_id', values: [] as unknown[] };
  const count = { text: 'SELECT count(*)::int AS n FROM participants WHERE tenant_id = $1', values: [tenant.tenantId] };
  const [inserted, counted] = await db.tenantInOneTrip(tenant.tenantId, [{ ...write, values: [tenant.tenantId, 'one-trip-1'] }, count]);
  assert.deepEqual(inserted, [{ participant_id: 'one-trip-1' }]);
  assert.deepEqual(counted, [{ n: 1 }], 'a statement sees what the one before it wrote');
  await db.tenantInOneTrip(tenant.tenantId, [{ ...write, values: [tenant.tenantId, 'one-trip-2'] }, count]);
  const statements = await db.tenant(tenant.tenantId, async (tx) => (await tx.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).rows.map((r) => r.statement));
  assert.equal(statements.filter((s) => s === write.text).length, 1, 'parsed once on the connection, bound by name afterwards');
  assert.equal(statements.filter((s) => s === 'BEGIN' || s === 'COMMIT').length, 0, 'one implicit transaction, committed at the Sync');
  const settings = await db.tenant(tenant.tenantId, async (tx) => (await tx.query<{ mode: string }>("SELECT current_setting('plan_cache_mode') AS mode")).rows[0].mode);
  assert.equal(settings, 'auto', 'the generic plans of a one-trip transaction end with it');

  // The second insert repeats the first's key: nothing of the message stays, and the connection goes on.
  await assert.rejects(
    db.tenantInOneTrip(tenant.tenantId, [{ ...write, values: [tenant.tenantId, 'one-trip-3'] }, { ...write, values: [tenant.tenantId, 'one-trip-3'] }]),
    (error: { code?: string }) => error.code === '23505',
  );
  const [[after]] = await db.tenantInOneTrip(tenant.tenantId, [count]);
  assert.deepEqual(after, { n: 2 }, 'the failed message wrote nothing');

  // A migration changes a table under a prepared statement: the transaction is run again, prepared afresh.
  const star = { text: 'SELECT * FROM badge_definitions WHERE tenant_id = $1', values: [tenant.tenantId] };
  await db.tenantInOneTrip(tenant.tenantId, [star]);
  await svc.sql('ALTER TABLE badge_definitions ADD COLUMN one_trip_extra integer');
  assert.deepEqual(await db.tenantInOneTrip(tenant.tenantId, [star]), [[]]);

  const plain = new Database(appUrl, svc.ownerUrl, 1, { preparedStatements: false });
  t.after(() => plain.close());
  const [[plainCount]] = await plain.tenantInOneTrip(tenant.tenantId, [{ ...write, values: [tenant.tenantId, 'one-trip-4'] }, count].slice(1));
  assert.deepEqual(plainCount, { n: 2 });
  const none = await plain.tenant(tenant.tenantId, async (tx) => (await tx.query('SELECT count(*)::int AS n FROM pg_prepared_statements')).rows[0].n);
  assert.equal(none, 0, 'nothing prepared when preparing is off');
});

test('extended messages: a named statement is described once per connection; later answers are read with the columns learnt then, rows or none alike', async (t) => {
  const { appUrl } = await oneConnection(t);
  const client = new pg.Client({ connectionString: appUrl });
  await client.connect();
  // Ended in the test: the service's clean-up, registered first, ends the database's connections.
  client.on('error', () => undefined);
  // Describe messages counted in what is written to the socket: each frontend message is a code byte and a length.
  const stream = (client as unknown as { connection: { stream: { write: (buffer: Buffer) => boolean } } }).connection.stream;
  let describes = 0;
  const write = stream.write.bind(stream);
  stream.write = (buffer: Buffer) => {
    for (let at = 0; at < buffer.length; at += 1 + buffer.readInt32BE(at + 1)) if (buffer[at] === 0x44) describes += 1;
    return write(buffer);
  };
  const typed = {
    text: `SELECT $1::int AS n, $2::timestamptz AS at, json_build_object('k', $3::text) AS j, NULL::text AS nothing, 'x' || $3 AS s`,
    values: [7, '2026-11-28T05:00:00Z', 'v'],
  };
  const empty = { text: 'SELECT 1 AS one WHERE $1::boolean', values: [false] };
  const rowless = { text: 'SELECT set_config($1, $2, true)', values: ['app.extended_test', 'on'] };
  const noRows = { text: "DO $$ BEGIN PERFORM 1; END $$", values: [] };
  const message = [typed, empty, rowless, noRows];

  const first = await sendExtended(client, message, true);
  assert.equal(describes, 4, 'each statement described the first time');
  const second = await sendExtended(client, message, true);
  assert.equal(describes, 4, 'no statement described again');
  for (const results of [first, second]) {
    assert.deepEqual(results[0].rows, [{ n: 7, at: new Date('2026-11-28T05:00:00Z'), j: { k: 'v' }, nothing: null, s: 'xv' }]);
    assert.deepEqual(results[0].fields.map((f) => f.name), ['n', 'at', 'j', 'nothing', 's']);
    assert.deepEqual(results[1].rows, []);
    assert.deepEqual(results[1].fields.map((f) => f.name), ['one'], 'no rows, yet the columns are known');
    assert.equal(results[2].rows.length, 1);
    assert.deepEqual(results[3].rows, []);
  }
  // Unnamed statements are described every time.
  await sendExtended(client, [typed], false);
  await sendExtended(client, [typed], false);
  assert.equal(describes, 6);
  await client.end();
});

test('a text planned on each call is never prepared, however it is sent, and its plan follows the table as it grows; a prepared one keeps the plan made while the table was small', async (t) => {
  const { tenant, appUrl, db } = await oneConnection(t);
  const eachCall = planEachCall('SELECT participant_id FROM participants WHERE tenant_id = $1 AND participant_id = ANY ($2::text[])');
  await db.tenant(tenant.tenantId, (tx) => tx.query(eachCall, [tenant.tenantId, ['a']]));
  await db.tenant(tenant.tenantId, (tx) => runStatements(tx, [{ text: eachCall, values: [tenant.tenantId, ['a']] }]));
  await db.tenantInOneTrip(tenant.tenantId, [{ text: eachCall, values: [tenant.tenantId, ['a']] }]);
  const statements = await db.tenant(tenant.tenantId, async (tx) => (await tx.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).rows.map((r) => r.statement));
  assert.ok(statements.length > 0, 'the connection prepares its other statements');
  assert.equal(statements.filter((s) => s.includes('participant_id = ANY')).length, 0, 'by query, in a script and in an extended message alike');

  // One transaction on one connection: a table of ten rows, analyzed, both texts planned on it, then 50,000 rows more.
  const client = new pg.Client({ connectionString: appUrl });
  await client.connect();
  client.on('error', () => undefined);
  t.after(() => client.end().catch(() => undefined));
  await client.query("BEGIN; SET LOCAL plan_cache_mode = force_generic_plan; CREATE TEMP TABLE growing (id int PRIMARY KEY, note text) ON COMMIT DROP");
  await client.query('INSERT INTO growing SELECT g, repeat($1, 20) FROM generate_series(1, 10) g', ['x']);
  await client.query('ANALYZE growing');
  const prepared = { text: 'SELECT id FROM growing WHERE id = ANY ($1::int[])', values: [[1, 2]] };
  // A text of its own (`AND id > 0`): marking is by text, and the prepared one must stay unmarked.
  const planned = { text: planEachCall('SELECT id FROM growing WHERE id = ANY ($1::int[]) AND id > 0'), values: [[1, 2]] };
  await sendExtended(client, [prepared, planned], true);
  await client.query('INSERT INTO growing SELECT g, repeat($1, 20) FROM generate_series(11, 50000) g', ['x']);
  const scans = async () => (await client.query<{ seq: number; idx: number }>("SELECT seq_scan::int AS seq, idx_scan::int AS idx FROM pg_stat_xact_user_tables WHERE relname = 'growing'")).rows[0];
  const before = await scans();
  const [again] = await sendExtended(client, [{ ...prepared, values: [[40000, 40001]] }], true);
  assert.deepEqual(again.rows.map((r) => r.id), [40000, 40001]);
  const afterPrepared = await scans();
  assert.equal(afterPrepared.seq - before.seq, 1, 'the prepared text still reads the whole table with the plan made at ten rows');
  const [fresh] = await sendExtended(client, [{ ...planned, values: [[40000, 40001]] }], true);
  assert.deepEqual(fresh.rows.map((r) => r.id), [40000, 40001]);
  const afterPlanned = await scans();
  assert.equal(afterPlanned.seq - afterPrepared.seq, 0, 'the text planned on each call reads no table');
  assert.ok(afterPlanned.idx > afterPrepared.idx, 'but the key');
  await client.query('ROLLBACK');
});

test('transactions ending with their last statements: sent with the COMMIT in one message, a failing one rolls everything back, none sends the COMMIT alone', async (t) => {
  const { svc, tenant, db } = await oneConnection(t);
  const write = (id: string) => ({ text: 'INSERT INTO participants (tenant_id, participant_id) VALUES ($1, $2)', values: [tenant.tenantId, id] });
  const count = async () => (await svc.sql('SELECT count(*)::int AS n FROM participants WHERE tenant_id = $1', [tenant.tenantId]))[0].n as number;
  const sent: string[] = [];
  let restore = () => undefined;
  const result = await db.tenantEndingWith(tenant.tenantId, async (tx) => {
    const query = tx.query.bind(tx);
    restore = () => void (tx.query = query as typeof tx.query);
    // Watch what the transaction sends after `fn` (the last statements and the COMMIT): one message.
    tx.query = ((text: unknown, ...rest: unknown[]) => {
      // A string, or an extended message (db-extended.ts) with its statements.
      const statements = typeof text === 'string' ? [{ text, values: rest[0] ?? [] }] : (text as { statements: Array<{ text: string; values: unknown[] }> }).statements;
      sent.push(statements.map((statement) => `${statement.text} ${JSON.stringify(statement.values)}`).join('; '));
      return (query as (...args: unknown[]) => unknown)(text, ...rest);
    }) as typeof tx.query;
    await tx.query('INSERT INTO participants (tenant_id, participant_id) VALUES ($1, $2)', [tenant.tenantId, 'ending-1']);
    return { result: 'done', last: [write('ending-2'), write('ending-3')] };
  });
  restore();
  assert.equal(result, 'done');
  assert.equal(await count(), 3);
  const last = sent.at(-1)!;
  assert.match(last, /ending-2.*ending-3.*; COMMIT \[\]$/s, 'the last statements and the COMMIT in one message');

  // The second last statement repeats a key: nothing of the transaction stays, the first write in fn included.
  await assert.rejects(
    db.tenantEndingWith(tenant.tenantId, async (tx) => {
      await tx.query('INSERT INTO participants (tenant_id, participant_id) VALUES ($1, $2)', [tenant.tenantId, 'ending-4']);
      return { result: null, last: [write('ending-5'), write('ending-1')] };
    }),
    (error: { code?: string }) => error.code === '23505',
  );
  assert.equal(await count(), 3, 'the failed transaction wrote nothing');
  // Without last statements it commits as tenant() does; the connection goes on after the failure.
  assert.equal(await db.tenantEndingWith(tenant.tenantId, async (tx) => {
    await tx.query('INSERT INTO participants (tenant_id, participant_id) VALUES ($1, $2)', [tenant.tenantId, 'ending-6']);
    return { result: 1, last: [] };
  }), 1);
  assert.equal(await count(), 4);
});
