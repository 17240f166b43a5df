import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { runMigrations as runJobQueueMigrations } from 'graphile-worker';

/**
 * Applies the numbered SQL files of `migrations/` in name order, each in its own
 * transaction, under an advisory lock so that several processes starting at
 * once apply each file exactly once. Before the files, it makes sure the
 * application role exists; after them, it installs the job queue's schema.
 */
export const APP_ROLE = 'loyalty_app';
const MIGRATION_LOCK_ID = 7_401_221;
const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * Roles are shared by every database of a cluster, while the migration lock is
 * per database: two processes migrating two databases of one cluster (tests,
 * or tenants of a shared server) can change the role at the same moment.
 * PostgreSQL then fails one of them with "tuple concurrently updated", or
 * "role already exists" when both create it; the loser tries again.
 */
const ROLE_ATTEMPTS_MAX = 8;

async function ensureAppRole(client: pg.Client, password: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await updateAppRole(client, password);
      return;
    } catch (error) {
      const { code, message } = error as { code?: string; message?: string };
      const raced = code === '42710' || (code === 'XX000' && /tuple concurrently updated/.test(message ?? ''));
      if (!raced || attempt >= ROLE_ATTEMPTS_MAX) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 80 * attempt));
    }
  }
}

async function updateAppRole(client: pg.Client, password: string): Promise<void> {
  const roleExists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [APP_ROLE]);
  // The role owns nothing, cannot bypass row-level security and is no superuser.
  const attributes = `LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD ${quoteLiteral(password)}`;
  await client.query(roleExists.rowCount === 0 ? `CREATE ROLE ${APP_ROLE} ${attributes}` : `ALTER ROLE ${APP_ROLE} ${attributes}`);
  const database = (await client.query('SELECT current_database() AS name')).rows[0].name as string;
  await client.query(`GRANT CONNECT ON DATABASE "${database}" TO ${APP_ROLE}`);
  await client.query(`GRANT USAGE ON SCHEMA public TO ${APP_ROLE}`);
  await client.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${APP_ROLE}`);
  await client.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO ${APP_ROLE}`);
  await client.query(`ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT EXECUTE ON FUNCTIONS TO ${APP_ROLE}`);
}

export function migrationFiles(): string[] {
  return fs
    .readdirSync(migrationsDir)
    .filter((name) => /^\d{4}_[a-z0-9_]+\.sql$/.test(name))
    .sort();
}

/**
 * Migrations are append-only: a new one is numbered above every existing one,
 * so that name order is the order every database applies them in. These were
 * added below a migration that had been added before them (the project first
 * numbered each module's migrations in the module's own block: 01xx points,
 * 02xx webhooks, …), so a database migrated before they were added applied
 * them after higher numbers. They are the only ones allowed to be: the order
 * test (test/migration-order.test.ts) refuses any other, read from git
 * history, and `migrate` refuses to apply any other below one a database has
 * already applied.
 */
export const MIGRATIONS_ADDED_OUT_OF_ORDER: ReadonlyMap<string, string> = new Map([
  ...[
    '0300_ingestion_rules_badges_streaks.sql',
    '0400_engagements.sql',
    '0410_rewards.sql',
    '0420_activities.sql',
    '0430_gates.sql',
    '0500_challenges.sql',
    '0502_challenge_reevaluation_scope.sql',
    '0510_referrals.sql',
    '0520_leaderboards.sql',
    '0521_leaderboard_periods.sql',
  ].map((name) => [name, "the first day's modules, written at once and numbered in their modules' blocks (after 0600 and 0601)"] as const),
  ['0110_outbox_pending.sql', 'the outbox pump, numbered in the points block after 0800; renamed to 0101 the same day'],
  ['0101_outbox_pending.sql', 'the rename of 0110: a database that applied 0110 in the hours between would create the table again and fail'],
  ...['0102_points_direct.sql', '0103_points_bulk_failures.sql', '0104_points_direct_lighter.sql'].map(
    (name) => [name, 'the direct grant and bulk failures, numbered in the points block after 0800'] as const,
  ),
  ['0411_reward_claims_by_reward.sql', 'an index of the rewards block, added after 0800'],
  ...['0201_webhook_delivery_retention.sql', '0202_enqueue_jobs.sql'].map((name) => [name, 'numbered in the webhooks block after 0800 and 0801'] as const),
  ['0105_points_before_18.sql', 'PostgreSQL 15 for the ledger, beside the 0102 and 0104 it replaces, after 0900; no migration from 0106 to 0900 touches what it changes'],
  ['0205_webhook_test_controls.sql', 'numbered in the webhooks block after 0902'],
  ['0203_webhook_attempt_numbers.sql', 'numbered in the webhooks block after 1010; the triggers 1010 puts on webhook_deliveries fire on status, which 0203 does not set, so both orders end alike'],
  ['1330_admin_token_version.sql', 'written beside 1340 (issue 32) and committed after it'],
  ['1490_take_outbox_pending.sql', 'the rename of 1490_outbox_take_in_key_order after 1495 was added, renumbered to 1500 the same hour; no database but a benchmark\'s applied either name'],
  ...['1381_points_bulk_grant_actor.sql', '1385_review_published_directly.sql', '1390_event_names_seen.sql', '1395_preview_test_participants.sql', '1400_points_value.sql'].map(
    (name) =>
      [name, "issue 35's parallel work: each part was given a block of numbers (1380–1414) and committed when it was ready, 1405 before these; none touches a table another creates or alters"] as const,
  ),
  ...['1410_segments.sql', '1420_segment_targets.sql', '1425_points_segment_grants.sql', '1426_engagement_segment.sql'].map(
    (name) =>
      [
        name,
        "issue 36's parallel work: each part was given a block of numbers (1410–1449) and committed when it was ready, 1430 and 1446 before some of these; a fresh database applies them by number, segments (1410) before what refers to it, and no database outside that day's work applied any of them",
      ] as const,
  ),
]);

