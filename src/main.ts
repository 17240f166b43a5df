import { takeOverSignals } from './platform/signals.js';
import { loadConfig, ConfigError } from './config.js';
import { startService } from './service.js';
import { UnsupportedServerError } from './platform/migrate.js';

/** `npm start`: the whole service in one process, or one role of it (SERVICE_ROLE=api|worker). */
async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  let service: Awaited<ReturnType<typeof startService>> | null = null;
  let signalled: string | null = null;
  let stopping = false;
  const shutdown = async (signal: string) => {
    signalled ??= signal;
    // Still starting: shut down as soon as the service is up (below), gracefully like any other stop.
    if (!service || stopping) return;
    stopping = true;
    service.log.info({ signal }, 'shutting down');
    await service.stop();
    process.exit(0);
  };
  // The graceful shutdown stops the embedded server last, after the API and the workers. The signals are
  // taken over before the service starts: the API answers while the workers are still starting, and a
  // stop then must not reach the embedded server's own exit hook (which stops it and exits with 143).
  takeOverSignals((signal) => void shutdown(signal));
  service = await startService({ config });
  const address = service.app ? `http://${config.host}:${(service.app.server.address() as { port: number }).port}` : null;
  service.log.info({ role: config.role, address, docs: address ? `${address}/docs` : undefined }, 'service started');
  if (signalled) await shutdown(signalled);
}

main().catch((error) => {
  if (error instanceof UnsupportedServerError) {
    process.stderr.write(`failed to start: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
