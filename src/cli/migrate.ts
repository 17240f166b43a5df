import { loadConfig } from '../config.js';
import { openDatabaseServer } from '../platform/database-server.js';
import { migrate } from '../platform/migrate.js';

/** `npm run migrate`: applies pending migrations and exits. */
async function main(): Promise<void> {
  const config = loadConfig();
  const server = await openDatabaseServer(config);
  try {
    const applied = await migrate(server.ownerUrl, decodeURIComponent(new URL(server.appUrl).password), (m) => process.stderr.write(`${m}\n`));
    process.stderr.write(applied.length ? `applied ${applied.length} migration(s)\n` : 'the schema is up to date\n');
  } finally {
    await server.stop();
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
