import Fastify from 'fastify';

/**
 * The baseline of bench/foundation.bench.ts: a bare Fastify route with a
 * response schema and nothing else (no logger, hooks, credentials or
 * database), in a process of its own like the service. It prints its port.
 */
const app = Fastify({ logger: false });
app.get('/bare', { schema: { response: { 200: { type: 'object', properties: { status: { type: 'string' } } } } } }, async () => ({ status: 'ok' }));
const address = await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.stdout.write(`${new URL(address).port}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
