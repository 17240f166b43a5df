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
    for (const name of migrationFiles()) {
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
