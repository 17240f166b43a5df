import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import { AppError } from './errors.js';
import { overloadRefusals } from './metrics.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The answer is a long-lived stream (server-sent events): it is neither
     * counted nor refused by the bound on requests in progress, which it
     * would hold for as long as it is open. The streams have limits of their
     * own (webhooks/stream.ts).
     */
    longLived?: boolean;
  }
}

/** How long a refused caller is told to wait (Retry-After, seconds). */
const OVERLOAD_RETRY_AFTER_SECONDS = 1;

/**
 * A bound on the requests one process has in progress (issue 37, flash
 * crowds). A crowd larger than the database can serve does not queue without
 * end, each waiting request holding its memory and every later one waiting
 * behind it: past `maxInFlight` requests in progress, a new one is answered at
 * once with 503 `SERVICE_OVERLOADED` and `Retry-After`, before its credential
 * is looked up or its body read, and changes nothing. The operations routes
 * (`config.rateLimit: 'none'`: health, readiness, metrics) are neither counted
 * nor refused, so an overloaded process still reports itself; nor are the
 * live event streams (`config.longLived`), which stay open for hours.
 *
 * A request counts from its first hook until its connection's answer is
 * finished or abandoned (the response's `close`, which fires once either way).
 */
export function installOverloadGuard(app: FastifyInstance, maxInFlight: number): void {
  let inFlight = 0;
  const guard: onRequestHookHandler = (request, reply, done) => {
    const config = request.routeOptions.config;
    if (config?.rateLimit === 'none' || config?.longLived) return done();
    if (inFlight >= maxInFlight) {
      overloadRefusals.inc();
      return done(
        new AppError(
          'unavailable',
          'SERVICE_OVERLOADED',
          `the service is at its limit of ${maxInFlight} requests in progress; nothing was done: retry after ${OVERLOAD_RETRY_AFTER_SECONDS} s`,
          {},
          { 'Retry-After': String(OVERLOAD_RETRY_AFTER_SECONDS) },
        ),
      );
    }
    inFlight += 1;
    reply.raw.once('close', () => {
      inFlight -= 1;
    });
    done();
  };
  app.addHook('onRequest', guard);
}