/**
 * The pending migrations that name order would apply below one the database
 * has already applied, but for MIGRATIONS_ADDED_OUT_OF_ORDER: each is
 * `name (below applied)`. A database applies such a file after higher ones,
 * in an order no fresh database sees, so `migrate` refuses to start instead.
 */
export function migrationsBelowApplied(files: readonly string[], applied: ReadonlySet<string>): string[] {
  const highest = [...applied].sort().at(-1);
  if (highest === undefined) return [];
  return files.filter((name) => !applied.has(name) && name < highest && !MIGRATIONS_ADDED_OUT_OF_ORDER.has(name)).map((name) => `${name} (below ${highest})`);
}

/**
 * The oldest PostgreSQL the SQL is written for: 15 is the oldest that Debian
 * stable ships, and managed services and Citus lag the newest release, so the
 * SQL avoids what 16–18 added (`RETURNING old.…` among them: migration 0105).
 * The suite runs on 15 and on the embedded 18 (`.ci/run`).
 */
export const POSTGRES_VERSION_MIN = 15;

export class UnsupportedServerError extends Error {}

/** Refuses a server older than POSTGRES_VERSION_MIN, naming the version found and the one needed. */
export async function checkServerVersion(client: Pick<pg.Client, 'query'>): Promise<number> {
  const { rows } = await client.query<{ num: string; version: string }>(
    "SELECT current_setting('server_version_num') AS num, current_setting('server_version') AS version",
  );
  const major = Math.floor(Number(rows[0].num) / 10_000);
  if (major < POSTGRES_VERSION_MIN) {
    throw new UnsupportedServerError(
      `PostgreSQL ${rows[0].version} is not supported: the service needs PostgreSQL ${POSTGRES_VERSION_MIN} or newer (it is tested on 15 and 18)`,
    );
  }
  return major;
}

export async function migrate(ownerUrl: string, appPassword: string, log: (message: string) => void = () => undefined): Promise<string[]> {
  const client = new pg.Client({ connectionString: ownerUrl });
  await client.connect();
  const applied: string[] = [];
  try {
    await checkServerVersion(client);
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await ensureAppRole(client, appPassword);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    // The default privileges above would let the application role rewrite the migration history.
    await client.query(`REVOKE ALL ON schema_migrations FROM ${APP_ROLE}`);
    const done = new Set((await client.query('SELECT name FROM schema_migrations')).rows.map((row) => row.name as string));
    const files = migrationFiles();
    const below = migrationsBelowApplied(files, done);
    if (below.length > 0) {
      throw new Error(
        `migrations numbered below one this database has already applied: ${below.join(', ')}. ` +
          'A new migration takes a number above every existing one (docs/operations/running.md, Upgrades): renumber it.',
      );
    }
    for (const name of files) {
      if (done.has(name)) continue;
      const sql = fs.readFileSync(path.join(migrationsDir, name), 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${name} failed: ${(error as Error).message}`);
      }
      applied.push(name);
      log(`applied migration ${name}`);
    }
    await runJobQueueMigrations({ connectionString: ownerUrl, logger: undefined });
    // Services add jobs inside their own transactions, as the application role.
    await client.query(`GRANT USAGE ON SCHEMA graphile_worker TO ${APP_ROLE}`);
    await client.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA graphile_worker TO ${APP_ROLE}`);
    await client.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA graphile_worker TO ${APP_ROLE}`);
    await client.query(`GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA graphile_worker TO ${APP_ROLE}`);
    // graphile-worker enables row-level security on its private tables with no
    // policy, which would refuse every job the application role adds
    // (`emit`, `addJob`). The job queue is not tenant data: let the role in.
    await client.query(`DO $$
      DECLARE t text;
      BEGIN
        FOREACH t IN ARRAY ARRAY['_private_jobs', '_private_tasks', '_private_job_queues'] LOOP
          -- Created once: re-creating it on every start would take an exclusive
          -- lock on the job tables while other processes are working them.
          IF to_regclass('graphile_worker.' || t) IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM pg_policies WHERE schemaname = 'graphile_worker' AND tablename = t AND policyname = 'app_role_access'
          ) THEN
            EXECUTE format('CREATE POLICY app_role_access ON graphile_worker.%I TO ${APP_ROLE} USING (true) WITH CHECK (true)', t);
          END IF;
        END LOOP;
      END $$`);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    await client.end();
  }
  return applied;
}
