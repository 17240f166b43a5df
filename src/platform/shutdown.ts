import type { FastifyInstance } from 'fastify';
import type { Logger } from './logger.js';

/**
 * How long a stop lets requests in flight finish before it closes their
 * connections: long enough for any answer, shorter than an orchestrator's
 * kill (Kubernetes waits 30 s after SIGTERM).
 */
export const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Closes the API: no new connections, idle ones closed, requests in flight
 * given `graceMs` to finish; after that the connections still open are closed
 * (a download whose reader stopped reading, a stalled client), so that a stop
 * never waits on a peer. Seen in CI: a test's browser held an export download
 * open and the service's stop waited for it indefinitely.
 */
export async function closeWithin(app: FastifyInstance, graceMs: number, log: Pick<Logger, 'warn'>): Promise<void> {
  const timer = setTimeout(() => {
    app.server.getConnections((_error, open) => log.warn({ open, graceMs }, 'requests still open after the grace period are closed'));
    app.server.closeAllConnections();
  }, graceMs);
  timer.unref();
  try {
    await app.close();
  } finally {
    clearTimeout(timer);
  }
}
