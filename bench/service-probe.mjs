/**
 * Loaded into a benchmark's service process (`node --import`, startServiceProcess's `probeFile`): where a request's
 * time goes, from inside the service. Appends one JSON line per second to BENCH_SERVICE_PROBE_FILE:
 *
 * - `routes`: per method and path (query left out), how long each request took in the service, from its headers
 *   parsed (`http.server.request.start`) to its last byte handed to the socket (`http.server.response.finish`);
 * - `loop`: how late a timer due every LOOP_TICK_MS ran, the event loop's delay: the time a request that has
 *   arrived waits before the service reads it, whether the loop was busy or the process waited for a core.
 *
 * Each as counts per bucket of durations (`bucketOf`, named by its upper bound in ms), so that the benchmark can merge
 * the seconds of a phase and take its percentiles (`bench/support.ts`, `readServiceProbe`). Plain JavaScript: the
 * service runs compiled.
 */
import dc from 'node:diagnostics_channel';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

const file = process.env.BENCH_SERVICE_PROBE_FILE;
const LOOP_TICK_MS = 5;
/**
 * Buckets 2% wide from 1 µs, each named by its upper bound in ms: a duration in [1.02^i, 1.02^(i+1)) µs counts
 * under 1.02^(i+1) / 1000. The reader needs no formula: a percentile is the name of the bucket it falls in.
 */
const bucketOf = (ms) => 1.02 ** (Math.max(0, Math.floor(Math.log(Math.max(ms * 1000, 1)) / Math.log(1.02))) + 1) / 1000;

if (file) {
  /** @type {WeakMap<object, number>} */
  const started = new WeakMap();
  /** @type {Map<string, Map<number, number>>} */
  let routes = new Map();
  /** @type {Map<number, number>} */
  let loop = new Map();
  const count = (buckets, ms) => {
    const bucket = bucketOf(ms);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
  };
  dc.subscribe('http.server.request.start', ({ request }) => started.set(request, performance.now()));
  dc.subscribe('http.server.response.finish', ({ request }) => {
    const at = started.get(request);
    if (at === undefined) return;
    const key = `${request.method} ${request.url.split('?')[0]}`;
    let buckets = routes.get(key);
    if (!buckets) routes.set(key, (buckets = new Map()));
    count(buckets, performance.now() - at);
  });
  let due = performance.now() + LOOP_TICK_MS;
  setInterval(() => {
    const now = performance.now();
    count(loop, Math.max(0, now - due));
    due = now + LOOP_TICK_MS;
  }, LOOP_TICK_MS).unref();
  setInterval(() => {
    const line = {
      at: Date.now(),
      routes: Object.fromEntries([...routes].map(([key, buckets]) => [key, Object.fromEntries(buckets)])),
      loop: Object.fromEntries(loop),
    };
    routes = new Map();
    loop = new Map();
    fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
  }, 1000).unref();
}
