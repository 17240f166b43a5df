import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate } from '../src/platform/migrate.js';
import { testCluster } from './helper.js';

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
