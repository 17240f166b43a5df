/** What every benchmark needs: a free loopback port, a database of its own, and percentiles of its latencies. */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, deriveAppPassword, withCredentials } from '../src/platform/database-server.js';
import { APP_ROLE } from '../src/platform/migrate.js';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** The p-th percentile (nearest rank) of the values; NaN when there are none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export interface BenchDatabase {
  /** The schema owner's URL (migrations, assertions, cross-tenant set-up). */
  ownerUrl: string;
  /** The application role's password and URL, as the service connects. */
  appPassword: string;
  appUrl: string;
  /** Stops the embedded server this started and removes its files; a no-op for BENCH_DATABASE_URL. */
  stop(): Promise<void>;
}

/**
 * BENCH_DATABASE_URL (an owner URL of an empty database) when set; otherwise
 * an embedded PostgreSQL in a temporary directory on a free loopback port.
 * `fast` trades durability for speed (fsync off), for set-ups that load
 * millions of rows and measure reads only.
 */
export async function openBenchDatabase(name: string, options: { fast?: boolean; settings?: string[] } = {}): Promise<BenchDatabase> {
  let ownerUrl = process.env.BENCH_DATABASE_URL ?? null;
  let stop = async (): Promise<void> => undefined;
  if (!ownerUrl) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-bench-pg-`));
    const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), fast: options.fast, settings: options.settings });
    ownerUrl = server.ownerUrl;
    stop = async () => {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    };
  }
  const appPassword = deriveAppPassword(ownerUrl, null);
  return { ownerUrl, appPassword, appUrl: withCredentials(ownerUrl, APP_ROLE, appPassword), stop };
}

/**
 * Runs a benchmark's `main` and exits the process: 0 once it finished, 1 with
 * the error on stderr when it threw (after `cleanUp`, for children it started).
 */
export function runBench(main: () => Promise<void>, cleanUp: () => Promise<unknown> = async () => undefined): void {
  main().then(
    () => process.exit(0),
    async (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      await cleanUp().catch(() => undefined);
      process.exit(1);
    },
  );
}
