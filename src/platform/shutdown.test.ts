import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import Fastify from 'fastify';
import { closeWithin } from './shutdown.js';

/** A request the route never answers: the server holds its connection until something closes it. */
function stalledRequest(port: number): Promise<string> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/stalled' }, (response) => resolve(`answered ${response.statusCode}`));
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

test('a stop gives requests in flight the grace period, then closes their connections instead of waiting on them', async () => {
  const app = Fastify();
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  app.get('/stalled', () => {
    entered();
    return new Promise(() => undefined);
  });
  app.get('/quick', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  const stalled = stalledRequest(port);
  await inside;
  const warnings: unknown[] = [];
  const started = Date.now();
  await closeWithin(app, 300, { warn: (...args: unknown[]) => void warnings.push(args) } as never);
  const took = Date.now() - started;
  assert.ok(took >= 250, `waited the grace period (${took} ms)`);
  assert.ok(took < 5_000, `and no longer (${took} ms)`);
  assert.equal(await stalled, 'ECONNRESET', 'the stalled request was cut');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(warnings.length, 1, 'the cut is logged once');
});

test('a stop with nothing in flight does not wait for the grace period', async () => {
  const app = Fastify();
  app.get('/quick', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  assert.equal((await fetch(`http://127.0.0.1:${port}/quick`)).status, 200);
  const started = Date.now();
  await closeWithin(app, 10_000, { warn: () => undefined } as never);
  assert.ok(Date.now() - started < 2_000, 'the idle keep-alive connection does not hold the stop');
});
