import pg from 'pg';
import { loadConfig } from '../config.js';
import { openDatabaseServer } from '../platform/database-server.js';
import { migrate } from '../platform/migrate.js';
import { findInvariantViolations } from '../modules/points/invariants.js';

/**
 * `npm run points:check [-- <tenant id>]`: checks the points ledger invariants
 * (available = remaining lots = ledger sum, lifetime = grants, expiry entries =
 * expired lots, never negative) for every participant (migrating first, like `npm start`), prints the violations
 * as JSON lines and exits 1 when there are any. Read-only.
 */
async function main(): Promise<number> {
  const tenantId = process.argv[2] ?? null;
  const config = loadConfig();
  const server = await openDatabaseServer(config);
  const client = new pg.Client({ connectionString: server.ownerUrl });
  try {
    // The same schema the service runs on (a no-op when it is up to date).
    await migrate(server.ownerUrl, decodeURIComponent(new URL(server.appUrl).password));
    await client.connect();
    const violations = await findInvariantViolations(client, tenantId);
    for (const violation of violations) process.stdout.write(`${JSON.stringify(violation)}\n`);
    process.stderr.write(violations.length ? `${violations.length} participant(s) break the points invariants\n` : 'points invariants hold\n');
    return violations.length ? 1 : 0;
  } finally {
    await client.end().catch(() => undefined);
    await server.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
