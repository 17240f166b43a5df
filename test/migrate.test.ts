import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { POSTGRES_VERSION_MIN, UnsupportedServerError, checkServerVersion, migrate } from '../src/platform/migrate.js';
import { migratedDatabase, testCluster } from './helper.js';

/**
 * Migrations of several databases of one cluster at once (service processes
 * starting together against a shared server, as the test suite's own do). The
 * application role belongs to the cluster, so each migration's role update can
 * meet another's; none of them may fail for it.
 */
const DATABASES = 6;
const ROUNDS = 3;

test('migrating several databases of one cluster at once: every migration succeeds', { timeout: 180_000 }, async (t) => {
  const cluster = testCluster();
  const names = Array.from({ length: DATABASES }, () => `test_migrate_${randomBytes(5).toString('hex')}`);
  const admin = new pg.Client({ connectionString: cluster.databaseUrl('postgres') });
  await admin.connect();
  t.after(async () => {
    for (const name of names) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });
  for (const name of names) await admin.query(`CREATE DATABASE ${name} TEMPLATE ${cluster.template}`);
  for (let round = 0; round < ROUNDS; round++) {
    const outcomes = await Promise.allSettled(names.map((name) => migrate(cluster.databaseUrl(name), cluster.appPassword)));
    const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
    assert.deepEqual(failures, [], `round ${round + 1}`);
  }
});

test('a pending migration numbered below one the database applied is refused before anything is applied', async (t) => {
  const cluster = testCluster();
  const { client: owner, url } = await migratedDatabase(t, 'test_migrate');
  // As if 1320 had been added after 1340 reached this database.
  await owner.query(`DELETE FROM schema_migrations WHERE name = '1320_audit_log_scrub.sql'`);
  await assert.rejects(migrate(url, cluster.appPassword), /1320_audit_log_scrub\.sql \(below 1\d{3}_[a-z0-9_]+\.sql\).*renumber it/);
  const { rows } = await owner.query(`SELECT count(*)::int AS n FROM schema_migrations WHERE name = '1320_audit_log_scrub.sql'`);
  assert.equal(rows[0].n, 0, 'nothing was applied');
});

test('a PostgreSQL older than 15 is refused before any migration, naming the version found and the one needed', async () => {
  const answering = (num: string, version: string) => ({ query: async () => ({ rows: [{ num, version }] }) }) as never;
  await assert.rejects(checkServerVersion(answering('140011', '14.11')), (error: Error) => {
    assert.ok(error instanceof UnsupportedServerError);
    assert.match(error.message, /PostgreSQL 14\.11 is not supported/);
    assert.match(error.message, /PostgreSQL 15 or newer/);
    return true;
  });
  assert.equal(await checkServerVersion(answering('150018', '15.18 (Debian 15.18-0+deb12u1)')), 15);
  assert.equal(await checkServerVersion(answering('180001', '18.1')), 18);
  // The server the suite runs on is supported (15 in CI's second run, 18 embedded).
  const cluster = testCluster();
  const client = new pg.Client({ connectionString: cluster.databaseUrl('postgres') });
  await client.connect();
  try {
    assert.ok((await checkServerVersion(client)) >= POSTGRES_VERSION_MIN);
  } finally {
    await client.end();
  }
});
