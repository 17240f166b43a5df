// Loaded with `node --import`: records every module URL the process resolves
// and prints them as JSON on exit (used by react.test.ts to see the module graph).
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const resolved = [];
const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => resolved.push(url));
port1.unref();
register(new URL('./record-resolutions-hooks.mjs', import.meta.url), { data: { port: port2 }, transferList: [port2] });
process.on('exit', () => process.stdout.write(`\nRESOLVED ${JSON.stringify(resolved)}\n`));
