import type { Config } from './config.js';
import { Database } from './platform/db.js';
import { openDatabaseServer, type DatabaseServer } from './platform/database-server.js';
import { migrate } from './platform/migrate.js';
import { startMetricsServer, watchDatabase, type MetricsServer } from './platform/metrics.js';
import { createLogger, type Logger } from './platform/logger.js';
import { loadJwtKey } from './platform/secrets.js';
import { buildApp, type App, type BuildOptions } from './app.js';
import { closeWithin, SHUTDOWN_GRACE_MS } from './platform/shutdown.js';
import { startJobRunner, type JobRunner, type JobHandler } from './platform/jobs.js';
import { loadModules } from './platform/module.js';
import { PLATFORM_RETENTION, RETENTION_CRONTAB, RETENTION_TASK, retentionTask } from './platform/retention.js';
import { listenForPumpWakeUps, sendPumpWakeUps, type Pump } from './platform/pump.js';
import { listenForTestClocks } from './platform/test-clock.js';
import { startTracing } from './platform/tracing.js';
import { EMBEDDED_BACKGROUND_NICE } from './platform/background-priority.js';

/**
 * Starts the parts of the service that the role asks for: the database
 * (embedded or external), migrations, the HTTP API and the job runner.
 * `main.ts`, the command-line tools and the tests all start it through here.
 */
export interface RunningService {
  app: App | null;
  db: Database;
  jobs: JobRunner | null;
  server: DatabaseServer;
  log: Logger;
  stop(): Promise<void>;
}

export async function collectJobs(): Promise<{ handlers: Record<string, JobHandler>; crontab: string; pumps: Pump[] }> {
  const modules = await loadModules();
  const handlers: Record<string, JobHandler> = {};
  const lines: string[] = [RETENTION_CRONTAB];
  const retention = [...PLATFORM_RETENTION];
  const pumps: Pump[] = [];
  for (const module of modules) {
    retention.push(...(module.retention ?? []));
    pumps.push(...(module.pumps ?? []));
    for (const [name, handler] of Object.entries(module.tasks ?? {})) {
      if (handlers[name]) throw new Error(`two modules define the job ${name}`);
      handlers[name] = handler;
    }
    lines.push(...(module.crontab ?? []));
  }
  handlers[RETENTION_TASK] = retentionTask(retention);
  return { handlers, crontab: lines.join('\n'), pumps };
}

export interface StartOptions {
  config: Config;
  log?: Logger;
  /** An already running database server (tests share one). */
  server?: DatabaseServer;
  listen?: boolean;
  /** Extra routes under `/api/v1` (tests only). */
  extraRoutes?: BuildOptions['extraRoutes'];
}

export async function startService(options: StartOptions): Promise<RunningService> {
  const { config } = options;
  const log = options.log ?? createLogger(config.logLevel);
  // Before the database layer and the app, which wrap their choke points only when tracing is on.
  const tracing = config.tracing ? await startTracing(config.tracing, log, { env: config.env, role: config.role }) : null;
  const server = options.server ?? (await openDatabaseServer(config));
  const appPassword = new URL(server.appUrl).password;
  await migrate(server.ownerUrl, decodeURIComponent(appPassword), (message) => log.info(message));
  const db = new Database(server.appUrl, server.ownerUrl, config.dbPoolSize, {
    preparedStatements: config.dbPreparedStatements,
    replicaUrl: server.replicaAppUrl ?? null,
    idleSeconds: config.dbPoolIdleSeconds,
    minConnections: config.role === 'worker' ? 0 : config.dbPoolMin,
    backgroundNice: config.dbBackgroundNice ?? (server.local ? EMBEDDED_BACKGROUND_NICE : 0),
    backgroundConnected: (lowered) => {
      if (!lowered) log.warn('a background database connection could not be given a lower CPU priority (DB_BACKGROUND_NICE); it runs at the same priority as the rest');
    },
  });
  await db.open();
  const jwtKey = await loadJwtKey(db.system, config.jwtSecret);
  // Sandbox tenants' test clocks are read before any request or job runs (decisions/foundation.md, Test controls).
  const testClocks = await listenForTestClocks(db, server.ownerUrl, log);

  let app: App | null = null;
  // An API-only process wakes the workers' pumps over NOTIFY when it commits their work (accepted events).
  const stopWakeUps = config.role === 'api' ? sendPumpWakeUps(db.system, log) : () => undefined;
  if (config.role !== 'worker') {
    app = await buildApp({ config, db, log, systemUrl: server.ownerUrl, jwtKey }, { extraRoutes: options.extraRoutes });
    if (options.listen !== false) await app.listen({ host: config.host, port: config.port });
  }
  const unwatch = watchDatabase(db);
  let jobs: JobRunner | null = null;
  let metricsServer: MetricsServer | null = null;
  let stopListening = async (): Promise<void> => undefined;
  if (config.role !== 'api') {
    const { handlers, crontab, pumps } = await collectJobs();
    jobs = await startJobRunner(db, config, log, handlers, crontab, pumps);
    stopListening = await listenForPumpWakeUps(server.ownerUrl, log);
    // The API serves /metrics; a worker alone serves them on METRICS_PORT.
    if (config.role === 'worker' && config.metricsPort !== null && options.listen !== false) metricsServer = await startMetricsServer(config.host, config.metricsPort, log);
  }
  return {
    app,
    db,
    jobs,
    server,
    log,
    async stop() {
      if (app) await closeWithin(app, SHUTDOWN_GRACE_MS, log);
      await metricsServer?.close();
      await jobs?.stop();
      await stopListening();
      stopWakeUps();
      unwatch();
      await testClocks.close();
      await db.close();
      if (!options.server) await server.stop();
      await tracing?.stop();
    },
  };
}

